"""N.J.S.A. 34:11-56a40(d)(1): the quantities of each employee-year, H, W, T, RW and RW1.

Spec section 4.

Days of the tax year t, the prior year p = t - 1 and p - 1 (for the wage-reduction test), each
priced at the minimum wage of the employee's category in effect that day; and each category's
minimum-wage profile: the day-weighted average over p and, for projections, the sum over the
unobserved days of t.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.reference.parameters import Parameters
from transforms.rules.rounding import exact_sum
from transforms.rules.spreading import spread_payroll
from transforms.settings import RuleSettings

QUANTITIES = ("H_t", "H_p", "H_pp", "W_t", "W_p", "W1_p", "W_pp", "T_p", "RW_t", "RW1")


def employee_year_quantities(
    claimed: pl.DataFrame,
    payroll: pl.LazyFrame,
    segments: pl.DataFrame,
    seg_long: pl.DataFrame,
    params: Parameters,
    rules: RuleSettings,
    t: int,
    observe_through: dt.date | None,
) -> pl.LazyFrame:
    """One row per claimed (application_id, employee_id) with the sums of :data:`QUANTITIES`.

    ``payroll``: the claimed employees' rows (already cut at ``observe_through`` when given);
    days after ``observe_through`` are not counted. Register I-5 (overtime = premium): hours over
    the weekly threshold are priced at the multiplier.
    """
    p = t - 1
    end = dt.date(t, 12, 31)
    premium = rules.overtime == "premium"
    ot_weekly = params.value("overtime.weekly_hours_threshold", end) if premium else 0.0
    # hours over the threshold are priced at the multiplier: the part above straight time is added
    ot_factor = params.value("overtime.rate_multiplier", end) - 1.0 if premium else 0.0
    spread = spread_payroll(payroll, segments, rules, ot_weekly_hours=ot_weekly)
    if observe_through is not None:
        spread = spread.join(
            segments.lazy().filter(pl.col("seg_start") <= observe_through).select("seg_id"), on="seg_id", how="semi"
        )
    # Priced per claimed employee and segment.
    per_seg = (
        claimed.lazy()
        .select("application_id", "employer_id", "employee_id", "wage_category")
        .join(spread, on=["employer_id", "employee_id"], how="inner")
        .join(segments.lazy().select("seg_id", "year", "half"), on="seg_id", how="left")
        .join(seg_long.lazy().select("seg_id", "wage_category", "mw"), on=["seg_id", "wage_category"], how="left")
    )
    in_t = pl.col("year") == t
    in_p = pl.col("year") == p
    req = (pl.col("hours") + ot_factor * pl.col("ot_hours")) * pl.col("mw")
    return per_seg.group_by("application_id", "employee_id").agg(
        exact_sum(pl.col("hours").filter(in_t)).alias("H_t"),
        exact_sum(pl.col("hours").filter(in_p)).alias("H_p"),
        exact_sum(pl.col("hours").filter(pl.col("year") == t - 2)).alias("H_pp"),
        exact_sum(pl.col("wages").filter(in_t)).alias("W_t"),
        exact_sum(pl.col("wages").filter(in_p)).alias("W_p"),
        exact_sum(pl.col("wages").filter(in_p & (pl.col("half") == 1))).alias("W1_p"),
        exact_sum(pl.col("wages").filter(pl.col("year") == t - 2)).alias("W_pp"),
        exact_sum(pl.col("taxes").filter(in_p)).alias("T_p"),
        exact_sum(req.filter(in_t)).alias("RW_t"),
        exact_sum(req.filter(in_t & (pl.col("half") == 1))).alias("RW1"),
    )


def category_profile(seg_long: pl.DataFrame, t: int, observe_through: dt.date | None) -> pl.DataFrame:
    """Per wage category: ``mw_avg_p`` (day-weighted average minimum wage over p), ``mw_dec31_p``
    (the one of December 31 of p, register I-3) and, for projections, the sums of the minimum
    wage over the unobserved days of t (``mw_days_rest``, ``mw_days_rest1`` for January-June)
    and their number (``days_rest``)."""
    p = t - 1
    days_p = (dt.date(p, 12, 31) - dt.date(p, 1, 1)).days + 1
    dec31 = dt.date(p, 12, 31)
    unobserved = pl.col("seg_start") > observe_through if observe_through else pl.lit(False)
    return (
        seg_long.group_by("wage_category")
        .agg(
            ((pl.col("mw") * pl.col("days")).filter(pl.col("year") == p).sum() / days_p).alias("mw_avg_p"),
            pl.col("mw").filter((pl.col("seg_start") <= dec31) & (pl.col("seg_end") >= dec31)).first().alias("mw_dec31_p"),
            (pl.col("mw") * pl.col("days")).filter((pl.col("year") == t) & unobserved).sum().alias("mw_days_rest"),
            (pl.col("mw") * pl.col("days")).filter((pl.col("year") == t) & unobserved & (pl.col("half") == 1)).sum().alias(
                "mw_days_rest1"
            ),
            pl.col("days").filter((pl.col("year") == t) & unobserved).sum().alias("days_rest"),
        )
    )
