"""N.J.S.A. 34:11-56a40(e): a quarterly estimate projects the tax year's hours to the full year.

Spec section 9.

Hours so far x (days in t / days from January 1 to the quarter's end); the projected remaining
hours are spread evenly over the remaining days and priced at each day's minimum wage. Prior-year
quantities are actual; the projected employee-year then goes through sections 5 and 6 unchanged.
"""

from __future__ import annotations

import datetime as dt

import polars as pl


def project_full_year(emp: pl.LazyFrame, t: int, observe_through: dt.date) -> pl.LazyFrame:
    """H_t, W_t, RW_t and RW1 of each employee-year projected from the days through
    ``observe_through`` (``emp`` carries the category profile of ``quantities.category_profile``)."""
    days_t = (dt.date(t, 12, 31) - dt.date(t, 1, 1)).days + 1
    days_so_far = (observe_through - dt.date(t, 1, 1)).days + 1
    per_day = pl.col("H_t") * (days_t / days_so_far - 1) / pl.col("days_rest")
    return emp.with_columns(
        (pl.col("H_t") * days_t / days_so_far).alias("H_t"),
        # wages scale like hours, so the wage-reduction rate W_t/H_t stays the observed one
        (pl.col("W_t") * days_t / days_so_far).alias("W_t"),
        (pl.col("RW_t") + per_day * pl.col("mw_days_rest")).alias("RW_t"),
        (pl.col("RW1") + per_day * pl.col("mw_days_rest1")).alias("RW1"),
    )
