"""What an audit finding sends out (N.J.S.A. 34:11-56a40(e), (f); spec section 9a): the block a
notice shows of a finding, the Division of Taxation's ``taxation/recapture.csv`` (what to recapture
and at which penalty), and the documents of a finding or its withdrawal (the amended certificate,
the notice with its reasons and hearing rights).

``recapture.csv``: ``application_id, employer_id, fein, tax_type, tax_year, certified_before,
certified_now, recapture, finding_date, knowing, penalty_multiplier, penalty_waivable``, one row
per application a finding re-decided. A knowing misclassification has the multiplier of
``enforcement.knowing_misclassification_penalty_multiplier`` (3) and is never waivable; any other
finding ``enforcement.other_finding_penalty_multiplier`` (1), waivable. The run's file lists the
findings in force; a withdrawal's own file lists the reversal (``recapture`` negative: the credit
certified again) with multiplier 0, no penalty.
"""

from __future__ import annotations

import polars as pl

from transforms.award.findings import STATUTE, Finding
from transforms.outputs import write_csv
from transforms.products._html import money
from transforms.products.letter import fein, long_date

RECAPTURE_COLUMNS = ["application_id", "employer_id", "fein", "tax_type", "tax_year", "certified_before", "certified_now",
                     "recapture", "finding_date", "knowing", "penalty_multiplier", "penalty_waivable"]
_SCHEMA = {"application_id": pl.String, "employer_id": pl.String, "fein": pl.String, "tax_type": pl.String,
           "tax_year": pl.Int32, "certified_before": pl.Float64, "certified_now": pl.Float64, "recapture": pl.Float64,
           "finding_date": pl.Date, "knowing": pl.String, "penalty_multiplier": pl.Int32, "penalty_waivable": pl.String}
KIND_WORDS = {
    "misclassified": "Employees represented as employees with an impairment who are not (misclassification)",
    "wage-reduction": "The employer reduced the wages of an employee with an impairment to qualify in a later year",
}


def yes_no(v: bool) -> str:
    return "yes" if v else "no"


def multiplier(f: Finding, params) -> int:
    return int(params.value(f.penalty_multiplier_name, f.found_on))


def recapture_row(f: Finding, app: dict, before: int, now: int, params, *, reversal: bool = False) -> dict:
    """One row of ``recapture.csv``: ``app`` (application_id, employer_id, tax_type, tax_year), the
    credit certified before and now (cents)."""
    return {"application_id": app["application_id"], "employer_id": app["employer_id"], "fein": fein(app["employer_id"]),
            "tax_type": app["tax_type"], "tax_year": int(app["tax_year"]), "certified_before": before / 100,
            "certified_now": now / 100, "recapture": (before - now) / 100, "finding_date": f.found_on,
            "knowing": yes_no(f.knowing), "penalty_multiplier": 0 if reversal else multiplier(f, params),
            "penalty_waivable": yes_no(True if reversal else f.penalty_waivable)}


def write_recapture(rows: list[dict], path) -> None:
    frame = pl.DataFrame(rows, schema=_SCHEMA) if rows else pl.DataFrame(schema=_SCHEMA)
    write_csv(frame.sort("finding_date", "application_id", maintain_order=True).select(RECAPTURE_COLUMNS), path)


def ledger_recapture(con, findings: list[Finding], applications: pl.DataFrame, params) -> list[dict] | None:
    """The rows of the findings in force that re-decided an application of ``applications``
    (DECISION_COLUMNS); None when no finding (in force or withdrawn) concerns any of them."""
    ids = applications.get_column("application_id").to_list()
    effects = con.sql("""SELECT finding_id, application_id, certified_before_cents, certified_now_cents
                         FROM finding_decisions WHERE event = 'finding' AND list_contains($ids, application_id)
                         ORDER BY finding_id, application_id""", params={"ids": ids}).fetchall()
    if not effects:
        return None
    by_id = {f.finding_id: f for f in findings}
    apps = {a["application_id"]: a for a in applications.iter_rows(named=True)}
    return [recapture_row(by_id[fid], apps[app], before, now, params) for fid, app, before, now in effects
            if by_id[fid].active]


def audit_notes(con, findings: list[Finding], applications: pl.DataFrame, params) -> dict[str, str]:
    """application id -> what the findings in force did to it, in the run page's words: found on
    audit, by which finding and when, the amount recaptured and the penalty multiplier."""
    ids = applications.get_column("application_id").to_list()
    if not findings or not ids:
        return {}
    by_id = {f.finding_id: f for f in findings if f.active}
    out: dict[str, list[str]] = {}
    for fid, app, before, now in con.sql(
            """SELECT finding_id, application_id, certified_before_cents, certified_now_cents FROM finding_decisions
               WHERE event = 'finding' AND list_contains($ids, application_id) ORDER BY finding_id""",
            params={"ids": ids}).fetchall():
        if (f := by_id.get(fid)) is None:
            continue
        penalty = (f"penalties x{multiplier(f, params)}" + (", never waived" if not f.penalty_waivable else "")
                   if before > now else "no penalty: nothing recaptured")
        out.setdefault(app, []).append(f"found on audit ({fid}, {long_date(f.found_on)}): {money(before - now)} "
                                       f"recaptured, {penalty}")
    return {a: "; ".join(v) for a, v in out.items()}


