"""N.J.S.A. 34:11-56a40(d)(1)(c): the actual rate of pay of the preceding calendar year "shall be
increased by whichever is the larger of: (i) the increase in the State minimum wage that would
have occurred, for the applicable tax year, if P.L.2019, c.32 had not been enacted; or (ii) any
increase in the federal minimum hourly wage rate set for the applicable tax year".

Spec sections 2 and 4 (``ADJ_t``); register I-1, I-2, I-3.

ADJ_t = max(CF̄(T) - CF(p), FED̄(T) - FED(p), 0), where CF̄(T) is the day-weighted average over
the days of T of CF(the day's calendar year) and FED̄(T) likewise (for a calendar year t:
max(CF(t) - CF(t-1), FED(t) - FED(t-1), 0)); with ``adjustment=percent`` (I-1) the same
comparison as a fraction of the prior value. CF(y) and FED(y) are the rates in effect on January 1
of y (``transforms.rules.year.calendar_years``).
"""

from __future__ import annotations

import polars as pl


def year_averages(windows: pl.DataFrame, years: pl.DataFrame, start: str, end: str, values: tuple[str, ...],
                  prefix: str) -> pl.DataFrame:
    """For each distinct (``start``, ``end``) window: the day-weighted average over its days of
    each of ``values`` (columns of ``years``, by calendar ``year``), named ``<prefix><value>``."""
    w = windows.select(start, end).unique()
    exploded = w.with_columns(
        pl.int_ranges(pl.col(start).dt.year(), pl.col(end).dt.year() + 1).alias("year")
    ).explode("year")
    lo = pl.max_horizontal(pl.col(start), pl.date(pl.col("year"), 1, 1))
    hi = pl.min_horizontal(pl.col(end), pl.date(pl.col("year"), 12, 31))
    exploded = exploded.with_columns(((hi - lo).dt.total_days() + 1).cast(pl.Float64).alias("__days")).join(
        years.select("year", *values), on="year", how="left")
    return exploded.group_by(start, end).agg(
        *[((pl.col(v) * pl.col("__days")).sum() / pl.col("__days").sum()).alias(f"{prefix}{v}") for v in values]
    )


def adjustment(apps: pl.DataFrame, years: pl.DataFrame) -> pl.DataFrame:
    """``application_id, ADJ_t, ADJ_pct``: ADJ in dollars (I-1 default) and as a fraction (the
    percent alternative) of each application, from its T and p (``T_start``..``p_end``)."""
    t_avg = year_averages(apps, years, "T_start", "T_end", ("cf", "fed"), "T_")
    p_avg = year_averages(apps, years, "p_start", "p_end", ("cf", "fed"), "p_")
    x = apps.select("application_id", "T_start", "T_end", "p_start", "p_end").join(
        t_avg, on=["T_start", "T_end"], how="left").join(p_avg, on=["p_start", "p_end"], how="left")
    ratio = lambda a, b: pl.when(pl.col(b) != 0).then(pl.col(a) / pl.col(b) - 1).otherwise(0.0)  # noqa: E731
    return x.select(
        "application_id",
        pl.max_horizontal(pl.col("T_cf") - pl.col("p_cf"), pl.col("T_fed") - pl.col("p_fed"), pl.lit(0.0)).alias("ADJ_t"),
        pl.max_horizontal(ratio("T_cf", "p_cf"), ratio("T_fed", "p_fed"), pl.lit(0.0)).alias("ADJ_pct"),
        pl.col("T_cf").alias("CF_T"), pl.col("p_cf").alias("CF_p"),
        pl.col("T_fed").alias("FED_T"), pl.col("p_fed").alias("FED_p"),
    )
