"""A cell's value as two lines are compared by it, not as it is written (spec section 1: a file
saved again by a spreadsheet is still a copy): ``0.00`` and ``0``, ``1.30`` and ``1.3``, a date in
any format the file's dates are read in, other quoting and spaces; the cells no field maps, and a
check number without its leading zeros."""

from __future__ import annotations

import re

import polars as pl

from transforms.ingest.read.parsing import FIRST_YEAR, UNIVERSAL_DATES, one_chunk, text_expr

# a number once its format's currency, separators and sign marks are taken off: sign, whole
# digits, fraction digits (no exponent: a cell in exponent form is compared as its text)
_DECIMAL = r"^([+-]?)(\d*)(?:\.(\d*))?$"


def decimal_text(e: pl.Expr, fmt) -> pl.Expr:
    """A number written per ``fmt`` (a profiles.NumberFormat, as ``parsing.number_expr`` reads
    it) as the one text of its value, exact (no float: every digit of a 20-digit number counts):
    no leading or trailing zeros, no sign on zero (``0.00``, ``0`` and ``-0`` are ``0``; ``1.30``
    is ``1.3``; ``(1.30)`` is ``-1.3``; ``1.3`` and ``13`` stay two values). Not a number: null."""
    s = e.str.strip_chars()
    neg = pl.lit(False)
    if fmt.parentheses_negative:
        paren = s.str.contains(r"^\(.*\)$")
        neg = paren
        s = pl.when(paren).then(s.str.slice(1, s.str.len_chars() - 2)).otherwise(s).str.strip_chars()
    for sym in fmt.currency:
        s = s.str.replace_all(sym, "", literal=True)
    s = s.str.strip_chars()
    if fmt.trailing_minus:
        trail = s.str.ends_with("-") & (s.str.len_chars() > 1)
        neg = neg | trail
        s = pl.when(trail).then(s.str.strip_suffix("-")).otherwise(s)
    if fmt.thousands:  # only between digit groups of three, as number_expr takes it off
        for _ in range(2):
            s = s.str.replace_all(rf"(\d){re.escape(fmt.thousands)}(\d{{3}})", "$1$2")
    if fmt.decimal == ",":
        s = s.str.replace(",", ".", literal=True)
    parts = s.str.extract_groups(_DECIMAL)
    whole = parts.struct.field("2").str.strip_chars_start("0")
    frac = parts.struct.field("3").fill_null("").str.strip_chars_end("0")
    body = pl.concat_str([pl.when(whole == "").then(pl.lit("0")).otherwise(whole),
                          pl.when(frac == "").then(pl.lit("")).otherwise(pl.lit(".") + frac)])
    minus = neg ^ (parts.struct.field("1") == "-")
    signed = pl.when(minus & (body != "0")).then(pl.lit("-") + body).otherwise(body)
    return pl.when(s.str.contains(r"\d") & parts.struct.field("2").is_not_null()).then(signed)


def date_text(e: pl.Expr, formats: list[str]) -> pl.Expr:
    """A date written in one of ``formats`` or of ``parsing.UNIVERSAL_DATES`` as ISO text; a
    timestamp only at midnight (a spreadsheet's date), never a time of day taken off."""
    s = e.str.strip_chars()
    parsed = []
    for f in dict.fromkeys([*formats, *UNIVERSAL_DATES]):
        if "%H" in f:
            t = s.str.to_datetime(f, strict=False)
            d = pl.when(t.dt.time() == pl.time(0, 0, 0)).then(t.dt.date())
        else:
            d = s.str.to_date(f, strict=False)
        parsed.append(pl.when(d.dt.year() >= FIRST_YEAR).then(d))
    return pl.coalesce(parsed).dt.to_string("%Y-%m-%d")


def compared(cells: pl.Series, date_formats: list[str], fmt) -> pl.Series:
    """Each cell as it is compared: a number as ``decimal_text``, else a date (by the file's
    ``date_formats``, then as people write them) as ISO text, else its text trimmed; a blank
    cell null. Worked out once per distinct cell (an unmapped column repeats its few values)."""
    cells = one_chunk(cells)
    distinct = cells.unique().drop_nulls().to_frame("v")
    t = text_expr(pl.col("v"))
    values = distinct.select(pl.coalesce(decimal_text(t, fmt), date_text(t, date_formats), t)).to_series()
    return cells.replace_strict(distinct.get_column("v"), values, default=None, return_dtype=pl.String)


def check_value(e: pl.Expr) -> pl.Expr:
    """A check (or line) id as compared: one of digits only without its leading zeros (a
    spreadsheet writes the check ``000123`` as ``123``), any other as written."""
    return e.str.replace(r"^0+(\d+)$", "$1")
