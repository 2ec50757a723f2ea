"""Cross-row rules over the rows of a whole run that passed the suites (Polars, vectorised).

- every dataset: an exact duplicate row (all values equal) is rejected, the later copy, pointing
  at the first one (``duplicate_row``);
- payroll: periods of one employee (employer id + employee id) that overlap are all rejected
  (``overlapping_period``), the message listing up to five of the lines involved;
- other datasets: a key given more than once with different values (``duplicate_key``).
"""

from __future__ import annotations

import polars as pl

from transforms import schema

CROSS_SCHEMA = {"__order": pl.Int64, "rule": pl.String, "column": pl.String, "message": pl.String}

UNIQUE_KEYS = {
    "applications": ["application_id"],
    "roster": ["application_id", "employee_id"],
    "certifications": ["certification_id"],
    "employer_rates": ["employer_id", "rate_year_start"],
}

_DAY_OFFSET = 800_000  # date(1, 1, 1) is day -719162
_RANK_STEP = 2_000_000  # more than any lifted day number (up to about year 3700)


def cross_row_rejects(dataset: str, rows: pl.DataFrame) -> pl.DataFrame:
    """Exact duplicates (the later copy) and overlapping periods / conflicting keys (all rows).

    ``rows``: staged rows of the run that passed the suite, with ``__order`` (file order, line).
    Returns ``__order, rule, column, message``.
    """
    if rows.height == 0:
        return pl.DataFrame(schema=CROSS_SCHEMA)
    values = [c for c in schema.STAGED[dataset] if c not in schema.LINEAGE]
    if dataset == "payroll":
        return _payroll_cross_rows(rows, values)
    dup = _exact_duplicates(rows, values)
    rest = rows.sort("__order").filter(pl.struct(values).is_first_distinct())
    key = UNIQUE_KEYS[dataset]
    conflict = rest.filter(pl.len().over(key) > 1).select(
        "__order", pl.lit("duplicate_key").alias("rule"), pl.lit(key[-1]).alias("column"),
        pl.format("{} appears more than once with different values", pl.lit(" + ".join(key))).alias("message"),
    )
    return pl.concat([dup.cast(CROSS_SCHEMA), conflict.cast(CROSS_SCHEMA)])


def _exact_duplicates(rows: pl.DataFrame, values: list[str]) -> pl.DataFrame:
    """Every later copy of a row (same values), pointing at the first copy (in ``__order``)."""
    rows = rows.sort("__order")
    where = pl.format("line {} of {}", pl.col("source_line"), pl.col("source_file"))
    first = rows.with_columns(where.first().over(values, mapping_strategy="group_to_rows").alias("__first"))
    return first.filter(~pl.struct(values).is_first_distinct()).select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of {}", pl.col("__first")).alias("message"),
    )


def _same_as_prev(cols: list[str]) -> pl.Expr:
    return pl.all_horizontal([pl.col(c) == pl.col(c).shift(1) for c in cols]).fill_null(False)


def _employee_sorted(rows: pl.DataFrame, g: list[str]) -> pl.DataFrame:
    """``__emp, period_start, period_end, __order`` sorted: each employee's rows together, in
    (period_start, period_end, __order) order.

    ``__emp`` is a 64-bit number exact for the employee (employer id + employee id): the
    employer id's categorical code in the high 32 bits, the employee id's in the low 32 (both
    codes are one-to-one with their strings). Sorting numbers is several times faster than
    sorting by the two strings, and the order of the employees themselves matters to no rule.
    (An earlier 64-bit hash needed a collision check that cost as much as the sort.)
    """
    cols = ["period_start", "period_end", "__order"]
    employer, employee = g
    code = {c: pl.col(c).cast(pl.Categorical).to_physical().cast(pl.UInt64) for c in g}
    h = rows.select((code[employer] * (1 << 32) + code[employee]).alias("__emp"), *cols)
    return h.sort(["__emp", *cols])


def _payroll_cross_rows(rows: pl.DataFrame, values: list[str]) -> pl.DataFrame:
    """Duplicates and overlaps of payroll with one numeric sort of the run and no windows.

    Exact duplicates share employee and period, so they are looked for only among rows whose
    (employee, period) repeats; overlaps come from a running maximum of period ends that cannot
    leak across employees, because the employee's rank is put in front of the day numbers
    (rank * 2,000,000 + day). Only the rows in an overlap are then described. Same result as
    the plain per-group formulation (tests/test_cross_rows.py keeps it as the oracle).
    """
    g = ["employer_id", "employee_id"]
    s = _employee_sorted(rows, g)
    same_emp = (pl.col("__emp") == pl.col("__emp").shift(1)).fill_null(False)
    same_k = s.select(same_emp & _same_as_prev(["period_start", "period_end"])).to_series()
    cand = s.filter(same_k | same_k.shift(-1, fill_value=False)).get_column("__order")
    dup = (_exact_duplicates(rows.filter(pl.col("__order").is_in(cand)), values) if cand.len()
           else pl.DataFrame(schema=CROSS_SCHEMA))
    rest = s.filter(~pl.col("__order").is_in(dup.get_column("__order"))) if dup.height else s

    # day numbers made non-negative (dates from year 1 on), then lifted by the employee's rank
    day = {c: pl.col(c).cast(pl.Int32).cast(pl.Int64) + _DAY_OFFSET for c in ("period_start", "period_end")}
    lift = (~same_emp).cum_sum().cast(pl.Int64) * _RANK_STEP
    ov = rest.select(
        same_emp & ((day["period_start"] + lift) <= (day["period_end"] + lift).cum_max().shift(1)).fill_null(False)
    ).to_series()
    if not ov.any():
        return dup.cast(CROSS_SCHEMA)
    cluster = (~ov).cum_sum()
    bad = (
        rest.select("__order").with_columns(cluster.alias("__cluster"), pl.int_range(pl.len()).alias("__pos"))
        .filter(pl.col("__cluster").is_in(cluster.filter(ov).unique()))
    )
    bad = bad.join(rows.filter(pl.col("__order").is_in(bad.get_column("__order"))), on="__order", how="left").sort("__pos")
    lines = bad.group_by("__cluster").agg(
        pl.format("{}:{}", pl.col("source_file"), pl.col("source_line")).head(5).str.join(", ").alias("__where")
    )
    bad = bad.join(lines, on="__cluster", how="left", maintain_order="left")
    ov_rows = bad.select(
        "__order", pl.lit("overlapping_period").alias("rule"), pl.lit("period_start").alias("column"),
        pl.format("period {} to {} of employee {} overlaps another period of the same employee (lines {})",
                  pl.col("period_start"), pl.col("period_end"), pl.col("employee_id"), pl.col("__where")).alias("message"),
    )
    return pl.concat([dup.cast(CROSS_SCHEMA), ov_rows.cast(CROSS_SCHEMA)])
