"""Parsing: the Polars expressions that turn submitted text into typed values, per a vendor
profile's formats (numbers with currency, thousands, trailing minus or parentheses; dates;
timestamps with or without an offset; pay periods derived from a pay date). A cell that does not
parse becomes null; validation turns that into a reject naming the file, line and column."""

from __future__ import annotations

import re

import polars as pl

from transforms import schema


def text_expr(e: pl.Expr) -> pl.Expr:
    s = e.str.strip_chars()
    return pl.when(s.str.len_chars() > 0).then(s).otherwise(None)


PLAIN = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


def number_expr(e: pl.Expr, fmt) -> pl.Expr:
    """Parse a number written per ``fmt`` (a profiles.NumberFormat); not a finite number -> null.
    A format with no sign, separator or currency to take off (a column's ``fitted`` format) reads
    the number as it stands, with the same result."""
    s = e.str.strip_chars()
    plain = not (fmt.currency or fmt.thousands or fmt.parentheses_negative or fmt.trailing_minus)
    if plain and fmt.decimal == ".":
        v = s.cast(pl.Float64, strict=False)
        v = pl.when(v.is_finite()).then(v)  # what casts to a finite number is PLAIN (a property test)
        if getattr(fmt, "blank", "missing") == "zero":
            v = pl.when(s.is_null() | (s == "")).then(pl.lit(0.0)).otherwise(v)
        return v
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
    v = s.cast(pl.Float64, strict=False)
    v = pl.when(v.is_finite()).then(v)
    # (no sign branch unless the format has one: a when/otherwise evaluates both sides)
    v = v if neg is None else pl.when(neg).then(-v).otherwise(v)
    if getattr(fmt, "blank", "missing") == "zero":
        v = pl.when(s.is_null() | (s == "")).then(pl.lit(0.0)).otherwise(v)
    return v


# read in every layout after the layout's own formats (spec section 1): ISO, m/d/yyyy, mm/dd/yy,
# and a date a spreadsheet wrote with a time of midnight
UNIVERSAL_DATES = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")
FIRST_YEAR = 1900  # a year before it is a misreading ("1/5/23" by %Y is the year 23), never a date


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)  # digits as exports write them, as the cast reads them


def fitted(frame: pl.DataFrame, column: str, fmt):
    """``fmt`` without the steps no cell of ``column`` needs (no currency sign in it: none taken off;
    no thousands separator, no parenthesis, no minus: likewise), so that ``number_expr`` reads the
    column with the same result in fewer passes (a column of plain numbers: a cast)."""
    if column not in frame.columns:
        return fmt
    checks = {"currency": [c for c in fmt.currency if c], "thousands": [fmt.thousands] if fmt.thousands else [],
              "paren": ["("] if fmt.parentheses_negative else [], "minus": ["-"] if fmt.trailing_minus else []}
    probe = {k: pl.any_horizontal([pl.col(column).str.contains(c, literal=True) for c in v]).any()
             for k, v in checks.items() if v}
    if not probe:
        return fmt
    found = frame.select(**probe).row(0, named=True)
    return fmt.model_copy(update={
        "currency": [c for c in fmt.currency if found.get("currency")],
        "thousands": fmt.thousands if found.get("thousands") else None,
        "parentheses_negative": fmt.parentheses_negative and bool(found.get("paren")),
        "trailing_minus": fmt.trailing_minus and bool(found.get("minus")),
    })


def one_chunk(cells: pl.Series) -> pl.Series:
    """``cells`` in one chunk when in many: Polars 2.1 builds replace_strict's mapping once per
    chunk (``transforms.pii.hash_ssn_column``)."""
    return cells.rechunk() if cells.n_chunks() > 16 else cells


_CASTS = frozenset("0123456789.eE+-")  # the characters of a text that casts to a finite number (PLAIN)
_PROBE = 1000  # the first cells tried before the whole column


def numbers(cells: pl.Series, fmt) -> pl.Series:
    """``cells`` read as ``number_expr`` reads them, each cell by the steps it needs. First a cast
    of every cell: a cell that casts to a finite number is read (no step of a format with a
    decimal point changes it: no currency sign, separator, parenthesis or trailing minus can be in
    it, PLAIN's characters being none of those); only the others, when they are not most of the
    column, go through the steps (``_by_steps``). A column of plain numbers: one cast, no probe."""
    if fmt.decimal != "." or any(not set(c) - _CASTS for c in fmt.currency if c) or \
            (fmt.thousands and not set(fmt.thousands) - _CASTS):
        return _by_steps(cells, fmt)
    head = cells.head(_PROBE).str.strip_chars()
    if head.cast(pl.Float64, strict=False).is_finite().fill_null(False).sum() * 2 < head.str.len_bytes().fill_null(0).gt(0).sum():
        return _by_steps(cells, fmt)  # most of the first cells need steps ($1,234.56): no cast of them all
    s = cells.str.strip_chars()
    v = s.cast(pl.Float64, strict=False)
    finite = v.is_finite().fill_null(False)
    blank = s.is_null() | (s.str.len_bytes() == 0)
    rest = (~finite & ~blank).arg_true()
    if rest.len() * 2 > cells.len():
        return _by_steps(cells, fmt)
    read = pl.when(finite).then(v)
    if getattr(fmt, "blank", "missing") == "zero":
        read = read.when(blank).then(0.0)
    out = pl.select(read).to_series()
    if rest.len():
        out = out.scatter(rest, _by_steps(cells.gather(rest), fmt))
    return out.alias(cells.name)


