"""A cell's value as two lines are compared by it, not as it is written (spec section 1: a file
saved again by a spreadsheet is still a copy): ``0.00`` and ``0``, ``1.30`` and ``1.3``, a date in
any format the file's dates are read in, other quoting and spaces; the cells no field maps, and a
check number without its leading zeros."""

from __future__ import annotations

import re

import polars as pl

from transforms.ingest.read.cast.parsing import FIRST_YEAR, UNIVERSAL_DATES, one_chunk, text_expr

# a number once its format's currency, separators and sign marks are taken off: sign, whole
# digits, fraction digits (no exponent: a cell in exponent form is compared as its text)
_DECIMAL = r"^([+-]?)(\d*)(?:\.(\d*))?$"
# a number already written as ``decimal_text`` writes it (most cells of an export: 1800.25)
_CANONICAL = r"^(-?0\.\d*[1-9]|0|-?[1-9]\d*(\.\d*[1-9])?)$"
# what a date in a layout's formats can be made of (every shipped format is digits and
# separators): only such cells are tried as dates, unless a format names a month or a day
_DATE_SHAPE = r"^[\d\-/.: T]+$"
_NAMED = re.compile(r"%[aAbBhpZ]")
_LETTER = r"[A-SU-Za-z]"  # a letter no number has (T: a date and its time of midnight, 2023-01-15T00:00:00)
_PROBE = 10_000  # the first cells, to tell a column of a few values from one of many


def decimal_text(cells: pl.DataFrame, fmt) -> pl.Series:
    """The text cells ``s`` of a frame, each a number written per ``fmt`` (a
    profiles.NumberFormat, as ``parsing.number_expr`` reads it) as the one text of its value,
    exact (no float: every digit of a 20-digit number counts): no leading or trailing zeros, no
    sign on zero (``0.00``, ``0`` and ``-0`` are ``0``; ``1.30`` is ``1.3``; ``(1.30)`` is
    ``-1.3``; ``1.3`` and ``13`` stay two values). Not a number: null. Step by step, each step a
    column (an expression built on the one before would repeat its steps)."""
    s = pl.col("s")
    f = cells.select(s.str.strip_chars(), pl.lit(False).alias("neg"))
    if fmt.parentheses_negative:
        f = f.with_columns(s.str.contains(r"^\(.*\)$").alias("neg"))
        f = f.with_columns(pl.when("neg").then(s.str.slice(1, s.str.len_chars() - 2)).otherwise(s).str.strip_chars())
    for sym in fmt.currency:
        f = f.with_columns(s.str.replace_all(sym, "", literal=True))
    f = f.with_columns(s.str.strip_chars())
    if fmt.trailing_minus:
        f = f.with_columns((s.str.ends_with("-") & (s.str.len_chars() > 1)).alias("trail"))
        f = f.with_columns(pl.col("neg") | pl.col("trail"), pl.when("trail").then(s.str.strip_suffix("-")).otherwise(s))
    if fmt.thousands:  # only between digit groups of three, as number_expr takes it off
        for _ in range(2):
            f = f.with_columns(s.str.replace_all(rf"(\d){re.escape(fmt.thousands)}(\d{{3}})", "$1$2"))
    if fmt.decimal == ",":
        f = f.with_columns(s.str.replace(",", ".", literal=True))
    f = f.with_columns(s.str.contains(r"\d").alias("digit"), s.str.extract_groups(_DECIMAL).alias("p")).unnest("p")
    f = f.select("neg", "digit", pl.col("1").alias("sign"), pl.col("2").str.strip_chars_start("0").alias("whole"),
                 pl.col("3").fill_null("").str.strip_chars_end("0").alias("frac"), pl.col("2").is_not_null().alias("ok"))
    f = f.with_columns(pl.concat_str([pl.when(pl.col("whole") == "").then(pl.lit("0")).otherwise("whole"),
                                      pl.when(pl.col("frac") == "").then(pl.lit("")).otherwise(pl.lit(".") + pl.col("frac"))
                                      ]).alias("body"))
    minus = pl.col("neg") ^ (pl.col("sign") == "-")
    signed = pl.when(minus & (pl.col("body") != "0")).then(pl.lit("-") + pl.col("body")).otherwise("body")
    return f.select(pl.when(pl.col("digit") & pl.col("ok")).then(signed)).to_series()


