"""N.J.S.A. 34:11-56a40(c), (e) and (g): the applications a run sees and what they claim.

Spec sections 5 and 7: the applications received by the as-of date, the duplicates of an
employer's tax year, the employees claimed on their rosters, and each application's total.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.rules.reasons import (
    DUPLICATE_APPLICATION,
    NO_CREDIT_DUE,
    TAX_YEAR_BEFORE_2019,
    join_reasons,
)


def visible_applications(applications: pl.LazyFrame, as_of: dt.date) -> pl.LazyFrame:
    """Applications received (New Jersey date) on or before the as-of date (spec section 7)."""
    return applications.filter(pl.col("received_date") <= as_of)


def duplicate_flags(applications: pl.LazyFrame) -> pl.LazyFrame:
    """DUPLICATE_APPLICATION: an earlier application of the same employer for the same tax year
    (ties: lower application_id first). Returns application_id, is_duplicate."""
    return applications.select(
        "application_id",
        (
            pl.struct("received_at", "application_id")
            .rank("ordinal")
            .over("employer_id", "tax_year", order_by=["received_at", "application_id"])
            > 1
        ).alias("is_duplicate"),
    )


def claimed_employee_years(
    applications: pl.LazyFrame, roster: pl.LazyFrame, tax_year: int, as_of: dt.date
) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """The tax year's applications seen by the run (with ``is_duplicate``) and their claimed
    employees: one row per roster line (application_id, employee_id, wage_category, ...) joined
    to its application's employer, tax year and receipt (spec section 5: only rostered employees
    are claimed)."""
    apps = visible_applications(applications, as_of)
    dup = duplicate_flags(apps)
    apps = apps.filter(pl.col("tax_year") == tax_year).join(dup, on="application_id", how="left")
    roster = roster.unique(["application_id", "employee_id"], keep="first", maintain_order=True)
    claimed = roster.join(
        apps.select("application_id", "employer_id", "tax_year", "received_date", "received_at"),
        on="application_id",
        how="inner",
    ).collect()
    return apps, claimed


def before_first_year(claimed: pl.DataFrame, apps: pl.DataFrame, t: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """56a40(e): nothing is computed for a tax year before the first one; every employee and
    application gets TAX_YEAR_BEFORE_2019 (and DUPLICATE_APPLICATION where it applies).
    Returns the employee rows and the application totals."""
    flags = apps.select(
        "application_id",
        join_reasons((TAX_YEAR_BEFORE_2019, pl.lit(True)), (DUPLICATE_APPLICATION, pl.col("is_duplicate"))).alias(
            "reasons"
        ),
    )
    employees = claimed.join(flags, on="application_id", how="left").select(
        "application_id",
        "employer_id",
        "employee_id",
        pl.lit(t, pl.Int32).alias("tax_year"),
        "wage_category",
        pl.lit(None, pl.Float64).alias("hours_prior"),
        pl.lit(None, pl.Float64).alias("hours_current"),
        *[pl.lit(0, pl.Int64).alias(c) for c in ("part1_cents", "part2_cents", "credit_cents")],
        pl.lit("INELIGIBLE").alias("status"),
        "reasons",
    )
    app_reasons = {a: r.split(";") for a, r in flags.iter_rows()}
    return employees, application_totals(apps, employees, app_reasons)


def application_totals(
    apps: pl.DataFrame, emp: pl.DataFrame, app_reasons: dict[str, list[str]]
) -> pl.DataFrame:
    """One row per application: requested = sum of the eligible credits (spec section 7).

    Applications with requested = 0 are REJECTED with their application-level reasons, or
    NO_CREDIT_DUE; the others are PENDING allocation.
    """
    totals = emp.group_by("application_id").agg(
        pl.col("credit_cents").filter(pl.col("status") == "ELIGIBLE").sum().alias("requested_cents"),
        pl.len().alias("employees"),
        (pl.col("status") == "ELIGIBLE").sum().alias("eligible_employees"),
    )
    reasons_df = pl.DataFrame(
        {"application_id": list(app_reasons), "app_reasons": [";".join(v) for v in app_reasons.values()]},
        schema={"application_id": pl.String, "app_reasons": pl.String},
    )
    out = (
        apps.join(totals, on="application_id", how="left")
        .join(reasons_df, on="application_id", how="left")
        .with_columns(
            pl.col("requested_cents").fill_null(0),
            pl.col("employees").fill_null(0).cast(pl.UInt32),
            pl.col("eligible_employees").fill_null(0).cast(pl.UInt32),
            pl.col("app_reasons").fill_null(""),
        )
    )
    return out.with_columns(
        pl.when(pl.col("requested_cents") == 0).then(pl.lit("REJECTED")).otherwise(pl.lit("PENDING")).alias("status"),
        pl.when(pl.col("requested_cents") > 0)
        .then(pl.lit(""))
        .when(pl.col("app_reasons") != "")
        .then(pl.col("app_reasons"))
        .otherwise(pl.lit(NO_CREDIT_DUE))
        .alias("reasons"),
    ).sort("received_at", "application_id")