def _by_steps(cells: pl.Series, fmt) -> pl.Series:
    """``numbers`` by the steps each cell needs: the costly ones (a thousands separator taken from
    between digit groups, a parenthesis) only on the cells that hold one, the others by the
    column's ``fitted`` format (the same value: on a cell without the separator or parenthesis
    those steps change nothing)."""
    fmt = fitted(cells.to_frame("v"), "v", fmt)
    costly = [c for c, on in ((fmt.thousands, fmt.thousands), ("(", fmt.parentheses_negative)) if on]
    if not costly:
        return cells.to_frame("v").select(number_expr(pl.col("v"), fmt)).to_series()
    needs = cells.to_frame("v").select(
        pl.any_horizontal([pl.col("v").str.contains(c, literal=True) for c in costly]).fill_null(False)).to_series()
    light = fmt.model_copy(update={"thousands": None, "parentheses_negative": False})
    out = cells.to_frame("v").select(number_expr(pl.col("v"), light)).to_series()
    where = needs.arg_true()
    if where.len():
        heavy = cells.gather(where).to_frame("v").select(number_expr(pl.col("v"), fmt)).to_series()
        out = out.scatter(where, heavy)
    return out


def parse_number(text: str, fmt) -> float | None:
    """One number written per ``fmt`` (a profiles.NumberFormat), as ``number_expr`` reads a cell
    (plain Python: a report's totals lines are checked one by one)."""
    s = text.strip()
    neg = False
    if fmt.parentheses_negative and len(s) >= 2 and s[0] == "(" and s[-1] == ")":
        neg, s = True, s[1:-1].strip()
    for sym in fmt.currency:
        s = s.replace(sym, "")
    s = s.strip()
    if fmt.trailing_minus and s.endswith("-") and len(s) > 1:
        neg, s = True, s[:-1]
    if fmt.thousands:
        for _ in range(2):
            s = re.sub(rf"(\d){re.escape(fmt.thousands)}(\d{{3}})", r"\1\2", s, flags=re.ASCII)
    if fmt.decimal == ",":
        s = s.replace(",", ".", 1)
    if not _NUMBER.fullmatch(s):
        return None
    v = float(s)
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return -v if neg else v


def date_expr(e: pl.Expr, formats: list[str], *, universal: bool = True) -> pl.Expr:
    """Parse a date written in one of ``formats`` or (``universal``) of ``UNIVERSAL_DATES``."""
    s = e.str.strip_chars()
    parsed = []
    for f in dict.fromkeys([*formats, *(UNIVERSAL_DATES if universal else ())]):
        d = s.str.to_datetime(f, strict=False).dt.date() if "%H" in f else s.str.to_date(f, strict=False)
        parsed.append(pl.when(d.dt.year() >= FIRST_YEAR).then(d))
    return pl.coalesce(parsed)


_TS_AWARE = ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M:%S%.f%z",
             "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M%:z"]
_TS_NAIVE = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M",
             # as spreadsheets write them: 2/1/2024 9:00, 2/1/2024 9:00:00, 2/1/2024 9:00 AM
             "%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %I:%M %p", "%m/%d/%Y %I:%M:%S %p"]


def period_from_pay_date(pay: pl.Expr, frequency: pl.Expr, rule, lag: pl.Expr | None = None) -> tuple[pl.Expr, pl.Expr]:
    """(period_start, period_end) by a profile's ``PeriodFromPayDate`` rule
    (``period_ending_on_pay_date``): the pay date moved back by ``lag_days`` (or by ``lag``, the
    file's own from payroll/files.csv); weekly and biweekly, the 7 or 14 days ending on it;
    semimonthly, the half month holding it (1st-15th, 16th-end); monthly, the calendar month
    holding it. An unknown frequency gives no period."""
    if lag is not None:
        end_day = pay - pl.duration(days=lag.cast(pl.Int64, strict=False).fill_null(rule.lag_days))
    else:
        end_day = pay - pl.duration(days=rule.lag_days) if rule.lag_days else pay
    freq = frequency.str.to_uppercase().replace_strict(rule.codes, default=None, return_dtype=pl.String)
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
        + [d.cast(pl.Datetime("us")) for d in (raw.str.to_date("%Y-%m-%d", strict=False),
                                                raw.str.to_date("%m/%d/%Y", strict=False))]
    )
    naive_local = pl.when(naive_local.dt.year() >= FIRST_YEAR).then(naive_local)
    naive = naive_local.dt.replace_time_zone(schema.NJ_TZ, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")
    return pl.when(has_offset).then(aware).otherwise(naive)
