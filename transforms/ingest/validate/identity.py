"""One person, one identity (spec section 1): the ssn of each claimed employee's payroll rows,
resolved over the whole lake before the credit is computed.

A claimed employee is a roster line's employer (``employer_id``, default the applicant) and
employee id. For each, the ssns its payroll rows carry and the roster's own ``ssn``:
- two different ssns (on its rows, or its rows against the roster): every row of the employee id
  is an error (``two_ssns``), never a choice between them;
- a masked ssn (``XXX-XX-1234``) whose four digits are not those of the employee's ssn:
  an error of the row (``masked_ssn_mismatch``);
- a row without an ssn (absent or masked) takes the employee's ssn; a row of a claimed employee
  that still has none is an error of the row (``no_ssn``);
- other rows without an ssn count for no one's credit (``unclaimed_without_ssn`` counts them).
The errors are reject lines like ingest's: they hold the applications they touch (spec section 7)
until a corrected file supersedes them. Pure functions over Polars frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from transforms.ingest.store.standing_rejects import STANDING_SCHEMA

RULES = {
    "two_ssns": "the employee id carries two different ssns (on its rows, or against the roster's ssn): "
                "one employee id is one person; correct the ssn of the wrong rows",
    "masked_ssn_mismatch": "the masked ssn's last four digits are not those of the employee's ssn (the roster's): "
                           "correct the row or the roster",
    "no_ssn": "the row of a claimed employee has no ssn and the roster gives none: add the ssn to the row or to "
              "the roster line of the employee",
}
_ROW = ["employer_id", "employee_id", "ssn_hash", "ssn_last4_hash", "source_file", "source_sheet", "source_line"]


@dataclass
class Identities:
    payroll: pl.LazyFrame  # the payroll with the rejected rows out and the claimed rows' ssns filled
    lines: pl.DataFrame  # the rejected rows as standing lines (``standing_rejects.STANDING_SCHEMA``)
    rejects: pl.DataFrame  # the same as reject records (file, line, column, value, rule, message, employer_id)
    unclaimed_without_ssn: int = 0  # rows of no claimed employee without an ssn: they count for no one


def claimed_keys(roster: pl.LazyFrame, applications: pl.LazyFrame) -> pl.DataFrame:
    """``employer_id, employee_id, roster_ssn, roster_last4``: each claimed employee (the roster's
    employer, default the applicant) with the ssn (hash) and last-four hash its roster lines give."""
    return (
        roster.join(applications.select("application_id", pl.col("employer_id").alias("__applicant")),
                    on="application_id", how="inner")
        .select(pl.coalesce("employer_id", "__applicant").alias("employer_id"), "employee_id",
                pl.col("ssn_hash").alias("roster_ssn"), pl.col("ssn_last4_hash").alias("roster_last4"))
        .unique()
        .collect()
    )


def resolve(payroll: pl.LazyFrame, roster: pl.LazyFrame, applications: pl.LazyFrame) -> Identities:
    """The claimed employees' identities over the lake (see the module docstring)."""
    keys = claimed_keys(roster, applications)
    bad, fill = resolve_rows(payroll, keys)
    return identities(payroll, bad, fill, unclaimed(payroll, keys))