def finding_block(f: Finding, params, *, before: int | None = None, now: int | None = None,
                  app: dict | None = None) -> dict:
    """A finding as a notice shows it (every value text): the notice's opening (what happened, the
    amended amount), what was found, by whom and when, the penalty (its basis and what is known of
    its amount: the Division of Taxation computes it on the credit recaptured), and what it did to
    the credit certified (``before``, ``now``, cents). ``app``: the application (application_id,
    tax_type, tax_year) the notice is of."""
    date = long_date(f.found_on)
    app = app or {"application_id": f.application_id, "tax_type": None, "tax_year": None}
    taken = (before - now) if before is not None and now is not None else None
    words = [_found_words(f, date)]
    if f.kind == "misclassified":
        words.append(_knowing_words(f, params))
    if taken is not None:
        if f.active and taken > 0:
            words.append(f"The credit certified for this application was {money(before)}; it is now {money(now)}. "
                         f"{money(taken)} is taken back: the Division of Taxation is told to recapture it, with the "
                         "penalty stated under Penalty.")
        elif not f.active and now > before:
            words.append(f"The credit certified for this application was {money(before)}; it is now {money(now)} again.")
        elif f.active:
            words.append("No credit certified for this application is taken back by it.")
    if not f.active:
        words.append(f"This finding was withdrawn on {long_date(f.withdrawn_on)}: the application is decided again as "
                     "before it, within the approvals left in its approval year.")
    return {
        "id": f.finding_id, "title": f"Audit finding {f.finding_id}" + (" (withdrawn)" if not f.active else ""),
        "code": f.code, "active": f.active,
        "date": date, "kind_words": KIND_WORDS[f.kind], "employees": ", ".join(f.employees),
        "tax_years": ", ".join(str(y) for y in f.tax_years), "knowing": yes_no(f.knowing), "reason": f.reason,
        "withdrawn": f"{long_date(f.withdrawn_on)}: {f.withdraw_reason}" if not f.active else "", "words": words,
        "penalty": penalty_words(f, params, taken, app), "opening": _opening(f, date, before, now, app),
    }


def _found_words(f: Finding, date: str) -> str:
    from transforms.products.reason_words import labelled

    if f.kind == "misclassified":
        one = len(f.employees) == 1
        return (f"On {date} the Department found, on audit, that employee{'' if one else 's'} {', '.join(f.employees)} "
                f"{'is not an employee' if one else 'are not employees'} with an impairment as the application "
                f"represented (N.J.S.A. 34:11-56a39; {STATUTE[f.kind]}): the employee-year counts nothing (reason: "
                f"{labelled('MISCLASSIFIED')}).")
    return (f"On {date} the Commissioner determined, on audit, that the employer reduced the wages it paid to an "
            "employee with an impairment to be eligible for the credit in a later year: the employer is not eligible "
            f"for the credit for tax year(s) {', '.join(str(y) for y in f.tax_years)} ({STATUTE[f.kind]}; reason: "
            f"{labelled('WAGE_REDUCTION')}).")


def _knowing_words(f: Finding, params) -> str:
    one = len(f.employees) == 1
    if not f.knowing:
        return "The Department did not find that the employer knowingly misrepresented the employee."
    return ("The Department found that the employer knowingly, in applying for the credit, represented "
            f"{'this employee as an employee' if one else 'these employees as employees'} with an impairment. That is a "
            f"violation of the applicable State tax law, subject to {multiplier(f, params)} times the penalties otherwise "
            "provided in that law, and that penalty is not waived, including during tax years 2019 and 2020 "
            "(N.J.S.A. 34:11-56a40(e)).")


def _tax_law(app: dict) -> str:
    return {"CBT": "Corporation Business Tax", "GIT": "Gross Income Tax"}.get(app.get("tax_type") or "", "State tax")


def penalty_words(f: Finding, params, taken: int | None, app: dict) -> str:
    """The penalty a finding bears, as the notice states it (spec section 9a): its basis (the
    penalties of the tax law, times 3 for a knowing misclassification, never waived; else times
    1) and its amount where known: the Division of Taxation computes it on the credit recaptured."""
    if not f.active:
        return "None: the finding is withdrawn, and no penalty arises from it."
    if taken is not None and taken <= 0:
        return ("None for this application: no credit certified for it is taken back, so nothing is recaptured"
                + ("; the Division of Taxation is told of the knowing misrepresentation." if not f.penalty_waivable else "."))
    on = f"on the {money(taken)} recaptured" if taken is not None else "on the credit recaptured"
    law = _tax_law(app)
    if not f.penalty_waivable:
        return (f"{multiplier(f, params)} times the penalties the {law} law provides, {on} (N.J.S.A. 34:11-56a40(e): "
                "a knowing misrepresentation); never waived, including during tax years 2019 and 2020. The Division "
                "of Taxation computes its amount.")
    from transforms.products.good_faith import years

    waiver = ""
    if app.get("tax_year") is not None and int(app["tax_year"]) in years(params):
        waiver = (f" For tax year {int(app['tax_year'])} the Director of the Division of Taxation may waive penalties for "
                  "underpayment caused by a good-faith error in calculating the credit (N.J.S.A. 34:11-56a40(e)).")
    return (f"The penalties the {law} law provides, {on}, not multiplied (multiplier {multiplier(f, params)}). The "
            f"Division of Taxation computes their amount.{waiver}")


