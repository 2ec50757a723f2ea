"""The lists and tables the commands print, for people and for pipes: ``--format table|csv|json``.

- ``table`` (the default): on a terminal, the table is fitted to the terminal's width by wrapping
  cells between words, never inside one (an id, an amount, a date, a year is whole), or between
  cells: its columns in parts, one under the other, the first column repeated in each; when even
  that cannot hold a word, as wide as its content (the line runs long). Piped or redirected (stdout not a terminal), the table is as wide as its content: no cell is
  wrapped or cut, so an id, a path, a date or a year is always whole on its line, and the title
  is a line of its own above it.
- ``csv``: a header line, then one line per row (the csv module: RFC 4180 quoting, ``\\n`` line
  ends). Values are plain text: dates and instants ISO (instants in UTC, ``Z``), amounts as the
  column holds them (``1056.27``, no ``$`` or thousands separator), ``yes``/``no``, nothing for
  an empty value, a list of plain values joined with ``;`` and anything nested as its JSON text.
- ``json``: one document, a list of objects (an object for a single record), every record with
  the same keys in the command's order (``null`` where a value does not apply).

csv and json are written to stdout as they are, never through rich (which would wrap them)."""

from __future__ import annotations

import copy
import csv
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import PurePath
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from flows.cli import common

FORMATS = ("table", "csv", "json")
FORMAT_HELP = ("table, csv or json. table: for people; piped or redirected, as wide as its content (ids, paths and "
               "dates never wrapped or cut). csv: a header line and a line per row (RFC 4180 quoting; dates ISO, "
               "amounts plain). json: one document.")


def _check_format(value: str) -> str:
    if value not in FORMATS:
        common.fail(f"--format must be table, csv or json, not {value!r}")
    return value


Format = Annotated[str, typer.Option("--format", help=FORMAT_HELP, metavar="table|csv|json", callback=_check_format)]


def money(dollars: float | int | None) -> Decimal | None:
    """An amount in dollars as the outputs write it: two decimals (csv ``0.00``, json ``0.0``)."""
    return None if dollars is None else Decimal(f"{dollars:.2f}")


def utc(instant: dt.datetime | None) -> str | None:
    """A ledger instant (naive, UTC) as ISO 8601 with its zone: ``2026-12-03T13:50:57.510896Z``."""
    if instant is None:
        return None
    if instant.tzinfo is not None:
        instant = instant.astimezone(dt.UTC).replace(tzinfo=None)
    return instant.isoformat() + "Z"


def _json_value(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dt.date | dt.datetime):
        return v.isoformat()
    if isinstance(v, PurePath):
        return str(v)
    raise TypeError(f"not JSON: {type(v).__name__}")


def _nested(v: Any) -> bool:
    return isinstance(v, dict) or (isinstance(v, list | tuple) and any(isinstance(x, dict | list | tuple) for x in v))


