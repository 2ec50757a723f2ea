"""N.J.S.A. 34:11-56a40(b), (c), (d)(2) and (f): who is eligible, with every reason that applies.

Spec section 5.

Certification by the ssn on the employee's payroll rows, the employer's UI/DI rates for both
rate years, the category's deadline, hours in the tax year and no decrease, and no wage
reduction among the application's certified employees.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.rules.reasons import (
    DUPLICATE_APPLICATION,
    HOURS_DECREASED,
    LATE_APPLICATION,
    MISSING_EMPLOYER_RATES,
    NO_HOURS_IN_TAX_YEAR,
    NOT_CERTIFIED,
    WAGE_REDUCTION,
    join_reasons,
)
from transforms.rules.rounding import RATE_EPS, round2
from transforms.rules.year import YearParams
from transforms.settings import RuleSettings


def certified_employees(payroll: pl.LazyFrame, certifications: pl.LazyFrame, t: int) -> pl.LazyFrame:
    """(employer_id, employee_id, certified=True) of the employees with a CERTIFIED certification
    whose validity overlaps t; the ssn is the one on the employee's payroll rows with that
    employer, any year."""
    ssns = (
        payroll
        .select("employer_id", "employee_id", "ssn_hash")
        .unique()
    )
    return (
        ssns.join(
            certifications.filter(
                (pl.col("status") == "CERTIFIED")
                & (pl.col("valid_from") <= dt.date(t, 12, 31))
                & (pl.col("valid_to").is_null() | (pl.col("valid_to") >= dt.date(t, 1, 1)))
            ).select("ssn_hash"),
            on="ssn_hash",
            how="semi",
        )
        .select("employer_id", "employee_id")
        .unique()
        .with_columns(pl.lit(True).alias("certified"))
    )


def employer_rate_flags(
    apps: pl.LazyFrame, employer_rates: pl.LazyFrame, t: int, rules: RuleSettings
) -> pl.LazyFrame:
    """Per application: is_duplicate, the employer's UI+DI rate of each rate year the tax year
    needs (``njr1``: from July 1 of t-1, ``njr2``: from July 1 of t, ``njrp1``: from July 1 of
    t-2 when the prior side is modelled, register I-6) and ``missing_rates`` when one is absent."""
    rates = employer_rates.unique(["employer_id", "rate_year_start"], keep="last", maintain_order=True)
    rate_years = {"njr1": dt.date(t - 1, 7, 1), "njr2": dt.date(t, 7, 1)}
    if rules.payroll_taxes == "model_both":
        rate_years["njrp1"] = dt.date(t - 2, 7, 1)
    app_flags = apps.select("application_id", "employer_id", "is_duplicate")
    for name, start_day in rate_years.items():
        app_flags = app_flags.join(
            rates.filter(pl.col("rate_year_start") == start_day).select(
                "employer_id", (pl.col("ui_rate") + pl.col("di_rate")).alias(name)
            ),
            on="employer_id",
            how="left",
        )
    return app_flags.with_columns(
        pl.any_horizontal(pl.col(n).is_null() for n in rate_years).alias("missing_rates")
    ).drop("employer_id")


def eligibility(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    """``reasons`` and ``status`` of every employee-year, with the rounded hours it reports."""
    t = yp.tax_year
    deadline = pl.col("wage_category").replace_strict(
        {c: d for c, d in yp.deadlines.items()}, return_dtype=pl.Date, default=None
    )
    if rules.deadline_basis == "received_date":
        late = pl.col("received_date") >= deadline
    else:
        late = pl.lit(dt.date(t, 1, 1)) >= deadline
    h_t, h_p = round2(pl.col("H_t")), round2(pl.col("H_p"))
    rate = {y: pl.col(f"W_{y}") / pl.col(f"H_{y}") for y in ("pp", "p", "t")}
    has = {y: round2(pl.col(f"H_{y}")) > 0 for y in ("pp", "p", "t")}
    fell = lambda a, b: has[a] & has[b] & (rate[a] - rate[b] > 0.005 + RATE_EPS)  # noqa: E731
    emp = emp.with_columns(
        (pl.col("certified") & (fell("pp", "p") | fell("p", "t"))).alias("__wage_reduction_emp"),
        late.fill_null(True).alias("__late"),
        (~pl.col("certified")).alias("__not_certified"),
        (h_t == 0).alias("__no_hours"),
        (h_t < h_p).alias("__decreased"),
    ).with_columns(
        pl.col("__wage_reduction_emp").any().over("application_id").alias("__wage_reduction"),
    )
    reasons = join_reasons(
        (DUPLICATE_APPLICATION, pl.col("is_duplicate").fill_null(False)),
        (WAGE_REDUCTION, pl.col("__wage_reduction")),
        (MISSING_EMPLOYER_RATES, pl.col("missing_rates").fill_null(True)),
        (LATE_APPLICATION, pl.col("__late")),
        (NOT_CERTIFIED, pl.col("__not_certified")),
        (NO_HOURS_IN_TAX_YEAR, pl.col("__no_hours")),
        (HOURS_DECREASED, pl.col("__decreased")),
    )
    return emp.with_columns(
        reasons.alias("reasons"),
    ).with_columns(
        pl.when(pl.col("reasons") == "").then(pl.lit("ELIGIBLE")).otherwise(pl.lit("INELIGIBLE")).alias("status"),
        h_t.alias("hours_current"),
        h_p.alias("hours_prior"),
    )
