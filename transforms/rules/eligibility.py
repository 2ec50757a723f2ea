"""N.J.S.A. 34:11-56a39 and 34:11-56a40(b), (c), (d)(2) and (f): who is eligible, with every
reason that applies.

Spec section 5. One named expression per reason, each from the paragraph that states it:
- ``NOT_CERTIFIED`` (56a39, "employee with an impairment": a State determination):
  ``certified_claims``;
- ``SUBMINIMUM_ON_EFFECTIVE_DATE`` (56a39): ``transforms.rules.effective_date``;
- ``DUPLICATE_EMPLOYEE``, ``NOT_IN_CONTROL_GROUP`` (56a39, the employer is its group):
  ``transforms.rules.employer``;
- ``LATE_APPLICATION`` (56a40(b), (c)): ``late_application``;
- ``NO_HOURS_IN_TAX_YEAR``, ``HOURS_DECREASED`` (56a40(d)(2)): ``transforms.rules.hours``;
- ``WAGE_REDUCTION`` (56a40(f)): ``transforms.rules.wage_reduction``;
- ``MISSING_EMPLOYER_RATES`` (the agency's own data, section 5): ``missing_rates``;
- ``DUPLICATE_APPLICATION`` (56a40(c), one award per employer and tax year):
  ``transforms.rules.applications``.
"""

from __future__ import annotations

import polars as pl

from transforms.rules import employer as emp_rules
from transforms.rules.effective_date import subminimum
from transforms.rules.hours import hours_decreased, no_hours
from transforms.rules.reasons import (
    DUPLICATE_APPLICATION,
    DUPLICATE_EMPLOYEE,
    HOURS_DECREASED,
    LATE_APPLICATION,
    MISSING_EMPLOYER_RATES,
    NO_HOURS_IN_TAX_YEAR,
    NOT_CERTIFIED,
    NOT_IN_CONTROL_GROUP,
    SUBMINIMUM_ON_EFFECTIVE_DATE,
    WAGE_REDUCTION,
    join_reasons,
)
from transforms.rules.rounding import round2
from transforms.rules.wage_reduction import wage_reduction
from transforms.rules.year import YearParams
from transforms.settings import RuleSettings


def certified_claims(claims: pl.DataFrame, certifications: pl.LazyFrame) -> pl.DataFrame:
    """``__claim, certified``: a CERTIFIED certification of the claim's person (ssn) whose
    validity overlaps T."""
    certs = certifications.filter(pl.col("status") == "CERTIFIED").select("ssn_hash", "valid_from", "valid_to").collect()
    hits = (
        claims.filter(pl.col("ssn").is_not_null())
        .select("__claim", "ssn", "T_start", "T_end")
        .join(certs, left_on="ssn", right_on="ssn_hash", how="inner")
        .filter((pl.col("valid_from") <= pl.col("T_end"))
                & (pl.col("valid_to").is_null() | (pl.col("valid_to") >= pl.col("T_start"))))
        .select("__claim")
        .unique()
    )
    return hits.with_columns(pl.lit(True).alias("certified"))