def cell(v: Any) -> str:
    """One csv value as plain text (see the module's docstring)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if _nested(v):
        return json.dumps(v, default=_json_value, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return ";".join(cell(x) for x in v)
    if isinstance(v, dt.date | dt.datetime):
        return v.isoformat()
    return str(v)


def _records(keys: list[str], records: Iterable[dict]) -> list[dict]:
    return [{k: r.get(k) for k in keys} for r in records]


def write_csv(keys: list[str], records: Iterable[dict]) -> None:
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(keys)
    for r in _records(keys, records):
        w.writerow([cell(r[k]) for k in keys])
    sys.stdout.flush()


def write_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=_json_value) + "\n")
    sys.stdout.flush()


def machine(fmt: str, keys: list[str], records: list[dict] | dict) -> bool:
    """Write ``records`` (a dict: one record) as csv or json when ``fmt`` asks for one; False
    for ``table`` (the command prints its own)."""
    if fmt == "table":
        return False
    one = isinstance(records, dict)
    rows = _records(keys, [records] if one else records)
    if fmt == "csv":
        write_csv(keys, rows)
    else:
        write_json(rows[0] if one else rows)
    return True


@dataclass(frozen=True)
class Col:
    """A column of a table: its header, the text of each row's cell (the record's ``key`` by
    default) and how rich lays it out on a terminal."""

    header: str
    key: str | None = None
    text: Callable[[dict], str] | None = None
    justify: str = "left"
    no_wrap: bool = False
    overflow: str = "fold"

    def of(self, record: dict) -> Text:
        if self.text is not None:
            value = self.text(record)
        else:
            value = cell(record.get(self.key or self.header))
        return value if isinstance(value, Text) else Text(value)  # text, never markup: ids may hold [...]


def table(cols: list[Col], records: Iterable[dict], **options) -> Table:
    t = Table(**options)
    for c in cols:
        t.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, overflow=c.overflow)
    for r in records:
        t.add_row(*(c.of(r) for c in cols))
    return t


def _widths(console: Console, t: Table) -> list[int] | None:
    """The widths (padding included) that fit ``t`` to the terminal's width without splitting a
    word of any cell (an id, an amount, a date, a year): the columns with the most room give way
    first, each down to its longest word (a ``no_wrap`` column not at all); None when even that
    does not fit."""
    wide = console.options.update_width(1_000_000)
    ranges = [t._measure_column(console, wide, c) for c in t.columns]
    widths = [r.maximum for r in ranges]
    least = [r.maximum if c.no_wrap else r.minimum for r, c in zip(ranges, t.columns, strict=True)]
    budget = console.options.max_width - t._extra_width
    if sum(least) > budget:
        return None
    for _ in range(max(sum(widths) - budget, 0)):
        i = max(range(len(widths)), key=lambda k: widths[k] - least[k])
        widths[i] -= 1
    return widths


def _part(t: Table, columns: list, title) -> Table:
    """A table of some of ``t``'s columns (the same rows and options)."""
    part = copy.copy(t)
    part.title, part.columns = title, [copy.copy(c) for c in columns]
    for i, c in enumerate(part.columns):
        c._index = i
    return part


def _fitted(console: Console, t: Table) -> list[Table] | None:
    """``t`` as tables that each fit the terminal's width without splitting a word: itself, or, when
    its columns cannot sit side by side, its columns in parts, the first (the row's id) repeated in
    each, so that a row wraps between cells; None when even a part of two columns cannot fit."""
    key, rest = t.columns[0], t.columns[1:]
    groups: list[list] = [[]]
    for c in rest:
        if groups[-1] and _widths(console, _part(t, [key, *groups[-1], c], None)) is None:
            groups.append([])
        groups[-1].append(c)
    parts = [t] if len(groups) == 1 else [_part(t, [key, *g], t.title if i == 0 else None) for i, g in enumerate(groups)]
    fitted = [(p, _widths(console, p)) for p in parts]
    if any(w is None for _, w in fitted):
        return None
    for p, widths in fitted:
        for c, w in zip(p.columns, widths, strict=True):
            c.width = w - p._get_padding_width(c._index)
    return [p for p, _ in fitted]


def print_table(console: Console, t: Table) -> None:
    """``t`` on ``console``: on a terminal, fitted to its width by wrapping between words, never
    inside one, or between cells, its columns in parts (``_fitted``); when even that cannot hold a
    word, as wide as its content (the line runs long). Anywhere else (a pipe, a file) as wide as
    its content, its title on a line of its own, so that no cell is wrapped or cut."""
    if console.is_terminal and t.columns and (parts := _fitted(console, t)) is not None:
        for i, part in enumerate(parts):
            if i:
                console.print()
            console.print(part)
        return
    title, t.title = t.title, None
    if title:
        console.print(title, soft_wrap=True, highlight=False)
    wide = Measurement.get(console, console.options.update_width(1_000_000), t).maximum
    Console(file=console.file, width=max(wide, 1), color_system=None, highlight=False).print(t)


def rule(console: Console, title: str) -> None:
    """A rule with ``title`` (text, not markup) across a terminal; elsewhere the title whole on its line."""
    if console.is_terminal:
        console.rule(Text(title))
    else:
        console.print(Text(f"── {title} ──"), soft_wrap=True)


def show(fmt: str, keys: list[str], records: list[dict], cols: list[Col], *, console: Console | None = None,
         **options) -> None:
    """A list command's output: csv or json of ``records`` (``keys``), or the table of ``cols``."""
    if machine(fmt, keys, records):
        return
    print_table(console or common.console, table(cols, records, **options))
