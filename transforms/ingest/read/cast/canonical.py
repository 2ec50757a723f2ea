"""Staging: rename and cast only, hash the ssn, add lineage (the first layer after the raw files).

A submitted table (text cells read by ``transforms.ingest.read.files.readers``, mapped by a vendor profile of
``transforms.ingest.read.layouts.profiles``) becomes the staged schema of ``transforms.schema``:
- cells are renamed to canonical columns (derived columns are sums: hours = regular + overtime);
- text is trimmed, dates and numbers are parsed with the profile's formats; a cell that does not
  parse becomes null, and validation (``transforms.ingest.validate.engines``) turns that into a reject
  naming the file, line and column;
- the ssn becomes ``ssn_hash`` (keyed HMAC, ``transforms.pii``) and is dropped: nothing after this
  module sees it;
- lineage: ``source_file`` (relative to the submission folder), ``source_sheet``, ``source_line``
  (physical line, header = 1).

``received_at``: a timestamp with an offset (or ``Z``) is that instant; a naive one is New Jersey
local time. ``received_date`` is the New Jersey local date of the instant.

``tables.read_submission`` stages a whole folder with the canonical rules only (no validation
suite, no lake); ``transforms.ingest.ingest_folder`` is the full ingest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from transforms import schema
from transforms.ingest.read.cast.cells import Cells
from transforms.ingest.read.cast.parsing import (
    one_chunk,
    received_at_expr,
    text_expr,
)
from transforms.ingest.read.cast.row_checks import (
    ID_IS_SSN,
    CellError,
    profile_errors,
    structural_errors,
)
from transforms.pii import (
    HashKey,
    hash_last4,
    hash_ssn_column,
    masked_last4,
    normalize_ssn_expr,
    ssn_map,
)


class SubmissionError(ValueError):
    """The submission folder cannot be read (missing files or columns)."""


@dataclass
class Staged:
    frames: dict[str, pl.DataFrame]
    errors: list[CellError] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


# --- one table ------------------------------------------------------------------------------

# Columns whose empty value is allowed (open-ended certification).
NULLABLE = {("certifications", "valid_to"), ("payroll", "check_id"), ("payroll", "pay_date"),
            ("applications", "period_start"), ("applications", "period_end"), ("roster", "employer_id"),
            ("roster", "ssn_hash"), ("control_groups", "member_to"), ("estimate_requests", "period_start"),
            ("estimate_requests", "period_end"), ("payroll", "ssn_hash"), ("payroll", "ssn_last4_hash"),
            ("roster", "ssn_last4_hash"), ("applications", "employer_address"),
            *(("roster", c) for c in schema.DECLARED)}


@dataclass
class StagedTable:
    """One submitted table after rename and cast (all rows, valid or not)."""

    dataset: str
    profile: str
    source_file: str
    sheet: str | None
    staged: pl.DataFrame  # staged schema + "__line" (cells that did not cast are null)
    text: pl.DataFrame  # "__line" + the submitted text of each canonical column (never the ssn)
    headers: dict[str, str]  # canonical column -> the file's header(s) for it
    raw: pl.DataFrame  # "__line" + every submitted cell by header, the ssn column dropped
    structural: list[CellError]  # rows rejected before validation (ragged, huge cell, ...)
    ssn_digits: frozenset[str] = frozenset()  # in memory only: to mask ssn-like text in rejects
    ragged: list[tuple[int, list[str]]] = field(default_factory=list)  # (line, cells) of wrong width
    padded_ssns: int = 0  # ssns of 7 or 8 digits (a numeric cell dropped the leading zeros), padded
    shape: object | None = None  # how a report's lines were read (``report_walk.Shape``): counts, totals checked
    header_line: int | None = None  # the physical line (or row) of the header
    columns: list[tuple[str, str | None]] = field(default_factory=list)  # each header -> the field it reaches


def _raw_cells(table, ssn_cols: set[str]) -> pl.DataFrame:
    """``__line`` and every submitted cell by its header (duplicated or blank headers made
    unique), the ssn column dropped."""
    raw_names: dict[str, str] = {}
    for pos, h in enumerate(table.headers):
        c = f"c{pos}"
        if c in ssn_cols:
            continue
        name = h or f"column_{pos + 1}"
        while name in raw_names.values():
            name += "_"
        raw_names[c] = name
    return table.frame.select("__line", *[pl.col(c).alias(n) for c, n in raw_names.items()])


def _submitted_text(dataset: str, c: Cells) -> tuple[pl.DataFrame, dict[str, str]]:
    """The submitted text of each canonical column and its header(s): a derived column's parts
    joined with " + "; a long layout's hours from its hours cell and money from its amount cell;
    a period derived from the pay date, the pay date."""
    profile, table, match, long = c.profile, c.table, c.match, c.profile.long
    text_cols: dict[str, pl.Expr] = {}
    headers: dict[str, str] = {}
    sources = {}
    if long is not None:
        sources = {"hours": long.hours, "gross_wages": long.amount, "employer_taxes": long.amount}
    for col in [*schema.SUBMITTED_COLUMNS[dataset], *schema.OPTIONAL_COLUMNS.get(dataset, [])]:
        if col == "ssn":
            headers[col] = table.headers[match.columns["ssn"]] if "ssn" in match.columns else "ssn"
            continue
        if col in sources:
            text_cols[col] = c.cell(sources[col])
            headers[col] = c.header(sources[col])
        elif col in ("period_start", "period_end") and profile.period_from_pay_date is not None:
            text_cols[col] = c.cell("pay_date")
            headers[col] = c.header("pay_date")
        elif col in match.derived:
            parts = match.derived[col]
            text_cols[col] = pl.concat_str([c.cell(p).fill_null("") for p in parts], separator=" + ")
            headers[col] = " + ".join(table.headers[match.columns[p]] for p in parts if p in match.columns)
        else:
            text_cols[col] = c.cell(col)
            headers[col] = c.header(col)
    return table.frame.select("__line", **text_cols), headers


def _payroll_exprs(c: Cells) -> tuple[dict[str, pl.Expr], dict[str, pl.Expr], list[tuple[int, str]]]:
    """The staged payroll columns, the columns beside them for the cross-row rules (a long
    layout's code and what it counts as; a hash of the values of the unmapped cells, as
    ``cell_values.compared`` reads them) and the lines whose code the profile does not know."""
    profile, long = c.profile, c.profile.long
    exprs = {
        "employer_id": c.employer(), "employee_id": c.employee_id(),
        "period_start": c.day("period_start"), "period_end": c.day("period_end"),
        "hours": c.num("hours") if long is None else None, "gross_wages": c.num("gross_wages") if long is None else None,
        "employer_taxes": c.num("employer_taxes") if long is None else None,
        "check_id": c.txt("check_id"), "pay_date": c.day("pay_date"), "line_count": pl.lit(1, dtype=pl.Int32),
    }
    extras: dict[str, pl.Expr] = {}
    unknown_codes: list[tuple[int, str]] = []
    if (rule := profile.period_from_pay_date) is not None:
        exprs["period_start"], exprs["period_end"] = c.periods(
            rule, "pay_lag_days" if "pay_lag_days" in c.field_col else None)
    if long is not None:
        code = c.txt(long.code).str.to_uppercase()
        zero = pl.lit(0.0)
        amount = c.number(long.amount)
        if long.type is not None:  # what a line counts as comes from its type (earnings, employer tax ...)
            kind = c.txt(long.type).str.to_uppercase()
            counts = kind.replace_strict(dict(long.type_counts), default=None, return_dtype=pl.String)
            exprs["hours"] = pl.when(counts == "hours+wages").then(c.number(long.hours)).otherwise(zero)
            exprs["gross_wages"] = pl.when(counts.is_in(["hours+wages", "wages"])).then(amount).otherwise(zero)
            exprs["employer_taxes"] = pl.when(counts == "taxes").then(amount).otherwise(zero)
            bad = c.work.select("__line", kind.alias("code")).filter(
                pl.col("code").is_null() | ~pl.col("code").is_in(list(long.type_counts)))
        else:
            exprs["hours"] = pl.when(code.is_in(long.hours_codes)).then(c.number(long.hours)).otherwise(zero)
            exprs["gross_wages"] = pl.when(code.is_in(long.wage_codes)).then(amount).otherwise(zero)
            exprs["employer_taxes"] = pl.when(code.is_in(long.tax_codes)).then(amount).otherwise(zero)
            known = [*long.hours_codes, *long.wage_codes, *long.tax_codes, *long.ignore_codes]
            bad = c.work.select("__line", code.alias("code")).filter(
                pl.col("code").is_not_null() & ~pl.col("code").is_in(known))
            counts = code.replace_strict({k: long.counts_as(k) for k in known}, default=None, return_dtype=pl.String)
        unknown_codes = list(bad.iter_rows())
        extras = {"__code": code, "__counts": counts, "__hours_cell": c.number(long.hours),
                  "__amount": amount}
    unmatched = [f"c{pos}" for pos, h in enumerate(c.table.headers)
                 if pos not in c.match.columns.values() and str(h).strip()]
    if unmatched:  # a line is a copy of another only when its other cells hold the same values too
        extras["__extra"] = pl.concat_str([c.compared(k).fill_null("\x00") for k in unmatched], separator="\x1f").hash()
    return exprs, extras, unknown_codes


def _staged_exprs(dataset: str, c: Cells) -> tuple[dict[str, pl.Expr], dict[str, pl.Expr], list[tuple[int, str]]]:
    """(staged columns, extra columns, unknown codes) of a dataset: see ``_payroll_exprs``."""
    if dataset == "payroll":
        return _payroll_exprs(c)
    if dataset in ("applications", "estimate_requests"):
        instant = received_at_expr(c.cell("received_at"))
        exprs = {
            **({"application_id": c.txt("application_id"), "county": c.txt("county"),
                "employer_address": c.txt("employer_address")} if dataset == "applications"
               else {"request_id": c.txt("request_id")}),
            "employer_id": c.employer(), "employer_name": c.txt("employer_name"),
            "tax_type": c.txt("tax_type").str.to_uppercase(),
            "tax_year": c.txt("tax_year").cast(pl.Int32, strict=False),
            "received_at": instant,
            "received_date": instant.dt.convert_time_zone(schema.NJ_TZ).dt.date(),
            "period_start": c.day("period_start"), "period_end": c.day("period_end"),
        }
    elif dataset == "roster":
        exprs = {
            "application_id": c.txt("application_id"), "employee_id": c.txt("employee_id"),
            "wage_category": c.txt("wage_category").str.to_lowercase(), "employer_id": c.employer(),
            **{d: c.num(d) for d in schema.DECLARED},
        }
    elif dataset == "control_groups":
        exprs = {
            "group_id": c.txt("group_id"), "employer_id": c.employer(),
            "member_from": c.day("member_from"), "member_to": c.day("member_to"),
        }
    elif dataset == "certifications":
        exprs = {
            "certification_id": c.txt("certification_id"), "status": c.txt("status").str.to_uppercase(),
            "valid_from": c.day("valid_from"), "valid_to": c.day("valid_to"),
        }
    elif dataset == "employer_rates":
        exprs = {
            "employer_id": c.employer(), "rate_year_start": c.day("rate_year_start"),
            "ui_rate": c.num("ui_rate"), "di_rate": c.num("di_rate"),
        }
    else:
        raise KeyError(dataset)
    if dataset == "roster":  # the ssn is optional: a given one must be 9 digits (validate: __ssn_ok)
        return exprs, {"__ssn_given": text_expr(c.cell("ssn")).is_not_null()}, []
    return exprs, {}, []


def _last4(dataset: str) -> pl.Expr:
    """The four digits to compare a masked ssn with (spec section 1): those a payroll row's masked
    ssn shows, else the last four of the ssn (payroll and roster)."""
    full = normalize_ssn_expr("ssn").str.slice(5, 4)
    return pl.coalesce(masked_last4("ssn"), full) if dataset == "payroll" else full


def _hash_ssns(typed: pl.DataFrame, key: HashKey) -> tuple[pl.DataFrame, frozenset[str], list[tuple[int, str]]]:
    """The ssn column replaced by its keyed hash; the table's ssns (normalised, in memory only:
    to mask them in rejects) and the (line, column) of each id that is the row's own ssn."""
    id_is_ssn: list[tuple[int, str]] = []
    ssns = ssn_map(typed.get_column("ssn"))
    ssn_digits = frozenset(ssns.get_column("norm").drop_nulls().to_list())
    for id_col in ID_IS_SSN:
        if id_col not in typed.columns or not ssn_digits:
            continue
        ids = ssn_map(typed.get_column(id_col))
        suspects = ids.filter(pl.col("norm").is_in(list(ssn_digits))).get_column("raw")
        if suspects.len():  # rare: only then compare row by row
            same = normalize_ssn_expr(id_col) == normalize_ssn_expr("ssn")
            lines = typed.filter(pl.col(id_col).is_in(suspects) & same.fill_null(False)).get_column("__line")
            id_is_ssn += [(line, id_col) for line in lines.to_list()]
    return hash_ssn_column(typed, key, mapping=ssns), ssn_digits, id_is_ssn