def date_text(cells: pl.DataFrame, formats: list[str]) -> pl.Series:
    """The text cells ``s`` of a frame, each a date written in one of ``formats`` or of
    ``parsing.UNIVERSAL_DATES``, as ISO text; a timestamp only at midnight (a spreadsheet's date),
    never a time of day taken off. Not a date: null."""
    f = cells.select(pl.col("s").str.strip_chars())
    parsed = []
    for i, fmt in enumerate(dict.fromkeys([*formats, *UNIVERSAL_DATES])):
        s = pl.col("s")
        if "%H" in fmt:
            t = s.str.to_datetime(fmt, strict=False)
            f = f.with_columns(t.alias(f"t{i}"))
            d = pl.when(pl.col(f"t{i}").dt.time() == pl.time(0, 0, 0)).then(pl.col(f"t{i}").dt.date())
        else:
            d = s.str.to_date(fmt, strict=False)
        f = f.with_columns(pl.when(d.dt.year() >= FIRST_YEAR).then(d).alias(f"d{i}"))
        parsed.append(pl.col(f"d{i}"))
    return f.select(pl.coalesce(parsed).dt.to_string("%Y-%m-%d")).to_series()


def compared(cells: pl.Series, date_formats: list[str], fmt) -> pl.Series:
    """Each cell as it is compared: a number as ``decimal_text``, else a date (by the file's
    ``date_formats``, then as people write them) as ISO text, else its text trimmed; a blank
    cell null. A column that repeats a few values (a code, a flag, a date, ``0.00``: as its first
    cells tell) is worked out once per distinct cell."""
    cells = one_chunk(cells)
    head = cells.head(_PROBE)
    if head.n_unique() * 10 <= head.len():
        distinct = cells.unique()
        if distinct.len() * 10 <= cells.len():
            return cells.replace_strict(distinct, _values(distinct, date_formats, fmt), default=None,
                                        return_dtype=pl.String)
    return _values(cells, date_formats, fmt).alias(cells.name)


def _values(cells: pl.Series, date_formats: list[str], fmt) -> pl.Series:
    """``compared`` of each cell, each step only on the cells it can apply to: a cell written as
    compared already (most cells of an export: ``1800.25``) is kept; the others trimmed, a number
    has a digit (and no letter, unless the format's currency has one), a date has a digit and is
    made as a date can be."""
    where = (~cells.str.contains(_CANONICAL).fill_null(True)).arg_true()
    if where.len() == 0:
        return cells
    some = cells.gather(where).to_frame("s").select(text_expr(pl.col("s"))).to_series()
    out = cells.clone().scatter(where, some)  # (scatter writes in place: never into the table's cells)
    digit = some.str.contains(r"\d").fill_null(False)
    if not any(re.search("[A-Za-z]", c) for c in fmt.currency):
        digit = digit & ~some.str.contains(_LETTER).fill_null(False)
    where = where.filter(digit)
    some = some.filter(digit)
    numbers = decimal_text(some.to_frame("s"), fmt)
    out = out.scatter(where, pl.select(pl.coalesce(numbers, some)).to_series())
    maybe = numbers.is_null()
    if not any(_NAMED.search(x) for x in date_formats):
        maybe = maybe & some.str.contains(_DATE_SHAPE)
    where, some = where.filter(maybe), some.filter(maybe)
    if where.len():
        out = out.scatter(where, pl.select(pl.coalesce(date_text(some.to_frame("s"), date_formats), some)).to_series())
    return out


def check_value(e: pl.Expr) -> pl.Expr:
    """A check (or line) id as compared: one of digits only without its leading zeros (a
    spreadsheet writes the check ``000123`` as ``123``), any other as written."""
    return e.str.replace(r"^0+(\d+)$", "$1")
