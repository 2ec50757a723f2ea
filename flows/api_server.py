"""The shared local Prefect API of the embedded default (``flows.api`` starts it; not for direct use).

    python -m flows.api_server --port PORT --idle SECONDS --leases DIR [--state FILE]

Prefect's own API (the app its temporary per-run server runs, UI and services off) on
127.0.0.1:PORT, behind a watchdog: it stops itself once no run holds a lease (a file
``<pid>`` in DIR whose process is alive) and no request came for ``--idle`` seconds. A run
killed with SIGKILL holds no lease (its process is gone), so it never keeps the API alive.
Every request but ``/health`` needs the credential of ``PREFECT_SERVER_API_AUTH_STRING`` (set by
``flows.api``). It removes the state FILE on its way out when the file names it, and exits 3 when
Prefect's app could not start (a damaged database: said in its log), never lingering.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from pathlib import Path


def live_leases(leases: Path) -> int:
    """Leases of living processes (the files of dead ones are removed)."""
    n = 0
    for f in leases.glob("*"):
        try:
            pid = int(f.name)
            os.kill(pid, 0)
            n += 1
        except (ValueError, ProcessLookupError):
            with contextlib.suppress(OSError):
                f.unlink()
        except PermissionError:
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--idle", type=float, required=True)
    ap.add_argument("--leases", type=Path, required=True)
    ap.add_argument("--state", type=Path, default=None)
    args = ap.parse_args()
    os.umask(0o077)  # its database (every run's record) and logs: the agency's alone (issue 43)
    os.environ.update({"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"})

    import uvicorn
    from prefect.server.api.server import create_app

    app = create_app()
    last = [time.monotonic()]
    active = [0]

    async def tracked(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        active[0] += 1
        last[0] = time.monotonic()
        try:
            return await app(scope, receive, send)
        finally:
            active[0] -= 1
            last[0] = time.monotonic()

    server = uvicorn.Server(uvicorn.Config(tracked, host="127.0.0.1", port=args.port, log_level="error",
                                           lifespan="on", access_log=False))

    async def watchdog() -> None:
        while not server.should_exit:
            await asyncio.sleep(min(1.0, args.idle / 2))
            if active[0] == 0 and time.monotonic() - last[0] > args.idle and live_leases(args.leases) == 0:
                server.should_exit = True

    async def run() -> None:
        watching = asyncio.create_task(watchdog())
        try:
            await server.serve()
        finally:
            watching.cancel()

    try:
        asyncio.run(run())
    finally:
        forget(args.state)
    if not server.started:
        raise SystemExit(3)


def forget(state: Path | None) -> None:
    """Remove the state file when it names this process (a later API's file stays)."""
    import json

    with contextlib.suppress(OSError, ValueError, AttributeError):
        if state is not None and int(json.loads(state.read_text()).get("pid", 0)) == os.getpid():
            state.unlink()


if __name__ == "__main__":
    main()
