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

Only its own process is ever signalled: the state file (``impcredit-api.json``) records the API's
process id with its start time (``/proc/<pid>/stat`` field 22, psutil's create time elsewhere) and
command line, and a run or ``api stop`` signals it (its process group: started in a session of its
own) only when all three match; a state file naming any other process is removed with a note.
The API is the agency's alone: Prefect's basic auth (the server's ``server.api.auth_string``, the
client's ``api.auth_string``) with a random secret kept in ``impcredit-api.secret`` (mode 0600) under
``PREFECT_HOME``; a request without it is refused (401), and a run refuses, in one line, an API
holding a tag concurrency limit (the project sets none: an outsider's, or a misconfiguration).

``IMPCREDIT_API=temporary`` keeps Prefect's own per-run temporary server (the tests, inside
Prefect's test harness); ``PREFECT_API_URL`` set (a real server) is used as it is.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

from flows.api_process import identity, ours, signal_if_ours
from transforms import private

IDLE_ENV = "IMPCREDIT_API_IDLE_SECONDS"
MODE_ENV = "IMPCREDIT_API"
DEFAULT_IDLE = 600.0


def _home() -> Path:
    from flows import _env

    _env.configure()
    return Path(os.environ["PREFECT_HOME"])


class ApiError(RuntimeError):
    """The shared local API cannot serve this run (one line, with the way on)."""


def note(message: str) -> None:
    """A line on stderr: what the API's machinery did or waits for."""
    print(f"impcredit: {message}", file=sys.stderr, flush=True)


def paths() -> tuple[Path, Path, Path, Path]:
    """(state file, lock file, leases folder, log file) under ``PREFECT_HOME``."""
    home = _home()
    return home / "impcredit-api.json", home / "impcredit-api.lock", home / "impcredit-api.leases", home / "impcredit-api.log"


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def _read_state(state_file: Path) -> dict | None:
    try:
        st = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return None
    return st if isinstance(st, dict) else None


def _forget(state_file: Path, st: dict) -> None:
    """Remove a state file that names no API of ours, with a one-line note; nothing is signalled."""
    pid = st.get("pid")
    if identity(int(pid) if str(pid).isdigit() else 0) is None:
        note(f"removed the local Prefect API's stale state file {state_file} (its process {pid} is gone)")
    else:
        note(f"removed the local Prefect API's stale state file {state_file}: process {pid} is not the API it "
             "recorded (its start time or command line differ); it was not signalled")
    state_file.unlink(missing_ok=True)


def status() -> dict | None:
    """The shared API's state (pid, port, url, version) when it is alive, ours and answers; else None."""
    st = _read_state(paths()[0])
    if st is None or not ours(st) or not str(st.get("url", "")).startswith("http://127.0.0.1:") or not _healthy(st["url"]):
        return None
    return st


def stop() -> bool:
    """Stop the shared API (SIGTERM, then SIGKILL), only when the state file names it (``ours``);
    True when one was running. A state file naming anything else is removed with a note."""
    state_file = paths()[0]
    st = _read_state(state_file)
    if st is None:
        return False
    if not signal_if_ours(st, signal.SIGTERM):
        _forget(state_file, st)
        return False
    for _ in range(50):
        if not ours(st):
            break
        time.sleep(0.1)
    else:
        signal_if_ours(st, signal.SIGKILL)
    if _read_state(state_file) == st:
        state_file.unlink(missing_ok=True)
    return True


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SECRET_ENV_PREFIX = "IMPCREDIT_HMAC_KEY"  # the ssn hash key and its file's path (IMPCREDIT_HMAC_KEY_FILE)
SECRET_FILE = "impcredit-api.secret"  # the API's credential, under PREFECT_HOME (mode 0600)
AUTH_USER = "impcredit"
SQLITE_HEADER = b"SQLite format 3\0"
SAY_AFTER_S = 3.0  # a wait longer than this says what it waits for


def credential(create: bool = True) -> str | None:
    """The shared API's basic-auth string (``impcredit:<secret>``), from ``impcredit-api.secret``
    under ``PREFECT_HOME``; made at first use (a random secret, mode 0600). A file others could
    read is replaced (the API that knew it is stopped) with a note. None when there is none and
    ``create`` is false."""
    path = _home() / SECRET_FILE
    try:
        if os.stat(path).st_mode & 0o077:
            note(f"{path} was readable by other accounts: a new credential replaces it (the running API is stopped)")
            stop()
            path.unlink()
        else:
            value = path.read_text().strip()
            if value.startswith(f"{AUTH_USER}:") and len(value) > len(AUTH_USER) + 16:
                return value
    except FileNotFoundError:
        pass
    if not create:
        return None
    value = f"{AUTH_USER}:{secrets.token_urlsafe(32)}"
    tmp = path.with_name(f"{SECRET_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    os.replace(tmp, path)
    return value


def server_env() -> dict[str, str]:
    """The shared API server's environment: this process's without the ssn hash key or its
    file's path (the server outlives the run; the key stays with the run), with the credential
    every request must present (Prefect's ``server.api.auth_string``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_ENV_PREFIX)}
    env["PREFECT_SERVER_API_AUTH_STRING"] = credential()
    return env


def damaged_database(home: Path) -> str | None:
    """A line saying the API's SQLite database is damaged (its header is not SQLite's), with the
    way on; None when it is absent, empty, sound or not the default file."""
    if os.environ.get("PREFECT_SERVER_DATABASE_CONNECTION_URL") or os.environ.get("PREFECT_API_DATABASE_CONNECTION_URL"):
        return None
    db = home / "prefect.db"
    try:
        with db.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:
        return None
    if not head or head == SQLITE_HEADER:
        return None
    return (f"the local Prefect API's database {db} is damaged (not an SQLite database): run `impcredit api stop` and "
            f"move it aside (mv {db} {db}.damaged); the next run starts a new one (Prefect's run records only: the "
            "ledger and the lake are not in it)")


def _started_badly(proc: subprocess.Popen, log: Path, since: int) -> str | None:
    """Why the server being started is gone or failing: it exited, or its log (from ``since``)
    says Prefect's app failed to start. None while it is still starting."""
    try:
        with log.open("rb") as fh:
            fh.seek(since)
            said = fh.read().decode(errors="replace")
    except OSError:
        said = ""
    if proc.poll() is None and "Application startup failed" not in said:
        return None
    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    raised = [ln for ln in lines if re.match(r"[\w.]*(Error|Exception)\b[^:]*:", ln)]  # an exception's last line
    return (raised or lines or [f"it exited with code {proc.poll()}"])[-1][:300]


def _start(state_file: Path, leases: Path, log: Path) -> dict:
    """Start the API (a session of its own) and wait until it answers; its state file records
    what identifies it (``identity``). ``ApiError`` when it exits or fails while starting (it is
    stopped: nothing lingers) or does not answer within Prefect's start-up timeout."""
    port = _free_port()
    idle = float(os.environ.get(IDLE_ENV, DEFAULT_IDLE))
    env = server_env()
    since = log.stat().st_size if log.exists() else 0
    with log.open("ab") as fh:
        private.own(log)
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.api_server", "--port", str(port), "--idle", str(idle), "--leases", str(leases),
             "--state", str(state_file)],
            cwd=str(Path(__file__).resolve().parents[1]), stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,  # its own session: a terminal's Ctrl-C to a run does not stop it
        )
    url = f"http://127.0.0.1:{port}/api"
    began = time.monotonic()
    timeout = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120"))
    said = False
    while time.monotonic() < began + timeout:
        if (why := _started_badly(proc, log, since)) is not None:
            _end(proc)
            db = state_file.parent / "prefect.db"
            way = (f"`impcredit api stop` and move its database aside (mv {db} {db}.damaged)" if "database" in why.lower()
                   else "`impcredit api stop`, then run again")
            raise ApiError(f"the local Prefect API could not start: {why} (its log: {log}); {way}")
        if _healthy(url, timeout=0.5):
            st = {"pid": proc.pid, **(identity(proc.pid) or {}), "own_session": True, "port": port, "url": url,
                  "version": metadata.version("prefect"), "idle_seconds": idle}
            tmp = state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(st))
            os.replace(tmp, state_file)
            return st
        if not said and time.monotonic() - began > SAY_AFTER_S:
            note(f"starting the local Prefect API (its database is made or migrated on a first start; log: {log})")
            said = True
        time.sleep(0.1)
    _end(proc)
    raise ApiError(f"the local Prefect API did not start within its timeout ({timeout:g} s, "
                   f"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS); see {log}")


