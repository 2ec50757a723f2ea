"""``impcredit runs``: the run history of a workdir's ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common, listing

RUN_KEYS = ["run_id", "kind", "quarter", "application_id", "finding_id", "tax_year", "as_of", "approval_year", "policy",
            "status", "started_at", "committed_at", "seconds", "waited_seconds", "applications", "held", "requested",
            "new_awards", "awarded", "inputs_changed"]
ONE_RUN_KEYS = [*RUN_KEYS, "cap", "settings", "settings_changed", "parameters_version", "rejected_rows", "lake_sha256",
                "input_files"]
ACTS = ("reopen", "release", "finding", "withdrawal")  # an analyst's act on the ledger: no input read


def runs(
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    long: Annotated[bool, typer.Option("--long", help="Every column, full run ids (wider than 80 columns).")] = False,
    run: Annotated[str | None, typer.Option("--run", metavar="ID",
                                            help="One run in full: its id as runs prints it, in full, or its start.")] = None,
    format: listing.Format = "table",
) -> None:
    """The run history of a workdir's ledger: when, what, new awards, duration, and whether the
    inputs changed since the run before (reopenings are listed as runs of kind reopen).

    csv and json give every run with its full id whatever --long says (--run ID: that run, with
    its settings and input files).

    Examples: impcredit runs --workdir data/work; impcredit runs --run 14033577 (one run: its
    settings, parameters, inputs and outcome); impcredit runs --format csv > runs.csv
    """
    from transforms.award import ledger
    from transforms.runs.record import find_run

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
        one = _one_record(hist.filter(hist.get_column("run_id") == run_id).row(0, named=True), files)
        if not listing.machine(format, ONE_RUN_KEYS, one):
            _one_run(one)
        return
    records = [_record(r) for r in hist.iter_rows(named=True)]
    listing.show(format, RUN_KEYS, records, _long_cols() if long else _short_cols(), title=f"runs in {path}",
                 box=None, pad_edge=False, title_justify="left", padding=(0, 1, 0, 1) if long else (0, 1, 0, 0))


def _record(r: dict) -> dict:
    """A run of the ledger as ``runs`` lists it (csv and json: these keys, plain values)."""
    import json

    s = json.loads(r["summary_json"])
    act = r["kind"] in ACTS
    waited = s.get("wall_seconds")
    return {
        "run_id": r["run_id"], "kind": r["kind"], "quarter": r["quarter"],
        "application_id": s.get("application_id"), "finding_id": s.get("finding_id"),
        "tax_year": r["tax_year"], "as_of": r["as_of"], "approval_year": r["approval_year"], "policy": r["policy"] or None,
        "status": r["status"], "started_at": listing.utc(r["started_at"]), "committed_at": listing.utc(r["committed_at"]),
        "seconds": round((r["committed_at"] - r["started_at"]).total_seconds(), 1),
        "waited_seconds": round(waited, 1) if waited else None,
        "applications": s.get("applications"), "held": s.get("held"), "requested": listing.money(s.get("requested")),
        "new_awards": listing.money(s.get("awarded_now")), "awarded": listing.money(s.get("awarded")),
        "inputs_changed": None if act else bool(s.get("inputs_changed")),
    }


def _kind_text(r: dict) -> str:
    """The kind as the table shows it: ``quarterly Q2``, ``reopen APP-2023-000162``, ``finding F-0001``."""
    return " ".join(str(x) for x in (r["kind"], f"Q{r['quarter']}" if r["quarter"] else None,
                                     r["finding_id"] or r["application_id"]) if x)


def _amount(key: str):
    return lambda r: "" if r[key] is None else f"{r[key]:,.2f}"


def _short_cols() -> list[listing.Col]:
    """80 columns on a terminal: the kind (with its application or finding) wraps there, nothing else."""
    from transforms.runs.record import short_run_id

    def col(header, key=None, text=None, right=False):
        return listing.Col(header, key, text, justify="right" if right else "left", no_wrap=True, overflow="ellipsis")

    return [col("when (UTC)", text=lambda r: r["committed_at"][5:16].replace("T", " ")),
            col("run", text=lambda r: short_run_id(r["run_id"])),
            listing.Col("kind", text=_kind_text), col("year", "tax_year"), col("as of", "as_of"),
            col("apps", "applications", right=True), col("held", text=lambda r: str(r["held"] or ""), right=True),
            col("new awards", text=_amount("new_awards"), right=True),
            col("secs", text=lambda r: f"{r['waited_seconds'] or r['seconds']:.1f}", right=True),
            col("inputs", "inputs_changed")]


def _long_cols() -> list[listing.Col]:
    def col(header, key=None, text=None, right=False):
        return listing.Col(header, key, text, justify="right" if right else "left", no_wrap=True, overflow="ellipsis")

    return [col("run id", "run_id"), col("kind", text=_kind_text), col("tax year", "tax_year"), col("as of", "as_of"),
            col("policy"), col("status"), col("applications", right=True),
            col("held", text=lambda r: str(r["held"] or ""), right=True),
            col("requested", text=lambda r: f"{r['requested'] or 0:,.2f}", right=True),
            col("new awards", text=_amount("new_awards"), right=True),
            col("awarded", text=lambda r: f"{r['awarded'] or 0:,.2f}", right=True),
            col("seconds", text=lambda r: f"{r['waited_seconds'] or r['seconds']:.1f}", right=True),
            col("inputs changed", "inputs_changed")]


def _settings_changed(settings_json: str) -> str:
    """The run's settings that differ from the defaults, as NAME=VALUE (``whatif --set``'s words)."""
    import json

    from transforms.settings import Settings

    def flat(d: dict) -> dict:
        return {k2: v2 for k, v in d.items() for k2, v2 in (flat(v).items() if isinstance(v, dict) else [(k, v)])}

    got, default = flat(json.loads(settings_json)), flat(Settings().model_dump(mode="json"))
    changed = [f"{k}={v}" for k, v in sorted(got.items()) if default.get(k) != v]
    return ", ".join(changed) or "the defaults"


def _one_record(r: dict, files: list[tuple]) -> dict:
    """One run as recorded, every field (``runs --run ID``; csv and json: these keys)."""
    import json

    s = json.loads(r["summary_json"])
    return {**_record(r), "cap": None if r["kind"] in ACTS else listing.money(r["cap"]), "settings": json.loads(r["settings_json"]),
            "settings_changed": _settings_changed(r["settings_json"]), "parameters_version": r["params_version"] or None,
            "rejected_rows": s.get("rejected_rows"), "lake_sha256": s.get("lake_sha256"),
            "input_files": [{"path": path, "bytes": size, "sha256": sha} for path, sha, size in files]}


def _one_run(one: dict) -> None:
    """One run as recorded: what it was asked, what it read, what it decided."""
    def dollars(key: str) -> str:
        return "" if one[key] is None else f"${one[key]:,.2f}"

    waited = one["waited_seconds"]
    rows = [("kind", _kind_text(one)), ("tax year", one["tax_year"]), ("as of", one["as_of"]),
            ("approval year", one["approval_year"]), ("policy", one["policy"]), ("cap", dollars("cap")),
            ("settings", one["settings_changed"]), ("parameters version", one["parameters_version"]),
            ("status", one["status"]), ("started (UTC)", one["started_at"]), ("committed (UTC)", one["committed_at"]),
            ("seconds", f"{one['seconds']:.1f}" + (f" (the user waited {waited:.1f})" if waited else "")),
            ("applications", one["applications"]), ("held", one["held"] or 0), ("requested", dollars("requested")),
            ("awarded", dollars("awarded")), ("new awards", dollars("new_awards")),
            ("rejected rows", one["rejected_rows"]), ("lake sha256", one["lake_sha256"]),
            ("input files", len(one["input_files"]))]
    fields = [{"field": k, "value": v} for k, v in rows]
    listing.print_table(common.console, listing.table(
        [listing.Col("field", no_wrap=True), listing.Col("value")], fields, title=f"run {one['run_id']}", box=None,
        pad_edge=False, title_justify="left", show_header=False))
    if one["input_files"]:
        listing.print_table(common.console, listing.table(
            [listing.Col("path"), listing.Col("bytes", text=lambda f: f"{f['bytes']:,}"),
             listing.Col("sha256", text=lambda f: f["sha256"][:16])],
            one["input_files"], title="input files", box=None, pad_edge=False, title_justify="left"))
