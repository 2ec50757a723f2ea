"""Reading submitted files as text, with the physical line of every record.

CSV (and delimited .txt) files are parsed with the standard ``csv`` module, which reports the
physical line reached after each record, so a record whose quoted field holds newlines is given
the line it *starts* on (header = line 1). Records with the wrong number of fields are kept
aside as ragged rows (rejected one by one, never dropped). Fully blank lines are not records.
``read_delimited_fast`` gives the same table through Polars' CSV reader when the file is simple
enough for that to be exact (every line one record; quotes only around whole cells).

Workbooks (.xlsx, .xls) are read with calamine (fastexcel): values, not formulas, from the cells
they store; every sheet is a list of records whose line is the spreadsheet row number.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field

import polars as pl

from transforms.ingest.read.files import bytecount
from transforms.ingest.read.files.mixed_text import decode_mixed
from transforms.ingest.read.files.quotes import open_quote, records, unread_lines

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
    # line -> (message, cells): the lines a quote left open would carry into one cell, not read
    unread: dict[int, tuple[str, list[str]]] = field(default_factory=dict)

    @property
    def rows_read(self) -> int:
        return self.frame.height + len(self.ragged)


def decode(data: bytes, encodings: list[str]) -> tuple[str, str]:
    """Decode with the first encoding that fits; a byte-order mark decides when present."""
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            if (mixed := decode_mixed(data[3:], [e for e in encodings if _codec(e) != "utf-8"])) is not None:
                return mixed
            raise FileUnreadable("encoding", "starts with a UTF-8 byte-order mark but is not valid UTF-8") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise FileUnreadable("encoding", "starts with a UTF-16 byte-order mark but is not valid UTF-16") from None
    for i, enc in enumerate(encodings):
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            # a UTF-8 file with a few lines that are not: those lines in the next encoding, named
            if _codec(enc) == "utf-8" and (mixed := decode_mixed(data, encodings[i + 1:])) is not None:
                return mixed
            continue
    raise FileUnreadable("encoding", f"cannot be decoded as {' or '.join(encodings)}")


def _codec(enc: str) -> str | None:
    try:
        return codecs.lookup(enc).name
    except LookupError:
        return None


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
    headers: list[str] | None = None
    header_line = 0
    rows: list[list[str | None]] = []
    lines: list[int] = []
    ragged: list[tuple[int, list[str]]] = []
    unread: dict[int, tuple[str, list[str]]] = {}
    reached = [0]
    try:
        for start, end, rec, span in records(text, delimiter, reached):
            if not rec or not any(c.strip() for c in rec):
                continue
            if headers is None:
                headers = [c.strip() for c in rec]
                if headers:
                    headers[0] = headers[0].lstrip("\ufeff")
                header_line = start
                continue
            if end > start and (col := open_quote(rec, span, len(headers), delimiter)) is not None:
                unread.update(unread_lines(start, span, headers[col] if col < len(headers) else f"column {col + 1}",
                                            delimiter))
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
        raise FileUnreadable("unreadable", f"not a readable delimited file near line {reached[0] + 1}: {exc}") from None
    if headers is None:
        raise FileUnreadable("empty_file", "the file is empty (no header line)")
    return RawTable(headers, header_line, _table(headers, header_line, rows, lines), ragged, delimiter=delimiter,
                    unread=unread)


# --- fast path -----------------------------------------------------------------------------------

# the characters str.strip() removes (str.isspace); none lies above U+3000
_PY_WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
# codecs under which ASCII bytes decode to the same ASCII text
_ASCII_SAFE = frozenset({"utf-8", "utf-8-sig", "ascii", "iso8859-1", "iso8859-15", "cp1252"})
# codecs that decode BOM-less valid UTF-8 exactly as UTF-8
_UTF8 = frozenset({"utf-8", "utf-8-sig"})


def _fast_encoding(data: bytes, encodings: list[str]) -> str | None:
    """The encoding ``decode`` reports, when the text it gives is ``data`` read as UTF-8; else None."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    ascii_only = data.isascii()
    if not ascii_only:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if not encodings:
        return None
    try:
        name = codecs.lookup(encodings[0]).name
    except LookupError:
        return None
    return encodings[0] if name in (_ASCII_SAFE if ascii_only else _UTF8) else None


def read_delimited_fast(data: bytes, delimiter: str, encodings: list[str]) -> tuple[RawTable, str] | None:
    """``decode`` then ``read_delimited``, done by Polars' CSV reader; None unless the file is simple.

    Simple (all checked on the bytes, or on what Polars read): the text is the bytes read as UTF-8
    (ASCII under an ASCII-compatible first encoding, or UTF-8 under a UTF-8 first encoding, or a
    UTF-8 BOM, no other U+FEFF); no NUL byte; every CR is part of a CRLF; no empty line (nor a
    leading one); the first line is a non-blank header; every line has exactly the header's
    number of delimiters; every ``"`` is one of the two enclosing a whole cell (``"..."``, nothing
    before or after, no ``"`` inside: exports that quote every field or every text field); no
    record is blank (only whitespace cells). Then each record is one physical line and the csv
    module would split it on the delimiter alone, as Polars does, and take the quotes off.
    The result equals ``read_delimited(*decode(...))`` with the encoding ``decode`` reports.
    """
    c = _check_bytes(data, delimiter, encodings)
    return None if c is None else _read_checked(data, c, delimiter)


