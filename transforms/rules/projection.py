"""N.J.S.A. 34:11-56a40(e): an employer "may use the tax credit when determining the employer's
estimated tax ... The commissioner shall, upon request, provide assistance to the employer in
estimating the likely amount of the tax credit": a quarterly estimate projects the tax period's
hours to its end.

Spec section 9.

Observed so far: the quantities of section 4 on days from T's start s to the quarter's end E.
Projected: hours so far x (days in T / days from s to E); the projected remaining hours are spread
evenly over the remaining days of T, priced at each day's minimum wage, and belong to the
applicant (its rates and bases). Prior-year quantities are actual. The projected rows are added to
the observed ones, so the projected employee-year goes through sections 4 to 6 unchanged (wages
scale like hours: the wage-reduction rate W_t/H_t stays the observed one).
"""

from __future__ import annotations

import polars as pl


def projected_rows(per: pl.DataFrame, claims: pl.DataFrame, segments: pl.DataFrame) -> pl.DataFrame:
    """Rows like ``per`` (one per claim and remaining segment of T, at the applicant) holding the
    projected hours and wages of the days of T after the quarter's end E."""
    observed = per.filter(pl.col("in_T")).group_by("__claim").agg(
        pl.col("hours").sum().alias("__h"), pl.col("wages").sum().alias("__w"))
    base = claims.select(
        "__claim", "application_id", pl.col("employer_id").alias("member_id"), "wage_category",
        "T_start", "T_end", "p_start", "p_end", "pp_start", "pp_end", "E",
    ).join(observed, on="__claim", how="inner").filter(pl.col("E") < pl.col("T_end"))
    seg = segments.select("seg_id", "seg_start", "seg_end", "year", "half", "days")
    days_t = (pl.col("T_end") - pl.col("T_start")).dt.total_days() + 1
    days_so_far = (pl.col("E") - pl.col("T_start")).dt.total_days() + 1
    days_rest = (pl.col("T_end") - pl.col("E")).dt.total_days()
    per_day = pl.col("__h") * (days_t / days_so_far - 1) / days_rest
    rate = pl.when(pl.col("__h") != 0).then(pl.col("__w") / pl.col("__h")).otherwise(0.0)
    out = (
        base.join(seg, how="cross")
        .filter((pl.col("seg_start") > pl.col("E")) & (pl.col("seg_end") <= pl.col("T_end")))
        .with_columns((per_day * pl.col("days")).alias("hours"))
        .with_columns(
            (pl.col("hours") * rate).alias("wages"),
            pl.lit(0.0).alias("taxes"),
            pl.lit(0.0).alias("ot_hours"),
            pl.lit(True).alias("in_T"),
            pl.lit(False).alias("in_p"),
            pl.lit(False).alias("in_pp"),
        )
        .drop("__h", "__w")
    )
    return out.select([c for c in per.columns if c in out.columns])