def _end(proc: subprocess.Popen) -> None:
    """Stop a server this process started (its session's group: it leads it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _locked(lock: Path):
    """The start lock (one start at a time), saying on stderr what it waits for when it waits."""
    from filelock import FileLock, Timeout

    held = FileLock(str(lock), timeout=SAY_AFTER_S)
    try:
        held.acquire()
    except Timeout:
        note(f"waiting for another run that is starting or checking the local Prefect API (lock {lock})")
        held = FileLock(str(lock), timeout=180)
        try:
            held.acquire()
        except Timeout:
            raise ApiError(f"the local Prefect API's lock {lock} was held for over 3 minutes by another run; try "
                           "again, or `impcredit api stop`") from None
    return held


def ensure_api() -> str | None:
    """Point this process at the shared local API (started when none is alive) and give it the
    API's credential; hold a lease on it until the process ends. None when a configured
    ``PREFECT_API_URL`` or the temporary mode applies. Call it before Prefect is imported.
    ``ApiError``: its database is damaged, or it could not start."""
    if os.environ.get("PREFECT_API_URL") or os.environ.get(MODE_ENV, "shared") == "temporary":
        return None
    state_file, lock, leases, log = paths()
    leases.mkdir(parents=True, exist_ok=True)
    lease = leases / str(os.getpid())
    lease.touch()  # before the check: the API never stops between the check and the run
    atexit.register(lambda: lease.unlink(missing_ok=True))
    held = _locked(lock)
    try:
        cred = credential()
        st = status()
        if st is not None and st.get("version") != metadata.version("prefect"):
            stop()  # started by another Prefect version: its database migrations differ
            st = None
        if st is None:
            old = _read_state(state_file)
            if old is not None and not signal_if_ours(old, signal.SIGKILL):  # ours, alive but not answering: replaced
                _forget(state_file, old)
            state_file.unlink(missing_ok=True)
            if (damaged := damaged_database(state_file.parent)) is not None:
                raise ApiError(damaged)
            st = _start(state_file, leases, log)
    finally:
        held.release()
    os.environ["PREFECT_API_URL"] = st["url"]
    os.environ["PREFECT_API_AUTH_STRING"] = cred
    return st["url"]


@contextlib.contextmanager
def run_settings():
    """Prefect settings of a CLI run on the shared API: no flow-run heartbeats (they detect
    crashed runs for a server's services, which the shared API does not run; their thread made
    every run wait up to a second at its end); and no tag concurrency limit there
    (``check_limits``). On a configured server, Prefect's defaults (its limits are its operator's)."""
    if os.environ.get(MODE_ENV, "shared") == "temporary" or not is_shared(os.environ.get("PREFECT_API_URL", "")):
        yield
        return
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    check_limits()
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


def check_limits() -> None:
    """``ApiError`` (one line, the way on) when the shared API holds a concurrency limit on a
    tag: the project sets none, and Prefect's task engine would make every task of a run with
    that tag fail (a limit of 0) or wait for a slot (a limit reached), silently."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        limits = client.read_concurrency_limits(limit=50, offset=0)
    if not limits:
        return
    named = ", ".join(f"{lim.tag!r} ({lim.concurrency_limit} at once)" for lim in limits)
    first = limits[0].tag
    raise ApiError(f"the local Prefect API has a concurrency limit on tag {named} that impcredit did not set: runs "
                   f"tagged so would fail or wait for ever; delete it (PREFECT_API_URL={os.environ['PREFECT_API_URL']} "
                   f"PREFECT_API_AUTH_STRING=\"$(cat {_home() / SECRET_FILE})\" .venv/bin/prefect concurrency-limit "
                   f"delete {first})")


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
