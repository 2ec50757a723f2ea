"""The agency's year on a real Prefect server (issue 36), as docs/scheduling.md runs it: a Prefect
server on a fresh PREFECT_HOME, the process work pool, `prefect deploy --all`, the worker
(`python -m flows.worker`, started as a shell's background job starts it: SIGINT ignored), runs
triggered with `prefect deployment run`. Real processes, no mocks; one server for the module.

- no key: the annual deployment's run FAILS with one line naming IMPCREDIT_HMAC_KEY_FILE, having
  read nothing; one SIGTERM stops the worker;
- with a key file: the annual deployment writes the credits a plain CLI run of the same input
  writes; its flow run is named by the run id and tagged;
- the docs' quarterly example (`--param quarter=2`, a year the submission has no request for)
  COMPLETES, and its logs and artifact say so, naming the year and what the submission holds;
  an annual run of a year without application FAILS, as it did, and one dated after today FAILS in
  one line having read nothing;
- serve.py refuses to serve over the worker's deployments (which keep their pull step), and the
  deployments freeze no input or workdir.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from transforms.synthetic.generate import generate_submission

ROOT = Path(__file__).resolve().parents[1]
PREFECT = str(Path(sys.executable).parent / "prefect")
ANNUAL = "impcredit-scheduled-annual/annual"
QUARTERLY = "impcredit-scheduled-quarterly/quarterly-estimates"
CATCH_UP = "impcredit-scheduled-catch-up/catch-up"

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, api: str, env: dict[str, str], root: Path, log: Path):
        self.api, self.env, self.root, self.log = api, env, root, log

    def call(self, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.api}{path}", data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 - the test's own local server
            return json.loads(r.read())

    def prefect(self, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        r = subprocess.run([PREFECT, *args], cwd=ROOT, env={**self.env, "COLUMNS": "200", **(env or {})},
                           capture_output=True, text=True, timeout=timeout)
        return r

    def run(self, deployment: str, *params: str) -> dict:
        """``prefect deployment run --watch``: the flow run at its end."""
        args = [a for p in params for a in ("--param", p)]
        r = self.prefect("deployment", "run", deployment, *args, "--watch", "--watch-timeout", "300")
        found = re.search(r"UUID: ([0-9a-f-]{36})", r.stdout)
        assert found, r.stdout + r.stderr
        return self.call(f"/flow_runs/{found.group(1)}")

    def logs(self, flow_run_id: str) -> list[str]:
        rows = self.call("/logs/filter", {"logs": {"flow_run_id": {"any_": [flow_run_id]}}, "sort": "TIMESTAMP_ASC",
                                          "limit": 200})
        return [f"{logging.getLevelName(r['level'])} {r['message']}" for r in rows]

    def children(self, flow_run_id: str) -> list[dict]:
        return self.call("/flow_runs/filter", {"flow_runs": {"parent_flow_run_id": {"any_": [flow_run_id]}}})


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("deployments")
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    # nothing of this session's Prefect or impcredit settings: the environment scheduling.md sets,
    # telemetry settings left to the repository's prefect.toml
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "IMPCREDIT_")) and k != "DO_NOT_TRACK"}
    env.update(PREFECT_HOME=str(root / "prefect-home"), PREFECT_API_URL=api, PREFECT_UI_API_URL=api)
    log = root / "server.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)], cwd=ROOT,
                                env=env, stdout=fh, stderr=subprocess.STDOUT)
    s = Server(api, env, root, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                s.call("/health")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.5)
        r = s.prefect("work-pool", "create", "impcredit", "--type", "process")
        assert r.returncode == 0, r.stdout + r.stderr
        r = s.prefect("--no-prompt", "deploy", "--all")  # no IMPCREDIT_* here: nothing to freeze
        assert r.returncode == 0, r.stdout + r.stderr
        generate_submission(root / "sub", employers=12, seed=4, tax_year=2023)
        s.key = root / "secrets" / "hmac.key"
        s.key.parent.mkdir()
        s.key.write_text("k" * 40 + "-a-test-key-of-this-module\n")
        s.key.chmod(0o600)  # its owner's alone, or refused (issue 43)
        yield s
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def worker(s: Server, name: str, **extra: str):
    """``python -m flows.worker --pool impcredit`` with the run settings in its environment, as
    ``cmd &`` in a script starts it (SIGINT ignored); stopped with one SIGTERM, which must do."""
    env = {**s.env, "IMPCREDIT_INPUT": str(s.root / "sub"), "IMPCREDIT_WORKDIR": str(s.root / f"work-{name}"),
           "IMPCREDIT_OUT": str(s.root / f"out-{name}"), **extra}
    log = s.root / f"worker-{name}.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "flows.worker", "--pool", "impcredit"], cwd=ROOT, env=env,
                                stdout=fh, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 60
        while "started!" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        yield s.root / f"out-{name}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("one SIGTERM did not stop the worker:\n" + log.read_text()[-2000:])


@pytest.fixture(scope="module")
def keyed(server):
    with worker(server, "keyed", IMPCREDIT_HMAC_KEY_FILE=str(server.key)) as out:
        yield out


def test_without_a_key_the_run_fails_in_one_line_naming_the_key_file(server):
    with worker(server, "nokey"):
        run = server.run(ANNUAL, "tax_year=2023", "as_of=2024-07-01")
    message = run["state"]["message"]
    assert run["state"]["type"] == "FAILED", run["state"]
    assert "IMPCREDIT_HMAC_KEY_FILE" in message and "demo key" in message and "\n" not in message
    assert any(line == f"ERROR {message}" for line in server.logs(run["id"]))
    assert server.children(run["id"]) == []  # refused before anything was read
    assert not (server.root / "work-nokey" / "impcredit.duckdb").exists()
    assert run["name"] == "annual-2023-as-of-2024-07-01"
    assert {"impcredit", "annual", "tax-year-2023"} <= set(run["tags"])


def test_a_worker_killed_mid_run_leaves_its_run_crashed_not_running(server):
    """The worker (started with a 30 s heartbeat: it sets the automation's window to 90 s) is killed
    with its run's process (SIGKILL of both: neither can say anything, as when the machine dies)
    while the run ingests a bigger submission; the server's automation marks the run Crashed."""
    generate_submission(server.root / "big", employers=1500, seed=5, tax_year=2023)
    env = {**server.env, "IMPCREDIT_INPUT": str(server.root / "big"), "IMPCREDIT_WORKDIR": str(server.root / "work-zombie"),
           "IMPCREDIT_OUT": str(server.root / "out-zombie"), "IMPCREDIT_HMAC_KEY_FILE": str(server.key),
           "PREFECT_FLOWS_HEARTBEAT_FREQUENCY": "30"}
    log = server.root / "worker-zombie.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "flows.worker", "--pool", "impcredit"], cwd=ROOT, env=env,
                                stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "started!" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        assert "automation impcredit-crash-zombie-flow-runs created (a flow run with no heartbeat for 90 s is " \
               "Crashed)" in log.read_text()
        r = server.prefect("deployment", "run", ANNUAL, "--param", "tax_year=2023", "--param", "as_of=2024-07-01")
        run_id = re.search(r"UUID: ([0-9a-f-]{36})", r.stdout).group(1)
        deadline = time.monotonic() + 120
        while server.call(f"/flow_runs/{run_id}")["state"]["type"] != "RUNNING":
            assert time.monotonic() < deadline, server.call(f"/flow_runs/{run_id}")["state"]
            time.sleep(0.2)
        time.sleep(4)  # its first heartbeat has reached the server
        assert server.call(f"/flow_runs/{run_id}")["state"]["type"] == "RUNNING"
    finally:  # the worker and the run's process (its own session, a child of the worker), at once
        import psutil

        try:  # a worker that died by itself has no process left: the assertion above says why
            worker_proc = psutil.Process(proc.pid)
            procs = [*worker_proc.children(recursive=True), worker_proc]
        except psutil.NoSuchProcess:
            procs = []
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        proc.wait(timeout=30)
    killed = time.monotonic()
    while (state := server.call(f"/flow_runs/{run_id}")["state"])["type"] == "RUNNING":
        assert time.monotonic() - killed < 240, "still Running 240 s after its worker died"
        time.sleep(2)
    assert state["type"] == "CRASHED" and "no heartbeat for 90 s" in state["message"], state
    # whether the run had published its outputs before its worker died is a race (on an idle machine it may
    # have); what a killed worker must never leave is a run shown Running, asserted above


def test_with_a_key_file_the_annual_deployment_writes_the_cli_credits(server, keyed):
    run = server.run(ANNUAL, "tax_year=2023", "as_of=2024-07-01")
    assert run["state"]["type"] == "COMPLETED", server.logs(run["id"])
    assert re.fullmatch(r"annual-2023-\d{8}T\d+Z-[0-9a-f]{8}", run["name"]), run["name"]  # the run id
    assert {"impcredit", "annual", "tax-year-2023"} <= set(run["tags"])
    (child,) = server.children(run["id"])
    assert child["name"] == run["name"]
    cli = subprocess.run([sys.executable, "-m", "flows.cli", "annual", "--input", str(server.root / "sub"),
                          "--tax-year", "2023", "--as-of", "2024-07-01", "--out", str(server.root / "cli-out"),
                          "--workdir", str(server.root / "cli-work")], cwd=ROOT,
                         env={**server.env, "IMPCREDIT_HMAC_KEY_FILE": str(server.key)}, capture_output=True, text=True,
                         timeout=300)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    served = pl.read_csv(keyed / "annual" / "2023" / "employee_credits.csv", infer_schema=False)
    plain = pl.read_csv(server.root / "cli-out" / "employee_credits.csv", infer_schema=False)
    assert served.filter(pl.col("status") == "ELIGIBLE").height > 0
    assert served.equals(plain)
    manifest = json.loads((keyed / "annual" / "2023" / "manifest.json").read_text())
    assert manifest["ssn_hash_key"]["source"] == "configured"


def test_a_quarterly_run_without_request_completes_and_says_so(server, keyed):
    from transforms.runs.quarterly import latest_completed_quarter

    year = latest_completed_quarter(dt.date.today())[0]  # the docs' example: the current tax year, Q2
    run = server.run(QUARTERLY, "quarter=2")
    assert run["state"]["type"] == "COMPLETED", server.logs(run["id"])
    said = f"no estimate request or application of tax year {year} received by"
    holds = "the submission holds applications of tax year 2023: 12; estimate requests of tax year 2023: 1"
    line = next((x for x in server.logs(run["id"]) if said in x), None)
    assert line and line.startswith("WARNING") and holds in line, server.logs(run["id"])
    assert re.fullmatch(rf"quarterly-q2-{year}-\d{{8}}T\d+Z-[0-9a-f]{{8}}", run["name"]), run["name"]
    assert {"impcredit", "quarterly", f"tax-year-{year}"} <= set(run["tags"])
    (child,) = server.children(run["id"])
    (artifact,) = server.call("/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [child["id"]]}}})
    assert artifact["key"] == f"quarterly-{year}-q2"
    assert said in artifact["data"] and holds in artifact["data"]
    (folder,) = (keyed / "quarterly" / str(year)).glob("q2-as-of-*")  # dated by its start in New York
    assert folder.name == f"q2-as-of-{dt.datetime.now(ZoneInfo('America/New_York')).date()}"
    assert (folder / "estimates.csv").read_text().count("\n") == 1  # the header only


def test_an_annual_run_without_application_fails(server, keyed):
    run = server.run(ANNUAL, "tax_year=2022", "as_of=2023-07-01")
    assert run["state"]["type"] == "FAILED", run["state"]
    assert "no application for tax year 2022" in run["state"]["message"], run["state"]["message"]


def test_an_annual_run_dated_after_today_fails_in_one_line_having_read_nothing(server, keyed):
    """Spec section 7: a decision is never dated in the future (a typo of the year)."""
    t = dt.date.today()
    day = dt.date(t.year + 2, t.month, min(t.day, 28))
    run = server.run(ANNUAL, "tax_year=2023", f"as_of={day}")
    message = run["state"]["message"]
    assert run["state"]["type"] == "FAILED", run["state"]
    assert f"--as-of {day} is after today" in message and "\n" not in message, message
    assert server.children(run["id"]) == []  # refused before anything was read


def test_serve_refuses_the_worker_deployments_which_freeze_nothing(server):
    r = subprocess.run([sys.executable, "flows/serve.py"], cwd=ROOT, env=server.env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "not started" in r.stderr and ANNUAL in r.stderr, r.stdout + r.stderr
    for name in (ANNUAL, QUARTERLY, CATCH_UP):
        dep = server.call(f"/deployments/name/{name}")
        assert dep["work_pool_name"] == "impcredit" and not dep["paused"]
        assert dep["job_variables"] in ({}, None)  # IMPCREDIT_INPUT/WORKDIR come from the worker when a run starts
        assert dep["pull_steps"] == [{"prefect.deployments.steps.set_working_directory": {"directory": str(ROOT)}}]
    names = {d["name"] for d in server.call("/deployments/filter", {})}
    assert names == {"annual", "quarterly-estimates", "catch-up"}  # serve.py wrote nothing
    crons = {d["name"]: [(x["schedule"]["cron"], x["schedule"]["timezone"]) for x in d["schedules"]]
             for d in server.call("/deployments/filter", {})}
    assert crons == {"annual": [("0 6 1 7 *", "America/New_York")],
                     "quarterly-estimates": [("0 6 15 1,4,6,9,12 *", "America/New_York")],  # GIT's January 15 too
                     "catch-up": [("0 8 1 * *", "America/New_York")]}


def test_the_server_sends_no_telemetry(server):
    assert server.call("/admin/settings")["server"]["analytics_enabled"] is False  # from prefect.toml
    assert "telemetry" not in server.log.read_text().lower()