def lacking_rates(apps: pl.DataFrame, paying: pl.DataFrame, rates: pl.LazyFrame) -> pl.DataFrame:
    """``application_id, member_id, rate_year_start``: each rate year T needs (the one starting
    July 1 before each January-June part of T, and July 1 of each year whose July-December part T
    touches) for which the applicant (whatever its hours) or a member of its group that pays a
    claimed person on days of T has no UI/DI rates (spec section 5: the agency's gap, named)."""
    halves = apps.select("application_id", "employer_id", "T_start", "T_end").with_columns(
        pl.int_ranges(pl.col("T_start").dt.year(), pl.col("T_end").dt.year() + 1).alias("__year")
    ).explode("__year").with_columns(pl.lit([1, 2]).alias("__half")).explode("__half")
    h_start = pl.date(pl.col("__year"), pl.when(pl.col("__half") == 1).then(1).otherwise(7), 1)
    h_end = pl.when(pl.col("__half") == 1).then(pl.date(pl.col("__year"), 6, 30)).otherwise(pl.date(pl.col("__year"), 12, 31))
    needed = halves.filter((h_start <= pl.col("T_end")) & (h_end >= pl.col("T_start"))).select(
        "application_id", "employer_id",
        pl.date(pl.when(pl.col("__half") == 1).then(pl.col("__year") - 1).otherwise(pl.col("__year")), 7, 1)
        .alias("rate_year_start"),
    ).unique()
    payers = pl.concat([
        apps.select("application_id", pl.col("employer_id").alias("member_id")),
        paying.select("application_id", "member_id"),
    ]).unique()
    want = needed.select("application_id", "rate_year_start").join(payers, on="application_id", how="inner")
    have = rates.select(pl.col("employer_id").alias("member_id"), "rate_year_start").unique().collect()
    return want.join(have, on=["member_id", "rate_year_start"], how="anti").select(
        "application_id", "member_id", "rate_year_start").unique().sort("application_id", "rate_year_start", "member_id")


def missing_rates(apps: pl.DataFrame, lacking: pl.DataFrame) -> pl.DataFrame:
    """``application_id, missing_rates``: the application lacks rates ``lacking_rates`` names."""
    return apps.select("application_id").with_columns(
        pl.col("application_id").is_in(lacking.get_column("application_id").implode()).alias("missing_rates"))


def late_application(yp: YearParams, rules: RuleSettings) -> pl.Expr:
    """LATE_APPLICATION (56a40(b), (c)): received on or after the category's deadline (dates
    compared, New Jersey time); I-8 alternative: the tax period begins on or after it."""
    deadline = pl.col("wage_category").replace_strict(dict(yp.deadlines), return_dtype=pl.Date, default=None)
    late = pl.col("received_date") >= deadline if rules.deadline_basis == "received_date" else pl.col("T_start") >= deadline
    return late.fill_null(True)


def eligibility(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    """``reasons`` and ``status`` of every employee-year, with the rounded hours it reports."""
    emp = emp.with_columns(
        wage_reduction().alias("__wage_reduction_emp"),
        late_application(yp, rules).alias("__late"),
        (~pl.col("certified")).alias("__not_certified"),
        no_hours().alias("__no_hours"),
        hours_decreased().alias("__decreased"),
        subminimum(rules).alias("__subminimum"),
        emp_rules.duplicate_employee().alias("__duplicate_employee"),
        emp_rules.not_in_control_group().alias("__not_in_group"),
    ).with_columns(
        pl.col("__wage_reduction_emp").any().over("application_id").alias("__wage_reduction"),
    )
    reasons = join_reasons(
        (DUPLICATE_APPLICATION, pl.col("is_duplicate").fill_null(False)),
        (WAGE_REDUCTION, pl.col("__wage_reduction")),
        (MISSING_EMPLOYER_RATES, pl.col("missing_rates").fill_null(True)),
        (LATE_APPLICATION, pl.col("__late")),
        (NOT_CERTIFIED, pl.col("__not_certified")),
        (SUBMINIMUM_ON_EFFECTIVE_DATE, pl.col("__subminimum")),
        (DUPLICATE_EMPLOYEE, pl.col("__duplicate_employee")),
        (NOT_IN_CONTROL_GROUP, pl.col("__not_in_group")),
        (NO_HOURS_IN_TAX_YEAR, pl.col("__no_hours")),
        (HOURS_DECREASED, pl.col("__decreased")),
    )
    return emp.with_columns(reasons.alias("reasons")).with_columns(
        pl.when(pl.col("reasons") == "").then(pl.lit("ELIGIBLE")).otherwise(pl.lit("INELIGIBLE")).alias("status"),
        round2(pl.col("H_t")).alias("hours_current"),
        round2(pl.col("H_p")).alias("hours_prior"),
    )
