"""N.J.S.A. 34:11-56a39: "'Employee with an impairment' means an employee earning at least the
minimum wage on the effective date of P.L.2019, c.32" (February 4, 2019).

Spec section 5 (``SUBMINIMUM_ON_EFFECTIVE_DATE``); register I-13.

The person's rows (in the group) that cover the effective date, spread over their days as in
section 3, give an hourly rate for that day (their wages / their hours on it); a rate below the
category's minimum wage of that day by more than $0.005 makes the person not an employee with an
impairment. Where no row covers that day the test does not apply (I-13 default); with
``effective_date_test=employed_at_or_above`` only persons paid on that day at or above the
minimum wage qualify.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from transforms.rules.rounding import RATE_EPS
from transforms.settings import RuleSettings

EFFECTIVE_DATE = dt.date(2019, 2, 4)


def effective_day_pay(rows: pl.LazyFrame) -> pl.LazyFrame:
    """``employer_id, ssn_hash, __h_eff, __w_eff``: hours and wages of each person at each
    employer on the effective date (rows covering it, spread evenly over their days)."""
    d = pl.lit(EFFECTIVE_DATE)
    n = ((pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1).cast(pl.Float64)
    return (
        rows.filter((pl.col("period_start") <= d) & (pl.col("period_end") >= d))
        .group_by("employer_id", "ssn_hash")
        .agg((pl.col("hours") / n).sum().alias("__h_eff"), (pl.col("gross_wages") / n).sum().alias("__w_eff"))
    )


def subminimum(rules: RuleSettings) -> pl.Expr:
    """SUBMINIMUM_ON_EFFECTIVE_DATE, over ``__h_eff``, ``__w_eff`` (the person's hours and wages
    on the effective date, summed over the group's members) and ``__mw_eff`` (the category's
    minimum wage that day)."""
    h, w, mw = pl.col("__h_eff").fill_null(0.0), pl.col("__w_eff").fill_null(0.0), pl.col("__mw_eff")
    paid = h > 0
    below = paid & (w / h < mw - 0.005 - RATE_EPS)
    if rules.effective_date_test == "employed_at_or_above":
        return below | ~paid
    return below
