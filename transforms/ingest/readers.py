"""Reading submitted files as text, with the physical line of every record.

CSV (and delimited .txt) files are parsed with the standard ``csv`` module, which reports the
physical line reached after each record, so a record whose quoted field holds newlines is given
the line it *starts* on (header = line 1). Records with the wrong number of fields are kept
aside as ragged rows (rejected one by one, never dropped). Fully blank lines are not records.

Workbooks (.xlsx) are read with openpyxl (values, not formulas); every sheet is a table whose
line is the spreadsheet row number.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

csv.field_size_limit(2**31 - 1)  # huge cells are read, then rejected by rule (cell_too_long)


class FileUnreadable(ValueError):
    """The file cannot be read at all (a whole-file reject)."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass
class RawTable:
    """One table of text cells: ``c0..cN`` (strings) plus ``__line`` (physical line)."""

    headers: list[str]
    header_line: int
    frame: pl.DataFrame
    ragged: list[tuple[int, list[str]]] = field(default_factory=list)  # (line, cells)
    sheet: str | None = None
    encoding: str | None = None
    delimiter: str | None = None

    @property
    def rows_read(self) -> int:
        return self.frame.height + len(self.ragged)


def decode(data: bytes, encodings: list[str]) -> tuple[str, str]:
    """Decode with the first encoding that fits; a byte-order mark decides when present."""
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            raise FileUnreadable("encoding", "starts with a UTF-8 byte-order mark but is not valid UTF-8") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise FileUnreadable("encoding", "starts with a UTF-16 byte-order mark but is not valid UTF-16") from None
    for enc in encodings:
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            continue
    raise FileUnreadable("encoding", f"cannot be decoded as {' or '.join(encodings)}")


def sniff_header(data: bytes, delimiter: str) -> list[str]:
    """The first non-blank record of a delimited file (for profile detection)."""
    head = data[:65536]
    try:
        text, _ = decode(head, ["utf-8", "latin-1"])
    except FileUnreadable:
        text = head.decode("latin-1")
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    try:
        for rec in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            if any(c.strip() for c in rec):
                return [c.strip() for c in rec]
    except csv.Error:
        return []
    return []


def _table(headers: list[str], header_line: int, rows: list[list[str | None]], lines: list[int]) -> pl.DataFrame:
    n = len(headers)
    cols = {f"c{i}": [r[i] for r in rows] for i in range(n)}
    frame = pl.DataFrame(
        {**cols, "__line": lines},
        schema={**{f"c{i}": pl.String for i in range(n)}, "__line": pl.Int64},
    )
    return frame


def read_delimited(text: str, delimiter: str) -> RawTable:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"')
    headers: list[str] | None = None
    header_line = 0
    rows: list[list[str | None]] = []
    lines: list[int] = []
    ragged: list[tuple[int, list[str]]] = []
    prev = 0
    try:
        for rec in reader:
            start = prev + 1
            prev = reader.line_num
            if not rec or not any(c.strip() for c in rec):
                continue
            if headers is None:
                headers = [c.strip() for c in rec]
                if headers:
                    headers[0] = headers[0].lstrip("\ufeff")
                header_line = start
                continue
            if len(rec) != len(headers):
                # trailing empty cells beyond the header are tolerated (spreadsheet exports)
                if len(rec) > len(headers) and not any(c.strip() for c in rec[len(headers):]):
                    rec = rec[: len(headers)]
                else:
                    ragged.append((start, rec))
                    continue
            rows.append(rec)
            lines.append(start)
    except csv.Error as exc:
        raise FileUnreadable("unreadable", f"not a readable delimited file near line {prev + 1}: {exc}") from None
    if headers is None:
        raise FileUnreadable("empty_file", "the file is empty (no header line)")
    return RawTable(headers, header_line, _table(headers, header_line, rows, lines), ragged, delimiter=delimiter)


def _cell_text(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, dt.datetime):
        return v.date().isoformat() if v.time() == dt.time(0) else v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(v)


def read_xlsx(path: Path) -> list[RawTable]:
    """Every sheet of a workbook that has a header row (blank sheets are skipped)."""
    import openpyxl

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zip/xml errors of a damaged or mislabelled file
        raise FileUnreadable("unreadable", f"not a readable .xlsx workbook ({exc.__class__.__name__})") from None
    tables: list[RawTable] = []
    try:
        for ws in wb.worksheets:
            headers: list[str] | None = None
            header_line = 0
            rows: list[list[str | None]] = []
            lines: list[int] = []
            ragged: list[tuple[int, list[str]]] = []
            for line, values in enumerate(ws.iter_rows(values_only=True), start=1):
                cells = [_cell_text(v) for v in values]
                if not any(c is not None and c.strip() for c in cells):
                    continue
                if headers is None:
                    while cells and (cells[-1] is None or not cells[-1].strip()):
                        cells.pop()
                    headers = [(c or "").strip() for c in cells]
                    header_line = line
                    continue
                n = len(headers)
                if len(cells) < n:
                    cells = cells + [None] * (n - len(cells))
                if any(c is not None and c.strip() for c in cells[n:]):
                    ragged.append((line, [c or "" for c in cells]))
                    continue
                rows.append(cells[:n])
                lines.append(line)
            if headers is None:
                continue
            tables.append(RawTable(headers, header_line, _table(headers, header_line, rows, lines), ragged, sheet=ws.title))
    finally:
        wb.close()
    return tables
