"""``impcredit finding``: audit findings (N.J.S.A. 34:11-56a40(e), (f); spec section 9a): record one
(the application is re-decided at once), withdraw one (an appeal upheld), list them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common, listing

finding_app = typer.Typer(help="Audit findings: misclassified employees (56a40(e)) and wage reductions (56a40(f)); "
                               "recapture for the Division of Taxation.", no_args_is_help=True)

WORKDIR = Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")]
OUT = Annotated[Path | None, typer.Option("--out", help="Folder for the documents (default: findings/FINDING in the output "
                                          "folder of the workdir's latest annual run, beside its outputs).", metavar="DIR")]
WAIT = Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")]


@finding_app.command("record")
def record(
    application: Annotated[str, typer.Argument(help="The decided application, e.g. APP-2023-000042.", metavar="APPLICATION")],
    kind: Annotated[str, typer.Option("--kind", help="misclassified (56a40(e)) or wage-reduction (56a40(f)).",
                                      metavar="misclassified|wage-reduction")],
    knowing: Annotated[str, typer.Option("--knowing", help="Whether the employer knowingly misrepresented (yes: three "
                                         "times the penalties, never waived).", metavar="yes|no")],
    reason: Annotated[str, typer.Option("--reason", help="What was found (on the notice and in the ledger).", metavar="TEXT")],
    employee: Annotated[list[str] | None, typer.Option("--employee", help="An employee found misclassified (repeat for "
                                                       "several).", metavar="ID")] = None,
    tax_year: Annotated[list[int] | None, typer.Option("--tax-year", help="A tax year of the employer a wage-reduction "
                                                       "finding concerns (repeat; default the application's).",
                                                       metavar="YEAR")] = None,
    workdir: WORKDIR = common.DATA / "work",
    out: OUT = None,
    wait: WAIT = 0.0,
) -> None:
    """Record an audit finding; the applications it concerns are decided again at once.

    A misclassification makes the employees named INELIGIBLE (MISCLASSIFIED); a wage-reduction
    finding makes every employee-year of the employer's applications for the tax years named
    INELIGIBLE (WAGE_REDUCTION). The award becomes the lesser of the award and the new request; the
    difference goes back to the cap of its approval year. Writes the amended certificate, the notice
    of the finding and taxation/recapture.csv. The same finding recorded again is one finding.

    Example: impcredit finding record APP-2023-000042 --kind misclassified --employee E001463 --knowing no --reason "no impairment on file"
    """
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    from transforms.reference.parameters import load_parameters
    from transforms.runs import findings as run

    try:
        got = run.record_finding(workdir, out, application_id=application, kind=kind,
                                 employees=list(employee or []), tax_years=list(tax_year or []), knowing=knowing,
                                 reason=reason, params=load_parameters(), wait=wait)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    f = got.finding
    folder = got.folder
    if not got.created:
        common.console.print(f"{f.finding_id} was recorded before ({f.found_on}, the same finding): nothing new in the "
                             f"ledger; its documents are in {folder}.")
        return
    _say(f"recorded {f.finding_id} ({f.kind}, knowing {'yes' if f.knowing else 'no'})", got, folder)


def _say(head: str, got, folder: Path) -> None:
    parts = [f"{e['application_id']} {e['status']}, certified ${e['certified_before']:,.2f} -> ${e['certified_now']:,.2f}"
             for e in got.effects]
    common.console.print(f"{head}: {'; '.join(parts)}. Documents (certificate, notice, taxation/recapture.csv) in "
                         f"{folder}. Recorded as {got.run_id}.")


@finding_app.command("withdraw")
def withdraw(
    finding: Annotated[str, typer.Argument(help="The finding, as finding list shows it, e.g. F-0001.", metavar="FINDING")],
    reason: Annotated[str, typer.Option("--reason", help="Why (an appeal upheld ...), recorded in the ledger.", metavar="TEXT")],
    workdir: WORKDIR = common.DATA / "work",
    out: OUT = None,
    wait: WAIT = 0.0,
) -> None:
    """Withdraw a finding (an appeal upheld); its applications are decided again as before it.

    Recorded, never deleted. Each application the finding re-decided is decided again with the
    other findings in force, within the cap left in its approval year (so partly when that cap was
    used meanwhile). Writes the amended certificate, the notice and the reversal for Taxation.

    Example: impcredit finding withdraw F-0001 --reason "appeal upheld, OAL decision of 2025-03-01"
    """
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    from transforms.reference.parameters import load_parameters
    from transforms.runs import findings as run

    try:
        got = run.withdraw_finding(workdir, out, finding, reason, load_parameters(), wait=wait)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    _say(f"withdrew {got.finding.finding_id}", got, got.folder)


FINDING_KEYS = ["finding_id", "finding_date", "application_id", "employer_id", "kind", "employees", "tax_years",
                "knowing", "taken_back", "withdrawn_on", "reason", "withdraw_reason", "record_run"]


@finding_app.command("list")
def list_(workdir: WORKDIR = common.DATA / "work", format: listing.Format = "table") -> None:
    """The findings of the ledger: when, on what, knowing or not, what they took back, withdrawn or not.

    Examples: impcredit finding list --workdir data/work; impcredit finding list --format csv > findings.csv
    """
    from transforms.runs import findings as run

    try:
        rows = run.list_findings(workdir)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    for r in rows:
        r["taken_back"] = listing.money(r["taken_back"])
    if not rows and format == "table":
        common.console.print(f"no finding in the ledger of {workdir}")
        return
    Col = listing.Col
    listing.show(format, FINDING_KEYS, rows, [
        Col("finding", "finding_id"), Col("date", "finding_date"), Col("application", "application_id"), Col("kind"),
        Col("employees / tax years", text=lambda r: ", ".join(r["employees"]) or ", ".join(map(str, r["tax_years"]))),
        Col("knowing"), Col("taken back", text=lambda r: f"{r['taken_back']:,.2f}", justify="right"),
        Col("withdrawn", "withdrawn_on"), Col("reason")])
