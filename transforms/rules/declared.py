"""N.J.S.A. 34:11-56a40(d)(1): the hours, wages and employer payroll taxes the credit rests on, as
read, proven by the employer's own totals.

Spec section 1, "What the employer declares, and what was read" (reconciliation).

A reading can be wrong without a single line failing (a profile that maps the wrong column, a
workbook tab taken for payroll, a sum of codes that misses one). A roster line may carry the
employer's own year-to-date totals for the claimed person, by check date: hours, gross wages and
employer payroll taxes of the last preceding calendar year p and of the tax period T. Each
declared figure is compared with the same figure as read: the sum of the person's payroll rows
in the group whose pay date, or period end where no pay date is known, falls in p or T. A
difference larger than both ``share`` (2%) of the declared figure and the person's largest single
canonical row of that figure among those that end or are paid in that year or period (a check date
can move one row across the year's end) is a disagreement: the application is held
(``DECLARED_TOTALS_DIFFER``), never decided on a reading its employer contradicts.

Pure functions over Polars frames.
"""

from __future__ import annotations

import polars as pl

from transforms.schema import DECLARED

# declared column -> (payroll column, window: "prior" = calendar year p, "current" = tax period T)
FIGURES: dict[str, tuple[str, str]] = {
    c: ({"hours": "hours", "wages": "gross_wages", "taxes": "employer_taxes"}[c.split("_")[1]], c.split("_")[2])
    for c in DECLARED
}
RECONCILIATION_SCHEMA = {
    "application_id": pl.String, "roster_employer_id": pl.String, "employee_id": pl.String,
    "figure": pl.String, "period_start": pl.Date, "period_end": pl.Date, "declared": pl.Float64,
    "read": pl.Float64, "largest_row": pl.Float64, "tolerance": pl.Float64, "differs": pl.Boolean,
    "source_file": pl.String, "source_line": pl.Int64,
}
EPS = 1e-6  # a difference of exactly the tolerance, summed in floating point, is within it
SHARE = 0.02  # the spec's tolerance: 2% of the declared figure (or the largest row, whichever is larger)


_DECLARATIONS = {"__claim": pl.Int64, "figure": pl.String, "declared": pl.Float64, "source_file": pl.String,
                 "source_line": pl.Int64}


def declarations(claims: pl.DataFrame, roster: pl.LazyFrame, *, every: bool = False) -> pl.DataFrame:
    """One row per claim and declared figure: ``__claim``, ``figure`` (the declared column),
    ``declared`` and the roster line's ``source_file``, ``source_line``. A blank cell declares
    nothing; a roster without the columns declares nothing. ``every``: all six figures of every
    claim, ``declared`` null where nothing is declared (what ``impcredit check`` shows)."""
    have = roster.collect_schema().names()
    cols = [c for c in DECLARED if c in have]
    if (not cols and not every) or claims.height == 0:
        return pl.DataFrame(schema=_DECLARATIONS)
    given = roster.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in cols) if cols and not every else pl.lit(True))
    given = given.select("application_id", "employee_id", pl.col("employer_id").alias("__roster_employer"),
                         *[pl.col(c) if c in cols else pl.lit(None, dtype=pl.Float64).alias(c) for c in DECLARED],
                         "source_file", "source_line").collect()
    if given.height == 0:
        return pl.DataFrame(schema=_DECLARATIONS)
    keyed = claims.select("__claim", "application_id", "employer_id", "roster_employer_id", "employee_id").join(
        given, on=["application_id", "employee_id"], how="inner").filter(
        pl.coalesce("__roster_employer", "employer_id") == pl.col("roster_employer_id")).unique(
        "__claim", keep="first", maintain_order=True)
    out = keyed.unpivot(index=["__claim", "source_file", "source_line"], on=list(DECLARED), variable_name="figure",
                        value_name="declared")
    return (out if every else out.filter(pl.col("declared").is_not_null())).select(list(_DECLARATIONS))


