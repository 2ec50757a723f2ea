"""``impcredit reopen``: a decided application decided again by the next annual run (spec section 7, I-12)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common


def reopen(
    application: Annotated[str, typer.Argument(help="The application to decide again, e.g. APP-2023-000042.",
                                               metavar="APPLICATION")],
    reason: Annotated[str, typer.Option("--reason", help="Why (recorded in the ledger), e.g. 'corrected payroll of March'.", metavar="REASON")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
) -> None:
    """Reopen a decided application: the next annual run of its tax year decides it again.

    Spec section 7, I-12: it is decided in that run's approval year. An increase takes cap left
    in that year; a decrease returns the difference to the cap of the year it came from; the award
    file carries the change as an amendment row.

    Example: impcredit reopen APP-2023-000042 --reason "corrected payroll file" --workdir data/work
    """
    import datetime as _dt
    import hashlib
    import json

    from transforms.award import acts, ledger
    from transforms.runs import annual as steps

    if not reason.strip():
        common.fail("--reason must say why the application is reopened")
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        common.fail(f"no ledger at {path}: nothing was decided on this workdir")
    try:
        with steps.workdir_lock(workdir, wait_seconds=wait):
            con = ledger.connect(path)
            try:
                cur = ledger.current_decisions(con, [application])
                if cur.height == 0:
                    raise ledger.LedgerError(f"application {application!r} has no decision in {path}: nothing to reopen")
                row = cur.row(0, named=True)
                now = ledger.now_utc()
                today = _dt.date.today()
                run_id = steps.new_run_id("reopen", row["tax_year"], hashlib.sha256(application.encode()).hexdigest())
                record = {
                    "run_id": run_id, "kind": "reopen", "tax_year": row["tax_year"], "quarter": None, "as_of": today,
                    "approval_year": today.year, "policy": "", "cap_cents": 0, "settings_json": "{}", "params_version": "",
                    "inputs_sha256": "", "status": "reopened", "started_at": now, "committed_at": now,
                    "summary_json": json.dumps({"application_id": application, "reason": reason.strip(),
                                                "status_before": row["status"], "awarded_before": row["awarded_cents"] / 100},
                                               sort_keys=True),
                }
                acts.reopen(con, application, reason.strip(), record)
            finally:
                con.close()
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    common.console.print(f"reopened {application} ({row['status']}, awarded ${row['awarded_cents'] / 100:,.2f} in "
                  f"{row['approval_year']}): the next annual run of tax year {row['tax_year']} that holds it decides it "
                  f"again. Recorded as {run_id}.")
