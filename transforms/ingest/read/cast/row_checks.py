"""Rows rejected before validation (``canonical.stage_table`` adds them to a table's
``structural`` errors): a record of the wrong width, a cell too long, an id that is the row's own
ssn, a code the layout's code table lacks, a pay frequency it cannot derive a period from."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from transforms.ingest.read.cast import durations

FREQUENCIES = ("weekly", "biweekly", "semimonthly", "monthly")

MAX_CELL_CHARS = 10_000


@dataclass
class CellError:
    file: str
    line: int | None
    column: str | None
    value: str | None
    rule: str
    message: str


ID_IS_SSN = {
    "employee_id": "employee_id is the employee's ssn: use the employer's own employee number",
    "employer_id": "employer_id is the employee's ssn (a shifted column?): the employer's 9-digit federal employer id belongs there",
    "certification_id": "certification_id is the employee's ssn: use the id on the Division's certification",
    "application_id": "application_id is the employee's ssn: use the application's own id",
}


def structural_errors(table, source_file: str, raw: pl.DataFrame, id_is_ssn: list[tuple[int, str]]) -> list[CellError]:
    """Row rejects that precede validation: wrong field count, oversized cell, an id that is the
    row's own ssn (``employee_id_is_ssn``, ``employer_id_is_ssn``: it would reach the lake)."""
    errors: list[CellError] = []
    where = source_file
    for line, col in sorted(id_is_ssn):
        errors.append(CellError(where, line, col, None, f"{col}_is_ssn", ID_IS_SSN[col]))
    for line, cells in table.ragged:
        errors.append(CellError(where, line, None, None, "field_count",
                                f"{len(cells)} fields where the header has {len(table.headers)}"))
    cols = [c for c in raw.columns if c != "__line"]
    if cols:
        # a cell of at most MAX_CELL_CHARS bytes has at most that many characters: count
        # characters only on the rows with a long cell (len_bytes is O(1) per cell)
        long_rows = raw.filter(pl.any_horizontal([pl.col(c).str.len_bytes() > MAX_CELL_CHARS for c in cols]))
        too_long = long_rows.select(
            "__line", *[(pl.col(c).str.len_chars() > MAX_CELL_CHARS).fill_null(False).alias(c) for c in cols]
        )
        mask = too_long.select(pl.any_horizontal(cols)).to_series()
        for row in too_long.filter(mask).iter_rows(named=True):
            for c in cols:
                if row[c]:
                    errors.append(CellError(where, row["__line"], c, None, "cell_too_long",
                                            f"{c}: cell longer than {MAX_CELL_CHARS:,} characters"))
    return errors


def profile_errors(c, source_file: str, unknown_codes: list[tuple[int, str]],
                    headers: dict[str, str]) -> list[CellError]:
    """Row rejects of a profile's own tables: a code its code table lacks, a pay frequency it
    cannot derive a period from (their headers are added to ``headers``)."""
    profile, long = c.profile, c.profile.long
    errors: list[CellError] = []
    if unknown_codes and long.type is not None:
        headers["code"] = c.header(long.type)
        known = ", ".join(long.type_counts)
        errors += [CellError(source_file, line, "code", code, "unknown_code",
                             f"code type: {code!r} is not a type of profile '{profile.name}' ({known}); "
                             "the line is not counted until the profile lists it")
                   for line, code in unknown_codes]
    elif unknown_codes:
        headers["code"] = c.header(long.code)
        known = ", ".join(dict.fromkeys([*long.hours_codes, *long.wage_codes, *long.tax_codes, *long.ignore_codes]))
        errors += [CellError(source_file, line, "code", code, "unknown_code",
                             f"code: {code!r} is not in the code table of profile '{profile.name}' ({known}); "
                             "the line is not counted until the profile lists it")
                   for line, code in unknown_codes]
    errors += _hours_minutes(c, source_file, headers)
    if profile.period_from_pay_date is not None:
        rule = profile.period_from_pay_date
        name = rule.frequency or "pay_frequency"
        freq = c.txt(name).str.to_uppercase()
        bad = c.work.select("__line", freq.alias("f")).filter(
            pl.col("f").is_null() | ~pl.col("f").is_in(list(rule.codes)))
        headers["pay_frequency"] = c.header(name)
        errors += [CellError(source_file, line, "pay_frequency", value, "unknown_frequency",
                             f"pay_frequency: {value!r} is not a pay frequency of profile '{profile.name}' "
                             f"({', '.join(rule.frequencies or FREQUENCIES)}); the period cannot be derived")
                   for line, value in bad.iter_rows()]
    return errors


def _hours_minutes(c, source_file: str, headers: dict[str, str]) -> list[CellError]:
    """Hours written as hours and minutes: under a ``units: h:mm`` field, minutes or seconds over
    59 are a reject naming the column; under another hours field, the cell is a reject naming
    hours and minutes and the key to write (``durations.hint``)."""
    profile = c.profile
    errors: list[CellError] = []
    for f in profile.hours_fields:
        if f not in c.field_col:
            continue
        col = f
        headers.setdefault(col, c.header(f))  # the reject names the column by its header
        cells = c.table.frame.select("__line", c.cell(f).alias("v"))
        if f in profile.units:
            errors += [CellError(source_file, line, col, value, "hours_minutes",
                                 f"{col}: {value!r} has {what}: hours and minutes (H:MM) "
                                 "take 0 to 59 minutes; the line is not read")
                       for line, value, what in durations.out_of_range(cells, "v")]
        else:
            errors += [CellError(source_file, line, col, value, "hours_minutes",
                                 f"{col}: {value!r} is {durations.hint(f, profile.name)}")
                       for line, value in durations.written_so(cells, "v")]
    return errors
