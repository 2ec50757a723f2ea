"""A quote left open (spec section 1): a cell whose quote is not closed on its line and would
carry the lines after it into one cell makes each line it spans a line not read, never part of a cell."""

from __future__ import annotations

import csv
import io


def records(text: str, delimiter: str, reached: list[int]):
    """(first line, last line, cells, the physical lines) of every record of a delimited text, as
    the csv module reads them; ``reached[0]``: the last physical line read."""
    held: list[str] = []

    def feed():
        for ln in io.StringIO(text, newline=""):
            held.append(ln)
            yield ln

    reader = csv.reader(feed(), delimiter=delimiter, quotechar='"')
    for rec in reader:
        start = reached[0] + 1
        reached[0] = reader.line_num
        span = held[:]
        held.clear()
        yield start, reached[0], rec, span


def open_quote(rec: list[str], span: list[str], width: int, delimiter: str) -> int | None:
    """The cell of a record of several physical lines (``span``) where a quote opened and not
    closed on its line carries the lines after it into one cell (spec section 1): the record is not
    of the header's ``width`` (but for empty trailing cells), its quotes are not those of a
    well-formed cell (never closed, text after the closing quote), or a cell over several lines
    holds a line's worth of cells (as many delimiters as a line has: a second stray quote in the
    same column closed it). None for a record of one line, or a quoted cell that holds line breaks
    and less than a line of cells in a record of the right width (a note, an address)."""
    if len(span) < 2:
        return None
    multi = [i for i, c in enumerate(rec) if "\n" in c or "\r" in c]
    cells = rec[:width] if len(rec) > width and not any(c.strip() for c in rec[width:]) else rec
    if len(cells) == width and all(rec[i].count(delimiter) < max(1, width - 1) for i in multi):
        try:
            list(csv.reader(span, delimiter=delimiter, quotechar='"', strict=True))
            return None
        except csv.Error:
            pass
    return multi[0] if multi else len(rec) - 1


def unread_lines(start: int, span: list[str], column: str, delimiter: str) -> dict[int, tuple[str, list[str]]]:
    """line -> (message, cells) of each physical line of a record a quote left open spans (the line
    it opens on, and those it would carry into one cell): none of them is read."""
    end = start + len(span) - 1
    first = (f"{column}: a quote opened in this cell is not closed on its line: it would carry lines "
             f"{start + 1} to {end} into one cell; lines {start} to {end} are not read (close or remove the quote)")
    rest = f"not read: inside the quote left open in {column} on line {start} (not closed on its line)"
    return {start + i: (first if i == 0 else rest, ln.rstrip("\r\n").split(delimiter)) for i, ln in enumerate(span)}


def open_quotes(text: str, delimiter: str, header: list[str]) -> tuple[str, dict[int, tuple[str, list[str]]]]:
    """``text`` with every line a quote left open would carry into one cell made blank (so every
    reading of it passes over them), and those lines (``unread_lines``); ``header``: the cells of
    the table's header (its width, its column names)."""
    if '"' not in text:
        return text, {}
    width = len(header)
    while width and not str(header[width - 1] or "").strip():
        width -= 1
    unread: dict[int, tuple[str, list[str]]] = {}
    try:
        for start, end, rec, span in records(text, delimiter, [0]):
            if end > start and (col := open_quote(rec, span, width, delimiter)) is not None:
                name = str(header[col]).strip() if col < width else f"column {col + 1}"
                unread.update(unread_lines(start, span, name, delimiter))
    except csv.Error:
        return text, {}
    if not unread:
        return text, {}
    out = []
    for i, ln in enumerate(io.StringIO(text, newline=""), start=1):
        out.append(ln[len(ln.rstrip("\r\n")):] if i in unread else ln)
    return "".join(out), unread
