"""N.J.S.A. 34:11-56a40(c), (e) and (g): the applications a run sees and what they claim.

Spec sections 5 and 7: the applications received by the as-of date, the duplicates of an
employer's (its group's) tax year, the first tax year, and each application's total.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.rules.reasons import (
    DECLARED_TOTALS_DIFFER,
    DUPLICATE_APPLICATION,
    INPUT_REJECTED,
    MISSING_EMPLOYER_RATES,
    NO_CREDIT_DUE,
    TAX_YEAR_BEFORE_2019,
    join_reasons,
)


def visible_applications(applications: pl.LazyFrame, as_of: dt.date) -> pl.LazyFrame:
    """Applications received (New Jersey date) on or before the as-of date (spec section 7)."""
    return applications.filter(pl.col("received_date") <= as_of)


def with_requests(applications: pl.LazyFrame, requests: pl.LazyFrame, t: int, as_of: dt.date) -> pl.LazyFrame:
    """The applications with the estimate requests of tax year ``t`` (56a40(e); spec section 9)
    as applications (``application_id`` = ``request_id``). An application of the same employer
    and year received by the as-of date replaces an earlier request."""
    apps = applications.filter((pl.col("tax_year") == t) & (pl.col("received_date") <= as_of)).select(
        "employer_id", pl.col("received_at").alias("__app_at"))
    req = requests.filter(pl.col("tax_year") == t).rename({"request_id": "application_id"}).with_columns(
        pl.lit(None, dtype=pl.String).alias("county"), pl.lit(None, dtype=pl.String).alias("employer_address"))
    replaced = req.join(apps, on="employer_id", how="inner").filter(pl.col("__app_at") >= pl.col("received_at")).select(
        "application_id").unique()
    req = req.join(replaced, on="application_id", how="anti")
    return pl.concat([applications, req.select(applications.collect_schema().names())], how="vertical_relaxed")


def duplicate_applications(apps: pl.DataFrame, members: pl.DataFrame) -> pl.DataFrame:
    """DUPLICATE_APPLICATION (spec section 5): another application for the same ``tax_year`` by
    the same employer or by a member of its group (for its period T) was received earlier (ties:
    lower application_id first), whatever became of it. ``apps``: the tax year's applications
    seen by the run; ``members``: ``employer.group_members`` of them. Returns application_id,
    is_duplicate."""
    others = apps.select(
        pl.col("application_id").alias("__other"), pl.col("employer_id").alias("member_id"), "tax_year",
        pl.col("received_at").alias("__other_at"),
    )
    mine = apps.select("application_id", "tax_year", "received_at").join(
        members.select("application_id", "member_id").unique(), on="application_id", how="inner")
    earlier = mine.join(others, on=["member_id", "tax_year"], how="inner").filter(
        (pl.col("__other") != pl.col("application_id"))
        & ((pl.col("__other_at") < pl.col("received_at"))
           | ((pl.col("__other_at") == pl.col("received_at")) & (pl.col("__other") < pl.col("application_id"))))
    )
    return apps.select("application_id").with_columns(
        pl.col("application_id").is_in(earlier.get_column("application_id").unique().implode()).alias("is_duplicate"))


def before_first_year(claims: pl.DataFrame, apps: pl.DataFrame, t: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """56a40(e): nothing is computed for a tax period beginning before the first tax year; every
    employee and application gets TAX_YEAR_BEFORE_2019 (and DUPLICATE_APPLICATION where it
    applies). Returns the employee rows and the application totals."""
    flags = apps.select(
        "application_id",
        join_reasons((TAX_YEAR_BEFORE_2019, pl.lit(True)), (DUPLICATE_APPLICATION, pl.col("is_duplicate"))).alias(
            "reasons"
        ),
    )
    employees = claims.join(flags, on="application_id", how="left").select(
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
        "roster_employer_id",
        "T_start",
        "T_end",
    )
    app_reasons = {a: r.split(";") for a, r in flags.iter_rows()}
    return employees, application_totals(apps, employees, app_reasons)


def application_totals(
    apps: pl.DataFrame, emp: pl.DataFrame, app_reasons: dict[str, list[str]], *,
    declared_differ: list[str] | None = None,
) -> pl.DataFrame:
    """One row per application: requested = sum of the eligible credits (spec section 7).

    Applications with requested = 0 are REJECTED with their application-level reasons, or
    NO_CREDIT_DUE; the others are PENDING allocation. Some are HELD instead, never decided on what
    the run cannot prove (``hold_reasons``, sorted and ``;``-joined; ``status`` HELD and
    ``reasons`` those codes):
    - an application that claims no employee (INPUT_REJECTED: a roster it could depend on is
      missing or was rejected);
    - an application whose employer's declared totals differ from what was read
      (``declared_differ``: DECLARED_TOTALS_DIFFER, spec section 1);
    - an application that lacks the employer's UI/DI rates while some person of it has no other
      reason (MISSING_EMPLOYER_RATES: the agency's own gap holds, never rejects).
    ``decided_status`` and ``decided_reasons`` are what the application is decided as when an
    analyst releases it (``impcredit release``: as it stands).
    """
    totals = emp.group_by("application_id").agg(
        pl.col("credit_cents").filter(pl.col("status") == "ELIGIBLE").sum().alias("requested_cents"),
        pl.len().alias("employees"),
        (pl.col("status") == "ELIGIBLE").sum().alias("eligible_employees"),
        (pl.col("reasons") == MISSING_EMPLOYER_RATES).any().alias("__agency_only"),
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
            pl.col("__agency_only").fill_null(False),
        )
    )
    no_claim = pl.col("employees") == 0  # held, never rejected (spec section 7)
    agency = pl.col("app_reasons").str.split(";").list.contains(MISSING_EMPLOYER_RATES) & pl.col("__agency_only")
    differ = pl.col("application_id").is_in(pl.Series(declared_differ or [], dtype=pl.String).implode())
    decided_reasons = (
        pl.when(pl.col("requested_cents") > 0).then(pl.lit(""))
        .when(pl.col("app_reasons") != "").then(pl.col("app_reasons"))
        .otherwise(pl.lit(NO_CREDIT_DUE))
    )
    out = out.with_columns(
        pl.col("T_start").alias("period_start"),
        pl.col("T_end").alias("period_end"),
        pl.when(pl.col("requested_cents") == 0).then(pl.lit("REJECTED")).otherwise(pl.lit("PENDING"))
        .alias("decided_status"),
        decided_reasons.alias("decided_reasons"),
        join_reasons((INPUT_REJECTED, no_claim), (DECLARED_TOTALS_DIFFER, differ & ~no_claim),
                     (MISSING_EMPLOYER_RATES, agency & ~no_claim)).alias("hold_reasons"),
    ).drop("__agency_only")
    held = pl.col("hold_reasons") != ""
    return out.with_columns(
        pl.when(held).then(pl.lit("HELD")).otherwise(pl.col("decided_status")).alias("status"),
        pl.when(held).then(pl.col("hold_reasons")).otherwise(pl.col("decided_reasons")).alias("reasons"),
    ).sort("received_at", "application_id")