def _read_checked(data: bytes, c: _Checked, delimiter: str) -> tuple[RawTable, str] | None:
    """``read_delimited_fast`` of a file whose byte checks gave ``c``."""
    if c.n_lines == 1:
        return (RawTable(c.headers, 1, _table(c.headers, 1, [], []), [], delimiter=delimiter), c.enc) if c.quotes == 2 * c.enclosed else None
    frame = _read_rows(data[c.body:], delimiter, c.n)
    if frame is None or frame.height != c.n_lines - 1:
        return None
    frame = _finish(frame.with_columns(pl.col("__line") + 2), c)
    return None if frame is None else (RawTable(c.headers, 1, frame, [], delimiter=delimiter), c.enc)


def read_delimited_fast_many(datas: list[bytes], delimiter: str, encodings: list[str]) -> list[tuple[RawTable, str] | None]:
    """``[read_delimited_fast(d, delimiter, encodings) for d in datas]``, with one call of Polars'
    reader for all the files of a number of columns (about 0.5 ms a call: a submission of 20,000
    employer files spent 20 s calling it). The byte checks are each file's; the rows of each
    file are a slice of the joint read (every line is one record, so reading the files' rows one
    after another gives each file's rows)."""
    out: list[tuple[RawTable, str] | None] = [None] * len(datas)
    joint: dict[int, list[tuple[int, _Checked]]] = {}
    for i, data in enumerate(datas):
        c = _check_bytes(data, delimiter, encodings)
        if c is None:
            continue
        if c.n_lines == 1 or not data.endswith(b"\n"):  # no rows, or a last line without newline
            out[i] = _read_checked(data, c, delimiter)
        else:
            joint.setdefault(c.n, []).append((i, c))
    for n, group in joint.items():
        rows = [c.n_lines - 1 for _, c in group]
        frame = _read_rows(b"".join(datas[i][c.body:] for i, c in group), delimiter, n) if len(group) > 1 else None
        if frame is None or frame.height != sum(rows):
            for i, c in group:
                out[i] = _read_checked(datas[i], c, delimiter)
            continue
        # each file's physical lines (2, 3, ...), and its checks only where the joint frame needs them
        frame = frame.with_columns(pl.int_ranges(pl.Series(rows, dtype=pl.Int64)).explode().alias("__line") + 2)
        blank0 = frame.select((pl.col("c0").str.strip_chars(_PY_WHITESPACE) == "").any()).item()
        offset = 0
        for (i, c), k in zip(group, rows, strict=True):
            part = frame.slice(offset, k)
            offset += k
            if c.quotes or blank0:
                part = _finish(part, c)
            out[i] = None if part is None else (RawTable(c.headers, 1, part, [], delimiter=delimiter), c.enc)
    return out


@dataclass
class _Checked:
    """What the byte checks of ``read_delimited_fast`` found in a file."""

    headers: list[str]
    enc: str
    n: int  # columns
    n_lines: int  # lines, the header's included
    quotes: int  # '"' in the file
    enclosed: int  # header cells enclosed in quotes
    body: int  # the offset of the first row (after the header line)


def _check_bytes(data: bytes, delimiter: str, encodings: list[str]) -> _Checked | None:
    """The checks of ``read_delimited_fast`` made on the bytes; None when one fails."""
    if len(delimiter) != 1 or not delimiter.isascii() or delimiter in '\r\n"\x00':
        return None
    if b"\x00" in data:
        return None
    quotes = bytecount.count(data, b'"') if b'"' in data else 0  # (a search stops at the first; a count reads every byte)
    enc = _fast_encoding(data, encodings)
    if enc is None:
        return None
    start = 3 if enc == "utf-8-sig" else 0
    if not data.isascii() and data.find(b"\xef\xbb\xbf", start) >= 0:
        return None  # Polars drops a BOM opening the rows it reads; any other BOM is kept out too
    if bytecount.lone_cr(data):
        return None  # a lone CR ends a line for the csv module, not for Polars
    end = data.find(b"\n", start)
    header_text = data[start:] if end < 0 else data[start:end]
    cells = header_text.decode("utf-8").removesuffix("\r").split(delimiter)
    enclosed = sum(_enclosed(c) for c in cells) if quotes else 0
    if quotes:
        if any(c.count('"') != 2 * _enclosed(c) for c in cells):
            return None
        cells = [c[1:-1] if _enclosed(c) else c for c in cells]
    headers = [c.strip() for c in cells]
    if not any(headers):
        return None
    headers[0] = headers[0].lstrip("\ufeff")
    n = len(headers)
    if n == 1 and (b"\n\n" in data or b"\n\r\n" in data):
        return None  # an empty line (with n > 1 it would lack delimiters)
    d = delimiter.encode("ascii")
    if any(line.count(d) != n - 1 for line in data[end + 1:end + 1 + (1 << 16)].split(b"\n")[:-1]):
        return None  # a line of another width among the first (a cell holding the delimiter): said early
    n_lines = bytecount.count(data, b"\n") + (0 if data.endswith(b"\n") else 1)
    if bytecount.count(data, d) != (n - 1) * n_lines:
        return None  # with Polars refusing longer lines below, every line has n - 1 delimiters
    if not data.endswith(b"\n") and data[data.rfind(b"\n") + 1:].count(d) != n - 1:
        return None  # Polars drops a delimiter ending a last line that has no newline
    return _Checked(headers, enc, n, n_lines, quotes, enclosed, len(data) if end < 0 else end + 1)


