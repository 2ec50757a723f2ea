"""``impcredit api status|stop``: the shared local Prefect API of CLI runs (``flows.api``)."""

from __future__ import annotations

import typer

from flows import api
from flows.cli import common, listing

api_app = typer.Typer(help="The shared local Prefect API of CLI runs (started on first use, stops when idle).",
                      no_args_is_help=True)


API_KEYS = ["running", "url", "pid", "version", "idle_seconds"]


@api_app.command("status")
def api_status(format: listing.Format = "table") -> None:
    """Whether the shared local Prefect API is running: its address, process and idle timeout.

    Example: impcredit api status --format json
    """
    st = api.status()
    if listing.machine(format, API_KEYS, {"running": st is not None, **(st or {})}):
        return
    if st is None:
        common.console.print("no shared Prefect API is running (the next run starts one)")
        return
    common.console.print(f"running at {st['url']} (process {st['pid']}, Prefect {st['version']}; stops after "
                         f"{st['idle_seconds']:g} s without runs). Browse its runs with PREFECT_API_URL={st['url']} "
                         f"PREFECT_API_AUTH_STRING=\"$(cat {api.paths()[0].with_name(api.SECRET_FILE)})\" "
                         ".venv/bin/prefect flow-run ls", soft_wrap=True)


@api_app.command("stop")
def api_stop() -> None:
    """Stop the shared local Prefect API now (the next run starts it again)."""
    common.console.print("stopped" if api.stop() else "no shared Prefect API was running")
