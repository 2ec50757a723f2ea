"""N.J.S.A. 34:11-56a40(d)(1)(a) and (b): part 1 (the hours both years share) and part 2 (the
additional hours) of an eligible employee-year's credit.

Spec section 6; register I-1, I-3, I-4, I-9.

- part1 = min(H_t, H_p) x max(0, (RW_t + RT_t)/H_t - [(W_p + T_p)/H_p + ADJ_t x (1 + T_p/W_p)])
  (0 when H_p = 0; T_p/W_p is 0 when W_p = 0);
- part2 = max(0, H_t - H_p) x max(0, (MWavg_t - (MWavg_p + ADJ_t)) x (1 + RT_t/RW_t)),
  MWavg_t = RW_t / H_t;
- credit = round(part1 + part2), half up to the cent (``transforms.rules.rounding``).
RT_t comes from ``transforms.rules.payroll_taxes`` and ADJ_t from ``transforms.rules.adjustment``.
"""

from __future__ import annotations

import polars as pl

from transforms.rules.rounding import round_cents
from transforms.rules.year import YearParams
from transforms.settings import RuleSettings


def _safe(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den != 0).then(num / den).otherwise(0.0)


def mw_avg_t() -> pl.Expr:
    """MWavg_t = RW_t / H_t: the average minimum wage over the hours of T."""
    return _safe(pl.col("RW_t"), pl.col("H_t"))


def mw_avg_p(rules: RuleSettings) -> pl.Expr:
    """MWavg_p: the day-weighted average minimum wage of the category over p (I-4 default), or
    the rate of p's last day."""
    return pl.col("mw_avg_p") if rules.prior_minimum_wage == "day_weighted" else pl.col("mw_dec31_p")


def adjustments(rules: RuleSettings) -> tuple[pl.Expr, pl.Expr]:
    """(ADJ of part 1, ADJ of part 2): ADJ_t in dollars (I-1 default) or the percent alternative
    applied to the employee's prior rate (part 1) and prior minimum wage (part 2); 0 for tipped
    employees under the I-3 alternative."""
    if rules.adjustment == "dollars":
        adj1 = adj2 = pl.col("ADJ_t")
    else:
        adj1 = pl.col("ADJ_pct") * _safe(pl.col("W_p"), pl.col("H_p"))
        adj2 = pl.col("ADJ_pct") * mw_avg_p(rules)
    if rules.tipped_adjustment == "zero":
        tipped = pl.col("wage_category") == "tipped"
        adj1 = pl.when(tipped).then(0.0).otherwise(adj1)
        adj2 = pl.when(tipped).then(0.0).otherwise(adj2)
    return adj1, adj2


def part1(adj1: pl.Expr) -> pl.Expr:
    """56a40(d)(1)(a): the hours both years share, at what the minimum wage requires less what was
    paid last year (adjusted by (d)(1)(c))."""
    H_t, H_p, W_p, T_p = pl.col("H_t"), pl.col("H_p"), pl.col("W_p"), pl.col("T_p")
    required = _safe(pl.col("RW_t") + pl.col("RT_t"), H_t)
    paid = _safe(W_p + T_p, H_p) + adj1 * (1 + _safe(T_p, W_p))
    return pl.when(H_p > 0).then(pl.min_horizontal(H_t, H_p) * (required - paid).clip(lower_bound=0.0)).otherwise(0.0)


def part2(adj2: pl.Expr, rules: RuleSettings) -> pl.Expr:
    """56a40(d)(1)(b): the additional hours, presumed paid at last year's minimum wage plus ADJ."""
    tax_factor = (1 + _safe(pl.col("RT_t"), pl.col("RW_t"))) if rules.part2_taxes == "included" else pl.lit(1.0)
    extra = (pl.col("H_t") - pl.col("H_p")).clip(lower_bound=0.0)
    return extra * ((mw_avg_t() - (mw_avg_p(rules) + adj2)) * tax_factor).clip(lower_bound=0.0)


def credit(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    """Part 1 and part 2 (spec section 6), unrounded, then the rounded credit."""
    adj1, adj2 = adjustments(rules)
    eligible = pl.col("status") == "ELIGIBLE"
    emp = emp.with_columns(
        mw_avg_t().alias("MWavg_t"),
        mw_avg_p(rules).alias("MWavg_p"),
        adj1.alias("ADJ_part1"),
        adj2.alias("ADJ_part2"),
        pl.col("T_p").alias("T_p_used"),
        pl.when(eligible).then(part1(adj1)).otherwise(0.0).alias("part1"),
        pl.when(eligible).then(part2(adj2, rules)).otherwise(0.0).alias("part2"),
    )
    return emp.with_columns(
        round_cents(pl.col("part1")).alias("part1_cents"),
        round_cents(pl.col("part2")).alias("part2_cents"),
        round_cents(pl.col("part1") + pl.col("part2")).alias("credit_cents"),
        pl.lit(yp.tax_year, pl.Int32).alias("tax_year"),
    )
