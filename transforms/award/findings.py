"""Audit findings (N.J.S.A. 34:11-56a40(e), (f); spec section 9a): what a finding is, what it
concerns and what it does to the employee-years and the applications it concerns.

After a decision the agency may find, on audit:
- a misclassification (kind ``misclassified``, 56a40(e)): the employees it names, in the application
  it names, are not employees with an impairment. Their employee-years become ``INELIGIBLE`` with
  reason ``MISCLASSIFIED``; ``knowing`` says whether the employer knowingly misrepresented them
  (three times the penalties, never waived).
- a wage reduction (kind ``wage-reduction``, 56a40(f)): the employer reduced the wages of an
  employee with an impairment to qualify in a later year. Every employee-year of the employer's
  applications for the tax years it names becomes ``INELIGIBLE`` with ``WAGE_REDUCTION`` (found on
  audit, beyond what the payroll shows), an application-level reason too.
A withdrawn finding (an appeal upheld) concerns nothing any more. Findings are kept in the ledger,
append-only (``ledger`` schema 4); recording and withdrawing them is ``finding_acts``. The
functions here are pure over Polars frames, and the runs apply them too (``apply``), so that a
rerun after a finding reports what the ledger decided.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass

import duckdb
import polars as pl

from transforms.rules.reasons import CAP_EXHAUSTED, MISCLASSIFIED, NO_CREDIT_DUE, WAGE_REDUCTION

KINDS = {"misclassified": MISCLASSIFIED, "wage-reduction": WAGE_REDUCTION}
STATUTE = {"misclassified": "N.J.S.A. 34:11-56a40(e)", "wage-reduction": "N.J.S.A. 34:11-56a40(f)"}
# reasons a decision gives that are not the application's own (the cap, or nothing eligible)
_NOT_APPLICATION_LEVEL = (NO_CREDIT_DUE, CAP_EXHAUSTED)


@dataclass(frozen=True)
class Finding:
    finding_id: str
    application_id: str  # the application the analyst named
    kind: str  # misclassified | wage-reduction
    employer_id: str  # the employer of that application
    employees: tuple[str, ...]  # the employees found misclassified (none for an (f) finding)
    tax_years: tuple[int, ...]  # the tax years it concerns
    knowing: bool
    reason: str
    found_on: dt.date
    record_run: str
    withdrawn_on: dt.date | None = None
    withdraw_reason: str | None = None
    withdraw_run: str | None = None

    @property
    def active(self) -> bool:
        return self.withdrawn_on is None

    @property
    def code(self) -> str:
        return KINDS[self.kind]

    def concerns(self) -> pl.Expr:
        """Over employee-years (application_id, employer_id, employee_id, tax_year): the ones it concerns."""
        if self.kind == "misclassified":
            return (pl.col("application_id") == self.application_id) & pl.col("employee_id").is_in(list(self.employees))
        return (pl.col("employer_id") == self.employer_id) & pl.col("tax_year").cast(pl.Int64).is_in(list(self.tax_years))

    def concerns_application(self) -> pl.Expr:
        """Over applications (application_id, employer_id, tax_year): those it may change."""
        if self.kind == "misclassified":
            return pl.col("application_id") == self.application_id
        return (pl.col("employer_id") == self.employer_id) & pl.col("tax_year").cast(pl.Int64).is_in(list(self.tax_years))

    @property
    def penalty_multiplier_name(self) -> str:
        """The parameter of its penalty multiplier (``data/reference/enforcement.yaml``)."""
        knowing_misclassification = self.knowing and self.kind == "misclassified"
        return ("enforcement.knowing_misclassification_penalty_multiplier" if knowing_misclassification
                else "enforcement.other_finding_penalty_multiplier")

    @property
    def penalty_waivable(self) -> bool:
        """56a40(e): the penalty of a knowing misclassification "shall not be waived"."""
        return not (self.knowing and self.kind == "misclassified")


def fingerprint(application_id: str, kind: str, employees, tax_years, knowing: bool, reason: str) -> str:
    """What makes two findings one (a finding recorded twice is one finding): the application,
    kind, employees, tax years, knowing and reason, order and repeats aside."""
    key = {"application_id": application_id, "kind": kind, "employees": sorted(set(employees)),
           "tax_years": sorted({int(y) for y in tax_years}), "knowing": bool(knowing), "reason": reason.strip()}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def read_findings(con: duckdb.DuckDBPyConnection, *, active_only: bool = False) -> list[Finding]:
    """Every finding of the ledger in the order recorded, with its withdrawal where there is one."""
    rows = con.sql("""
        SELECT f.finding_id, f.application_id, f.kind, f.employer_id, f.employees, f.tax_years, f.knowing, f.reason,
               f.found_on, f.record_run, w.withdrawn_on, w.reason, w.withdraw_run
        FROM findings f LEFT JOIN withdrawals w USING (finding_id)
        ORDER BY f.recorded_at, f.finding_id""").fetchall()
    out = [Finding(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), tuple(json.loads(r[5])), bool(r[6]), r[7], r[8], r[9],
                   r[10], r[11], r[12]) for r in rows]
    return [f for f in out if f.active] if active_only else out


def _with_code(reasons: pl.Expr, code: str) -> pl.Expr:
    """``reasons`` (``;``-joined) with ``code`` added, sorted (spec section 5)."""
    return (reasons.fill_null("").str.split(";").list.concat(pl.lit([code]))
            .list.eval(pl.element().filter(pl.element() != "")).list.unique().list.sort().list.join(";"))


def apply_to_employee_years(emp: pl.DataFrame, findings: list[Finding]) -> pl.DataFrame:
    """``emp`` with the employee-years the active ``findings`` concern ``INELIGIBLE``, their reason
    added and their credit (and parts, where present) 0."""
    money = [c for c in ("credit_cents", "part1_cents", "part2_cents") if c in emp.columns]
    for f in (f for f in findings if f.active):
        hit = f.concerns()
        emp = emp.with_columns(
            pl.when(hit).then(pl.lit("INELIGIBLE")).otherwise(pl.col("status")).alias("status"),
            pl.when(hit).then(_with_code(pl.col("reasons"), f.code)).otherwise(pl.col("reasons")).alias("reasons"),
            *[pl.when(hit).then(pl.lit(0, dtype=emp.schema[c])).otherwise(pl.col(c)).alias(c) for c in money],
        )
    return emp


def application_reasons(reasons: str | None, found: set[str]) -> str:
    """The application-level reasons of a decision (those of the cap and NO_CREDIT_DUE aside), with
    the codes ``found`` on audit (``found_codes``): a finding shows at the application level."""
    own = {r for r in (reasons or "").split(";") if r and r not in _NOT_APPLICATION_LEVEL}
    return ";".join(sorted(own | found))


def found_codes(app: dict, findings: list[Finding], shown: str = "application_level") -> set[str]:
    """The codes of the active findings that concern the application (application_id, employer_id,
    tax_year) among its reasons: ``WAGE_REDUCTION`` for an (f) finding of its employer and tax year
    (an application-level reason, spec section 5), and ``MISCLASSIFIED`` for a misclassification in
    it only where ``shown`` is ``finding_code`` (I-16; section 7's choice: an employee-level reason,
    so an application it took whole is ``NO_CREDIT_DUE``)."""
    codes = {f.code for f in findings_of([f for f in findings if f.active], app["application_id"], app["employer_id"],
                                         app["tax_year"])}
    return codes if shown == "finding_code" else codes & {WAGE_REDUCTION}


def with_found(reasons: str | None, found: set[str]) -> str:
    """A decision's reasons with the codes ``found`` on audit: an award a finding lowered says so
    beside the cap's reason, and a request it took whole says the finding, not ``NO_CREDIT_DUE``."""
    if not found:
        return reasons or ""
    return ";".join(sorted({r for r in (reasons or "").split(";") if r and r != NO_CREDIT_DUE} | found))