def resolve_rows(payroll: pl.LazyFrame, keys: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(bad, fill)`` of the claimed employees ``keys`` (``claimed_keys``) over ``payroll``: the
    rows in error (``_ROW`` and ``__rule``) and each employee's ssn for its rows without one
    (``employer_id, employee_id, __fill``). An employee id is one employer's, so any set of whole
    employers (their keys and their rows) gives exactly its own part of the whole's: a Dask worker
    resolves a chunk of the employers (``ingest.cluster_identity``)."""
    ids = keys.select("employer_id", "employee_id").unique()
    seen = ["employer_id", "employee_id", "ssn_hash", "ssn_last4_hash"]
    # each claimed employee's distinct (ssn, last four) as its rows carry them: the rules look at
    # nothing else, so the rows themselves are read only for the combinations in error
    combos = payroll.select(seen).join(ids.lazy(), on=["employer_id", "employee_id"], how="semi").unique().collect()
    given = pl.concat([
        combos.select("employer_id", "employee_id", pl.col("ssn_hash").alias("__ssn"), pl.col("ssn_last4_hash").alias("__l4")),
        keys.select("employer_id", "employee_id", pl.col("roster_ssn").alias("__ssn"), pl.col("roster_last4").alias("__l4")),
    ]).filter(pl.col("__ssn").is_not_null()).unique()
    person = given.group_by("employer_id", "employee_id").agg(
        pl.col("__ssn").n_unique().alias("__n"), pl.col("__ssn").first().alias("__person"),
        pl.col("__l4").drop_nulls().first().alias("__person_l4"))
    combos = combos.join(person, on=["employer_id", "employee_id"], how="left")
    rule = (
        pl.when(pl.col("__n") > 1).then(pl.lit("two_ssns"))
        .when(pl.col("ssn_hash").is_null() & pl.col("__person").is_null()).then(pl.lit("no_ssn"))
        .when(pl.col("ssn_hash").is_null() & pl.col("ssn_last4_hash").is_not_null() & pl.col("__person_l4").is_not_null()
              & (pl.col("ssn_last4_hash") != pl.col("__person_l4"))).then(pl.lit("masked_ssn_mismatch"))
    )
    combos = combos.with_columns(rule.alias("__rule"))
    wrong = combos.filter(pl.col("__rule").is_not_null()).select(*seen, "__rule")
    bad = (payroll.select(*_ROW).join(wrong.lazy(), on=seen, how="inner", nulls_equal=True, maintain_order="left")
           .select(*_ROW, "__rule").collect() if wrong.height else pl.DataFrame(schema={
               **payroll.select(*_ROW).collect_schema(), "__rule": pl.String}))
    fill = combos.filter(pl.col("__rule").is_null() & pl.col("ssn_hash").is_null()).select(
        "employer_id", "employee_id", pl.col("__person").alias("__fill")).unique()
    return bad, fill


def unclaimed(payroll: pl.LazyFrame, keys: pl.DataFrame) -> int:
    """Rows without an ssn of no claimed employee (they count for no one's credit)."""
    ids = keys.select("employer_id", "employee_id").unique()
    return int(payroll.filter(pl.col("ssn_hash").is_null()).join(
        ids.lazy(), on=["employer_id", "employee_id"], how="anti").select(pl.len()).collect().item())


def identities(payroll: pl.LazyFrame, bad: pl.DataFrame, fill: pl.DataFrame, unclaimed_rows: int) -> Identities:
    """The payroll without the rows in ``bad`` and with ``fill``'s ssns (a plan: nothing is read
    here), and ``bad`` as standing lines and reject records."""
    out = payroll
    if bad.height:
        out = out.join(bad.select("source_file", "source_sheet", "source_line").lazy(),
                       on=["source_file", "source_sheet", "source_line"], how="anti", nulls_equal=True)
    if fill.height:
        out = out.join(fill.lazy(), on=["employer_id", "employee_id"], how="left").with_columns(
            pl.coalesce("ssn_hash", "__fill").alias("ssn_hash")).drop("__fill")
    return Identities(out, _lines(bad), _rejects(bad), int(unclaimed_rows))


def _where() -> pl.Expr:
    return pl.when(pl.col("source_sheet").is_not_null()).then(pl.format("{}[{}]", "source_file", "source_sheet")).otherwise(
        pl.col("source_file"))


def _message() -> pl.Expr:
    return pl.concat_str([pl.lit("ssn: "), pl.col("__rule").replace_strict(RULES, return_dtype=pl.String)])


def _lines(bad: pl.DataFrame) -> pl.DataFrame:
    if bad.height == 0:
        return pl.DataFrame(schema=STANDING_SCHEMA)
    return bad.select(
        pl.lit("payroll").alias("dataset"), pl.col("source_file").alias("path"), _where().alias("file"), "source_sheet",
        pl.col("source_line").alias("line"), "employer_id", "employee_id", pl.lit(None, dtype=pl.String).alias("ssn_hash"),
        pl.lit(None, dtype=pl.String).alias("application_id"), pl.col("__rule").alias("rules"), _message().alias("messages"),
        pl.lit("ssn").alias("columns"), pl.lit(0, dtype=pl.Int64).alias("ingest_seq"),
        pl.lit(None, dtype=pl.String).alias("file_sha256"),
    ).cast(STANDING_SCHEMA).sort("file", "line")


def _rejects(bad: pl.DataFrame) -> pl.DataFrame:
    from transforms.ingest.report import REJECT_SCHEMA

    if bad.height == 0:
        return pl.DataFrame(schema=REJECT_SCHEMA)
    return bad.select(
        _where().alias("file"), pl.col("source_line").alias("line"), pl.lit("ssn").alias("column"),
        pl.lit(None, dtype=pl.String).alias("value"), pl.col("__rule").alias("rule"), _message().alias("message"),
        "employer_id",
    ).cast(REJECT_SCHEMA).sort("file", "line")
