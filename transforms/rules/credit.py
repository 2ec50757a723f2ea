"""N.J.S.A. 34:11-56a40(d)(1): part 1 and part 2 of an eligible employee-year's credit.

Spec sections 4 and 6.

Required payroll taxes RT on the wages required at the minimum wage, the adjustment ADJ of
(d)(1)(c), and both parts unrounded; the credit is their sum rounded half up to the cent.
"""

from __future__ import annotations

import polars as pl

from transforms.rules.rounding import round_cents
from transforms.rules.year import YearParams
from transforms.settings import RuleSettings


def required_taxes(rw: pl.Expr, rw1: pl.Expr, yp: YearParams, njr1: pl.Expr, njr2: pl.Expr) -> pl.Expr:
    """RT: the employer payroll taxes required on wages rw (spec section 4)."""
    nj_all = pl.min_horizontal(rw, pl.lit(yp.nj_base))
    nj_h1 = pl.min_horizontal(rw1, pl.lit(yp.nj_base))
    return (
        yp.ss_rate * pl.min_horizontal(rw, pl.lit(yp.ss_base))
        + yp.medicare_rate * rw
        + yp.futa_rate * pl.min_horizontal(rw, pl.lit(yp.futa_base))
        + njr1 * nj_h1
        + njr2 * (nj_all - nj_h1)
    )


def credit(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    """Part 1 and part 2 of 56a40(d)(1) (spec section 6), unrounded, then the rounded credit."""
    H_t, H_p, W_p, T_p = pl.col("H_t"), pl.col("H_p"), pl.col("W_p"), pl.col("T_p")
    RW, RW1 = pl.col("RW_t"), pl.col("RW1")
    njr1 = pl.col("njr1").fill_null(0.0)
    njr2 = pl.col("njr2").fill_null(0.0)
    RT = required_taxes(RW, RW1, yp, njr1, njr2)
    if rules.payroll_taxes == "model_both" and yp.prior is not None:
        T_p = required_taxes(W_p, pl.col("W1_p"), yp.prior, pl.col("njrp1").fill_null(0.0), njr1)
    mw_avg_p = pl.col("mw_avg_p") if rules.prior_minimum_wage == "day_weighted" else pl.col("mw_dec31_p")
    zero_adj = (pl.col("wage_category") == "tipped") if rules.tipped_adjustment == "zero" else pl.lit(False)
    safe = lambda num, den: pl.when(den != 0).then(num / den).otherwise(0.0)  # noqa: E731
    prior_rate = safe(W_p + T_p, H_p)
    if rules.adjustment == "dollars":
        adj1 = adj2 = pl.lit(yp.adj_dollars)
    else:
        adj1 = yp.adj_percent * safe(W_p, H_p)
        adj2 = yp.adj_percent * mw_avg_p
    adj1 = pl.when(zero_adj).then(0.0).otherwise(adj1)
    adj2 = pl.when(zero_adj).then(0.0).otherwise(adj2)
    part1 = pl.when(H_p > 0).then(
        pl.min_horizontal(H_t, H_p)
        * (safe(RW + RT, H_t) - (prior_rate + adj1 * (1 + safe(T_p, W_p)))).clip(lower_bound=0.0)
    ).otherwise(0.0)
    tax_factor = (1 + safe(RT, RW)) if rules.part2_taxes == "included" else pl.lit(1.0)
    mw_avg_t = safe(RW, H_t)
    part2 = (H_t - H_p).clip(lower_bound=0.0) * ((mw_avg_t - (mw_avg_p + adj2)) * tax_factor).clip(lower_bound=0.0)
    eligible = pl.col("status") == "ELIGIBLE"
    emp = emp.with_columns(
        RT.alias("RT_t"),
        mw_avg_t.alias("MWavg_t"),
        mw_avg_p.alias("MWavg_p"),
        adj1.alias("ADJ_part1"),
        adj2.alias("ADJ_part2"),
        pl.lit(yp.adj_dollars).alias("ADJ_t"),
        T_p.alias("T_p_used"),
        pl.when(eligible).then(part1).otherwise(0.0).alias("part1"),
        pl.when(eligible).then(part2).otherwise(0.0).alias("part2"),
    )
    return emp.with_columns(
        round_cents(pl.col("part1")).alias("part1_cents"),
        round_cents(pl.col("part2")).alias("part2_cents"),
        round_cents(pl.col("part1") + pl.col("part2")).alias("credit_cents"),
        pl.lit(yp.tax_year, pl.Int32).alias("tax_year"),
    )
