"""``impcredit runs``: the run history of a workdir's ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import common
from transforms.runs.record import short_run_id


def runs(
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    long: Annotated[bool, typer.Option("--long", help="Every column, full run ids (wider than 80 columns).")] = False,
) -> None:
    """The run history of a workdir's ledger: when, what, new awards, duration, and whether the
    inputs changed since the run before (reopenings are listed as runs of kind reopen).

    Example: impcredit runs --workdir data/work
    """
    import json

    from transforms.award import ledger

    path = workdir / "impcredit.duckdb"
    if not path.exists():
        common.fail(f"no ledger at {path}")
    try:
        con = ledger.connect(path, read_only=True)
        hist = ledger.runs_history(con)
        con.close()
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    t = Table(title=f"runs in {path}", box=None, pad_edge=False, title_justify="left")
    cols = (["run id", "kind", "tax year", "as of", "policy", "status", "applications", "held", "requested",
             "new awards", "awarded", "seconds", "inputs changed"] if long else
            ["when (UTC)", "run", "kind", "year", "as of", "apps", "held", "new awards", "secs", "inputs"])
    for col in cols:
        t.add_column(col, justify="right" if col in ("applications", "held", "requested", "new awards", "awarded",
                                                     "seconds", "apps", "secs") else "left", no_wrap=True)
    for r in hist.iter_rows(named=True):
        s = json.loads(r["summary_json"])
        kind = r["kind"] + (f" Q{r['quarter']}" if r["quarter"] else "")
        if r["kind"] == "reopen":
            kind = f"reopen {s.get('application_id', '')}"
        secs = f"{(r['committed_at'] - r['started_at']).total_seconds():.1f}"
        new = f"{s['awarded_now']:,.2f}" if "awarded_now" in s else ""
        changed = "yes" if s.get("inputs_changed") else "" if r["kind"] == "reopen" else "no"
        if long:
            t.add_row(r["run_id"], kind, str(r["tax_year"]), str(r["as_of"]), r["policy"], r["status"],
                      str(s.get("applications", "")), str(s.get("held", "") or ""), f"{s.get('requested', 0):,.2f}", new, f"{s.get('awarded', 0):,.2f}",
                      secs, changed)
        else:
            t.add_row(r["committed_at"].strftime("%m-%d %H:%M"), short_run_id(r["run_id"]), kind[:18],
                      str(r["tax_year"]), str(r["as_of"]), str(s.get("applications", "")), str(s.get("held", "") or ""),
                      new, secs, changed)
    common.console.print(t)
