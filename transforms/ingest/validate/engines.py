"""Validation of staged tables against the Great Expectations suites in ``expectations/*.json``.

One suite per dataset, each expectation tagged in its ``meta`` with the reject ``rule``, the
submitted ``column`` to report, a ``message`` and a ``severity``: ``file`` (the whole file is
rejected: most values of a column are empty or of the wrong type) or ``row``. Failures come
back keyed by the ``__line`` index column, so every failed cell is mapped to its file, line and
column. The suite files are the one statement of the rules; two engines evaluate them:

- ``run_suite`` (engine ``gx``): GX Core on pandas (``to_pandas()``, numpy dtypes; GX has no
  polars engine), with ``unexpected_index_column_names``; writes Data Docs when asked. The
  ephemeral GX context is created once per process (a few seconds) and shared.
- ``run_suite_polars`` (engine ``polars``, the default for runs): the same suite JSON compiled
  to Polars expressions (``compile_suite``), one vectorised pass, GX never imported; it returns
  exactly what ``run_suite`` returns (failures, order, lines, percentages), which
  ``tests/test_validate_engines.py`` checks against real GX validations. An expectation type or
  argument it does not know is an error, never skipped. About 150 times faster than GX at 1M
  rows (0.06 s against 8.8 s, plus 2.5 s of GX start-up).

The ssn never reaches either engine: only its hash. After validation, on the rows that passed,
the cross-row rules run over the whole run (``transforms.ingest.validate.cross_rows``).
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from transforms import schema
from transforms.ingest.validate.gx import run_suite
from transforms.ingest.validate.suites import (
    EXPECTATIONS_DIR,
    INDEX_COLUMN,
    Failure,
    SuiteCheck,
    SuiteError,
    compile_suite,
    load_suite_json,
    number,
    python_regex_to_polars,
)

__all__ = [
    "EXPECTATIONS_DIR", "INDEX_COLUMN", "Failure", "SuiteCheck", "SuiteError", "compile_suite", "file_failures",
    "file_tally", "helper_columns", "load_suite_json", "python_regex_to_polars", "run_suite", "run_suite_polars",
    "unexpected_rows",
]


def helper_columns(dataset: str, staged: pl.DataFrame, text: pl.DataFrame, now: datetime) -> pl.DataFrame:
    """The staged columns GX checks, plus helper columns for rules across columns."""
    f = staged.drop("source_file", "source_sheet", "source_line")
    given = pl.col("__ssn_given") if "__ssn_given" in f.columns else pl.lit(False)
    last4 = pl.col("ssn_last4_hash") if "ssn_last4_hash" in f.columns else pl.lit(None, dtype=pl.String)
    if dataset == "payroll":  # an ssn may be absent, masked (its last four digits) or 9 digits
        f = f.with_columns((~given | pl.col("ssn_hash").is_not_null() | last4.is_not_null()).alias("__ssn_ok"))
    if dataset == "payroll":
        # whole cents (spec: amounts have at most 2 decimals); float noise of a spreadsheet cell
        # (0.1 + 0.2) is within the guard, a third decimal is not (an amount beyond any payroll is
        # the range rule's)
        f = f.with_columns(pl.when(~pl.col(c).is_finite() | (pl.col(c).abs() > 1e12)).then(True).otherwise(
            (pl.col(c) * 100 - (pl.col(c) * 100).round()).abs() <= 1e-6).fill_null(True).alias(f"__{c}_cents")
            for c in ("gross_wages", "employer_taxes"))
        days = (pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1
        f = f.with_columns(days.alias("__period_days")).with_columns(
            pl.when(pl.col("__period_days") >= 1).then(pl.col("hours") / pl.col("__period_days")).alias("__hours_per_day"),
        )
    elif dataset in ("applications", "estimate_requests"):
        blank = {c: text.get_column(c).str.strip_chars().fill_null("").eq("") if c in text.columns
                 else pl.Series([True] * f.height) for c in ("period_start", "period_end")}
        start, end = pl.col("period_start"), pl.col("period_end")
        both = start.is_not_null() & end.is_not_null()
        days = (end - start).dt.total_days() + 1
        twelve_months = end == start.dt.offset_by("12mo") - pl.duration(days=1)
        f = f.with_columns(
            ((pl.col("received_at") - pl.lit(now).cast(pl.Datetime("us", "UTC"))).dt.total_microseconds() / 1e6)
            .alias("__received_after_now_s"),
            (pl.lit(blank["period_start"]) | start.is_not_null()).alias("__period_start_ok"),
            (pl.lit(blank["period_end"]) | end.is_not_null()).alias("__period_end_ok"),
            # both or neither (a value that did not parse is reported by its own check)
            (pl.lit(blank["period_start"]) == pl.lit(blank["period_end"])).alias("__period_pair"),
            (~both | twelve_months | days.is_in([364, 371])).alias("__period_shape"),
            (~both | pl.col("tax_year").is_null() | (start.dt.year() == pl.col("tax_year"))).alias("__period_year"),
        )
    elif dataset == "roster":
        f = f.with_columns((~given | pl.col("ssn_hash").is_not_null()).alias("__ssn_ok"))
        f = f.with_columns(_declared_checks(f, text))
    elif dataset == "control_groups":
        raw_blank = text.get_column("member_to").str.strip_chars().fill_null("").eq("")
        f = f.with_columns(
            (raw_blank | pl.col("member_to").is_not_null()).alias("__member_to_ok"),
            (pl.col("member_to") - pl.col("member_from")).dt.total_days().alias("__membership_days"),
        )
    elif dataset == "certifications":
        raw_blank = text.get_column("valid_to").str.strip_chars().fill_null("").eq("")
        f = f.with_columns(
            (raw_blank | pl.col("valid_to").is_not_null()).alias("__valid_to_ok"),
            (pl.col("valid_to") - pl.col("valid_from")).dt.total_days().alias("__validity_days"),
        )
    elif dataset == "employer_rates":
        f = f.with_columns(
            ((pl.col("rate_year_start").dt.month() == 7) & (pl.col("rate_year_start").dt.day() == 1)).alias("__july_first")
        )
    return f


def _declared_checks(f: pl.DataFrame, text: pl.DataFrame) -> list[pl.Expr]:
    """The declared totals of a roster line (spec section 1): a cell given must read as a number
    (``__<column>_ok``) and money whole cents (``__<column>_cents``); a blank declares nothing."""
    out = []
    for c in schema.DECLARED:
        if c not in f.columns:
            continue
        blank = (text.get_column(c).str.strip_chars().fill_null("").eq("") if c in text.columns
                 else pl.Series([True] * f.height))
        out.append((pl.lit(blank) | pl.col(c).is_not_null()).alias(f"__{c}_ok"))
        if "hours" not in c:
            out.append(pl.when(pl.col(c).is_null() | ~pl.col(c).is_finite() | (pl.col(c).abs() > 1e12)).then(True)
                       .otherwise((pl.col(c) * 100 - (pl.col(c) * 100).round()).abs() <= 1e-6).alias(f"__{c}_cents"))
    return out


def _missing(column: str, dtype: pl.DataType) -> pl.Expr:
    col = pl.col(column)
    return col.is_null() | col.is_nan().fill_null(False) if dtype.is_float() else col.is_null()


def _in_set(check: SuiteCheck, dtype: pl.DataType) -> pl.Expr:
    col, vs = pl.col(check.column), check.value_set
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        allowed = [v for v in vs if isinstance(v, str)]
        return col.cast(pl.String).is_in(allowed) if allowed else pl.lit(False)
    if dtype == pl.Boolean and all(isinstance(v, bool) for v in vs):
        return col.is_in(list(set(vs))) if vs else pl.lit(False)
    if (dtype.is_integer() or dtype.is_float()) and all(number(v) for v in vs):
        if dtype.is_float():
            return col.is_in([float(v) for v in vs])
        return col.is_in([int(v) for v in vs if float(v).is_integer()])
    raise SuiteError(f"{check.where}: value_set {list(vs)!r} on a {dtype} column is not supported")


def _holds(check: SuiteCheck, dtype: pl.DataType) -> pl.Expr:
    """True where a non-missing value meets the expectation."""
    col = pl.col(check.column)
    if dtype == pl.Null:  # every value is missing: nothing is evaluated
        return pl.lit(True)
    if check.regex is not None:
        if not (dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)):
            raise SuiteError(f"{check.where}: regex on a {dtype} column (GX: astype(str)) is not supported")
        found = col.cast(pl.String).str.contains(check.regex)
        return found if check.type == "expect_column_values_to_match_regex" else ~found
    if check.type == "expect_column_values_to_be_between":
        if not (dtype.is_integer() or dtype.is_float()):
            raise SuiteError(f"{check.where}: between on a {dtype} column is not supported")
        ok = pl.lit(True)
        if check.min_value is not None:
            ok = ok & (col > check.min_value if check.strict_min else col >= check.min_value)
        if check.max_value is not None:
            ok = ok & (col < check.max_value if check.strict_max else col <= check.max_value)
        return ok
    return _in_set(check, dtype)


def _unexpected(dataset: str, checks: tuple[SuiteCheck, ...], schema_: pl.Schema) -> list[tuple[SuiteCheck, pl.Expr, pl.Expr]]:
    """(check, missing, unexpected) per check: the cells GX counts as missing, and the rows it
    lists as unexpected (missing ones for not-null checks, else failing non-missing ones)."""
    out = []
    for ck in checks:
        if ck.column not in schema_:
            raise SuiteError(f"{ck.where}: column {ck.column!r} is not in the {dataset} frame")
        missing = _missing(ck.column, schema_[ck.column])
        bad = missing if ck.type == "expect_column_values_to_not_be_null" else (
            ~missing & ~_holds(ck, schema_[ck.column]).fill_null(True))
        out.append((ck, missing, bad))
    return out


def unexpected_rows(dataset: str, frame: pl.DataFrame) -> pl.Series:
    """True for each row that some expectation of the suite lists as unexpected, whatever its
    ``mostly``. A file none of whose rows is unexpected passes the suite (``run_suite_polars``
    returns no failure), and every expectation is a test of one row, so this can be evaluated
    over many files at once: ``ingest_folder`` uses it to find the files that pass as they are."""
    checks = compile_suite(dataset)
    bad = [b for _, _, b in _unexpected(dataset, checks, frame.schema)]
    if not bad:
        return pl.Series("unexpected", [False] * frame.height, dtype=pl.Boolean)
    return frame.select(pl.any_horizontal(bad).alias("unexpected")).to_series()


def run_suite_polars(dataset: str, frame: pl.DataFrame) -> list[Failure]:
    """What :func:`run_suite` returns, computed with vectorised polars (one select, no GX)."""
    checks = compile_suite(dataset)
    schema_ = frame.schema
    if INDEX_COLUMN not in schema_:
        raise ValueError(f"run_suite_polars({dataset!r}): the frame has no {INDEX_COLUMN} column")
    exprs: list[pl.Expr] = []
    for i, (_, missing, bad) in enumerate(_unexpected(dataset, checks, schema_)):
        exprs += [missing.sum().alias(f"m{i}"), pl.col(INDEX_COLUMN).filter(bad).implode().alias(f"l{i}")]
    row = frame.lazy().select(exprs).collect().row(0) if exprs else ()
    total = frame.height
    failures: list[Failure] = []
    for i, ck in enumerate(checks):
        n_missing, lines = int(row[2 * i]), list(row[2 * i + 1])
        success, percent = _outcome(ck, total, n_missing, len(lines))
        if (success and ck.severity == "file") or (success and not lines):
            continue
        failures.append(Failure(rule=ck.rule, column=ck.report_column, message=ck.message,
                                severity=ck.severity, lines=lines,
                                unexpected_percent=float(percent or 0.0)))
    return failures


def _outcome(ck: SuiteCheck, total: int, n_missing: int, unexpected: int) -> tuple[bool, float | None]:
    """(success, unexpected percent) of one expectation over ``total`` rows."""
    if ck.type == "expect_column_values_to_not_be_null":  # over all rows
        success = total == 0 or (total - unexpected) / total >= ck.mostly
        return success, (unexpected / total * 100 if total else None)
    # over the non-missing values (ColumnMapExpectation._validate, _format_map_output)
    nonnull = total - n_missing
    success = total == 0 or nonnull == 0 or (float(nonnull) - float(unexpected)) / float(nonnull) >= ck.mostly
    return success, (unexpected / nonnull * 100 if total and nonnull else None)


def file_tally(dataset: str, frame: pl.DataFrame) -> list[tuple[int, int, int]]:
    """(rows, missing, unexpected) of each file-severity expectation over ``frame``.

    A big file is validated in pieces (``pieces.validate_in_pieces``): its row expectations
    are decided piece by piece (each tests one row), its file expectations once, on the sums
    of the pieces' tallies (``file_failures``)."""
    checks = [ck for ck in compile_suite(dataset) if ck.severity == "file"]
    if not checks:
        return []
    exprs: list[pl.Expr] = []
    for i, (_, missing, bad) in enumerate(_unexpected(dataset, tuple(checks), frame.schema)):
        exprs += [missing.sum().alias(f"m{i}"), bad.sum().alias(f"u{i}")]
    row = frame.select(exprs).row(0)
    return [(frame.height, int(row[2 * i]), int(row[2 * i + 1])) for i in range(len(checks))]


def file_failures(dataset: str, tally: list[tuple[int, int, int]]) -> list[Failure]:
    """The file-severity failures of a file whose ``file_tally`` (summed over its pieces) is ``tally``."""
    checks = [ck for ck in compile_suite(dataset) if ck.severity == "file"]
    out = []
    for ck, (total, n_missing, unexpected) in zip(checks, tally, strict=True):
        success, percent = _outcome(ck, total, n_missing, unexpected)
        if not success:
            out.append(Failure(rule=ck.rule, column=ck.report_column, message=ck.message, severity="file",
                               lines=[], unexpected_percent=float(percent or 0.0)))
    return out
