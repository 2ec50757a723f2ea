"""The shared local Prefect API on a shared server (issue 43, parts 1, 2 and 5): it signals only its
own process, answers only the agency's runs (Prefect's basic auth), refuses a tag concurrency limit
in one line, says a damaged database at once, and a wrong ``--dask-address`` ends in one line.
Real processes, a real Prefect API, real runs."""

from __future__ import annotations

import base64
import http.server
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from flows.api_process import identity
from transforms.synthetic.generate import generate_submission

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def env(home: Path) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "IMPCREDIT_API", "PREFECT_API_AUTH_STRING")}
    e.update(PREFECT_HOME=str(home), IMPCREDIT_API="shared", IMPCREDIT_API_IDLE_SECONDS="120", COLUMNS="300")
    return e


def cli(*args: str, e: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT, env=e, capture_output=True, text=True,
                          timeout=timeout)


def annual(sub: Path, tmp: Path, name: str, e: dict, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = cli("annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--out", str(tmp / name / "out"),
            "--workdir", str(tmp / name / "work"), *extra, e=e)
    return r, time.monotonic() - t0


def servers_of(home: Path) -> list[int]:
    """Processes serving the shared API of this PREFECT_HOME."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and b"flows.api_server" in (d / "cmdline").read_bytes() and \
                    f"PREFECT_HOME={home}".encode() in (d / "environ").read_bytes():
                out.append(int(d.name))
        except OSError:
            continue
    return out


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_error_line(r: subprocess.CompletedProcess) -> str:
    """The one line a failed command says (the API's notes of what it waits for aside)."""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("impcredit: ")]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


@pytest.fixture
def sub(tmp_path) -> Path:
    generate_submission(tmp_path / "sub", employers=3, seed=4, tax_year=2023)
    return tmp_path / "sub"


def test_a_state_file_naming_another_process_never_gets_it_signalled(tmp_path, sub):
    """A reused pid (here a `sleep` leading its own session, as the API did) is neither stopped by
    `impcredit api stop` nor by a run: not with the old state (a pid only), not with its start time
    but another command line. The stale state is removed with a one-line note."""
    home = tmp_path / "prefect"
    home.mkdir()
    e = env(home)
    sleeper = subprocess.Popen(["sleep", "900"], start_new_session=True)
    port = closed_port()
    base = {"pid": sleeper.pid, "port": port, "url": f"http://127.0.0.1:{port}/api", "version": metadata.version("prefect"),
            "idle_seconds": 600.0}
    state = home / "impcredit-api.json"
    try:
        state.write_text(json.dumps(base))  # the state file as the API left it before: a pid only
        r = cli("api", "stop", e=e)
        assert r.returncode == 0 and "no shared Prefect API was running" in r.stdout, r.stdout + r.stderr
        assert f"process {sleeper.pid} is not the API it recorded" in r.stderr and "not signalled" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert sleeper.poll() is None and not state.exists()

        same_start = identity(sleeper.pid)["start"]  # its start time matches; its command line does not
        cmdline = [sys.executable, "-m", "flows.api_server", "--port", str(port)]
        state.write_text(json.dumps({**base, "start": same_start, "cmdline": cmdline, "own_session": True}))
        r, _ = annual(sub, tmp_path, "r1", e)
        assert r.returncode == 0, r.stderr
        assert f"process {sleeper.pid} is not the API it recorded" in r.stderr
        assert sleeper.poll() is None, "a run signalled a process that is not its API"
        new = json.loads(state.read_text())
        assert new["pid"] != sleeper.pid and servers_of(home) == [new["pid"]]
        assert identity(new["pid"]) == {"start": new["start"], "cmdline": new["cmdline"]} and new["own_session"]

        state.write_text(json.dumps({**base, "start": same_start, "cmdline": cmdline, "own_session": True}))
        r = cli("api", "stop", e=e)
        assert r.returncode == 0 and "no shared Prefect API was running" in r.stdout
        assert sleeper.poll() is None
        state.write_text(json.dumps(new))  # the API's own state: stopped
        r = cli("api", "stop", e=e)
        assert r.returncode == 0 and r.stdout.strip() == "stopped", r.stdout + r.stderr
        deadline = time.monotonic() + 20
        while servers_of(home) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert servers_of(home) == [] and sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()
        cli("api", "stop", e=e)


def test_the_api_answers_only_with_its_credential_and_a_tag_limit_ends_a_run_in_one_line(tmp_path, sub):
    home = tmp_path / "prefect"
    e = env(home)
    try:
        r, _ = annual(sub, tmp_path, "r1", e)
        assert r.returncode == 0, r.stderr
        secret = home / "impcredit-api.secret"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        cred = secret.read_text().strip()
        user, password = cred.split(":", 1)
        assert user == "impcredit" and len(password) >= 40
        st = json.loads((home / "impcredit-api.json").read_text())
        url = st["url"]
        assert password not in " ".join(st["cmdline"])  # never on a command line others can read
        assert httpx.post(f"{url}/flow_runs/filter", json={}).status_code == 401
        assert httpx.post(f"{url}/flow_runs/filter", json={}, auth=(user, "guess")).status_code == 401
        assert httpx.post(f"{url}/concurrency_limits/", json={"tag": "impcredit", "concurrency_limit": 0}).status_code == 401
        runs = httpx.post(f"{url}/flow_runs/filter", json={}, auth=(user, password))
        assert runs.status_code == 200 and [f["name"] for f in runs.json()][0].startswith("annual-2023-")
        assert httpx.get(f"{url}/health").status_code == 200  # the liveness probe stays open

        # a limit of 0 on the tag, set with the credential (a misconfiguration): one line, no wait
        token = base64.b64encode(cred.encode()).decode()
        made = httpx.post(f"{url}/concurrency_limits/", json={"tag": "impcredit", "concurrency_limit": 0},
                          headers={"Authorization": f"Basic {token}"})
        assert made.status_code in (200, 201), made.text
        r, took = annual(sub, tmp_path, "r2", e)
        assert r.returncode == 2 and took < 45, (took, r.stderr)
        line = one_error_line(r)
        assert "concurrency limit on tag 'impcredit' (0 at once) that impcredit did not set" in line
        assert "prefect concurrency-limit delete impcredit" in line and password not in line
        assert httpx.delete(f"{url}/concurrency_limits/tag/impcredit", auth=(user, password)).status_code == 200
        r, _ = annual(sub, tmp_path, "r3", e)
        assert r.returncode == 0, r.stderr
    finally:
        cli("api", "stop", e=e)


def test_a_damaged_prefect_database_ends_a_run_in_one_line_and_leaves_no_server(tmp_path, sub):
    home = tmp_path / "prefect"
    home.mkdir()
    e = env(home)
    db = home / "prefect.db"
    db.write_bytes(os.urandom(16384))  # garbage over the whole file
    try:
        r, took = annual(sub, tmp_path, "r1", e)
        assert r.returncode == 2 and took < 45, (took, r.stderr)
        line = one_error_line(r)
        assert f"database {db} is damaged (not an SQLite database)" in line
        assert "impcredit api stop" in line and f"mv {db} {db}.damaged" in line
        assert servers_of(home) == []
        # SQLite's header but garbage after it: the server fails as it starts, said from its log, and is gone
        db.write_bytes(b"SQLite format 3\0" + os.urandom(16384))
        r, took = annual(sub, tmp_path, "r2", e)
        assert r.returncode == 2 and took < 45, (took, r.stderr)
        line = one_error_line(r)
        assert "the local Prefect API could not start" in line and "file is not a database" in line
        assert f"mv {db} {db}.damaged" in line
        assert servers_of(home) == [], "the failed server lingers"
        assert not (home / "impcredit-api.json").exists()
    finally:
        cli("api", "stop", e=e)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_a_wrong_dask_address_ends_in_one_line_naming_what_is_there(tmp_path, sub):
    """An HTTP port (a dashboard) and a port that accepts and never answers: Dask's handshake has
    no deadline; the command's probe (the setting dask_connect_s, default 10 s) has."""
    e = env(tmp_path / "prefect")
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts (the kernel's backlog), never answers
    try:
        address = f"tcp://127.0.0.1:{web.server_address[1]}"
        r, took = annual(sub, tmp_path, "http", e, "--dask-address", address)
        assert r.returncode == 2 and took < 45, (took, r.stderr)
        line = one_error_line(r)
        assert f"cannot reach the Dask scheduler at {address}: an HTTP server (HTTP/1.0 200 OK" in line

        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        r, took = annual(sub, tmp_path, "silent", e, "--dask-address", address)
        assert r.returncode == 2 and took < 45, (took, r.stderr)
        line = one_error_line(r)
        assert f"cannot reach the Dask scheduler at {address}: a port that accepts connections but answers nothing" in line
        assert "dask_connect_s" in line

        address = f"tcp://127.0.0.1:{closed_port()}"
        r, took = annual(sub, tmp_path, "closed", e, "--dask-address", address)
        assert r.returncode == 2 and took < 20, (took, r.stderr)
        assert f"cannot reach the Dask scheduler at {address}: nothing listens there (connection refused)" in one_error_line(r)
        assert not (tmp_path / "http" / "work").exists()  # nothing run, no API started for it
        assert not (tmp_path / "prefect" / "impcredit-api.json").exists()
    finally:
        web.shutdown()
        silent.close()


def test_a_run_waiting_for_the_workdir_says_so(tmp_path):
    """--wait over a few seconds: the wait is said on the stage lines, then the run goes on."""
    import logging

    from transforms.runs.record import workdir_lock

    lock = tmp_path / "work" / ".impcredit.lock"
    lock.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", f"from filelock import FileLock; import time; l = FileLock({str(lock)!r}); "
                               "l.acquire(); print('held', flush=True); time.sleep(5)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())
    log = logging.getLogger("impcredit.stages")
    log.addHandler(handler)
    level, log.level = log.level, logging.INFO
    t0 = time.monotonic()
    try:
        with workdir_lock(tmp_path / "work", wait_seconds=60):
            waited = time.monotonic() - t0
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    holder.wait()
    assert 3 < waited < 30
    assert said == [
        f"waiting up to 60 s for the run using the workdir {tmp_path / 'work'} to finish (--wait)"]


def test_the_credential_is_private_and_one_others_could_read_is_replaced(tmp_path, monkeypatch, capsys):
    from flows import api

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    first = api.credential()
    secret = tmp_path / "impcredit-api.secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and secret.read_text() == first + "\n"
    assert api.credential() == first  # kept
    secret.chmod(0o644)
    second = api.credential()
    assert second != first and second.startswith("impcredit:") and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert f"{secret} was readable by other accounts: a new credential replaces it" in capsys.readouterr().err
    assert api.server_env()["PREFECT_SERVER_API_AUTH_STRING"] == second
