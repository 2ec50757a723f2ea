"""The bounds of what is read of one file (issue 43): a line of a delimited file longer than
``max_line_bytes`` is found before any parser sees the file, in time and memory proportional to
the limit (a header line that long: the file is refused; a data line: that line is rejected,
blanked for the parsers), and a workbook whose sheet XML is over ``max_sheet_mb`` is refused before
calamine reads it."""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from pathlib import Path

from transforms.options import MAX_LINE_BYTES, MAX_SHEET_MB

_COUNT_STEP = 1 << 24  # bytes counted at a time (the line number of a long line)


@dataclass(frozen=True)
class Limits:
    """What one file may hold: bytes of a line, MB of a workbook sheet's XML (uncompressed)."""

    max_line_bytes: int = MAX_LINE_BYTES
    max_sheet_mb: float = MAX_SHEET_MB


@dataclass
class LongLines:
    """The lines of a file over the limit: (line, start, end) of each (``end`` before its line
    break), and whether the first of them is the file's first non-blank line (its header)."""

    limit: int
    lines: list[tuple[int, int, int]] = field(default_factory=list)
    header: bool = False

    def message(self, line: int) -> str:
        return f"line {line} is longer than {self.limit:,} bytes (setting max_line_bytes): it is not read"


def _break_before(mm, pos: int) -> int:
    """The offset just after the last line break before ``pos`` (0: none)."""
    return max(mm.rfind(b"\n", 0, pos), mm.rfind(b"\r", 0, pos)) + 1


def _break_after(mm, pos: int, until: int) -> int:
    """The offset of the first line break in ``pos:until`` (``until``: none)."""
    found = [i for i in (mm.find(b"\n", pos, until), mm.find(b"\r", pos, until)) if i >= 0]
    return min(found) if found else until


def _line_number(mm, start: int) -> int:
    """The physical line starting at ``start``: LF, CRLF and a lone CR each end one (counted a
    piece at a time: memory bounded)."""
    n, pos = 1, 0
    while pos < start:
        piece = mm[pos:min(start, pos + _COUNT_STEP) + 1]  # one byte more: a CRLF across the cut
        body = piece[:min(start, pos + _COUNT_STEP) - pos]
        n += body.count(b"\n") + body.count(b"\r") - piece.count(b"\r\n")
        pos += len(body)
    return n


def long_lines(path: Path, limit: int, *, first_only: bool = False) -> LongLines:
    """The lines of ``path`` longer than ``limit`` bytes, found without reading the file into
    memory: every window of ``limit // 2`` bytes at a step of ``limit // 2`` holds a line break
    unless a line is about that long, so a file of short lines costs about two ``find`` calls per
    ``limit`` bytes (its pages are read once); a window without one is measured exactly.
    ``first_only``: stop at the first found."""
    out = LongLines(limit)
    size = path.stat().st_size
    if size <= limit:
        return out
    half = max(1, limit // 2)
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = 0
        while pos < size:
            end = min(size, pos + half)
            if mm.find(b"\n", pos, end) >= 0 or mm.find(b"\r", pos, end) >= 0:
                pos = end
                continue
            start = _break_before(mm, pos)
            stop = _break_after(mm, end, min(size, start + limit + 1))  # no further than the limit
            if stop - start > limit:
                if not out.lines:
                    out.header = not mm[:start].strip() if start <= limit else _blank_until(mm, start)
                if first_only or out.header:  # refused: the line's end is not looked for
                    out.lines.append((_line_number(mm, start), start, stop))
                    break
                stop = _break_after(mm, stop, size)
                out.lines.append((_line_number(mm, start), start, stop))
            pos = stop
    return out


def _blank_until(mm, start: int) -> bool:
    """Whether every byte before ``start`` is whitespace (read a piece at a time)."""
    pos = 0
    while pos < start:
        if mm[pos:min(start, pos + _COUNT_STEP)].strip():
            return False
        pos += _COUNT_STEP
    return True


def has_long_line(path: Path, limit: int) -> bool:
    """Whether a line of ``path`` is longer than ``limit`` bytes (the fast routes then leave the
    file to ``read_tables``)."""
    return bool(long_lines(path, limit, first_only=True).lines)


def read_blanked(path: Path, found: LongLines) -> bytes:
    """The file's bytes with each long line's bytes left out (its line break kept: a blank line,
    which no reader takes for a record, so every other line keeps its number)."""
    parts, pos = [], 0
    with path.open("rb") as fh:
        for _, start, end in found.lines:
            parts.append(fh.read(start - pos))
            fh.seek(end)
            pos = end
        parts.append(fh.read())
    return b"".join(parts)


def sheet_too_large(path: Path, max_mb: float) -> str | None:
    """The one-line refusal of an .xlsx/.xlsm whose sheet (or shared strings) XML is over
    ``max_mb`` MB uncompressed, as the zip's directory declares it (nothing is inflated); None when
    within the budget or not a zip (calamine then says what it is)."""
    import zipfile

    from transforms.ingest.read.files import workbooks as wbk

    budget = int(max_mb * 2**20)
    try:
        with zipfile.ZipFile(path) as z:
            sizes = {i.filename: i.file_size for i in z.infolist()}
            try:
                members = {m: n for n, m in wbk._sheet_members(z).items()}
            except KeyError:
                members = {}
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    for member, size in sizes.items():
        is_sheet = member.startswith("xl/worksheets/") and member.endswith(".xml")
        if (is_sheet or member == "xl/sharedStrings.xml") and size > budget:
            what = f"sheet {members[member]!r}" if member in members else member
            return (f"{what} is {size / 2**20:,.0f} MB of XML uncompressed, over the limit of "
                    f"{max_mb:,.0f} MB (setting max_sheet_mb): the workbook is not read")
    return None
