"""N.J.S.A. 34:11-56a40(d): the credit of every claimed employee-year, vectorised in Polars.

Spec sections 3 to 7 and 9.

Composes one module per step, in the spec's order: ``applications`` (who is claimed), ``year``
(the tax year's parameters), ``spreading`` (section 3), ``quantities`` (section 4),
``projection`` (section 9), ``eligibility`` (section 5), ``credit`` (section 6) and the
application totals (section 7). Pure functions over Polars frames: no Prefect, no I/O, no loop
over rows, employees or employers. Amounts are carried unrounded and rounded half up to the cent
once per employee-year.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from transforms.reference.parameters import Parameters
from transforms.rules.applications import (
    application_totals,
    before_first_year,
    claimed_employee_years,
)
from transforms.rules.credit import credit
from transforms.rules.eligibility import certified_employees, eligibility, employer_rate_flags
from transforms.rules.projection import project_full_year
from transforms.rules.quantities import QUANTITIES, category_profile, employee_year_quantities
from transforms.rules.reasons import APPLICATION_FLAGS
from transforms.rules.spreading import netted_lines, rate_segments, segments_long
from transforms.rules.year import YearParams, latest, year_params
from transforms.settings import RuleSettings


@dataclass
class CreditInputs:
    payroll: pl.LazyFrame
    applications: pl.LazyFrame
    roster: pl.LazyFrame
    certifications: pl.LazyFrame
    employer_rates: pl.LazyFrame

    @classmethod
    def from_frames(cls, frames: dict[str, pl.DataFrame | pl.LazyFrame]) -> CreditInputs:
        return cls(**{k: v.lazy() for k, v in frames.items()})


@dataclass
class CreditResult:
    employees: pl.DataFrame  # one row per claimed employee-year (all quantities)
    applications: pl.DataFrame  # one row per application: requested, pre-allocation status
    year: YearParams | None


EMPLOYEE_COLUMNS = [
    "application_id",
    "employer_id",
    "employee_id",
    "tax_year",
    "wage_category",
    "hours_prior",
    "hours_current",
    "part1_credit",
    "part2_credit",
    "credit",
    "status",
    "reasons",
]


def compute_credits(
    inputs: CreditInputs,
    tax_year: int,
    as_of: dt.date,
    params: Parameters,
    rules: RuleSettings | None = None,
    *,
    observe_through: dt.date | None = None,
) -> CreditResult:
    """Credits and eligibility of every claimed employee-year of the tax year (spec 4 to 6).

    ``observe_through`` (quarterly estimates, spec section 9): data after that day is ignored
    and the tax year's hours are projected to the full year.
    """
    rules = rules or RuleSettings()
    t, p = tax_year, tax_year - 1
    apps, claimed = claimed_employee_years(inputs.applications, inputs.roster, t, as_of)
    if t < int(latest(params, "program.first_tax_year")):
        employees, totals = before_first_year(claimed, apps.collect(), t)
        return CreditResult(employees, totals, None)

    yp = year_params(params, t, rules)
    end = dt.date(t, 12, 31)
    cuts = (observe_through + dt.timedelta(days=1),) if observe_through and observe_through < end else ()
    segments = rate_segments(params, dt.date(t - 2, 1, 1), end, cuts)
    seg_long = segments_long(segments)

    keys = claimed.select("employer_id", "employee_id").unique()
    claimed_payroll = inputs.payroll.join(keys.lazy(), on=["employer_id", "employee_id"], how="semi")
    payroll = claimed_payroll
    if observe_through is not None:
        payroll = payroll.filter(pl.col("period_start") <= observe_through)
    qty = employee_year_quantities(claimed, payroll, segments, seg_long, params, rules, t, observe_through)
    certified = certified_employees(claimed_payroll, inputs.certifications, t)
    app_flags = employer_rate_flags(apps, inputs.employer_rates, t, rules)
    emp = (
        claimed.lazy()
        .join(app_flags, on="application_id", how="left")
        .join(qty, on=["application_id", "employee_id"], how="left")
        .join(certified, on=["employer_id", "employee_id"], how="left")
        .join(netted_lines(payroll, dt.date(p, 1, 1), end), on=["employer_id", "employee_id"], how="left")
        .join(category_profile(seg_long, t, observe_through).lazy(), on="wage_category", how="left")
        .with_columns(pl.col(c).fill_null(0.0) for c in QUANTITIES)
        .with_columns(pl.col("certified").fill_null(False))
    )
    if observe_through is not None and observe_through < end:
        emp = project_full_year(emp, t, observe_through)

    emp = credit(eligibility(emp.collect(), yp, rules), yp, rules)
    flags = app_flags.collect().join(
        emp.group_by("application_id").agg(pl.col("__wage_reduction").any()), on="application_id", how="left"
    )
    app_reasons = {
        row[0]: [code for code, on in zip(APPLICATION_FLAGS, row[1:], strict=True) if on]
        for row in flags.select("application_id", *APPLICATION_FLAGS.values()).iter_rows()
    }
    return CreditResult(emp, application_totals(apps.collect(), emp, app_reasons), yp)


def employee_output(emp: pl.DataFrame) -> pl.DataFrame:
    """The contract columns of employee_credits.csv (spec section 8), money as decimals."""
    return emp.select(
        "application_id",
        "employer_id",
        "employee_id",
        pl.col("tax_year").cast(pl.Int32),
        "wage_category",
        "hours_prior",
        "hours_current",
        (pl.col("part1_cents") / 100).alias("part1_credit"),
        (pl.col("part2_cents") / 100).alias("part2_credit"),
        (pl.col("credit_cents") / 100).alias("credit"),
        "status",
        "reasons",
    ).sort("application_id", "employee_id")
