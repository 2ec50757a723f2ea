"""N.J.S.A. 34:11-56a40(d)(1): the quantities of each claimed employee-year over the group's rows.

Spec section 4: H, W and T on days of the tax period T, of the last preceding calendar year p and
of pp (the year before p, for the wage-reduction test of (f)); RW_t, the wages the minimum wage
requires on the days of T; MWavg_p, the category's minimum wage averaged over p (register I-4).
The rows come from ``engine._claim_segments``: one per claim, member and segment of days.
"""

from __future__ import annotations

import polars as pl

from transforms.rules.rounding import exact_sum


def quantities(per: pl.DataFrame) -> pl.DataFrame:
    """The sums of section 4 per claim over the group's rows: H, W and T in T, p and pp; the
    required wages RW_t; the prior year's wages in January-June (I-6 alternative)."""
    in_t, in_p, in_pp = pl.col("in_T"), pl.col("in_p"), pl.col("in_pp")
    return per.group_by("__claim").agg(
        exact_sum(pl.col("hours").filter(in_t)).alias("H_t"),
        exact_sum(pl.col("hours").filter(in_p)).alias("H_p"),
        exact_sum(pl.col("hours").filter(in_pp)).alias("H_pp"),
        exact_sum(pl.col("wages").filter(in_t)).alias("W_t"),
        exact_sum(pl.col("wages").filter(in_p)).alias("W_p"),
        exact_sum(pl.col("wages").filter(in_p & (pl.col("half") == 1))).alias("W1_p"),
        exact_sum(pl.col("wages").filter(in_pp)).alias("W_pp"),
        exact_sum(pl.col("taxes").filter(in_p)).alias("T_p"),
        exact_sum(pl.col("req").filter(in_t)).alias("RW_t"),
    )


def prior_minimum_wage(claims: pl.DataFrame, seg_long: pl.DataFrame) -> pl.DataFrame:
    """``__claim, mw_avg_p, mw_dec31_p``: the day-weighted average minimum wage of the claim's
    category over p (each day counts once), and the one of p's last day (register I-4)."""
    windows = claims.select("p_start", "p_end", "wage_category").unique()
    in_p = (pl.col("seg_start") >= pl.col("p_start")) & (pl.col("seg_end") <= pl.col("p_end"))
    last = (pl.col("seg_start") <= pl.col("p_end")) & (pl.col("seg_end") >= pl.col("p_end"))
    avg = windows.join(seg_long.select("wage_category", "seg_start", "seg_end", "days", "mw"), on="wage_category").group_by(
        "p_start", "p_end", "wage_category").agg(
        ((pl.col("mw") * pl.col("days")).filter(in_p).sum() / pl.col("days").filter(in_p).sum()).alias("mw_avg_p"),
        pl.col("mw").filter(last).first().alias("mw_dec31_p"),
    )
    return claims.select("__claim", "p_start", "p_end", "wage_category").join(
        avg, on=["p_start", "p_end", "wage_category"], how="left").select("__claim", "mw_avg_p", "mw_dec31_p")
