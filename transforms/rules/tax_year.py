"""N.J.S.A. 34:11-56a39 ("'Tax year' means the calendar or fiscal year in which the taxpayer's gross
income tax or corporation business tax liability is due and payable") and 34:11-56a40(d)(1) ("the
last preceding calendar year"): the tax period T of each application and the years it is measured
against.

Spec section 1 ("The tax year may be a fiscal year") and section 4; register I-11.

- T = [``T_start``, ``T_end``]: the application's ``period_start``..``period_end`` when it gives
  them, else the calendar year ``tax_year``.
- p = [``p_start``, ``p_end``]: the last calendar year that ended before T began (I-11 default,
  ``prior_year=calendar_year_before``), or the 12 months just before T (``twelve_months_before``);
  pp, the year before p, for the wage-reduction test of 56a40(f).
- The quarters of an estimate (56a40(e), spec section 9): quarter q of T ends at
  ``T_start + 3q months - 1 day``; the fourth ends at ``T_end``.
"""

from __future__ import annotations

import polars as pl

from transforms.settings import RuleSettings

PERIOD_COLUMNS = ("T_start", "T_end", "p_start", "p_end", "pp_start", "pp_end")


def _jan1(year: pl.Expr) -> pl.Expr:
    return pl.date(year, 1, 1)


def _dec31(year: pl.Expr) -> pl.Expr:
    return pl.date(year, 12, 31)


def tax_period(frame: pl.LazyFrame | pl.DataFrame) -> list[pl.Expr]:
    """``T_start``, ``T_end``: the fiscal period given, or the calendar year ``tax_year``."""
    return [
        pl.coalesce(pl.col("period_start"), _jan1(pl.col("tax_year"))).alias("T_start"),
        pl.coalesce(pl.col("period_end"), _dec31(pl.col("tax_year"))).alias("T_end"),
    ]


def prior_years(rules: RuleSettings) -> list[pl.Expr]:
    """``p_start``, ``p_end``, ``pp_start``, ``pp_end`` from ``T_start`` (register I-11)."""
    s = pl.col("T_start")
    if rules.prior_year == "twelve_months_before":
        p_start = s.dt.offset_by("-12mo")
        pp_start = s.dt.offset_by("-24mo")
        return [
            p_start.alias("p_start"),
            (s - pl.duration(days=1)).alias("p_end"),
            pp_start.alias("pp_start"),
            (p_start - pl.duration(days=1)).alias("pp_end"),
        ]
    y = s.dt.year()
    return [
        _jan1(y - 1).alias("p_start"),
        _dec31(y - 1).alias("p_end"),
        _jan1(y - 2).alias("pp_start"),
        _dec31(y - 2).alias("pp_end"),
    ]


def with_periods(apps: pl.LazyFrame, rules: RuleSettings) -> pl.LazyFrame:
    """The applications with their tax period T and the prior years p and pp."""
    return apps.with_columns(tax_period(apps)).with_columns(prior_years(rules))


def quarter_end(quarter: int) -> pl.Expr:
    """The last day ``E`` of quarter ``quarter`` of each application's own tax period T
    (spec section 9): ``T_start + 3q months - 1 day``; the fourth quarter ends at ``T_end``."""
    if quarter not in (1, 2, 3, 4):
        raise ValueError(f"quarter must be 1, 2, 3 or 4, not {quarter!r}")
    if quarter == 4:
        return pl.col("T_end")
    return pl.col("T_start").dt.offset_by(f"{3 * quarter}mo") - pl.duration(days=1)
