"""Nothing that looks like data is skipped in silence (spec section 1, "What the employer declares,
and what was read").

A sheet, or a run of lines, that no layout reads is passed over only when it holds no table of
figures: a report's cover (title, company, criteria), a notes sheet, title lines above a header.
One that holds a table of figures makes its file not read whole: its lines are rejected
(``unread_table``), and those rejected lines, whose employer cannot be read, hold every
application of the employers the file names (spec section 7).

A **figure** is a cell that reads as a number: an amount or a count as people and spreadsheets
write it (``1,234.56``, ``$80.00``, ``(12.50)``, ``-3``, ``7.667``); a date, a percentage, a code
with letters is not one. A **table of figures** is
- at least ``LINES`` (3) lines holding at least ``PER_LINE`` (2) figures each (a table with two
  employees across the top has two figures a line), or,
- on a sheet that no layout reads, also a column of at least ``COLUMN_LINES`` (4) figures, each
  beside a label on its left (a table whose items run down the side and that holds one employee's
  or one check's column).

A cover with a figure here and there (a company code, a run date, a count of employees) is none.
The detection runs only on what no layout read: a sheet no profile reads, the lines above a header.
"""

from __future__ import annotations

import re

from transforms.ingest.read.files import readers as rd

PER_LINE = 2
LINES = 3
COLUMN_LINES = 4

_NUMBER = re.compile(r"[-+]?\(?[-+]?\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?\)?-?|[-+]?\$?\.\d+")
Records = list[tuple[int, list[str | None]]]


def figure(cell: str | None) -> bool:
    """Whether a cell reads as a number (an amount, hours, a count)."""
    if cell is None:
        return False
    t = cell.strip()
    return bool(t) and len(t) < 40 and any(ch.isdigit() for ch in t) and _NUMBER.fullmatch(t) is not None


def _count(cells: list[str | None]) -> int:
    return sum(1 for c in cells if figure(c))


def table_of_figures(records: Records, *, columns: bool = False) -> bool:
    """Whether ``records`` hold a table of figures (see the module's docstring); ``columns``: a
    column of figures beside their labels counts too (a sheet that no layout reads)."""
    if sum(1 for _, cells in records if _count(cells) >= PER_LINE) >= LINES:
        return True
    if not columns:
        return False
    per_column: dict[int, int] = {}
    for _, cells in records:
        labelled = False
        for i, c in enumerate(cells):
            if figure(c):
                if labelled:
                    per_column[i] = per_column.get(i, 0) + 1
            elif c is not None and c.strip():
                labelled = True
    return any(n >= COLUMN_LINES for n in per_column.values())


def run_of_figures(records: Records) -> tuple[int, int] | None:
    """(first, last) index of the run of ``records`` (the lines above a header) from the first to
    the last line holding ``PER_LINE`` figures, when at least ``LINES`` lines do, with the line
    just above it when that line names its columns (``PER_LINE`` cells or more, no figure); else
    None."""
    rows = [i for i, (_, cells) in enumerate(records) if _count(cells) >= PER_LINE]
    if len(rows) < LINES:
        return None
    first = rows[0]
    if first > 0 and sum(1 for c in records[first - 1][1] if c is not None and c.strip()) >= PER_LINE:
        first -= 1
    return first, rows[-1]


def letters(i: int) -> str:
    """A column's letters as a spreadsheet names them (0 -> A, 26 -> AA)."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


def lines_table(records: Records, *, sheet: str | None = None, delimiter: str | None = None) -> rd.RawTable:
    """Every one of ``records`` as a row of a table (no header: its columns named A, B, C ...),
    to reject and quarantine whole."""
    width = max((len(cells) for _, cells in records), default=0)
    head = (0, [letters(i) for i in range(width)])
    rows = [(line, list(cells) + [None] * (width - len(cells))) for line, cells in records]
    table = rd.table_from_records([head, *rows], sheet=sheet)
    table.delimiter = delimiter
    return table


def span(records: Records) -> str:
    """``lines 3-14`` (or ``line 3``) of records."""
    first, last = records[0][0], records[-1][0]
    return f"line {first}" if first == last else f"lines {first}-{last}"


def unread_message(records: Records, sheet: str | None, header_line: int | None = None) -> str:
    """The one line of an unread table: where it is, and that the file is not read whole."""
    where = (f"sheet '{sheet}' " if sheet else "") + span(records)
    above = f" (above the header on line {header_line})" if header_line is not None else ""
    return f"{where}{above} hold a table of figures that no layout reads: the file is not read whole"


__all__ = ["COLUMN_LINES", "LINES", "PER_LINE", "figure", "letters", "lines_table", "run_of_figures", "span",
           "table_of_figures", "unread_message"]
