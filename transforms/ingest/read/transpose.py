"""Transposed tables (``profile_keys.Transposed``): the items of a payroll down the side (``Regular
Hours``, ``Gross Pay``, ``Social Security`` under ``Employer Taxes``), one column per employee or
check (the employee's id or name, the period, the pay date or the check in the rows at the top,
each named in the label column). Such a table is read as if each of its columns were a line: its
label column becomes the header, each other column a row whose line is the column's number
(counted from the first column read: A is 1 in a sheet whose cells start in column A). The lines
above the table (no value beside the labels: a title, ``Pay Date: 01/06/2023``) stay lines above
the header: the preamble, or block lines that set their fields for every column. Then the header
is found and the rows read as in any other table (``header``, ``shape``, ``staging``)."""

from __future__ import annotations

from transforms.ingest.read import header as hd
from transforms.ingest.read import readers as rd

Records = list[tuple[int, list[str | None]]]


def _filled(c: str | None) -> bool:
    return c is not None and bool(c.strip())


def table_start(records: Records, label_columns: int = 1) -> int | None:
    """The index of a transposed table's first line: the first holding a value beside its labels
    (the lines above it stay lines; in the transposed records, the header's index)."""
    return next((i for i, (_, cells) in enumerate(records) if any(_filled(c) for c in cells[label_columns:])), None)


def transposed(records: Records, label_columns: int = 1) -> Records:
    """``records`` with the table's columns as lines (see the module's docstring): the lines above
    the table, the label column(s) (2: the group's above the item's, a two-row header), then one
    line per column that holds a value."""
    n = label_columns
    start = table_start(records, n)
    if start is None:
        return records
    body = records[start:]
    width = max(len(cells) for _, cells in body)
    out: Records = list(records[:start])
    for k in range(width):
        column = [cells[k] if k < len(cells) else None for _, cells in body]
        if k < n or any(_filled(c) for c in column):
            out.append((k + 1, column))
    return out


def find_layout(cands: list, records: Records) -> tuple[hd.Found | None, hd.Nearest | None, Records]:
    """``header.find_layout`` over the plain layouts on ``records`` and the transposed ones on
    ``records`` transposed: (the header found, or None; the nearest row when none; the records the
    header was found in)."""
    plain = [p for p in cands if p.transposed is None]
    found, near = hd.find_layout(plain, records) if plain else (None, None)
    used = records
    for n in sorted({p.transposed.label_columns for p in cands if p.transposed is not None}):
        group = [p for p in cands if p.transposed is not None and p.transposed.label_columns == n]
        turned = transposed(records, n)
        f, m = hd.find_layout(group, turned)
        if f is not None and (found is None or len(f.match.columns) > len(found.match.columns)):
            found, near, used = f, None, turned
        elif found is None and m is not None and (near is None or hd._score(m.match) > hd._score(near.match)):
            near = m
    return found, (near if found is None else None), used


def find_in_text(cands: list, data: bytes) -> tuple[Records, hd.Found, str] | None:
    """(every record of a delimited file, the header of a transposed layout found in them, the
    delimiter), the layout reaching most fields; None when none reads it."""
    best: tuple[Records, hd.Found, str] | None = None
    for p in cands:
        for d in p.delimiters:
            try:
                text, _ = rd.decode(data, p.encodings)
            except rd.FileUnreadable:
                continue
            found, _, records = find_layout([p], rd.delimited_records(text, d))
            if found is not None and (best is None or len(found.match.columns) > len(best[1].match.columns)):
                best = (records, found, d)
    return best


__all__ = ["find_in_text", "find_layout", "table_start", "transposed"]