def stage_table(dataset: str, match, table, key: HashKey, source_file: str) -> StagedTable:
    """Rename and cast one table read by ``readers`` under the profile ``match`` (profiles.Match)."""
    c = Cells(table, match)
    ssn_fields = {"ssn"} if "ssn" in c.profile.fields else set()
    raw = _raw_cells(table, {c.field_col[s] for s in ssn_fields if s in c.field_col})
    text, headers = _submitted_text(dataset, c)
    exprs, extras, unknown_codes = _staged_exprs(dataset, c)
    if dataset == "payroll":  # the ssn may be absent or masked where the roster gives it
        extras["__ssn_given"] = text_expr(c.cell("ssn")).is_not_null()
    # lazily: the steps the typed columns share (a cell trimmed, a number's signs and separators)
    # are computed once (an eager select computes each again where it recurs)
    typed = c.work.lazy().select(
        "__line",
        *[e.alias(k) for k, e in exprs.items()],
        *[e.alias(k) for k, e in extras.items()],
        *([c.cell("ssn").alias("ssn")] if ssn_fields else []),
    ).collect()
    ssn_digits: frozenset[str] = frozenset()
    id_is_ssn: list[tuple[int, str]] = []  # (line, column): an id that is the row's own ssn
    padded = 0
    if ssn_fields:
        # each distinct ssn cell worked out once (an employee's ssn is on every line and row)
        cells = one_chunk(typed.get_column("ssn"))
        distinct = cells.unique().drop_nulls().to_frame("ssn")
        padded_cells = distinct.get_column("ssn").filter(
            distinct.get_column("ssn").str.strip_chars().str.contains(r"^\d{7,8}$"))
        padded = int(cells.is_in(padded_cells.implode()).sum()) if padded_cells.len() else 0
        last4 = None
        if dataset in ("payroll", "roster"):
            last4 = hash_last4(distinct.with_columns(_last4(dataset).alias("__last4")), key, "__last4", "h")
        typed, ssn_digits, id_is_ssn = _hash_ssns(typed, key)
        if last4 is not None:
            typed = typed.with_columns(cells.replace_strict(last4.get_column("ssn"), last4.get_column("h"), default=None,
                                                            return_dtype=pl.String).alias("ssn_last4_hash"))
    typed = typed.with_columns(
        pl.lit(source_file, dtype=pl.String).alias("source_file"),
        pl.lit(table.sheet, dtype=pl.String).alias("source_sheet"),
        pl.col("__line").cast(pl.Int64).alias("source_line"),
    )
    target = schema.STAGED[dataset]
    missing = [k for k in ("ssn_hash", "ssn_last4_hash") if k in target and k not in typed.columns]
    if missing:  # a layout without an ssn: the roster gives it (spec section 1)
        typed = typed.with_columns(pl.lit(None, dtype=pl.String).alias(k) for k in missing)
    staged = typed.select("__line", *[pl.col(k).cast(dt) for k, dt in target.items()], *extras)
    structural = structural_errors(table, source_file, raw, id_is_ssn)
    structural += profile_errors(c, source_file, unknown_codes, headers)
    reached = {pos: f for f, pos in match.columns.items()}
    return StagedTable(dataset, c.profile.name, source_file, table.sheet, staged, text, headers, raw, structural,
                       ssn_digits, list(table.ragged), padded, header_line=table.header_line,
                       columns=[(h, reached.get(i)) for i, h in enumerate(table.headers)])
