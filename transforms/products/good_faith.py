"""The good-faith report for the Division of Taxation (N.J.S.A. 34:11-56a40(e); spec section 9a).

For tax years 2019 and 2020 the Director may waive, in part or entirely, penalties for
underpayment of installment payments where the employer made a good-faith error calculating the
credit; never for a knowing misclassification. After the annual run of such a tax year
(``enforcement.good_faith_waiver_first_tax_year`` .. ``_last_tax_year``),
``taxation/good_faith_<tax year>.csv`` lists each employer whose estimate (the quarterly runs'
projection, spec section 9) exceeded the credit certified for the tax year: one row per estimate
given (the latest quarterly run of each quarter: its quarter, its date and the amount), the credit
certified (its applications' awards now, after any finding) and the difference (estimate less
certified), and ``knowing_misclassification`` (yes where a knowing misclassification finding in
force concerns one of its applications of the year: no waiver then).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from transforms.award.findings import Finding
from transforms.outputs import write_csv
from transforms.products.letter import fein

COLUMNS = ["employer_id", "fein", "employer_name", "tax_year", "quarter", "estimate_date", "estimated_credit",
           "credit_certified", "difference", "knowing_misclassification"]
_FAR = dt.date(9999, 12, 31)


def years(params) -> range:
    """The tax years of the good-faith waiver (``data/reference/enforcement.yaml``)."""
    first = int(params.value("enforcement.good_faith_waiver_first_tax_year", _FAR))
    last = int(params.value("enforcement.good_faith_waiver_last_tax_year", _FAR))
    return range(first, last + 1)


def estimates(con, workdir: Path, tax_year: int) -> pl.DataFrame:
    """``employer_id, quarter, estimate_date, estimated_cents``: the estimate each employer was given
    by the latest quarterly run of each quarter of the tax year (its requests and applications summed)."""
    runs = con.sql("""SELECT quarter, run_id, as_of FROM (
                          SELECT quarter, run_id, as_of, row_number() OVER (PARTITION BY quarter
                              ORDER BY committed_at DESC, run_id DESC) AS n
                          FROM runs WHERE kind = 'quarterly' AND tax_year = $t AND quarter IS NOT NULL)
                      WHERE n = 1 ORDER BY quarter""", params={"t": tax_year}).fetchall()
    parts = []
    for quarter, run_id, as_of in runs:
        path = Path(workdir) / "estimates" / f"{run_id}.parquet"
        if path.is_file():
            parts.append(pl.read_parquet(path).group_by("employer_id").agg(pl.col("projected_cents").sum().alias(
                "estimated_cents")).with_columns(pl.lit(int(quarter), pl.Int8).alias("quarter"),
                                                 pl.lit(as_of, pl.Date).alias("estimate_date")))
    if not parts:
        return pl.DataFrame(schema={"employer_id": pl.String, "estimated_cents": pl.Int64, "quarter": pl.Int8,
                                    "estimate_date": pl.Date})
    return pl.concat(parts).cast({"estimated_cents": pl.Int64})


def good_faith_rows(con, workdir: Path, tax_year: int, awards: pl.DataFrame, findings: list[Finding]) -> pl.DataFrame:
    """The report's rows (``COLUMNS``): ``awards`` are the decisions of the tax year's applications
    as the run reports them (DECISION_COLUMNS)."""
    est = estimates(con, workdir, tax_year)
    mine = awards.filter(pl.col("tax_year") == tax_year)
    certified = mine.group_by("employer_id").agg(pl.col("awarded_cents").sum().alias("certified_cents"),
                                                 pl.col("employer_name").drop_nulls().last().alias("employer_name"))
    knowing = {f.employer_id for f in findings if f.active and f.knowing and f.kind == "misclassified"
               and tax_year in f.tax_years}
    rows = est.join(certified, on="employer_id", how="left").with_columns(
        pl.col("certified_cents").fill_null(0), pl.col("employer_name").fill_null(""))
    over = rows.filter(pl.col("estimated_cents") > pl.col("certified_cents")).select("employer_id").unique()
    rows = rows.join(over, on="employer_id", how="semi").sort("employer_id", "quarter")
    return rows.select(
        "employer_id", pl.col("employer_id").map_elements(fein, return_dtype=pl.String).alias("fein"), "employer_name",
        pl.lit(tax_year, pl.Int32).alias("tax_year"), "quarter", "estimate_date",
        (pl.col("estimated_cents") / 100).alias("estimated_credit"), (pl.col("certified_cents") / 100).alias("credit_certified"),
        ((pl.col("estimated_cents") - pl.col("certified_cents")) / 100).alias("difference"),
        pl.when(pl.col("employer_id").is_in(sorted(knowing))).then(pl.lit("yes")).otherwise(pl.lit("no"))
        .alias("knowing_misclassification"),
    )


def write_good_faith(staging_dir: Path, con, workdir: Path, tax_year: int, awards: pl.DataFrame,
                     findings: list[Finding], params) -> list[Path]:
    """``taxation/good_faith_<tax year>.csv`` after the annual run of a good-faith year; else nothing."""
    if tax_year not in years(params):
        return []
    path = Path(staging_dir) / "taxation" / f"good_faith_{tax_year}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    return [write_csv(good_faith_rows(con, workdir, tax_year, awards, findings), path)]
