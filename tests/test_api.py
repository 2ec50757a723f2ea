"""The shared local Prefect API of CLI runs (flows.api): started by the first run, reused by the
next, stopped when idle, never kept alive by a killed run. Real processes, real Prefect API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from transforms.synthetic.generate import generate_submission

ROOT = Path(__file__).resolve().parents[1]


def env(home: Path, idle: float) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "IMPCREDIT_API")}
    e.update(PREFECT_HOME=str(home), IMPCREDIT_API="shared", IMPCREDIT_API_IDLE_SECONDS=str(idle))
    return e


def annual(sub: Path, tmp: Path, name: str, e: dict, **kw) -> subprocess.CompletedProcess | subprocess.Popen:
    args = [sys.executable, "-m", "flows.cli", "annual", "--input", str(sub), "--tax-year", "2023", "--as-of",
            "2024-07-01", "--out", str(tmp / name / "out"), "--workdir", str(tmp / name / "work")]
    if kw.get("background"):
        return subprocess.Popen(args, cwd=ROOT, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return subprocess.run(args, cwd=ROOT, env=e, capture_output=True, text=True, timeout=300)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def servers_of(home: Path) -> list[int]:
    """Processes serving a Prefect API for this PREFECT_HOME (ours or Prefect's temporary one)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (d / "environ").read_bytes()
        except OSError:
            continue
        if ("flows.api_server" in cmd or "prefect.server.api.server:create_app" in cmd) and \
                f"PREFECT_HOME={home}".encode() in environ:
            out.append(int(d.name))
    return out


@pytest.mark.slow
def test_the_first_run_starts_the_api_the_next_reuse_it_and_it_stops_when_idle(tmp_path):
    sub = tmp_path / "sub"
    generate_submission(sub, employers=5, seed=1, tax_year=2023)
    home = tmp_path / "prefect"
    e = env(home, idle=4)
    r1 = annual(sub, tmp_path, "r1", e)
    assert r1.returncode == 0, r1.stderr
    # the run records the wall time the user waited, the API's start included (issue 23, item 6)
    import duckdb

    con = duckdb.connect(str(tmp_path / "r1" / "work" / "impcredit.duckdb"), read_only=True)
    started, committed, summary = con.sql("SELECT started_at, committed_at, summary_json FROM runs").fetchall()[0]
    con.close()
    assert json.loads(summary)["wall_seconds"] > (committed - started).total_seconds() + 0.3
    state = json.loads((home / "impcredit-api.json").read_text())
    assert alive(state["pid"]) and servers_of(home) == [state["pid"]]
    t0 = time.monotonic()
    r2 = annual(sub, tmp_path, "r2", e)
    warm = time.monotonic() - t0
    assert r2.returncode == 0, r2.stderr
    assert json.loads((home / "impcredit-api.json").read_text())["pid"] == state["pid"]  # reused, not started again
    assert warm < 15
    # a run killed with SIGKILL holds no lease: the API stops after its idle time all the same
    p = annual(sub, tmp_path, "killed", e, background=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and servers_of(home):
        time.sleep(0.5)
    assert servers_of(home) == [], "a Prefect API process was left behind"
    # the next run starts it again and runs to the end
    r3 = annual(sub, tmp_path, "r3", e)
    assert r3.returncode == 0, r3.stderr
    new = json.loads((home / "impcredit-api.json").read_text())["pid"]
    assert new != state["pid"]
    stop = subprocess.run([sys.executable, "-m", "flows.cli", "api", "stop"], cwd=ROOT, env=e, capture_output=True, text=True)
    assert stop.returncode == 0 and "stopped" in stop.stdout
    assert not alive(new) or servers_of(home) == []


@pytest.mark.slow
def test_the_shared_api_server_does_not_inherit_the_hash_key(tmp_path):
    """The key stays with the run (issue 21): the server a run starts outlives it, so neither
    IMPCREDIT_HMAC_KEY nor the path of IMPCREDIT_HMAC_KEY_FILE is in its environment."""
    sub = tmp_path / "sub"
    generate_submission(sub, employers=3, seed=2, tax_year=2023)
    home = tmp_path / "prefect"
    key_file = tmp_path / "secret-dir" / "hash.key"
    key_file.parent.mkdir()
    key_file.write_text("k" * 48)
    key_file.chmod(0o600)
    e = env(home, idle=30)
    e["IMPCREDIT_HMAC_KEY_FILE"] = str(key_file)
    try:
        r = annual(sub, tmp_path, "r", e)
        assert r.returncode == 0, r.stderr
        servers = servers_of(home)
        assert servers, "the run started no shared API"
        for pid in servers:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert not [v for v in environ if v.startswith(b"IMPCREDIT_HMAC_KEY")]
            assert not [v for v in environ if str(key_file).encode() in v or b"k" * 48 in v]
            assert f"PREFECT_HOME={home}".encode() in environ  # it is the server, read as it runs
    finally:
        subprocess.run([sys.executable, "-m", "flows.cli", "api", "stop"], cwd=ROOT, env=e, capture_output=True)
