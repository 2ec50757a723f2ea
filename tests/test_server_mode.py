"""Server mode as docs/scheduling.md writes it (issue 23, item 5): a Prefect server and its UI on a
port other than 4200, the UI told where its API is, and a CLI run against it named by its run id,
tagged, and linked from the summary. A real server process, a real run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from transforms.synthetic.generate import generate_submission

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str):
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - a local test server
        return json.loads(r.read())


@pytest.mark.slow
def test_the_ui_works_on_any_port_and_a_run_is_named_tagged_and_linked(tmp_path):
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    e = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_") and k != "IMPCREDIT_API"}
    # the environment scheduling.md sets (step 1 and 2)
    e.update(PREFECT_HOME=str(tmp_path / "prefect-server"), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
             PREFECT_API_URL=api, PREFECT_UI_API_URL=api)
    server = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "server", "start", "--host", "127.0.0.1",
                               "--port", str(port)], cwd=ROOT, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                get(f"{api}/health")
                break
            except OSError:
                assert time.monotonic() < deadline, "the Prefect server did not start"
                time.sleep(0.5)
        # the UI asks its settings for the API's address: this port, not 4200
        assert get(f"http://127.0.0.1:{port}/ui-settings")["api_url"] == api
        sub = tmp_path / "sub"
        generate_submission(sub, employers=5, seed=1, tax_year=2023)
        r = subprocess.run([sys.executable, "-m", "flows.cli", "annual", "--input", str(sub), "--tax-year", "2023",
                            "--as-of", "2024-07-01", "--out", str(tmp_path / "out"), "--workdir", str(tmp_path / "work")],
                           cwd=ROOT, env={**e, "COLUMNS": "200"}, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        link = next(line for line in r.stdout.splitlines() if "Prefect flow run" in line)
        flow_run_id = link.split("/runs/flow-run/")[1].split()[0].strip(" │")
        assert f"http://127.0.0.1:{port}/runs/flow-run/{flow_run_id}" in link
        run = get(f"{api}/flow_runs/{flow_run_id}")
        assert run["name"].startswith("annual-2023-") and {"impcredit", "annual", "tax-year-2023"} <= set(run["tags"])
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