def reconcile(claims: pl.DataFrame, members: pl.DataFrame, payroll: pl.LazyFrame, roster: pl.LazyFrame,
              *, share: float = SHARE, every: bool = False) -> pl.DataFrame:
    """``RECONCILIATION_SCHEMA``: every declared figure of the claims beside the figure as read
    (``every``: all six figures of every claim, ``declared`` null where nothing is declared).

    ``claims``: ``employer.claims`` with the person (``ssn``), T (``T_start``, ``T_end``) and p
    (``p_start``, ``p_end``); ``members``: application_id, member_id (the applicant and its group);
    ``payroll``: the staged rows (ssn filled from the roster)."""
    dec = declarations(claims, roster, every=every)
    if dec.height == 0:
        return pl.DataFrame(schema=RECONCILIATION_SCHEMA)
    fig = pl.DataFrame({"figure": list(FIGURES), "__column": [v[0] for v in FIGURES.values()],
                        "__window": [v[1] for v in FIGURES.values()]})
    who = claims.join(dec.select("__claim").unique(), on="__claim", how="semi").select(
        "__claim", "application_id", "roster_employer_id", "employee_id", "ssn", "T_start", "T_end", "p_start", "p_end")
    dec = dec.join(fig, on="figure", how="left").join(who, on="__claim", how="inner").with_columns(
        pl.when(pl.col("__window") == "prior").then(pl.col("p_start")).otherwise(pl.col("T_start")).alias("period_start"),
        pl.when(pl.col("__window") == "prior").then(pl.col("p_end")).otherwise(pl.col("T_end")).alias("period_end"))
    mem = members.select("application_id", "member_id").unique()
    ssns = who.get_column("ssn").drop_nulls().unique()
    rows = (payroll.filter(pl.col("ssn_hash").is_in(ssns.implode())
                           & pl.col("employer_id").is_in(mem.get_column("member_id").unique().implode()))
            .select("employer_id", "ssn_hash", "period_end", "pay_date", "hours", "gross_wages", "employer_taxes")
            .collect())
    # each claim's rows: the person's, at the applicant or a member of its group
    persons = who.select("__claim", "application_id", "ssn").join(mem, on="application_id", how="inner")
    mine = persons.join(rows, left_on=["member_id", "ssn"], right_on=["employer_id", "ssn_hash"], how="inner").select(
        "__claim", "period_end", "pay_date", "hours", "gross_wages", "employer_taxes")
    # each claim's two windows beside its rows, every figure of both summed in one pass (no row is
    # repeated per figure: at 10M rows the claimed persons' rows are millions)
    windows = who.select("__claim", "p_start", "p_end", "T_start", "T_end")
    bounds = {"prior": ("p_start", "p_end"), "current": ("T_start", "T_end")}
    on_date = pl.coalesce("pay_date", "period_end")
    aggs = []
    for figure, (column, window) in FIGURES.items():
        lo, hi = bounds[window]
        inside = lambda d, lo=lo, hi=hi: (d >= pl.col(lo)) & (d <= pl.col(hi))  # noqa: E731
        ends_or_paid = inside(pl.col("period_end")) | inside(pl.col("pay_date")).fill_null(False)
        aggs += [pl.col(column).filter(inside(on_date)).sum().alias(f"read|{figure}"),
                 pl.col(column).filter(ends_or_paid).abs().max().alias(f"largest_row|{figure}")]
    wide = mine.join(windows, on="__claim", how="inner").group_by("__claim").agg(aggs)

    def measure(name: str) -> pl.DataFrame:  # (claim, figure, value) of one measure
        return wide.select("__claim", *[pl.col(f"{name}|{f}").alias(f) for f in FIGURES]).unpivot(
            index="__claim", variable_name="figure", value_name=name)

    sums = measure("read").join(measure("largest_row"), on=["__claim", "figure"], how="inner")
    out = dec.join(sums, on=["__claim", "figure"], how="left").with_columns(
        pl.col("read").fill_null(0.0), pl.col("largest_row").fill_null(0.0))
    out = out.with_columns(pl.max_horizontal(pl.col("declared").abs() * share, "largest_row").alias("tolerance"))
    out = out.with_columns(((pl.col("declared") - pl.col("read")).abs() > pl.col("tolerance") + EPS)
                           .fill_null(False).alias("differs"))
    return out.select(list(RECONCILIATION_SCHEMA)).cast(RECONCILIATION_SCHEMA).sort(
        "application_id", "roster_employer_id", "employee_id", "figure")
