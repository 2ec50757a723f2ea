"""The Prefect API of a CLI run (the embedded default: no server started by hand).

Prefect 3 runs a flow against an API. Without ``PREFECT_API_URL`` it starts a temporary server
for every process, about 6-7 s on this machine before any work. Here the first run starts one
shared local API instead (``flows.api_server``: Prefect's own app, its database under
``PREFECT_HOME``) and the next runs reuse it:

- ``ensure_api()`` (before Prefect is imported) finds the API of ``PREFECT_HOME`` alive and of
  this Prefect version, or starts it (one start at a time: a file lock), and points
  ``PREFECT_API_URL`` at it;
- the run holds a lease (a file named by its process id) while it runs; the API stops itself once
  no living process holds a lease and ``IMPCREDIT_API_IDLE_SECONDS`` (default 600) passed without
  a request. A run killed with SIGKILL leaves its lease to a dead process, which never keeps the
  API alive; the next run removes the stale lease and state;
- ``impcredit api status|stop`` shows or stops it.

``IMPCREDIT_API=temporary`` keeps Prefect's own per-run temporary server (the tests, inside
Prefect's test harness); ``PREFECT_API_URL`` set (a real server) is used as it is.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

from transforms import private

IDLE_ENV = "IMPCREDIT_API_IDLE_SECONDS"
MODE_ENV = "IMPCREDIT_API"
DEFAULT_IDLE = 600.0


def _home() -> Path:
    from flows import _env

    _env.configure()
    return Path(os.environ["PREFECT_HOME"])


def paths() -> tuple[Path, Path, Path, Path]:
    """(state file, lock file, leases folder, log file) under ``PREFECT_HOME``."""
    home = _home()
    return home / "impcredit-api.json", home / "impcredit-api.lock", home / "impcredit-api.leases", home / "impcredit-api.log"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def status() -> dict | None:
    """The shared API's state (pid, port, url, version) when it is alive and answers; else None."""
    state_file = paths()[0]
    try:
        st = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return None
    if not _alive(int(st.get("pid", 0))) or not _healthy(st["url"]):
        return None
    return st


def stop() -> bool:
    """Stop the shared API (SIGTERM, then SIGKILL); True when one was running."""
    state_file = paths()[0]
    try:
        st = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return False
    pid = int(st.get("pid", 0))
    was = pid > 0 and _alive(pid)
    if was:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    state_file.unlink(missing_ok=True)
    return was


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SECRET_ENV_PREFIX = "IMPCREDIT_HMAC_KEY"  # the ssn hash key and its file's path (IMPCREDIT_HMAC_KEY_FILE)


def server_env() -> dict[str, str]:
    """The shared API server's environment: this process's without the ssn hash key or its
    file's path (the server outlives the run; the key stays with the run)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(SECRET_ENV_PREFIX)}


def _start(state_file: Path, leases: Path, log: Path) -> dict:
    port = _free_port()
    idle = float(os.environ.get(IDLE_ENV, DEFAULT_IDLE))
    with log.open("ab") as fh:
        private.own(log)
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.api_server", "--port", str(port), "--idle", str(idle), "--leases", str(leases)],
            cwd=str(Path(__file__).resolve().parents[1]), stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, env=server_env(),
            start_new_session=True,  # its own session: a terminal's Ctrl-C to a run does not stop it
        )
    url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120"))
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the local Prefect API exited while starting (code {proc.returncode}); see {log}")
        if _healthy(url, timeout=0.5):
            st = {"pid": proc.pid, "port": port, "url": url, "version": metadata.version("prefect"), "idle_seconds": idle}
            tmp = state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(st))
            os.replace(tmp, state_file)
            return st
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    raise RuntimeError(f"the local Prefect API did not start within its timeout; see {log}")


def ensure_api() -> str | None:
    """Point this process at the shared local API (started when none is alive); hold a lease on
    it until the process ends. None when a configured ``PREFECT_API_URL`` or the temporary mode
    applies. Call it before Prefect is imported."""
    if os.environ.get("PREFECT_API_URL") or os.environ.get(MODE_ENV, "shared") == "temporary":
        return None
    from filelock import FileLock

    state_file, lock, leases, log = paths()
    leases.mkdir(parents=True, exist_ok=True)
    lease = leases / str(os.getpid())
    lease.touch()  # before the check: the API never stops between the check and the run
    atexit.register(lambda: lease.unlink(missing_ok=True))
    with FileLock(str(lock), timeout=180):
        st = status()
        if st is not None and st.get("version") != metadata.version("prefect"):
            stop()  # started by another Prefect version: its database migrations differ
            st = None
        if st is None:
            with contextlib.suppress(OSError):
                old = json.loads(state_file.read_text())
                if _alive(int(old.get("pid", 0))):  # alive but not answering: replaced
                    os.killpg(int(old["pid"]), signal.SIGKILL)
            state_file.unlink(missing_ok=True)
            st = _start(state_file, leases, log)
    os.environ["PREFECT_API_URL"] = st["url"]
    return st["url"]


@contextlib.contextmanager
def run_settings():
    """Prefect settings of a CLI run on the shared API: no flow-run heartbeats (they detect
    crashed runs for a server's services, which the shared API does not run; their thread made
    every run wait up to a second at its end). On a configured server, Prefect's defaults."""
    if os.environ.get(MODE_ENV, "shared") == "temporary" or not is_shared(os.environ.get("PREFECT_API_URL", "")):
        yield
        return
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


def is_shared(url: str) -> bool:
    """Whether ``url`` is the shared local API of this PREFECT_HOME."""
    try:
        st = json.loads(paths()[0].read_text())
    except (OSError, ValueError):
        return False
    return bool(url) and url == st.get("url")


def flow_run_link(flow_run_id: str | None) -> str | None:
    """The Prefect UI page of a flow run when a server with a UI is configured (PREFECT_API_URL
    set by the operator, not the shared local API, which runs without UI)."""
    url = os.environ.get("PREFECT_API_URL", "")
    if not flow_run_id or not url or is_shared(url):
        return None
    return f"{os.environ.get('PREFECT_UI_URL') or url.removesuffix('/api')}/runs/flow-run/{flow_run_id}"
