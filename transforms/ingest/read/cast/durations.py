"""Hours written as hours and minutes (``76:45``, ``76:45:30``) read as decimal hours, per a
profile's ``units`` (``units: {hours: h:mm}``), and the rejects and hints they need.

Time-and-attendance products print worked time as ``H:MM`` (``76:45`` is 76.75 hours) and their
workbooks store it as a duration cell (``[h]:mm``: a fraction of days), which the workbook reader
gives as ``H:MM:SS`` (``workbooks``). A unit ``h:mm`` reads ``H:MM`` and ``H:MM:SS`` exactly
(hours + minutes/60 + seconds/3600, never rounded) and a plain number as hours; minutes or
seconds over 59 are a reject naming the column. Without the unit, an hours cell written so is a
reject that names hours and minutes and the key to write (``hint``)."""

from __future__ import annotations

import polars as pl

from transforms.ingest.read.cast.parsing import numbers

# H:MM or H:MM:SS, the minutes and seconds as two digits (their range is checked apart: a reject)
CLOCK = r"^\s*(\d+):(\d{2})(?::(\d{2}))?\s*$"
UNITS = ("h:mm",)


def hours_minutes(cells: pl.Series, fmt) -> pl.Series:
    """``cells`` as decimal hours: ``H:MM`` and ``H:MM:SS`` by their parts (minutes and seconds
    over 59: null), any other cell as a number written per ``fmt`` (``parsing.numbers``)."""
    frame = cells.to_frame("v").with_columns(pl.col("v").str.extract_groups(CLOCK).alias("g"))
    h, m, s = (pl.col("g").struct.field(k).cast(pl.Float64) for k in ("1", "2", "3"))
    clock = pl.col("g").struct.field("1").is_not_null()
    ok = (m <= 59) & (s.fill_null(0.0) <= 59)
    value = h + m / 60.0 + s.fill_null(0.0) / 3600.0
    plain = numbers(cells, fmt)
    out = frame.select(pl.when(clock).then(pl.when(ok).then(value)).otherwise(plain)).to_series()
    return out.alias(cells.name)


def out_of_range(cells: pl.DataFrame, column: str) -> list[tuple[int, str, str]]:
    """(line, cell, what is wrong) of the ``H:MM`` cells of ``column`` (a frame with ``__line``)
    whose minutes or seconds are over 59."""
    g = pl.col(column).str.extract_groups(CLOCK)
    m, s = g.struct.field("2").cast(pl.Int64), g.struct.field("3").cast(pl.Int64)
    bad = cells.select("__line", pl.col(column).alias("v"), m.alias("m"), s.alias("s")).filter(
        (pl.col("m") > 59) | (pl.col("s").fill_null(0) > 59))
    return [(line, v.strip(), f"{mm} minutes" if mm > 59 else f"{ss} seconds") for line, v, mm, ss in bad.iter_rows()]


def written_so(cells: pl.DataFrame, column: str) -> list[tuple[int, str]]:
    """(line, cell) of the cells of ``column`` written as hours and minutes."""
    hit = cells.select("__line", pl.col(column).alias("v")).filter(pl.col("v").str.contains(CLOCK))
    return [(line, v.strip()) for line, v in hit.iter_rows()]


def hint(field: str, profile: str) -> str:
    """What an hours column written as hours and minutes needs, in the words of a reject."""
    return (f"written as hours and minutes (H:MM); profile '{profile}' does not say so: "
            f"write units: {{{field}: h:mm}} in the profile")


__all__ = ["CLOCK", "UNITS", "hint", "hours_minutes", "out_of_range", "written_so"]
