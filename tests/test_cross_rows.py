"""The cross-row rules of payroll (spec section 1, "Payroll as employers' systems write it"):
exact copies of a line are the only duplicates, rows over the same days add, code lines of one
check are summed, and an employee-year that nets negative is an error naming its lines."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms import schema
from transforms.ingest.validate.cross_rows import (
    CROSS_SCHEMA,
    aggregate_lines,
    cross_row_rejects,
    implausible_rates,
    negative_nets,
    negative_years,
)


def reference(rows: pl.DataFrame) -> pl.DataFrame:
    """Plain formulation: every later copy of a row equal in all values (lineage aside)."""
    values = [c for c in rows.columns if c not in schema.LINEAGE and c != "__order"]
    rows = rows.sort("__order")
    where = pl.format("line {} of {}", pl.col("source_line"), pl.col("source_file"))
    first = rows.with_columns(where.first().over(values, mapping_strategy="group_to_rows").alias("__first"))
    dup = first.filter(~pl.struct(values).is_first_distinct()).select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of {}", pl.col("__first")).alias("message"),
    )
    return dup.cast(CROSS_SCHEMA)


def frame(recs: list[tuple]) -> pl.DataFrame:
    base = dt.date(2022, 12, 20)
    rows = []
    for i, rec in enumerate(recs):
        emp, ee, start, length, hours, file_no = rec[:6]
        check = rec[6] if len(rec) > 6 else None
        s = base + dt.timedelta(days=start)
        rows.append(dict(employer_id=f"10000000{emp}", employee_id=f"E{ee}", ssn_hash=f"h{emp}{ee}", period_start=s,
                         period_end=s + dt.timedelta(days=length), hours=float(hours), gross_wages=hours * 15.0,
                         employer_taxes=hours * 1.5, check_id=check, pay_date=None, line_count=1,
                         source_file=f"payroll/f{file_no}.csv", source_sheet=None,
                         source_line=i + 2, __order=file_no * 10_000_000_000 + i + 2))
    return pl.DataFrame(rows, schema={**schema.STAGED["payroll"], "__order": pl.Int64})


def canon(f: pl.DataFrame) -> list[tuple]:
    return sorted(f.iter_rows())


record = st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(0, 40), st.integers(0, 13),
                   st.sampled_from([10, 20, -10]), st.integers(0, 1), st.sampled_from([None, "C1", "C2"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(record, min_size=1, max_size=30))
def test_duplicates_equal_the_plain_formulation(recs):
    rows = frame(recs)
    assert canon(cross_row_rejects("payroll", rows)) == canon(reference(rows))


def test_rows_over_the_same_days_add_and_only_exact_copies_are_rejected():
    # 0 and 1: the same line twice (a file sent twice); 2: another check over row 0's period
    # (an off-cycle check); 3: row 0 with another check id; 4: another employee
    rows = frame([(1, 1, 0, 13, 10, 0), (1, 1, 0, 13, 10, 0), (1, 1, 7, 13, 20, 0), (1, 1, 0, 13, 10, 0, "C9"),
                  (1, 2, 0, 13, 10, 0)])
    got = cross_row_rejects("payroll", rows)
    assert got.get_column("__order").to_list() == [3]
    assert got.get_column("rule").to_list() == ["duplicate_row"]
    assert got.get_column("message").to_list() == ["exact duplicate of line 2 of payroll/f0.csv"]
    # a line equal but for a column no field maps (a department) is no copy
    rows = frame([(1, 1, 0, 13, 10, 0), (1, 1, 0, 13, 10, 0)]).with_columns(pl.Series("__extra", [1, 2], dtype=pl.UInt64))
    assert cross_row_rejects("payroll", rows).height == 0


def test_copies_are_rows_equal_in_every_value_never_a_hash_or_a_joined_key():
    """Two employees of one employer, the same employee number at two employers, and a key pair
    whose concatenations are equal ("1" + "23" and "12" + "3") are no copies; rows that hash alike
    but differ (a forced collision) are no copies; a row equal in every value is, pointing at the first."""
    import transforms.ingest.validate.cross_rows as cr

    rows = frame([(1, 1, 0, 13, 10, 0), (1, 2, 0, 13, 10, 0), (1, 1, 14, 13, 10, 0), (2, 1, 0, 13, 10, 0)])
    assert cross_row_rejects("payroll", rows).height == 0
    pairs = rows.head(2).with_columns(employer_id=pl.Series(["1", "12"]), employee_id=pl.Series(["23", "3"]))
    assert cross_row_rejects("payroll", pairs).height == 0
    values = [c for c in rows.columns if c not in ("__order", "source_file", "source_line")]
    assert cr._exact_duplicates(rows, values).height == 0  # what a collision leads to: compared, none equal
    copy = pl.concat([rows, rows.head(1).with_columns(pl.lit(99, dtype=pl.Int64).alias("__order"))])
    got = cross_row_rejects("payroll", copy)
    assert got.get_column("__order").to_list() == [99] and got.get_column("rule").to_list() == ["duplicate_row"]


def test_reversals_net_and_a_negative_employee_year_names_its_lines():
    # 2023-01-02..15 (14 days) 10 h, reversed by -10 h: nets to 0, not negative
    rows = frame([(1, 1, 13, 13, 10, 0), (1, 1, 13, 13, -10, 0)])
    assert negative_years(rows).height == 0 and negative_nets(rows).height == 0
    # a reversal alone nets negative: both lines of the employee-year are named and rejected
    rows = frame([(1, 1, 13, 13, -10, 0), (1, 1, 40, 13, 5, 0), (1, 2, 13, 13, 10, 0)])
    got = negative_nets(rows)
    assert sorted(got.get_column("__order").to_list()) == [2, 3]
    assert set(got.get_column("rule")) == {"negative_net"} and set(got.get_column("column")) == {"hours"}
    msg = got.get_column("message")[0]
    assert "employee E1" in msg and "2023" in msg and "payroll/f0.csv:2, payroll/f0.csv:3" in msg and "-5.0 h" in msg
    # the check it reverses was ingested earlier (the lake's rows): nets to 0, nothing rejected
    earlier = frame([(1, 1, 13, 13, 10, 1)]).drop("__order")
    assert negative_nets(frame([(1, 1, 13, 13, -10, 0)]), earlier).height == 0
    # a period across January 1 (2022-12-26..2023-01-08, 14 days): -14 h is -6 h in 2022 and
    # -8 h in 2023; +10 h in 2023 leaves 2023 positive, 2022 negative
    rows = frame([(1, 1, 6, 13, -14, 0), (1, 1, 20, 13, 10, 0)])
    neg = negative_years(rows)
    assert neg.select("year", pl.col("hours").round(6)).rows() == [(2022, -6.0)]
    assert negative_nets(rows).get_column("__order").to_list() == [2]  # only the row touching 2022


def test_code_lines_of_a_check_are_summed_into_one_row():
    lines = frame([(1, 1, 0, 13, 10, 0, "C1"), (1, 1, 0, 13, 5, 0, "C1"), (1, 1, 0, 13, 0, 0, "C1"),
                   (1, 1, 0, 13, 7, 0, "C2"), (1, 1, 0, 13, 3, 0)])
    lines = lines.with_columns(
        pl.Series("__code", ["REG", "OT", "FICA-ER", "REG", None]),
        pl.Series("__counts", ["hours+wages", "hours+wages", "taxes", "hours+wages", None]),
        pl.col("hours").alias("__hours_cell"), pl.col("gross_wages").alias("__amount"),
    )
    rows, code_lines = aggregate_lines(lines)
    assert rows.columns == [*schema.STAGED["payroll"], "__order"]
    got = rows.sort("__order").select("check_id", "hours", "line_count", "source_line", "__order").rows()
    assert got == [("C1", 15.0, 3, 2, 2), ("C2", 7.0, 1, 5, 5), (None, 3.0, 1, 6, 6)]
    assert code_lines.height == 4 and code_lines.get_column("row_line").to_list() == [2, 2, 2, 5]
    assert code_lines.columns == [*schema.PAYROLL_LINES, "__order"]


def test_the_hourly_rate_is_a_rule_of_the_pay_period_over_all_its_lines():
    def rates(recs):  # (employee, start, hours, wages, file)
        rows = frame([(1, e, start, 13, h, f) for e, start, h, _, f in recs])
        return rows.with_columns(pl.Series("gross_wages", [float(w) for _, _, _, w, _ in recs]))
    # a check split into a piece with hours and no pay and a piece with pay and little hours:
    # the period is paid $15 an hour; reversed (both negative) the same
    ok = rates([(1, 0, 79.5, 0, 0), (1, 0, 0.5, 1200, 1), (2, 0, -80, -1200, 0), (3, 0, 80, 80, 0), (3, 14, 80, 40000, 0),
                (4, 0, 10, 0, 0)])
    assert implausible_rates(ok).height == 0
    bad = rates([(1, 0, 80, 79.99, 0), (1, 14, 1, 600, 0), (1, 14, 1, 500, 1), (2, 0, -1, -600, 0)])
    got = implausible_rates(bad)
    assert sorted(got.get_column("__order").to_list()) == [2, 3, 5, 10_000_000_004]
    assert set(got.get_column("rule")) == {"hourly_rate"} and set(got.get_column("column")) == {"gross_wages"}
    msg = got.filter(pl.col("__order") == 3).get_column("message").item()
    assert "$550.00 an hour" in msg and "payroll/f0.csv:3, payroll/f1.csv:4" in msg
    # the lake's lines of the period count too: hours sent earlier make this pay plausible
    assert implausible_rates(rates([(1, 14, 0.01, 600, 0)]), rates([(1, 14, 39.99, 0, 1)]).drop("__order")).height == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1) | st.sampled_from([0, 1, 2**64 - 1, 7]), max_size=50))
def test_repeated_values_found_by_sorting_are_the_duplicated(values):
    from transforms.ingest.validate.cross_rows import _repeated

    h = pl.Series(values, dtype=pl.UInt64)
    got = _repeated(h)
    want = h.is_duplicated()
    assert (got is None and not want.any()) or (got is not None and got.to_list() == want.to_list())
