"""N.J.S.A. 34:11-56a40(d)(1): "the wages and payroll taxes which the employer is required to pay
each employee with an impairment": the required employer payroll taxes RT.

Spec section 4 (``RT_t``) and section 1 (per member of a group); register I-15.

For each calendar year c that T touches and each half of c (January-June at the member's UI/DI
rates of the rate year starting July 1 of c-1, July-December at those starting July 1 of c), the
taxes of the part of that half inside T are the marginal taxes on its required wages over the
required wages of the days of c before it (days before T count toward the wage bases but are not
taxed here): Social Security up to its base, Medicare, FUTA up to $7,000, NJ UI+DI up to the NJ
base. Computed segment by segment (segments never straddle January 1 or July 1), which sums to the
same as the half-by-half formula of the spec. Per member of a group, each with its own rates and
bases (I-15 default), or one set of bases for the group (``common_paymaster``).
"""

from __future__ import annotations

import polars as pl

from transforms.settings import RuleSettings

TAX_PARAMS = ("ss_rate", "ss_base", "medicare_rate", "futa_rate", "futa_base", "nj_base")


def rate_year_start() -> pl.Expr:
    """The NJ rate year of a segment: from July 1 of the year before (January-June) or of its year."""
    return pl.date(pl.when(pl.col("half") == 1).then(pl.col("year") - 1).otherwise(pl.col("year")), 7, 1)


def _marginal(after: pl.Expr, before: pl.Expr, base: str) -> pl.Expr:
    b = pl.col(base)
    return pl.min_horizontal(after, b) - pl.min_horizontal(before, b)


def required_taxes(per: pl.LazyFrame, years: pl.DataFrame, rates: pl.LazyFrame, rules: RuleSettings) -> pl.LazyFrame:
    """``__claim, member_id, RT_m``: the required employer payroll taxes of each claim at each
    member (spec section 4).

    ``per``: one row per (``__claim``, ``member_id``, segment) with ``req`` (the required wages
    of the segment's days), ``in_T``, ``year``, ``half``, ``seg_start``. ``years``: the tax
    parameters by calendar ``year`` (``TAX_PARAMS``). ``rates``: employer_id, rate_year_start,
    ui_rate, di_rate.
    """
    njr = (
        rates.unique(["employer_id", "rate_year_start"], keep="last", maintain_order=True)
        .select(pl.col("employer_id").alias("member_id"), "rate_year_start",
                (pl.col("ui_rate") + pl.col("di_rate")).alias("njr"))
    )
    x = (
        per.with_columns(rate_year_start().alias("rate_year_start"))
        .join(njr, on=["member_id", "rate_year_start"], how="left")
        .with_columns(pl.col("njr").fill_null(0.0))
        .join(years.lazy().select("year", *TAX_PARAMS), on="year", how="left")
    )
    if rules.group_payroll_taxes == "common_paymaster":
        # one set of bases for the group: the cumulative required wages of the claim over all
        # members; each member's share of a segment's marginal wages taxed at its own NJ rate
        seg_total = pl.col("req").sum().over("__claim", "seg_start")
        x = x.with_columns(seg_total.alias("__seg_req"))
        per_seg = x.select("__claim", "year", "seg_start", "__seg_req").unique()
        per_seg = per_seg.with_columns(
            pl.col("__seg_req").cum_sum().over(["__claim", "year"], order_by="seg_start").alias("__after"))
        x = x.join(per_seg.select("__claim", "seg_start", "__after"), on=["__claim", "seg_start"], how="left")
        share = pl.when(pl.col("__seg_req") != 0).then(pl.col("req") / pl.col("__seg_req")).otherwise(0.0)
        after, before = pl.col("__after"), pl.col("__after") - pl.col("__seg_req")
    else:
        x = x.with_columns(
            pl.col("req").cum_sum().over(["__claim", "member_id", "year"], order_by="seg_start").alias("__after"))
        share = pl.lit(1.0)
        after, before = pl.col("__after"), pl.col("__after") - pl.col("req")
    tax = share * (
        pl.col("ss_rate") * _marginal(after, before, "ss_base")
        + pl.col("futa_rate") * _marginal(after, before, "futa_base")
        + pl.col("njr") * _marginal(after, before, "nj_base")
    ) + pl.col("medicare_rate") * pl.col("req")
    return (
        x.with_columns(pl.when(pl.col("in_T")).then(tax).otherwise(0.0).alias("__tax"))
        .group_by("__claim", "member_id")
        .agg(pl.col("__tax").sum().alias("RT_m"))
    )


def modelled_prior_taxes(w_p: pl.Expr, w1_p: pl.Expr, prior: dict[str, float], njr_p1: pl.Expr,
                         njr_p2: pl.Expr) -> pl.Expr:
    """Register I-6 alternative (model both sides): the prior year's employer taxes modelled from
    its wages ``w_p`` (``w1_p`` in January-June) at the statutory rates of the prior year."""
    nj_all = pl.min_horizontal(w_p, pl.lit(prior["nj_base"]))
    nj_h1 = pl.min_horizontal(w1_p, pl.lit(prior["nj_base"]))
    return (
        prior["ss_rate"] * pl.min_horizontal(w_p, pl.lit(prior["ss_base"]))
        + prior["medicare_rate"] * w_p
        + prior["futa_rate"] * pl.min_horizontal(w_p, pl.lit(prior["futa_base"]))
        + njr_p1 * nj_h1
        + njr_p2 * (nj_all - nj_h1)
    )
