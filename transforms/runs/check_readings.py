"""What the employer's check says of how its submission was read (``impcredit check``; issue 36,
part 4): every header read though it differs from the layout's words (``gross_wag#es`` read as
``gross_wages``), every value read leniently (a ``$`` after the number, parentheses read as a
negative amount, a date with a two-digit year...): what was written, where, and what it was read as;
and, for each line of the roster and of the applications, the application it gives (a rejected
line's application named on the page).

The files are read again with the annual run's own reader (``ingest.read.tables.read_tables``, the
layout that reads each, its ``payroll/files.csv`` context), nothing validated and nothing kept.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms import schema

# a number as the canonical layout writes it: nothing to say of it
PLAIN_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)$"
NUMERIC = {"payroll": ("hours", "gross_wages", "employer_taxes"), "roster": tuple(schema.DECLARED)}
DATES = {"payroll": ("period_start", "period_end", "pay_date")}


@dataclass(frozen=True)
class Reading:
    """One way a column was read that differs from the layout's own words or formats."""
    file: str  # as the rejects name it (a workbook's sheet in brackets)
    column: str  # the header as written
    words: str  # what was read and how, in one sentence


def _where(rel: str, sheet: str | None) -> str:
    return f"{rel}[{sheet}]" if sheet else rel


def _number(v: float) -> str:
    text = f"{v:,.6f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def _names(alias, header: str) -> bool:
    """Whether the layout's alias names this header: a word as written, or a column named by its
    section or its position (``{header: Amount, section: ...}``, ``{column: 1}``: the layout's own
    choice of this column, whatever its header reads)."""
    said = " ".join(header.split()).casefold()  # runs of spaces as the header matcher reads them
    if isinstance(alias, str):
        return said == " ".join(alias.split()).casefold()
    return alias.header is None or said == " ".join(alias.header.split()).casefold()


def header_readings(where: str, columns: list[tuple[str, str | None]], profile) -> list[Reading]:
    """Each header that reaches a field though it is none of the layout's words for it."""
    out = []
    for header, f in columns:
        if f is None or not header or (header.startswith(f"{f} (") and header.endswith(")")):
            continue  # a value from a block line, the file's name, its folder or files.csv: no column's header
        aliases = profile.flat.get(f, [])
        if not any(_names(a, header) for a in aliases):
            named = next((a if isinstance(a, str) else a.header for a in aliases
                          if isinstance(a, str) or a.header), f)
            out.append(Reading(where, header, f"the header \u201c{header}\u201d is read as {f} (the layout "
                                              f"\u201c{profile.name}\u201d names it \u201c{named}\u201d): "
                                              "check that this column holds it"))
    return out


def _kinds(fmt) -> dict[str, tuple[pl.Expr, str]]:
    """What makes a number's text more than a plain number, each with its words."""
    s = pl.col("text").str.strip_chars()
    syms = [re.escape(c) for c in fmt.currency if c] or [r"\$"]
    cur = "(" + "|".join(syms) + ")"
    sep = re.escape(fmt.thousands) if fmt.thousands else ","
    return {
        "currency_after": (s.str.contains(rf"\d\s*{cur}\s*\)?-?$"), "a currency sign after the number, taken off"),
        "currency_before": (s.str.contains(rf"^[(+-]?\s*{cur}"), "a currency sign before the number, taken off"),
        "currency_inside": (s.str.contains(rf"\d{cur}\d"), "a currency sign inside the number, taken off"),
        "thousands": (s.str.contains(rf"\d{sep}\d{{3}}"), "thousands separators, taken off"),
        "parentheses": (s.str.contains(r"^\(.*\)$"), "parentheses, read as a negative amount"),
        "trailing_minus": (s.str.contains(r"\d-$"), "a minus sign after the number, read as a negative amount"),
        "exponent": (s.str.contains(r"\d[eE][+-]?\d"), "an exponent (scientific notation)"),
    }


