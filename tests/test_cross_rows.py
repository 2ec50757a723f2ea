"""The vectorised payroll cross-row rules equal the plain per-group formulation they replaced."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms import schema
from transforms.ingest.cross_rows import CROSS_SCHEMA, cross_row_rejects


def reference(rows: pl.DataFrame) -> pl.DataFrame:
    """The earlier implementation (windows per employee), kept as the oracle."""
    values = [c for c in schema.STAGED["payroll"] if c not in schema.LINEAGE]
    rows = rows.sort("__order")
    where = pl.format("line {} of {}", pl.col("source_line"), pl.col("source_file"))
    first = rows.with_columns(where.first().over(values, mapping_strategy="group_to_rows").alias("__first"))
    dup = first.filter(~pl.struct(values).is_first_distinct()).select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of {}", pl.col("__first")).alias("message"),
    )
    rest = rows.filter(pl.struct(values).is_first_distinct())
    g = ["employer_id", "employee_id"]
    r = rest.sort([*g, "period_start", "period_end", "__order"]).with_columns(
        pl.col("period_end").cum_max().shift(1).over(g).alias("__prev_end")
    ).with_columns(
        (pl.col("period_start") <= pl.col("__prev_end")).fill_null(False).alias("__ov")
    ).with_columns((~pl.col("__ov")).cum_sum().over(g).alias("__cluster"))
    r = r.with_columns(pl.len().over([*g, "__cluster"]).alias("__n"))
    lines = r.filter(pl.col("__n") > 1).group_by([*g, "__cluster"]).agg(
        pl.format("{}:{}", pl.col("source_file"), pl.col("source_line")).head(5).str.join(", ").alias("__where")
    )
    bad = r.filter(pl.col("__n") > 1).join(lines, on=[*g, "__cluster"], how="left")
    ov = bad.select(
        "__order", pl.lit("overlapping_period").alias("rule"), pl.lit("period_start").alias("column"),
        pl.format("period {} to {} of employee {} overlaps another period of the same employee (lines {})",
                  pl.col("period_start"), pl.col("period_end"), pl.col("employee_id"), pl.col("__where")).alias("message"),
    )
    return pl.concat([dup, ov]).cast(CROSS_SCHEMA)


def frame(recs: list[tuple]) -> pl.DataFrame:
    base = dt.date(2022, 12, 20)
    rows = []
    for i, (emp, ee, start, length, hours, file_no) in enumerate(recs):
        s = base + dt.timedelta(days=start)
        rows.append(dict(employer_id=f"10000000{emp}", employee_id=f"E{ee}", ssn_hash=f"h{emp}{ee}", period_start=s,
                         period_end=s + dt.timedelta(days=length), hours=float(hours), gross_wages=hours * 15.0,
                         employer_taxes=hours * 1.5, source_file=f"payroll/f{file_no}.csv", source_sheet=None,
                         source_line=i + 2, __order=file_no * 10_000_000_000 + i + 2))
    return pl.DataFrame(rows, schema={**schema.STAGED["payroll"], "__order": pl.Int64})


def canon(f: pl.DataFrame) -> list[tuple]:
    return sorted(f.iter_rows())


record = st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(0, 40), st.integers(0, 13),
                   st.sampled_from([10, 20]), st.integers(0, 1))


@settings(max_examples=200, deadline=None)
@given(st.lists(record, min_size=1, max_size=30))
def test_vectorised_cross_rows_equal_the_reference(recs):
    rows = frame(recs)
    assert canon(cross_row_rejects("payroll", rows)) == canon(reference(rows))


def test_known_duplicate_and_overlap():
    # row 0 and row 1 identical; row 2 overlaps row 0's period; row 3 is another employee
    rows = frame([(1, 1, 0, 13, 10, 0), (1, 1, 0, 13, 10, 0), (1, 1, 7, 13, 20, 0), (1, 2, 0, 13, 10, 0)])
    got = cross_row_rejects("payroll", rows)
    assert canon(got) == canon(reference(rows))
    by_rule = {r: sorted(got.filter(pl.col("rule") == r).get_column("__order").to_list()) for r in ("duplicate_row", "overlapping_period")}
    assert by_rule == {"duplicate_row": [3], "overlapping_period": [2, 4]}
    assert got.filter(pl.col("rule") == "duplicate_row").get_column("message").to_list() == ["exact duplicate of line 2 of payroll/f0.csv"]
    assert "(lines payroll/f0.csv:2, payroll/f0.csv:4)" in got.filter(pl.col("__order") == 4).get_column("message")[0]


def test_the_employee_key_is_exact():
    """Employees are told apart by their ids, never merged by a key that could collide: two
    employees of one employer, the same employee number at two employers, and a key pair whose
    concatenations are equal ("1" + "23" and "12" + "3")."""
    import transforms.ingest.cross_rows as cr

    rows = frame([(1, 1, 0, 13, 10, 0), (1, 2, 7, 13, 20, 0), (1, 1, 14, 13, 10, 0), (2, 1, 7, 13, 10, 0)])
    assert cr._employee_sorted(rows, ["employer_id", "employee_id"]).get_column("__emp").n_unique() == 3
    assert cross_row_rejects("payroll", rows).height == 0  # no two of these employees overlap each other
    assert canon(cross_row_rejects("payroll", rows)) == canon(reference(rows))
    pairs = pl.DataFrame({"employer_id": ["1", "12"], "employee_id": ["23", "3"]})
    assert cr._employee_sorted(pairs.with_columns(period_start=pl.lit(None, dtype=pl.Date), period_end=pl.lit(None, dtype=pl.Date),
                                                  __order=pl.int_range(2)), ["employer_id", "employee_id"]).get_column("__emp").n_unique() == 2
