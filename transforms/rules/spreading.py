"""N.J.S.A. 34:11-56a40(d)(1): each pay period's hours, wages and taxes spread evenly over its days.

Spec section 3.

Segments of days on which every category's minimum wage is constant and which never straddle
January 1 or July 1; reversals and voids are netted like any other line (spec section 1).
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.reference.parameters import Parameters
from transforms.rules.rounding import exact_sum
from transforms.schema import WAGE_CATEGORIES
from transforms.settings import RuleSettings


def rate_segments(
    params: Parameters, start: dt.date, end: dt.date, extra_cuts: tuple[dt.date, ...] = ()
) -> pl.DataFrame:
    """Cut [start, end] into segments on which every category's minimum wage is constant and
    which never straddle January 1 or July 1 (the halves of RW1/RW2), nor any ``extra_cuts``.

    Columns: seg_id, seg_start, seg_end, year, half, days, and one mw_<category> per category.
    """
    cuts: set[dt.date] = {start, *[c for c in extra_cuts if start < c <= end]}
    for y in range(start.year, end.year + 1):
        for d in (dt.date(y, 1, 1), dt.date(y, 7, 1)):
            if start < d <= end:
                cuts.add(d)
    schedules = {c: params.schedule(f"minimum_wage.{c}", start, end) for c in WAGE_CATEGORIES}
    for pieces in schedules.values():
        cuts.update(p[0] for p in pieces if start < p[0] <= end)
    starts = sorted(cuts)
    ends = [s - dt.timedelta(days=1) for s in starts[1:]] + [end]
    frame = pl.DataFrame({"seg_start": starts, "seg_end": ends}).with_row_index("seg_id")
    frame = frame.with_columns(
        pl.col("seg_id").cast(pl.Int32),
        pl.col("seg_start").dt.year().cast(pl.Int32).alias("year"),
        pl.when(pl.col("seg_start").dt.month() <= 6).then(1).otherwise(2).cast(pl.Int8).alias("half"),
        ((pl.col("seg_end") - pl.col("seg_start")).dt.total_days() + 1).cast(pl.Int32).alias("days"),
    )
    for cat, pieces in schedules.items():
        mw = [next(v for (a, b, v) in pieces if a <= s <= b) for s in starts]
        frame = frame.with_columns(pl.Series(f"mw_{cat}", mw, dtype=pl.Float64))
    return frame


def segments_long(segments: pl.DataFrame) -> pl.DataFrame:
    """(seg_id, wage_category, mw): the segment table with one row per category."""
    return segments.unpivot(
        index=["seg_id", "year", "half", "days", "seg_start", "seg_end"],
        on=[f"mw_{c}" for c in WAGE_CATEGORIES],
        variable_name="wage_category",
        value_name="mw",
    ).with_columns(pl.col("wage_category").str.strip_prefix("mw_"))


def spread_payroll(
    payroll: pl.LazyFrame, segments: pl.DataFrame, rules: RuleSettings, *, ot_weekly_hours: float = 0.0,
    keys: tuple[str, ...] = ("employer_id", "employee_id"),
) -> pl.LazyFrame:
    """Spread each period's hours, wages and taxes evenly over its days, summed per segment.

    Returns one row per (``keys``, seg_id): hours, wages, taxes, ot_hours. Days outside the
    segment table's range are dropped (they belong to other years).
    """
    first, last = segments["seg_start"].min(), segments["seg_end"].max()
    bounds = segments["seg_start"]
    lf = payroll.select(*keys, "period_start", "period_end", "hours", "gross_wages", "employer_taxes")
    if rules.attribution == "period_end":
        lf = lf.with_columns(pl.col("period_end").alias("period_start"))
    n_days = (pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1
    lf = lf.filter((pl.col("period_end") >= first) & (pl.col("period_start") <= last)).with_columns(
        n_days.cast(pl.Float64).alias("__n"),
        # I-5 alternative: hours above the weekly overtime threshold, estimated per period.
        (pl.col("hours") - ot_weekly_hours * n_days / 7.0).clip(lower_bound=0.0).alias("__ot"),
        (pl.lit(bounds).search_sorted(pl.col("period_start").clip(first, last), side="right").cast(pl.Int32) - 1).alias(
            "__i0"
        ),
        (pl.lit(bounds).search_sorted(pl.col("period_end").clip(first, last), side="right").cast(pl.Int32) - 1).alias(
            "__i1"
        ),
    )
    lf = (
        lf.with_columns(pl.int_ranges(pl.col("__i0"), pl.col("__i1") + 1, dtype=pl.Int32).alias("seg_id"))
        .explode("seg_id")
        .join(segments.lazy().select("seg_id", "seg_start", "seg_end"), on="seg_id", how="left")
    )
    overlap = (
        pl.min_horizontal("seg_end", "period_end") - pl.max_horizontal("seg_start", "period_start")
    ).dt.total_days() + 1
    frac = overlap.cast(pl.Float64) / pl.col("__n")
    return lf.group_by(*keys, "seg_id").agg(
        exact_sum(pl.col("hours") * frac).alias("hours"),
        exact_sum(pl.col("gross_wages") * frac).alias("wages"),
        exact_sum(pl.col("employer_taxes") * frac).alias("taxes"),
        exact_sum(pl.col("__ot") * frac).alias("ot_hours"),
    )


def netted_lines(payroll: pl.LazyFrame, start: dt.date, end: dt.date) -> pl.LazyFrame:
    """``employer_id, employee_id, netted_lines``: the submitted lines with a negative hours,
    wages or taxes value (reversals and voids, netted against the rest: spec section 1) of each
    employee on periods touching ``start``..``end``, as ``file:line`` joined by ", "."""
    neg = pl.any_horizontal(pl.col(c) < 0 for c in ("hours", "gross_wages", "employer_taxes"))
    touch = (pl.col("period_end") >= start) & (pl.col("period_start") <= end)
    return (
        payroll.filter(neg & touch)
        .sort("source_file", "source_line")
        .group_by("employer_id", "employee_id", maintain_order=True)
        .agg(pl.format("{}:{}", "source_file", "source_line").str.join(", ").alias("netted_lines"))
    )
