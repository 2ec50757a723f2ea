"""The employers' declared totals of a synthetic submission (spec section 1, "What the employer
declares, and what was read"): for most employers, each roster line carries the hours, gross
wages and employer taxes its payroll system totals for the person, by pay date (here: the period
end, the generator writes no pay date), for the prior calendar year p and the tax period T; the
other employers declare nothing, so a demo shows both.

The figures are what a right reading gives: the sums of the person's rows (the same ssn) at the
applicant and the members of its group whose period ends in p or in T.
"""

from __future__ import annotations

import polars as pl

from transforms.schema import DECLARED
from transforms.synthetic.knobs import stream

DECLARING_SHARE = 0.8  # employers whose roster carries declared totals


def declare(seed: int, tax_year: int, roster: pl.DataFrame, applications: pl.DataFrame, payrolls: list[pl.DataFrame],
            groups: pl.DataFrame) -> pl.DataFrame:
    """``roster`` with the six declared columns (text; null, written empty, for an employer that
    declares nothing).

    ``applications``: application_id, employer_id and optional period_start/period_end (fiscal);
    ``payrolls``: the submitted payroll frames (employer_id, employee_id, ssn, period_start,
    period_end, hours, gross_wages, employer_taxes); ``groups``: control_groups.csv's rows."""
    apps = applications.select(
        "application_id", "employer_id",
        *[pl.col(c).cast(pl.String).str.to_date(strict=False) if c in applications.columns
          else pl.lit(None, dtype=pl.Date).alias(c) for c in ("period_start", "period_end")])
    apps = apps.with_columns(
        pl.coalesce("period_start", pl.date(tax_year, 1, 1)).alias("__T0"),
        pl.coalesce("period_end", pl.date(tax_year, 12, 31)).alias("__T1"),
    ).with_columns(pl.date(pl.col("__T0").dt.year() - 1, 1, 1).alias("__p0"),
                   pl.date(pl.col("__T0").dt.year() - 1, 12, 31).alias("__p1"))
    employers = apps.get_column("employer_id").unique().sort()
    r = stream(seed, "declared")
    declaring = set(employers.filter(pl.Series(r.random(employers.len()) < DECLARING_SHARE)).to_list())
    pay = pl.concat([p.select("employer_id", "employee_id", "ssn", pl.col("period_end").cast(pl.String).str.to_date(),
                              *[pl.col(c).cast(pl.Float64) for c in ("hours", "gross_wages", "employer_taxes")])
                     for p in payrolls if p.height])
    roster_emp = "employer_id" if "employer_id" in roster.columns else None
    claims = roster.with_row_index("__r").join(apps.select("application_id", pl.col("employer_id").alias("__applicant"),
                                                           "__T0", "__T1", "__p0", "__p1"), on="application_id", how="left")
    claims = claims.with_columns((pl.coalesce(pl.col(roster_emp).replace("", None), "__applicant") if roster_emp
                                  else pl.col("__applicant")).alias("__employer"))
    persons = pay.select("employer_id", "employee_id", "ssn").unique(["employer_id", "employee_id"], keep="first")
    claims = claims.join(persons, left_on=["__employer", "employee_id"], right_on=["employer_id", "employee_id"],
                         how="left")
    members = _members(groups)
    mine = claims.filter(pl.col("__applicant").is_in(list(declaring)) & pl.col("ssn").is_not_null()).join(
        members, left_on="__applicant", right_on="employer_id", how="left").with_columns(
        pl.coalesce("member_id", "__applicant").alias("member_id"))
    rows = mine.select("__r", "member_id", "ssn", "__T0", "__T1", "__p0", "__p1").unique().join(
        pay, left_on=["member_id", "ssn"], right_on=["employer_id", "ssn"], how="inner")
    within = lambda a, b: (pl.col("period_end") >= pl.col(a)) & (pl.col("period_end") <= pl.col(b))  # noqa: E731
    sums = rows.group_by("__r").agg(
        *[pl.col(src).filter(within(*w)).sum().alias(name) for name, src, w in _figures()])
    declared = mine.select("__r").unique().join(sums, on="__r", how="left").with_columns(
        pl.col(c).fill_null(0.0) for c in DECLARED)
    out = roster.with_row_index("__r").join(declared, on="__r", how="left").drop("__r")
    return out.with_columns(pl.col(c).round(2).map_elements(lambda v: f"{v:.2f}", return_dtype=pl.String).alias(c)
                            for c in DECLARED)


def _figures() -> list[tuple[str, str, tuple[str, str]]]:
    """(declared column, payroll column, its window's bounds)."""
    src = {"hours": "hours", "wages": "gross_wages", "taxes": "employer_taxes"}
    return [(c, src[c.split("_")[1]], ("__p0", "__p1") if c.endswith("prior") else ("__T0", "__T1")) for c in DECLARED]


def _members(groups: pl.DataFrame) -> pl.DataFrame:
    """employer_id -> member_id: every employer of each group an employer belongs to (itself included)."""
    if groups.height == 0:
        return pl.DataFrame(schema={"employer_id": pl.String, "member_id": pl.String})
    g = groups.select("group_id", pl.col("employer_id").cast(pl.String))
    return g.join(g.rename({"employer_id": "member_id"}), on="group_id").select("employer_id", "member_id").unique()