def apply(employees: pl.DataFrame, applications: pl.DataFrame,
          findings: list[Finding], shown: str = "application_level") -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run's employee-years and application totals (``compute_credits``) with the active
    ``findings`` applied: the employee-years they concern ineligible, and the applications they
    concern with their request recomputed (a held one stays held); ``shown``: I-16 (``found_codes``)."""
    active = [f for f in findings if f.active]
    if not active or applications.height == 0:
        return employees, applications
    touched = applications.filter(pl.any_horizontal([f.concerns_application() for f in active]))
    if touched.height == 0:
        return employees, applications
    employees = apply_to_employee_years(employees, active)
    requested = employees.group_by("application_id").agg(
        pl.col("credit_cents").filter(pl.col("status") == "ELIGIBLE").sum().alias("__req"))
    own = "app_reasons" if "app_reasons" in applications.columns else "reasons"
    found = {a["application_id"]: application_reasons(a[own], found_codes(a, active, shown))
             for a in touched.iter_rows(named=True)}
    ids = pl.col("application_id").is_in(list(found))
    out = applications.join(requested, on="application_id", how="left").with_columns(
        pl.when(ids).then(pl.col("__req").fill_null(0)).otherwise(pl.col("requested_cents"))
        .cast(applications.schema["requested_cents"]).alias("requested_cents"),
        pl.col("application_id").replace_strict(found, default=None, return_dtype=pl.String).alias("__own"))
    held = pl.col("status") == "HELD"
    out = out.with_columns(
        pl.when(~ids | held).then(pl.col("status")).when(pl.col("requested_cents") > 0).then(pl.lit("PENDING"))
        .otherwise(pl.lit("REJECTED")).alias("status"),
        pl.when(~ids | held).then(pl.col("reasons")).when(pl.col("requested_cents") > 0).then(pl.lit(""))
        .when(pl.col("__own") != "").then(pl.col("__own")).otherwise(pl.lit(NO_CREDIT_DUE)).alias("reasons"),
    ).drop("__req", "__own")
    return employees, out


def findings_of(findings: list[Finding], application_id: str, employer_id: str, tax_year: int) -> list[Finding]:
    """The findings (active or withdrawn) that concern an application."""
    return [f for f in findings if (f.kind == "misclassified" and f.application_id == application_id)
            or (f.kind == "wage-reduction" and f.employer_id == employer_id and int(tax_year) in f.tax_years)]


def in_force_at(con: duckdb.DuckDBPyConnection, run_id: str) -> list[Finding]:
    """The findings in force just after a finding's (or withdrawal's) run ``run_id``: recorded by
    then and not withdrawn by then (as they stood, their later withdrawal aside)."""
    t = con.sql("""SELECT recorded_at FROM findings WHERE record_run = $r
                   UNION ALL SELECT withdrawn_at FROM withdrawals WHERE withdraw_run = $r""", params={"r": run_id}).fetchall()
    if not t:
        return []
    ids = {r[0] for r in con.sql("""SELECT f.finding_id FROM findings f LEFT JOIN withdrawals w USING (finding_id)
                                    WHERE f.recorded_at <= $t AND (w.withdrawn_at IS NULL OR w.withdrawn_at > $t)""",
                                 params={"t": t[0][0]}).fetchall()}
    return [Finding(**{**f.__dict__, "withdrawn_on": None, "withdraw_reason": None, "withdraw_run": None})
            for f in read_findings(con) if f.finding_id in ids]
