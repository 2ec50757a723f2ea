"""Staging: rename and cast only, hash the ssn, add lineage (the first layer after the raw files).

A submitted table (text cells read by ``transforms.ingest.readers``, mapped by a vendor profile of
``transforms.ingest.profiles``) becomes the staged schema of ``transforms.schema``:
- cells are renamed to canonical columns (derived columns are sums: hours = regular + overtime);
- text is trimmed, dates and numbers are parsed with the profile's formats; a cell that does not
  parse becomes null, and validation (``transforms.ingest.validate``) turns that into a reject
  naming the file, line and column;
- the ssn becomes ``ssn_hash`` (keyed HMAC, ``transforms.pii``) and is dropped: nothing after this
  module sees it;
- lineage: ``source_file`` (relative to the submission folder), ``source_sheet``, ``source_line``
  (physical line, header = 1).

``received_at``: a timestamp with an offset (or ``Z``) is that instant; a naive one is New Jersey
local time. ``received_date`` is the New Jersey local date of the instant.

``stage_submission`` stages a whole folder with the canonical rules only (no validation suite,
no lake); ``transforms.ingest.ingest_folder`` is the full ingest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from transforms import schema
from transforms.pii import HashKey, hash_ssn_column, normalize_ssn_expr, ssn_map


class SubmissionError(ValueError):
    """The submission folder cannot be read (missing files or columns)."""


@dataclass
class CellError:
    file: str
    line: int | None
    column: str | None
    value: str | None
    rule: str
    message: str


@dataclass
class Staged:
    frames: dict[str, pl.DataFrame]
    errors: list[CellError] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


# --- parsing expressions ------------------------------------------------------------------

def text_expr(e: pl.Expr) -> pl.Expr:
    s = e.str.strip_chars()
    return pl.when(s.str.len_chars() > 0).then(s).otherwise(None)


def number_expr(e: pl.Expr, fmt) -> pl.Expr:
    """Parse a number written per ``fmt`` (a profiles.NumberFormat); not a finite number -> null."""
    s = e.str.strip_chars()
    neg: pl.Expr | None = None
    if fmt.parentheses_negative:
        paren = s.str.contains(r"^\(.*\)$")
        neg = paren
        s = pl.when(paren).then(s.str.slice(1, s.str.len_chars() - 2)).otherwise(s).str.strip_chars()
    for sym in fmt.currency:
        s = s.str.replace_all(sym, "", literal=True)
    if fmt.currency:
        s = s.str.strip_chars()
    if fmt.trailing_minus:
        trail = s.str.ends_with("-") & (s.str.len_chars() > 1)
        neg = trail if neg is None else neg | trail
        s = pl.when(trail).then(s.str.strip_suffix("-")).otherwise(s)
    if fmt.thousands:
        # a thousands separator only between digit groups of three
        s = s.str.replace_all(rf"(\d){re.escape(fmt.thousands)}(\d{{3}})", "$1$2")
        s = s.str.replace_all(rf"(\d){re.escape(fmt.thousands)}(\d{{3}})", "$1$2")
    if fmt.decimal == ",":
        s = s.str.replace(",", ".", literal=True)
    ok = s.str.contains(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
    v = s.cast(pl.Float64, strict=False)
    v = pl.when(ok & v.is_finite()).then(v)
    # (no sign branch unless the format has one: a when/otherwise evaluates both sides)
    return v if neg is None else pl.when(neg).then(-v).otherwise(v)


def date_expr(e: pl.Expr, formats: list[str]) -> pl.Expr:
    s = e.str.strip_chars()
    parsed = [s.str.to_date(f, strict=False) for f in formats]
    return pl.coalesce(parsed) if len(parsed) > 1 else parsed[0]


_TS_AWARE = ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M:%S%.f%z",
             "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M%:z"]
_TS_NAIVE = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]


def period_from_pay_date(pay: pl.Expr, frequency: pl.Expr, rule) -> tuple[pl.Expr, pl.Expr]:
    """(period_start, period_end) by a profile's ``PeriodFromPayDate`` rule
    (``period_ending_on_pay_date``): the pay date moved back by ``lag_days``; weekly and
    biweekly, the 7 or 14 days ending on it; semimonthly, the half month holding it (1st-15th,
    16th-end); monthly, the calendar month holding it. An unknown frequency gives no period."""
    end_day = pay - pl.duration(days=rule.lag_days) if rule.lag_days else pay
    freq = frequency.str.to_uppercase().replace_strict(rule.frequencies, default=None, return_dtype=pl.String)
    month_start = end_day.dt.month_start()
    month_end = end_day.dt.month_end()
    first_half = end_day.dt.day() <= 15
    mid = month_start + pl.duration(days=14)
    start = (
        pl.when(freq == "weekly").then(end_day - pl.duration(days=6))
        .when(freq == "biweekly").then(end_day - pl.duration(days=13))
        .when(freq == "semimonthly").then(pl.when(first_half).then(month_start).otherwise(mid + pl.duration(days=1)))
        .when(freq == "monthly").then(month_start)
    )
    end = (
        pl.when(freq.is_in(["weekly", "biweekly"])).then(end_day)
        .when(freq == "semimonthly").then(pl.when(first_half).then(mid).otherwise(month_end))
        .when(freq == "monthly").then(month_end)
    )
    return start, end


def received_at_expr(e: pl.Expr) -> pl.Expr:
    """Instant (UTC): offsets are honoured, naive timestamps (and bare dates) are NJ local time."""
    raw = e.str.strip_chars().str.replace(r"[Zz]$", "+00:00")
    has_offset = raw.str.contains(r"[+-]\d{2}:?\d{2}$") & raw.str.contains(r"[T ]\d")
    aware = pl.coalesce(
        [raw.str.to_datetime(f, time_zone="UTC", strict=False, time_unit="us") for f in _TS_AWARE]
    )
    naive_local = pl.coalesce(
        [raw.str.to_datetime(f, strict=False, time_unit="us") for f in _TS_NAIVE]
        + [raw.str.to_date("%Y-%m-%d", strict=False).cast(pl.Datetime("us"))]
    )
    naive = naive_local.dt.replace_time_zone(schema.NJ_TZ, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")
    return pl.when(has_offset).then(aware).otherwise(naive)


# --- one table ------------------------------------------------------------------------------

# Columns whose empty value is allowed (open-ended certification).
NULLABLE = {("certifications", "valid_to"), ("payroll", "check_id"), ("payroll", "pay_date")}
MAX_CELL_CHARS = 10_000


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


def stage_table(dataset: str, match, table, key: HashKey, source_file: str) -> StagedTable:
    """Rename and cast one table read by ``readers`` under the profile ``match`` (profiles.Match)."""
    profile = match.profile
    canon = schema.SUBMITTED_COLUMNS[dataset]
    f = table.frame
    field_col = {name: f"c{pos}" for name, pos in match.columns.items()}
    ssn_fields = {"ssn"} if "ssn" in profile.fields else set()
    ssn_cols = {field_col[s] for s in ssn_fields if s in field_col}

    # every submitted cell by its header (duplicated / blank headers made unique), ssn dropped
    raw_names: dict[str, str] = {}
    for pos, h in enumerate(table.headers):
        c = f"c{pos}"
        if c in ssn_cols:
            continue
        name = h or f"column_{pos + 1}"
        while name in raw_names.values():
            name += "_"
        raw_names[c] = name
    raw = f.select("__line", *[pl.col(c).alias(n) for c, n in raw_names.items()])

    def cell(name: str) -> pl.Expr:
        return pl.col(field_col[name]) if name in field_col else pl.lit(None, dtype=pl.String)

    def header(name: str) -> str:
        return table.headers[match.columns[name]] if name in match.columns else name

    long = profile.long
    # the submitted text of each canonical column (derived: parts joined with " + "; a long
    # layout's hours from its hours cell and money from its amount cell)
    text_cols: dict[str, pl.Expr] = {}
    headers: dict[str, str] = {}
    sources = {}
    if long is not None:
        sources = {"hours": long.hours, "gross_wages": long.amount, "employer_taxes": long.amount}
    for col in [*canon, *schema.OPTIONAL_COLUMNS.get(dataset, [])]:
        if col == "ssn":
            headers[col] = table.headers[match.columns["ssn"]]
            continue
        if col in sources:
            text_cols[col] = cell(sources[col])
            headers[col] = header(sources[col])
        elif col in ("period_start", "period_end") and profile.period_from_pay_date is not None:
            text_cols[col] = cell("pay_date")
            headers[col] = header("pay_date")
        elif col in profile.derived:
            parts = profile.derived[col]
            text_cols[col] = pl.concat_str([cell(p).fill_null("") for p in parts], separator=" + ")
            headers[col] = " + ".join(table.headers[match.columns[p]] for p in parts if p in match.columns)
        else:
            text_cols[col] = cell(col)
            headers[col] = header(col)
    text = f.select("__line", **text_cols)

    nf = profile.number

    def num(col: str) -> pl.Expr:
        if col in profile.derived:
            parts = [number_expr(cell(p), nf) for p in profile.derived[col]]
            blank = pl.all_horizontal([text_expr(cell(p)).is_null() for p in profile.derived[col]])
            bad = pl.any_horizontal(
                [text_expr(cell(p)).is_not_null() & number_expr(cell(p), nf).is_null() for p in profile.derived[col]]
            )
            total = pl.sum_horizontal([p.fill_null(0.0) for p in parts]).round(6)
            return pl.when(blank | bad).then(None).otherwise(total)
        return number_expr(cell(col), nf)

    def day(col: str) -> pl.Expr:
        return date_expr(cell(col), profile.date_formats)

    def txt(col: str) -> pl.Expr:
        return text_expr(cell(col))

    def employer() -> pl.Expr:
        e = txt("employer_id")
        for ch in profile.employer_id_strip:
            e = e.str.replace_all(ch, "", literal=True)
        return e

    extras: dict[str, pl.Expr] = {}  # columns beside the staged schema, for the cross-row rules
    unknown_codes: list[tuple[int, str]] = []
    if dataset == "payroll":
        exprs = {
            "employer_id": employer(), "employee_id": txt("employee_id"),
            "period_start": day("period_start"), "period_end": day("period_end"),
            "hours": num("hours") if long is None else None, "gross_wages": num("gross_wages") if long is None else None,
            "employer_taxes": num("employer_taxes") if long is None else None,
            "check_id": txt("check_id"), "pay_date": day("pay_date"), "line_count": pl.lit(1, dtype=pl.Int32),
        }
        if profile.period_from_pay_date is not None:
            exprs["period_start"], exprs["period_end"] = period_from_pay_date(
                day("pay_date"), txt(profile.period_from_pay_date.frequency), profile.period_from_pay_date)
        if long is not None:
            code = txt(long.code).str.to_uppercase()
            zero = pl.lit(0.0)
            exprs["hours"] = pl.when(code.is_in(long.hours_codes)).then(number_expr(cell(long.hours), nf)).otherwise(zero)
            amount = number_expr(cell(long.amount), nf)
            exprs["gross_wages"] = pl.when(code.is_in(long.wage_codes)).then(amount).otherwise(zero)
            exprs["employer_taxes"] = pl.when(code.is_in(long.tax_codes)).then(amount).otherwise(zero)
            known = [*long.hours_codes, *long.wage_codes, *long.tax_codes, *long.ignore_codes]
            bad = f.select("__line", code.alias("code")).filter(pl.col("code").is_not_null() & ~pl.col("code").is_in(known))
            unknown_codes = list(bad.iter_rows())
            counts = code.replace_strict({c: long.counts_as(c) for c in known}, default=None, return_dtype=pl.String)
            extras = {"__code": code, "__counts": counts, "__hours_cell": number_expr(cell(long.hours), nf),
                      "__amount": amount}
        unmatched = [f"c{pos}" for pos, h in enumerate(table.headers)
                     if pos not in match.columns.values() and str(h).strip()]
        if unmatched:  # a line is a copy of another only when its other cells are equal too
            extras["__extra"] = pl.concat_str([pl.col(c).fill_null("\x00") for c in unmatched], separator="\x1f").hash()
    elif dataset == "applications":
        instant = received_at_expr(cell("received_at"))
        exprs = {
            "application_id": txt("application_id"), "employer_id": employer(),
            "employer_name": txt("employer_name"), "county": txt("county"),
            "tax_type": txt("tax_type").str.to_uppercase(),
            "tax_year": txt("tax_year").cast(pl.Int32, strict=False),
            "received_at": instant,
            "received_date": instant.dt.convert_time_zone(schema.NJ_TZ).dt.date(),
        }
    elif dataset == "roster":
        exprs = {
            "application_id": txt("application_id"), "employee_id": txt("employee_id"),
            "wage_category": txt("wage_category").str.to_lowercase(),
        }
    elif dataset == "certifications":
        exprs = {
            "certification_id": txt("certification_id"), "status": txt("status").str.to_uppercase(),
            "valid_from": day("valid_from"), "valid_to": day("valid_to"),
        }
    elif dataset == "employer_rates":
        exprs = {
            "employer_id": employer(), "rate_year_start": day("rate_year_start"),
            "ui_rate": num("ui_rate"), "di_rate": num("di_rate"),
        }
    else:
        raise KeyError(dataset)

    typed = f.select(
        "__line",
        *[e.alias(k) for k, e in exprs.items()],
        *[e.alias(k) for k, e in extras.items()],
        *([cell("ssn").alias("ssn")] if ssn_fields else []),
    )
    ssn_digits: frozenset[str] = frozenset()
    id_is_ssn: list[tuple[int, str]] = []  # (line, column): an id that is the row's own ssn
    if ssn_fields:
        ssns = ssn_map(typed.get_column("ssn"))
        ssn_digits = frozenset(ssns.get_column("norm").drop_nulls().to_list())
        for id_col in ("employer_id", "employee_id"):
            if id_col not in typed.columns or not ssn_digits:
                continue
            ids = ssn_map(typed.get_column(id_col))
            suspects = ids.filter(pl.col("norm").is_in(list(ssn_digits))).get_column("raw")
            if suspects.len():  # rare: only then compare row by row
                same = normalize_ssn_expr(id_col) == normalize_ssn_expr("ssn")
                lines = typed.filter(pl.col(id_col).is_in(suspects) & same.fill_null(False)).get_column("__line")
                id_is_ssn += [(line, id_col) for line in lines.to_list()]
        typed = hash_ssn_column(typed, key, mapping=ssns)
    lineage = [
        pl.lit(source_file, dtype=pl.String).alias("source_file"),
        pl.lit(table.sheet, dtype=pl.String).alias("source_sheet"),
        pl.col("__line").cast(pl.Int64).alias("source_line"),
    ]
    typed = typed.with_columns(lineage)
    target = schema.STAGED[dataset]
    staged = typed.select("__line", *[pl.col(c).cast(dt) for c, dt in target.items()], *extras)

    structural = structural_errors(table, source_file, raw, id_is_ssn)
    if unknown_codes:
        headers["code"] = header(long.code)
        known = ", ".join(dict.fromkeys([*long.hours_codes, *long.wage_codes, *long.tax_codes, *long.ignore_codes]))
        structural += [CellError(source_file, line, "code", code, "unknown_code",
                                 f"code: {code!r} is not in the code table of profile '{profile.name}' ({known}); "
                                 "the line is not counted until the profile lists it")
                       for line, code in unknown_codes]
    if profile.period_from_pay_date is not None:
        rule = profile.period_from_pay_date
        freq = txt(rule.frequency).str.to_uppercase()
        bad = f.select("__line", freq.alias("f")).filter(pl.col("f").is_null() | ~pl.col("f").is_in(list(rule.frequencies)))
        headers["pay_frequency"] = header(rule.frequency)
        structural += [CellError(source_file, line, "pay_frequency", value, "unknown_frequency",
                                 f"pay_frequency: {value!r} is not a pay frequency of profile '{profile.name}' "
                                 f"({', '.join(rule.frequencies)}); the period cannot be derived")
                       for line, value in bad.iter_rows()]
    return StagedTable(dataset, profile.name, source_file, table.sheet, staged, text, headers, raw, structural, ssn_digits, list(table.ragged))


ID_IS_SSN = {
    "employee_id": "employee_id is the employee's ssn: use the employer's own employee number",
    "employer_id": "employer_id is the employee's ssn (a shifted column?): the employer's 9-digit federal employer id belongs there",
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


# --- whole folder, canonical rules only -----------------------------------------------------

def stage_submission(input_dir: Path, key: HashKey) -> Staged:
    """Read and stage every dataset of a submission folder (vendor payroll layouts included).

    Rows with a cell that does not cast are left out and reported in ``errors``; nothing else is
    checked (``transforms.ingest.ingest_folder`` runs the validation suites and writes the lake).
    """
    from transforms.ingest.pipeline import discover, read_tables

    root = Path(input_dir)
    if not root.is_dir():
        raise SubmissionError(f"{root}: not a folder")
    found = discover(root)
    for dataset, pattern in schema.SUBMISSION_FILES.items():
        if not any(d == dataset for d, _ in found):
            raise SubmissionError(f"{root}: no {pattern} (required by the canonical layout)")
    parts: dict[str, list[pl.DataFrame]] = {d: [] for d in schema.STAGED}
    errors: list[CellError] = []
    files: list[Path] = []
    for dataset, path in found:
        if dataset is None:
            continue
        files.append(path)
        rel = path.relative_to(root).as_posix()
        tables, problem, bad_sheets, _ = read_tables(dataset, path, rel, key)
        if problem is not None:
            raise SubmissionError(f"{path}: {problem.message}")
        for sh in bad_sheets:
            errors.append(CellError(rel, None, None, None, sh.problem.rule, sh.problem.message))
        for st in tables:
            errors.extend(st.structural)
            bad_lines = {e.line for e in st.structural}
            nonnull = [c for c in schema.STAGED[dataset] if c not in schema.LINEAGE and (dataset, c) not in NULLABLE]
            ok = pl.all_horizontal([pl.col(c).is_not_null() for c in nonnull])
            for row in st.staged.filter(~ok).select("__line").iter_rows():
                errors.append(CellError(rel, row[0], None, None, "type", "a cell is empty or not a valid value"))
            good = st.staged.filter(ok & ~pl.col("__line").is_in(list(bad_lines)))
            parts[dataset].append(good.select(list(schema.STAGED[dataset])))
    frames = {
        d: pl.concat(p, how="vertical") if p else pl.DataFrame(schema=schema.STAGED[d]) for d, p in parts.items()
    }
    return Staged(frames, errors, files)
