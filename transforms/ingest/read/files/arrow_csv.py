"""A spreadsheet's CSV read by Arrow's CSV reader: quotes around any cell, the delimiter inside
them, ``""`` for a quote, CRLF (what Excel's "Save As CSV" writes), where that gives exactly what
the csv module's reading gives (``readers.read_delimited``): a property test holds them equal."""

from __future__ import annotations

import csv
import io

import polars as pl

from transforms.ingest.read.files import bytecount
from transforms.ingest.read.files.readers import _PY_WHITESPACE, RawTable


def read_delimited_arrow(data: bytes, text: str, enc: str, delimiter: str) -> RawTable | None:
    """``read_delimited(text, delimiter)`` done by Arrow's CSV reader (quotes around any cell, a
    delimiter inside them, ``""`` for a quote: a spreadsheet's CSV), ``data`` being ``text``'s bytes
    in ``enc``; None unless that is exactly the csv module's result: every record one line, every
    line of the header's width (a blank line, a line of another width, a quoted cell holding a
    newline: the csv route decides)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    raw = data if enc in ("utf-8", "utf-8-sig") else text.encode("utf-8")
    if bytecount.lone_cr(raw):
        return None
    reader = csv.reader(io.StringIO(text[:1 << 16], newline=""), delimiter=delimiter)
    try:
        head = next(reader, None)
    except csv.Error:
        return None
    if not head or reader.line_num != 1 or len(head) < 2 or not any(c.strip() for c in head):
        return None  # the header one line, of two cells or more
    headers = [c.strip() for c in head]
    headers[0] = headers[0].lstrip("\ufeff")
    n = len(headers)
    names = [f"c{i}" for i in range(n)]
    bad: list = []
    try:
        table = pacsv.read_csv(
            pa.py_buffer(raw),
            read_options=pacsv.ReadOptions(skip_rows=1, column_names=names, encoding="utf8"),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char='"', double_quote=True,
                                             newlines_in_values=False, ignore_empty_lines=False,
                                             invalid_row_handler=lambda row: (bad.append(row), "skip")[1]),
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), null_values=[],
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        return None
    lines = bytecount.count(raw, b"\n") + (0 if raw.endswith(b"\n") else 1)
    if bad or table.num_rows != lines - 1:
        return None
    frame = pl.from_arrow(table).with_row_index("__line", offset=2).with_columns(pl.col("__line").cast(pl.Int64))
    def empty(c: str) -> pl.Expr:
        return pl.col(c).str.strip_chars(_PY_WHITESPACE) == ""

    # a blank record (only whitespace cells) is no row: looked for where the first cell is blank,
    # and the frame filtered (a copy of every column) only when there is one
    if frame.select(empty(names[0]).any()).item():
        blank = frame.select(pl.all_horizontal([empty(c) for c in names])).to_series()
        if blank.any():
            frame = frame.filter(~blank)
    frame = frame.select(*names, "__line")
    return RawTable(headers, 1, frame, [], delimiter=delimiter)