def _read_rows(rows: bytes, delimiter: str, n: int) -> pl.DataFrame | None:
    """Polars' reader over rows without a header: ``c0..c<n-1>`` as text and ``__line`` from 0."""
    schema = {f"c{i}": pl.String for i in range(n)}
    try:
        frame = pl.read_csv(
            rows, has_header=False, separator=delimiter, quote_char=None,
            schema=schema, infer_schema=False, empty_string_is_null=False, null_values=None,
            comment_prefix=None, truncate_ragged_lines=False, raise_if_empty=True,
            row_index_name="__line",
        )
    except (pl.exceptions.PolarsError, ValueError):
        return None
    if frame.columns != ["__line", *schema]:
        return None
    return frame.select(*schema, pl.col("__line").cast(pl.Int64))


def _finish(frame: pl.DataFrame, c: _Checked) -> pl.DataFrame | None:
    """The checks of ``read_delimited_fast`` made on the rows Polars read (quotes, blank records),
    and the quotes taken off; None when one fails."""
    cols = [f"c{i}" for i in range(c.n)]
    if c.quotes:
        # each cell has at least two quotes when it is enclosed, so the file's quotes number
        # twice the enclosed cells exactly when no other quote is anywhere
        q = '"'
        body = frame.select(pl.sum_horizontal(
            (pl.col(x).str.starts_with(q) & pl.col(x).str.ends_with(q) & (pl.col(x).str.len_bytes() >= 2)).sum() for x in cols
        )).item()
        if c.quotes != 2 * (c.enclosed + body):
            return None
        frame = frame.with_columns(pl.col(x).str.strip_prefix(q).str.strip_suffix(q) for x in cols)
    blank0 = pl.col("c0").str.strip_chars(_PY_WHITESPACE) == ""
    if frame.select(blank0.any()).item():
        blank = pl.all_horizontal([pl.col(x).str.strip_chars(_PY_WHITESPACE) == "" for x in cols])
        if frame.select(blank.any()).item():
            return None  # a blank record: the csv route skips it
    return frame


def _enclosed(cell: str) -> bool:
    """A cell enclosed in quotes: ``"..."`` (at least the two quotes)."""
    return len(cell) >= 2 and cell[0] == '"' and cell[-1] == '"'


def delimited_records(text: str, delimiter: str, limit: int | None = None) -> list[tuple[int, list[str]]]:
    """Every non-blank record of a delimited text with the physical line it starts on (the first
    ``limit`` of them when given): a report's lines, before its header is known."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"')
    out: list[tuple[int, list[str]]] = []
    prev = 0
    try:
        for rec in reader:
            start = prev + 1
            prev = reader.line_num
            if rec and any(c.strip() for c in rec):
                out.append((start, rec))
                if limit is not None and len(out) >= limit:
                    break
    except csv.Error as exc:
        raise FileUnreadable("unreadable", f"not a readable delimited file near line {prev + 1}: {exc}") from None
    if out:
        out[0][1][0] = out[0][1][0].lstrip("\ufeff")
    return out


def table_from_records(records: list[tuple[int, list[str | None]]], *, sheet: str | None = None,
                       delimiter: str | None = None) -> RawTable:
    """A table whose header is the first of ``records`` (line, cells) and whose rows are the
    others: a record longer than the header (but for empty trailing cells) is ragged, a shorter
    one is padded with empty cells in a workbook and ragged in a delimited file."""
    (header_line, head), rest = records[0], records[1:]
    head = list(head)
    while head and (head[-1] is None or not str(head[-1]).strip()):
        head.pop()
    headers = [(c or "").strip() for c in head]
    n = len(headers)
    rows: list[list[str | None]] = []
    lines: list[int] = []
    ragged: list[tuple[int, list[str]]] = []
    for line, cells in rest:
        if len(cells) < n and delimiter is None:
            cells = list(cells) + [None] * (n - len(cells))
        if len(cells) != n:
            if len(cells) > n and not any(c is not None and str(c).strip() for c in cells[n:]):
                cells = cells[:n]
            else:
                ragged.append((line, [c or "" for c in cells]))
                continue
        rows.append(list(cells))
        lines.append(line)
    return RawTable(headers, header_line, _table(headers, header_line, rows, lines), ragged, sheet=sheet,
                    delimiter=delimiter)
