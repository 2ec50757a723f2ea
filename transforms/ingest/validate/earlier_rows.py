"""Rules of a run's rows against the rows the lake already holds (spec section 1): a payroll line
that copies one an earlier run stored from another file (a file sent twice, under another name),
and a roster employee id that is the ssn of a person in the payroll (an id that is an ssn, in any
file, is a reject of its row and never stored). Each gives ``cross_rows.CROSS_SCHEMA`` rejects."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.ingest.read.cast.cell_values import check_value
from transforms.ingest.store.lake import scan_lake
from transforms.ingest.validate import cross_rows as xrows
from transforms.pii import HashKey, hash_ssn_column, normalize_ssn_expr

ID_IS_SSN = ("employee_id is the ssn of a person in the payroll: use the employer's own employee number "
             "(an ssn is never stored)")


def resent(rows: pl.DataFrame, workdir: Path, lake: Path | None = None) -> pl.DataFrame:
    """``duplicate_row`` rejects of the canonical payroll rows that exactly copy a row the lake
    already holds from another file (spec section 1: a file sent twice, in whatever run the copy
    arrives): every value equal, the check id, pay date and the fields from outside the rows
    included, each by its value as the lake keeps it typed (a number, a date; a check id of digits
    without its leading zeros), so a copy saved again by a spreadsheet is still a copy. The lake
    keeps no cell that no field maps: against it those cells are not compared. A corrected file at
    the same path superseded its earlier version before this."""
    if rows.height == 0:
        return pl.DataFrame(schema=xrows.CROSS_SCHEMA)
    key = xrows.RESENT_KEY
    check = check_value(pl.col("check_id"))  # the lake keeps the id as written: compared by value on both sides
    earlier = scan_lake(workdir, "payroll", employer_ids=rows.get_column("employer_id").unique().to_list(), lake=lake).select(
        *key, "source_file", "source_line").with_columns(check).collect()
    if earlier.height == 0:
        return pl.DataFrame(schema=xrows.CROSS_SCHEMA)
    first = earlier.unique(key, keep="first", maintain_order=True)
    hits = rows.select("__order", *key).with_columns(pl.col(c).cast(first.schema[c]) for c in key).with_columns(
        check).join(first, on=key, how="inner", nulls_equal=True)
    return hits.select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of line {} of {} (sent in an earlier run)", "source_line", "source_file").alias("message"),
    ).cast(xrows.CROSS_SCHEMA)


def ids_that_are_ssns(roster: pl.DataFrame, payroll: pl.DataFrame | None, workdir: Path, key: HashKey,
                      lake: Path | None = None) -> pl.DataFrame:
    """``employee_id_is_ssn`` rejects of the roster rows whose employee id, read as an ssn (9
    digits, dashed, or 7 or 8 digits), is the ssn of a payroll row of this run or of the lake."""
    cand = roster.select("__order", "employee_id").filter(normalize_ssn_expr("employee_id").is_not_null())
    if cand.height == 0:
        return pl.DataFrame(schema=xrows.CROSS_SCHEMA)
    hashed = hash_ssn_column(cand.with_columns(pl.col("employee_id").alias("ssn")), key, out="__id_hash")
    known = hashed.get_column("__id_hash").drop_nulls().unique().to_list()
    h = pl.col("ssn_hash").cast(pl.String)
    seen = scan_lake(workdir, "payroll", lake=lake).select(h).filter(h.is_in(known)).unique().collect()
    if payroll is not None and payroll.height:
        seen = pl.concat([seen, payroll.select(h).filter(h.is_in(known)).unique()])
    hits = hashed.join(seen.unique(), left_on="__id_hash", right_on="ssn_hash", how="semi")
    return hits.select(
        "__order", pl.lit("employee_id_is_ssn").alias("rule"), pl.lit("employee_id").alias("column"),
        pl.lit(ID_IS_SSN).alias("message"),
    ).cast(xrows.CROSS_SCHEMA)
