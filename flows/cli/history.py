"""``impcredit runs``: the run history of a workdir's ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import common


def runs(
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    long: Annotated[bool, typer.Option("--long", help="Every column, full run ids (wider than 80 columns).")] = False,
    run: Annotated[str | None, typer.Option("--run", metavar="ID",
                                            help="One run in full: its id as runs prints it, in full, or its start.")] = None,
) -> None:
    """The run history of a workdir's ledger: when, what, new awards, duration, and whether the
    inputs changed since the run before (reopenings are listed as runs of kind reopen).

    Examples: impcredit runs --workdir data/work; impcredit runs --run 14033577 (one run: its
    settings, parameters, inputs and outcome)
    """
    import json

    from transforms.award import ledger
    from transforms.runs.record import find_run, short_run_id

    path = workdir / "impcredit.duckdb"
    if not path.exists():
        common.fail(f"no ledger at {path}")
    try:
        con = ledger.connect(path, read_only=True)
        hist = ledger.runs_history(con)
        if run is not None:
            run_id = find_run(hist.get_column("run_id").to_list(), run)
            files = con.sql("SELECT path, sha256, bytes FROM input_files WHERE run_id = $r ORDER BY path",
                            params={"r": run_id}).fetchall()
        con.close()
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    if run is not None:
        _one_run(hist.filter(hist.get_column("run_id") == run_id).row(0, named=True), files)
        return
    t = Table(title=f"runs in {path}", box=None, pad_edge=False, title_justify="left", padding=(0, 1, 0, 1) if long else (0, 1, 0, 0))
    cols = (["run id", "kind", "tax year", "as of", "policy", "status", "applications", "held", "requested",
             "new awards", "awarded", "seconds", "inputs changed"] if long else
            ["when (UTC)", "run", "kind", "year", "as of", "apps", "held", "new awards", "secs", "inputs"])
    for col in cols:
        t.add_column(col, justify="right" if col in ("applications", "held", "requested", "new awards", "awarded",
                                                     "seconds", "apps", "secs") else "left", no_wrap=True)
    for r in hist.iter_rows(named=True):
        s = json.loads(r["summary_json"])
        kind = _kind(r)
        if r["kind"] == "reopen":
            kind = f"reopen {s.get('application_id', '')}"
        elif r["kind"] in ("finding", "withdrawal"):  # an audit finding and its withdrawal (spec 9a)
            kind = f"{r['kind']} {s.get('finding_id', '')}"
        # the wall time the user waited (the command's start-up included) where it was recorded
        secs = f"{s.get('wall_seconds') or (r['committed_at'] - r['started_at']).total_seconds():.1f}"
        new = f"{s['awarded_now']:,.2f}" if "awarded_now" in s else ""
        changed = "yes" if s.get("inputs_changed") else "" if r["kind"] in ("reopen", "finding", "withdrawal") else "no"
        if long:
            t.add_row(r["run_id"], kind, str(r["tax_year"]), str(r["as_of"]), r["policy"], r["status"],
                      str(s.get("applications", "")), str(s.get("held", "") or ""), f"{s.get('requested', 0):,.2f}", new, f"{s.get('awarded', 0):,.2f}",
                      secs, changed)
        else:
            t.add_row(r["committed_at"].strftime("%m-%d %H:%M"), short_run_id(r["run_id"]), kind[:18],
                      str(r["tax_year"]), str(r["as_of"]), str(s.get("applications", "")), str(s.get("held", "") or ""),
                      new, secs, changed)
    common.console.print(t)


def _kind(r: dict) -> str:
    return r["kind"] + (f" Q{r['quarter']}" if r["quarter"] else "")


def _settings_changed(settings_json: str) -> str:
    """The run's settings that differ from the defaults, as NAME=VALUE (``whatif --set``'s words)."""
    import json

    from transforms.settings import Settings

    def flat(d: dict) -> dict:
        return {k2: v2 for k, v in d.items() for k2, v2 in (flat(v).items() if isinstance(v, dict) else [(k, v)])}

    got, default = flat(json.loads(settings_json)), flat(Settings().model_dump(mode="json"))
    changed = [f"{k}={v}" for k, v in sorted(got.items()) if default.get(k) != v]
    return ", ".join(changed) or "the defaults"


def _one_run(r: dict, files: list[tuple]) -> None:
    """One run as recorded: what it was asked, what it read, what it decided."""
    import json

    s = json.loads(r["summary_json"])
    t = Table(title=f"run {r['run_id']}", box=None, pad_edge=False, title_justify="left", show_header=False)
    t.add_column("field", no_wrap=True)
    t.add_column("value", overflow="fold")
    waited = s.get("wall_seconds")
    rows = [("kind", _kind(r)), ("tax year", str(r["tax_year"])),
            ("as of", str(r["as_of"])), ("approval year", str(r["approval_year"])), ("policy", r["policy"]),
            ("cap", f"${r['cap']:,.2f}"), ("settings", _settings_changed(r["settings_json"])),
            ("parameters version", r["params_version"]), ("status", r["status"]),
            ("started (UTC)", str(r["started_at"])), ("committed (UTC)", str(r["committed_at"])),
            ("seconds", f"{(r['committed_at'] - r['started_at']).total_seconds():.1f}"
             + (f" (the user waited {waited:.1f})" if waited else "")),
            ("applications", str(s.get("applications", ""))), ("held", str(s.get("held", "") or 0)),
            ("requested", f"${s.get('requested', 0):,.2f}"), ("awarded", f"${s.get('awarded', 0):,.2f}"),
            ("new awards", f"${s['awarded_now']:,.2f}" if "awarded_now" in s else ""),
            ("rejected rows", str(s.get("rejected_rows", ""))), ("lake sha256", str(s.get("lake_sha256") or "")),
            ("input files", str(len(files)))]
    for k, v in rows:
        t.add_row(k, v)
    common.console.print(t)
    if files:
        f = Table(title="input files", box=None, pad_edge=False, title_justify="left")
        for col in ("path", "bytes", "sha256"):
            f.add_column(col, overflow="fold")
        for path, sha, size in files:
            f.add_row(path, f"{size:,}", sha[:16])
        common.console.print(f)
