"""Decision notices, one per application: the award or the rejection, every reason in plain
words with its statute, the employee lines, and the submitted rows that were rejected."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import polars as pl

from transforms.products import pdf
from transforms.products._html import (
    decision_date,
    file_names,
    money,
    nj_local,
    num2,
    render_many,
    without_gc,
)
from transforms.products.award_file import certificate_no
from transforms.products.pdf import text

# code -> (plain words, citation). All codes of spec sections 5 and 7.
REASONS: dict[str, tuple[str, str]] = {
    "TAX_YEAR_BEFORE_2019": (
        "The credit is available only for tax years beginning on or after January 1, 2019; nothing is computed for an earlier year.",
        "N.J.S.A. 34:11-56a40(e)",
    ),
    "DUPLICATE_APPLICATION": (
        "The employer already filed an earlier application for the same tax year; only the first one is considered.",
        "N.J.S.A. 34:11-56a40(b); one application per employer and tax year (program rule, spec section 5)",
    ),
    "WAGE_REDUCTION": (
        "The average hourly rate of a certified employee fell by more than half a cent from one year to the next; "
        "no credit is allowed to an employer that reduced the wages of an employee with an impairment.",
        "N.J.S.A. 34:11-56a40(f)",
    ),
    "MISSING_EMPLOYER_RATES": (
        "The employer's New Jersey unemployment and disability insurance rates are missing for a rate year the tax year "
        "needs (starting July 1 of the prior year and of the tax year); the required payroll taxes cannot be computed.",
        "N.J.S.A. 34:11-56a40(d)(1) (employer payroll taxes); N.J.S.A. 43:21-7",
    ),
    "LATE_APPLICATION": (
        "The application was received on or after the deadline for the employee's wage category.",
        "N.J.S.A. 34:11-56a40(b), (c)",
    ),
    "NOT_CERTIFIED": (
        "There is no State determination (certification) that the employee is an employee with an impairment "
        "valid during the tax year.",
        "N.J.S.A. 34:11-56a39; 34:11-56a41(a)(1)",
    ),
    "NO_HOURS_IN_TAX_YEAR": (
        "The payroll shows no hours worked by the employee in the tax year.",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "HOURS_DECREASED": (
        "The employee worked fewer hours in the tax year than in the prior calendar year.",
        "N.J.S.A. 34:11-56a40(d)(2)",
    ),
    "NO_CREDIT_DUE": (
        "No credit is due: the eligible employees were already paid at least the minimum wage increase, "
        "or no employee of the application is eligible.",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "SUBMINIMUM_ON_EFFECTIVE_DATE": (
        "On February 4, 2019 (the day P.L.2019, c.32 took effect) the employee was paid below the minimum wage of "
        "the category; the credit is for employees with an impairment earning at least the minimum wage that day.",
        "N.J.S.A. 34:11-56a39",
    ),
    "DUPLICATE_EMPLOYEE": (
        "The same person (the same social security number) is claimed on an earlier line of this application; "
        "a person is counted once, over all the rows of the employer's group.",
        "N.J.S.A. 34:11-56a39; 34:11-56a40(d)(1)",
    ),
    "NOT_IN_CONTROL_GROUP": (
        "The roster names an employer that is neither the applicant nor a member of its group of entities under "
        "common ownership or control during the tax period.",
        "N.J.S.A. 34:11-56a39",
    ),
    "INPUT_REJECTED": (
        "Lines of the submission that this application could depend on could not be read; nothing is decided until "
        "they are corrected (the lines are listed below).",
        "N.J.S.A. 34:11-56a40; spec section 7 (no decision on input that could not be read)",
    ),
    "CAP_EXHAUSTED": (
        "The annual limit of approvals ($10,000,000 per calendar year) was reached; the application received part "
        "of its request or none, and a waitlisted application is considered first in the next approval year.",
        "N.J.S.A. 34:11-56a40(g)",
    ),
}

STATUS_WORDS = {
    "APPROVED": "Your application is approved.",
    "PARTIAL": "Your application is approved in part: the annual limit of approvals did not allow the full amount.",
    "WAITLISTED": "Your application is eligible but waitlisted: the annual limit of approvals has been reached.",
    "REJECTED": "Your application is not approved.",
    "HELD": "Nothing is decided yet: lines of your submission that this application could depend on could not be "
            "read. Send the corrected files (under the same names); the next run decides the application.",
}


def explain_reasons(reasons: str | None) -> list[dict]:
    """``"A;B"`` -> [{code, words, citation}] (unknown codes are listed as such, never dropped)."""
    out = []
    for code in [r for r in (reasons or "").split(";") if r]:
        words, cite = REASONS.get(code, (f"Reason code {code}.", ""))
        out.append({"code": code, "words": words, "citation": cite})
    return out


REJECT_COLUMNS = ["file", "line", "column", "value", "rule", "message"]


def _rejects_by_employer(rejects: pl.DataFrame | None) -> dict[str, list[dict]]:
    """Rejected rows per employer (sorted by file, line, column), grouped in one pass."""
    if rejects is None or rejects.height == 0 or "employer_id" not in rejects.columns:
        return {}
    rows = rejects.filter(pl.col("employer_id").is_not_null())
    out: dict[str, list[dict]] = {}
    for r in rows.sort([c for c in ("employer_id", "file", "line", "column") if c in rows.columns], maintain_order=True).iter_rows(named=True):
        rec = {c: r.get(c) for c in REJECT_COLUMNS}
        if "ssn" in str(rec["column"] or "").lower():
            rec["value"] = "(withheld)"  # no ssn in any output
        out.setdefault(r["employer_id"], []).append(rec)
    return out


@lru_cache(maxsize=4096)
def _reasons_cached(reasons: str | None) -> tuple[dict, ...]:
    return tuple(explain_reasons(reasons))


@without_gc
def write_notices(
    staging_dir: Path,
    awards: pl.DataFrame,
    employee_years: pl.DataFrame,
    rejects: pl.DataFrame | None = None,
    *,
    run_id: str = "",
    pdf_jobs: list | None = None,
    documents: int = 0,
    held: pl.DataFrame | None = None,
) -> list[Path]:
    """``notices/<application_id>.html`` for every application of ``awards``; a held one lists
    the lines to correct (``held``). With ``pdf_jobs``,
    the PDF of them all (``notices/notices.pdf``) is appended as a job for the caller to run."""
    emp_cols = ["employee_id", "wage_category", "hours_prior", "hours_current", "part1_cents", "part2_cents",
                "credit_cents", "status", "reasons"]
    netted = pl.col("netted_lines") if "netted_lines" in employee_years.columns else pl.lit(None, dtype=pl.String)
    emp = employee_years.select("application_id", *emp_cols, netted.alias("netted_lines")).sort(
        "application_id", "employee_id", maintain_order=True)
    by_app: dict[str, list[dict]] = {}
    for e in emp.iter_rows(named=True):
        app = e.pop("application_id")
        by_app.setdefault(app, []).append({**e, "reason_list": list(_reasons_cached(e["reasons"]))})
    rejects_known = rejects is not None and "employer_id" in rejects.columns
    rejects_of = _rejects_by_employer(rejects)
    held_of: dict[str, list[dict]] = {}
    if held is not None:
        for r in held.iter_rows(named=True):
            held_of.setdefault(r["application_id"], []).append(
                {"file": r["file"], "line": r["line"], "column": r["columns"] or "", "message": r["messages"] or ""})
    pages = []
    names = file_names(awards.get_column("application_id").to_list(), "the notices of applications")
    for a in awards.sort("application_id").iter_rows(named=True):
        lines = by_app.get(a["application_id"], [])
        emp_codes = sorted({r["code"] for ln in lines for r in ln["reason_list"]})
        ctx = {
            **a,
            "certificate_no": certificate_no(a["approval_year"], a["application_id"]) if a["awarded_cents"] > 0 else None,
            "status_words": STATUS_WORDS.get(a["status"], a["status"]),
            "reason_list": explain_reasons(a["reasons"]),
            "employee_reason_list": explain_reasons(";".join(emp_codes)),
            "lines": lines,
            "netted": [ln for ln in lines if ln["netted_lines"]],
            "rejects": rejects_of.get(a["employer_id"], []),
            "rejects_known": rejects_known,
            "held_lines": held_of.get(a["application_id"], []),
            "received": nj_local(a.get("received_at")),
            "run_id": a.get("run_id") or run_id,
            "decided_on": decision_date(a.get("run_id") or run_id),
        }
        pages.append((Path(staging_dir) / "notices" / f"{names[a['application_id']]}.html", {"n": ctx}))
    if pdf_jobs is not None and pages:
        job = pdf.job("notices", lambda: [pdf_record(ctx["n"]) for _, ctx in pages], Path(staging_dir) / "notices" / "notices.pdf",
                      footer=f"impcredit run {run_id}", documents=documents or len(pages))
        if job is not None:
            pdf_jobs.append(job)
    return render_many("notice.html.j2", pages)


def pdf_record(n: dict) -> dict:
    """A notice's fields as the PDF template takes them (every value text)."""
    reasons = lambda rs: [[r["code"], r["words"], r["citation"]] for r in rs]  # noqa: E731
    return {
        "application_id": n["application_id"], "employer_name": text(n["employer_name"]), "employer_id": n["employer_id"],
        "tax": f"{n['tax_type']} / {n['tax_year']}", "received": n["received"] + " (New Jersey time)",
        "decided_on": n["decided_on"], "approval_year": str(n["approval_year"]), "status": n["status"],
        "requested": money(n["requested_cents"]), "awarded": money(n["awarded_cents"]),
        "certificate_no": text(n["certificate_no"]), "status_words": n["status_words"],
        "reasons": reasons(n["reason_list"]), "employee_reasons": reasons(n["employee_reason_list"]),
        "lines": [[e["employee_id"], e["wage_category"], num2(e["hours_prior"]), num2(e["hours_current"]),
                   money(e["part1_cents"]), money(e["part2_cents"]), money(e["credit_cents"]), e["status"],
                   text(e["reasons"])] for e in n["lines"]],
        "netted": [[e["employee_id"], e["netted_lines"]] for e in n["netted"]],
        "rejects": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["value"]), text(r["rule"]),
                     text(r["message"])] for r in n["rejects"]],
        "held_lines": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["message"])] for r in n["held_lines"]],
        "no_rejects": ("None of your submitted rows were rejected." if n["rejects_known"]
                       else "Rejected rows are not attributed to employers in this run; see the run's rejects.csv."),
        "run_id": n["run_id"],
    }