def _opening(f: Finding, date: str, before: int | None, now: int | None, app: dict) -> str:
    """The first words of the notice of a finding or of its withdrawal: what happened, the amount now."""
    what = {"misclassified": "an audit finding that an employee claimed is not an employee with an impairment",
            "wage-reduction": "an audit finding that the employer reduced the wages of an employee with an impairment"}
    amounts = (f" The credit certified was {money(before)}; it is now {money(now)}." if before is not None
               and now is not None else "")
    if not f.active:
        return (f"Audit finding {f.finding_id} was withdrawn on {long_date(f.withdrawn_on)}: this notice amends the "
                f"decision of application {app['application_id']} again.{amounts}")
    recapture = ""
    if before is not None and now is not None and before > now:
        recapture = (f" The Division of Taxation is told to recapture {money(before - now)}, with the penalty stated "
                     f"under \u201cAudit finding {f.finding_id}\u201d below.")
    return (f"This notice amends the decision of application {app['application_id']} after {what[f.kind]} "
            f"({f.finding_id}, {date}).{amounts}{recapture}")


def freed_cap(con, awards: pl.DataFrame, approval_year: int) -> dict | None:
    """The cap audit findings freed (spec section 9a: what they took back, less what withdrawals
    restored), by approval year up to ``approval_year``, and the applications that could use it:
    those waitlisted, and those approved in part in ``approval_year`` (the ledger's decisions with
    this run's ``awards`` laid over them). None when no finding changed an award."""
    from transforms.award.ledger import DECISION_COLUMNS, current_decisions

    years = con.sql("""
        SELECT d.approval_year, -sum(d.awarded_cents)::BIGINT AS freed_cents,
               string_agg(DISTINCT coalesce(f.finding_id, w.finding_id), ', ' ORDER BY coalesce(f.finding_id, w.finding_id))
        FROM decisions d JOIN runs r USING (run_id)
        LEFT JOIN findings f ON f.record_run = d.run_id LEFT JOIN withdrawals w ON w.withdraw_run = d.run_id
        WHERE r.kind IN ('finding', 'withdrawal') AND d.approval_year <= $y
        GROUP BY 1 HAVING sum(abs(d.awarded_cents)) > 0 ORDER BY 1""", params={"y": approval_year}).fetchall()
    if not years:
        return None
    cur = current_decisions(con).select(DECISION_COLUMNS)
    now = pl.concat([cur.filter(~pl.col("application_id").is_in(awards["application_id"].implode())),
                     awards.select(DECISION_COLUMNS).cast(cur.schema)])
    waiting = now.filter(((pl.col("status") == "WAITLISTED")
                          | ((pl.col("status") == "PARTIAL") & (pl.col("approval_year") == approval_year)))
                         & (pl.col("awarded_cents") < pl.col("requested_cents"))).sort("received_at", "application_id")
    return {
        "approval_year": approval_year,
        "years": [{"approval_year": int(y), "freed_cents": int(c), "findings": ids or ""} for y, c, ids in years],
        "total_cents": sum(int(c) for _, c, _ in years),
        "candidates": [{"application_id": a["application_id"], "employer_name": a["employer_name"] or "",
                        "fein": fein(a["employer_id"]), "status": a["status"], "approval_year": a["approval_year"],
                        "requested_cents": a["requested_cents"], "awarded_cents": a["awarded_cents"],
                        "shortfall_cents": a["requested_cents"] - a["awarded_cents"]} for a in waiting.iter_rows(named=True)],
    }


def notice_blocks(con, findings: list[Finding], awards: pl.DataFrame, params) -> dict[str, list[dict]]:
    """application id -> the blocks of the findings that concern it (in force or withdrawn), for a
    run's notices, with what each did to the credit certified."""
    from transforms.award.findings import findings_of

    if not findings:
        return {}
    ids = awards.get_column("application_id").to_list()
    did = {(f, a, e): (b, n) for f, e, a, b, n in con.sql(
        """SELECT finding_id, event, application_id, certified_before_cents, certified_now_cents FROM finding_decisions
           WHERE list_contains($ids, application_id)""", params={"ids": ids}).fetchall()}
    out: dict[str, list[dict]] = {}
    for a in awards.iter_rows(named=True):
        for f in findings_of(findings, a["application_id"], a["employer_id"], a["tax_year"]):
            before, now = did.get((f.finding_id, a["application_id"], "finding" if f.active else "withdrawal"), (None, None))
            out.setdefault(a["application_id"], []).append(finding_block(f, params, before=before, now=now, app=a))
    return out
