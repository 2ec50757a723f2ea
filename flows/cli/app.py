"""The ``impcredit`` typer app, built from one module per command (``flows/cli/<command>.py``).

Each command module defines its command as a plain function and imports ``flows.cli.common``
for what they share; none imports this module or ``flows.cli``, so there is no import circle.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Annotated

import typer

from flows.cli import (
    annual,
    backfill,
    check,
    common,
    documents,
    explain,
    finding,
    generate,
    history,
    ingest,
    lake,
    layouts,
    prefect_api,
    quarterly,
    release,
    reopen,
    settings,
    variance,
    whatif,
)


def _flags_without_type() -> None:
    """Typer 0.29 writes each option's Python type in --help (``<bool>`` beside a flag, ``<str>``
    beside an argument); a flag takes no value and an argument is named by its metavar, so they
    show none (every other option has a metavar: DIR, YEAR, YYYY-MM-DD)."""
    from typer.core import TyperArgument, TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich
    TyperArgument.display_type_rich = lambda self, ctx: None


_flags_without_type()

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="New Jersey impairment tax credit (N.J.S.A. 34:11-56a40).")
for command in (annual.annual, generate.generate, ingest.ingest, history.runs, reopen.reopen, release.release,
                settings.settings, documents.documents, check.check):
    app.command()(command)
app.add_typer(prefect_api.api_app, name="api")
app.add_typer(lake.lake_app, name="lake")
app.add_typer(layouts.layouts_app, name="layouts")
app.add_typer(finding.finding_app, name="finding")
for command in (explain.explain, quarterly.quarterly, whatif.whatif, backfill.backfill, variance.variance):
    app.command()(command)


def _version(value: bool) -> None:
    if value:
        from transforms.runs.annual import code_version

        common.console.print(f"impcredit {code_version()}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version (and the code's commit) and exit.")] = False,
) -> None:
    """New Jersey impairment tax credit (N.J.S.A. 34:11-56a40).

    Dates are ISO (2024-07-01). Typical session: impcredit generate --out data/sample;
    impcredit annual --input data/sample --tax-year 2023 --as-of 2024-07-01; impcredit runs.
    """


def _process_started_at() -> float:
    """When this process started (epoch seconds), from /proc where there is one, else now: a run
    records the wall time the user waited from here (``runs``)."""
    import time

    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


def _exit_now(code) -> None:
    """End the process as ``sys.exit(code)`` would, without the interpreter's teardown.

    Everything a command leaves to the end of the process still happens first: the threads
    that are not daemons are joined, the exit handlers run (Prefect's logs and events sent to
    its API, ``logging`` flushed and closed, temporary folders removed) and the standard streams
    are flushed; every file the command writes is closed by then. What is skipped is freeing,
    object by object, the modules and data the run loaded (Prefect, Polars, DuckDB): 0.3-0.35 s
    of a 2.4 s warm 5-employer run here, for nothing the user can see."""
    import atexit
    import threading

    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as the interpreter does for sys.exit("message")
        code = 1
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken pipe: nothing left to say
            stream.flush()
    os._exit(code or 0)


def main() -> None:
    """The ``impcredit`` command (the console script): the app, then the process ends at once
    (``_exit_now``)."""
    os.environ["IMPCREDIT_INVOKED_AT"] = f"{_process_started_at():.3f}"
    try:
        app(standalone_mode=True)
    except SystemExit as done:
        _exit_now(done.code)
    except KeyboardInterrupt:
        common.err.print("interrupted")
        sys.exit(130)
    except BaseException as exc:  # an unexpected failure: one line, no traceback (IMPCREDIT_DEBUG=1 shows it)
        if os.environ.get("IMPCREDIT_DEBUG") == "1":
            raise
        common.err.print(f"[bold red]internal error:[/] {exc.__class__.__name__}: {exc}")
        common.err.print("rerun with IMPCREDIT_DEBUG=1 for the full traceback")
        sys.exit(1)
