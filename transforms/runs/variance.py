"""The variance report (spec section 9): each employer's final credit against its quarterly projections, by employer and tax year.

An estimate request (``EST-...``) and the application that follows it (``APP-...``) have different
ids: they meet by ``(employer_id, tax_year)``, never by id. Each quarter's projection is the
latest quarterly run of that quarter (``<workdir>/estimates/<run_id>.parquet``); the final credit
is the credit the annual run computed (``requested``) of the employer's decided applications.
A projection with no final credit yet, or a final credit with no projection, says so in
``status`` and its variance is empty, never 0.00. Amounts are summed in cents.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.award import ledger
from transforms.outputs import write_csv

KEY = ["employer_id", "tax_year"]
COMPARED, NO_FINAL, NO_PROJECTION = "compared", "no final credit yet", "no projection"


def quarterly_projections(con, workdir: Path, tax_year: int) -> dict[int, pl.DataFrame]:
    """The latest quarterly run of each quarter of a tax year: quarter -> (application_id,
    employer_id, projected_cents), one row per request or application it estimated."""
    rows = con.sql(
        """SELECT quarter, run_id FROM (
               SELECT quarter, run_id, row_number() OVER (PARTITION BY quarter ORDER BY committed_at DESC, run_id DESC) AS n
               FROM runs WHERE kind = 'quarterly' AND tax_year = $t AND quarter IS NOT NULL)
           WHERE n = 1 ORDER BY quarter""",
        params={"t": tax_year},
    ).fetchall()
    out = {}
    for q, run_id in rows:
        path = workdir / "estimates" / f"{run_id}.parquet"
        if path.exists():
            out[int(q)] = pl.read_parquet(path)
    return out


def final_credits(con, tax_year: int) -> pl.DataFrame:
    """Each decided application's final credit of a tax year (the credit its annual run computed,
    ``requested_cents``) and award, from the ledger's latest decision per application (a held
    application is not in the ledger: it has no final credit yet)."""
    return ledger.current_decisions(con).filter(pl.col("tax_year") == tax_year).select(
        "application_id", "employer_id", "requested_cents", "awarded_cents", "status").sort("application_id")


def _ids(col: str) -> pl.Expr:
    return pl.col(col).unique().sort().str.join(";")


def _by_employer(frame: pl.DataFrame, tax_year: int, aggs: list[pl.Expr]) -> pl.DataFrame:
    return frame.group_by("employer_id").agg(aggs).with_columns(pl.lit(tax_year, pl.Int32).alias("tax_year"))


def variance(con, workdir: Path, tax_year: int) -> pl.DataFrame | None:
    """variance.csv, one row per employer of the tax year: ``status`` (``compared``, ``no final
    credit yet``, ``no projection``), the ids estimated and decided, ``final_credit``,
    ``awarded``, and per quarter projected ``projected_qN`` and ``variance_qN`` = final - projected
    (empty where either is missing). None before the annual run of the tax year."""
    if ledger.last_run(con, "annual", tax_year) is None:
        return None
    final = _by_employer(final_credits(con, tax_year), tax_year, [
        _ids("application_id").alias("application_ids"), pl.col("requested_cents").sum().alias("__final"),
        pl.col("awarded_cents").sum().alias("__awarded"), _ids("status").alias("final_status")])
    proj = quarterly_projections(con, workdir, tax_year)
    estimated = pl.concat([f.select("employer_id", "application_id") for f in proj.values()]) if proj else pl.DataFrame(
        schema={"employer_id": pl.String, "application_id": pl.String})
    out = _by_employer(estimated, tax_year, [_ids("application_id").alias("estimated_ids")])
    for q, frame in sorted(proj.items()):
        out = out.join(_by_employer(frame, tax_year, [pl.col("projected_cents").sum().alias(f"__q{q}")]).drop(
            "tax_year"), on="employer_id", how="left")
    out = out.join(final, on=KEY, how="full", coalesce=True)
    has_final = pl.col("__final").is_not_null()
    has_proj = pl.any_horizontal([pl.col(f"__q{q}").is_not_null() for q in proj]) if proj else pl.lit(False)
    out = out.with_columns(
        pl.when(has_final & has_proj).then(pl.lit(COMPARED)).when(has_final).then(pl.lit(NO_PROJECTION))
        .otherwise(pl.lit(NO_FINAL)).alias("status"))
    money = [(pl.col("__final") / 100).alias("final_credit"), (pl.col("__awarded") / 100).alias("awarded")]
    money += [(pl.col(f"__q{q}") / 100).alias(f"projected_q{q}") for q in sorted(proj)]
    money += [((pl.col("__final") - pl.col(f"__q{q}")) / 100).alias(f"variance_q{q}") for q in sorted(proj)]
    return out.select("employer_id", "tax_year", "status", "estimated_ids", "application_ids", *money,
                      "final_status").sort(KEY)


def variance_report(workdir: Path, out_dir: Path, tax_year: int) -> Path | None:
    """``out_dir/variance.csv`` from the ledger of ``workdir``; None before the annual run."""
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        return None
    con = ledger.connect(path, read_only=True)
    try:
        var = variance(con, workdir, tax_year)
    finally:
        con.close()
    if var is None:
        return None
    return write_csv(var, out_dir / "variance.csv")
