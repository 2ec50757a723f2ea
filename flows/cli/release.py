"""``impcredit release``: a held application decided as it stands by the next annual run (spec section 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common


def release(
    application: Annotated[str, typer.Argument(help="The held application to decide, e.g. APP-2023-000042.",
                                               metavar="APPLICATION")],
    reason: Annotated[str, typer.Option("--reason", help="Why (recorded in the ledger), e.g. 'the rejected lines are "
                                                         "of another employee'.", metavar="REASON")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
) -> None:
    """Release a held application: the next annual run of its tax year decides it as it stands.

    An application is held (not decided) while a rejected line of the submission could change its
    credit (spec section 7). An analyst who has checked those lines may have it decided on the
    lines that were read; the release and its reason are kept in the ledger. An application held
    only by the Department's own gap (employer rates missing) cannot be released: refused, naming
    the rate years missing (the first run with the rates decides it).

    Example: impcredit release APP-2023-000042 --reason "rejected lines are of an unclaimed employee" --workdir data/work
    """
    import datetime as _dt
    import hashlib
    import json

    import polars as pl

    from transforms.award import acts, ledger
    from transforms.ingest.store.lake import lake_dir, scan_lake
    from transforms.runs import annual as steps

    if not reason.strip():
        common.fail("--reason must say why the application is released")
    apps = scan_lake(workdir, "applications").filter(pl.col("application_id") == application).select(
        "tax_year").collect() if lake_dir(workdir).is_dir() else pl.DataFrame()
    if apps.height == 0:
        common.fail(f"application {application!r} is not in the lake of {workdir}: run the annual run that holds it first")
        return
    tax_year = int(apps.item(0, "tax_year"))
    try:
        with steps.workdir_lock(workdir, wait_seconds=wait):
            con = ledger.connect(workdir / "impcredit.duckdb")
            try:
                now, today = ledger.now_utc(), _dt.date.today()
                run_id = steps.new_run_id("release", tax_year, hashlib.sha256(application.encode()).hexdigest())
                record = {
                    "run_id": run_id, "kind": "release", "tax_year": tax_year, "quarter": None, "as_of": today,
                    "approval_year": today.year, "policy": "", "cap_cents": 0, "settings_json": "{}", "params_version": "",
                    "inputs_sha256": "", "status": "released", "started_at": now, "committed_at": now,
                    "summary_json": json.dumps({"application_id": application, "reason": reason.strip()}, sort_keys=True),
                }
                acts.release(con, application, reason.strip(), record)
            finally:
                con.close()
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    common.console.print(f"released {application}: the next annual run of tax year {tax_year} decides it as it stands, "
                         f"on the lines that were read. Recorded as {run_id}.")