def value_readings(where: str, st, profile) -> list[Reading]:
    """The numbers and dates of ``st`` (a staged table) read leniently, one sentence per column and
    way: how many, the first line, what was written and what it was read as."""
    out = []
    for col in NUMERIC.get(st.dataset, ()):
        if col not in st.text.columns or col in profile.derived:
            continue
        both = st.text.select("__line", pl.col(col).alias("text")).join(
            st.staged.select("__line", pl.col(col).alias("value")), on="__line", how="inner")
        loose = both.filter(pl.col("value").is_not_null() & pl.col("text").is_not_null()
                            & ~pl.col("text").str.strip_chars().str.contains(PLAIN_NUMBER))
        if not loose.height:
            continue
        header = st.headers.get(col, col)
        for expr, words in _kinds(profile.number).values():
            hit = loose.filter(expr)
            if hit.height:
                first = hit.sort("__line").row(0, named=True)
                out.append(Reading(where, header, f"{hit.height:,} value{'s' if hit.height > 1 else ''} with {words}: "
                                                  f"\u201c{first['text']}\u201d (line {first['__line']}) read as "
                                                  f"{_number(first['value'])}"))
    for col in DATES.get(st.dataset, ()):
        if col in st.text.columns and col in st.staged.columns:
            out += _date_readings(where, st, col, profile)
    return out


def _date_readings(where: str, st, col: str, profile) -> list[Reading]:
    """Dates written other than as ISO or the layout's own formats (a two-digit year, a time)."""
    own = {"%Y-%m-%d", *profile.date_formats}
    both = st.text.select("__line", pl.col(col).alias("text")).join(
        st.staged.select("__line", pl.col(col).alias("value")), on="__line", how="inner").filter(
        pl.col("value").is_not_null() & pl.col("text").is_not_null())
    firsts: dict[str, tuple[int, str, dt.date, int]] = {}
    for text, group in both.group_by("text"):
        t = str(text[0]).strip()
        if any(_parses(t, f) for f in own) or re.fullmatch(r"\d{4}-\d{2}-\d{2}[ T]00:00(?::00(?:\.0+)?)?", t):
            continue  # a workbook's date cell comes as its midnight: a date, not a time of day
        kind = ("a two-digit year" if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{2}", t) else
                "a time of day after it" if re.search(r"\d[ T]\d{1,2}:\d\d", t) else "another format")
        line = int(group["__line"].min())
        n = firsts.get(kind, (0, "", None, 0))[3] + group.height
        if kind not in firsts or line < firsts[kind][0]:
            firsts[kind] = (line, t, group["value"][0], n)
        else:
            firsts[kind] = (*firsts[kind][:3], n)
    header = st.headers.get(col, col)
    return [Reading(where, header, f"{n:,} date{'s' if n > 1 else ''} written with {kind}: \u201c{t}\u201d (line {line}) "
                                   f"read as {d.strftime('%B')} {d.day}, {d.year}")
            for kind, (line, t, d, n) in sorted(firsts.items(), key=lambda kv: kv[1][0])]


def _parses(text: str, fmt: str) -> bool:
    try:
        dt.datetime.strptime(text, fmt)
    except ValueError:
        return False
    return True


def read_again(input_dir: Path, layouts=None) -> tuple[list[Reading], dict[tuple[str, int], str]]:
    """(the readings to say, (file, line) -> the application id a roster or application line gives);
    ``layouts``: the payroll profiles in effect (None: the shipped ones)."""
    from transforms.ingest.read.files import context as ctx
    from transforms.ingest.read.layouts import profile_files as pfiles
    from transforms.ingest.read.tables import discover, read_tables
    from transforms.pii import HashKey

    root = Path(input_dir)
    found = [(d, p) for d, p in discover(root) if d in ("payroll", "roster", "applications")]
    rels = [p.relative_to(root).as_posix() for _, p in found]
    contexts, _ = ctx.contexts(root, [r for (d, _), r in zip(found, rels, strict=True) if d == "payroll"])
    profiles = {p.name: p for p in (layouts or pfiles.load_profiles())}
    key = HashKey(secrets.token_bytes(32), "ephemeral")  # nothing is kept: the hashes are thrown away
    readings: list[Reading] = []
    app_of: dict[tuple[str, int], str] = {}
    for (dataset, path), rel in zip(found, rels, strict=True):
        try:
            tables, problem, _, _ = read_tables(dataset, path, rel, key, contexts.get(rel), layouts=layouts)
        except Exception:  # noqa: BLE001 - said by the ingest's own record of the file
            continue
        for st in tables if problem is None else []:
            where = _where(rel, st.sheet)
            profile = profiles.get(st.profile) if dataset == "payroll" else None
            profile = profile or pfiles.canonical_profile(dataset, layouts)
            readings += header_readings(where, st.columns, profile) + value_readings(where, st, profile)
            if "application_id" in st.text.columns:
                for line, app in st.text.select("__line", "application_id").iter_rows():
                    if app is not None and app.strip():
                        app_of[(where, int(line))] = app.strip()
    return readings, app_of
