"""Transposed tables (``profile_keys.Transposed``): the items of a payroll down the side (``Regular
Hours``, ``Gross Pay``, ``Social Security`` under ``Employer Taxes``), one column per employee or
check (the employee's id or name, the period, the pay date or the check in the rows at the top,
each named in the label column). Such a table is read as if each of its columns were a line: its
label column becomes the header, each other column a row whose line is the column's number
(counted from the first column read: A is 1 in a sheet whose cells start in column A). The lines
above the table (no value beside the labels: a title, ``Pay Date: 01/06/2023``) stay lines above
the header: the preamble, or block lines that set their fields for every column; so does a line
of two cells whose label is a block's, ``Pay period | 01/01/2023 - 01/15/2023`` (its value in the
first employee's column), before the table's first line. Then the header
is found and the rows read as in any other table (``header``, ``shape``, ``staging``)."""

from __future__ import annotations

import re

from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd

Records = list[tuple[int, list[str | None]]]


def _filled(c: str | None) -> bool:
    return c is not None and bool(c.strip())


def table_start(records: Records, label_columns: int = 1, blocks: tuple[str, ...] = ()) -> int | None:
    """The index of a transposed table's first line: the first holding a value beside its labels
    (the lines above it stay lines; in the transposed records, the header's index). A line before
    it whose label is a block's (``blocks``: the profile's ``report.blocks`` labels) and that holds
    one value beside it (``Pay period | 01/01/2023 - 01/15/2023``) is a block line above the table."""
    for i, (_, cells) in enumerate(records):
        values = [c for c in cells[label_columns:] if _filled(c)]
        if not values:
            continue
        label = (_label(cells, label_columns) or "").strip()
        if len(values) == 1 and label and any(re.fullmatch(b, label, re.I) for b in blocks):
            continue
        return i
    return None


def transposed(records: Records, label_columns: int = 1, *, two_row: bool = False, group_row: int | None = None,
               heading_row: int | None = None, blocks: tuple[str, ...] = ()) -> Records:
    """``records`` with the table's columns as lines (see the module's docstring and
    ``profile_keys.Transposed``): the lines above the table, the labels (one line; two with
    ``two_row``: the group's above the item's), then one line per column that holds a value, or
    per group of columns (``group_row``)."""
    n = label_columns
    start = table_start(records, n, blocks)
    if start is None:
        return records
    body = records[start:]
    width = max(len(cells) for _, cells in body)
    out: Records = list(records[:start])
    if group_row is not None:
        return out + _grouped(body, n, width, group_row - 1, heading_row - 1 if heading_row else None)
    if two_row and n == 2:
        out += [(k + 1, [cells[k] if k < len(cells) else None for _, cells in body]) for k in range(n)]
    else:
        out.append((1, [_label(cells, n) for _, cells in body]))
    for k in range(n, width):
        column = [cells[k] if k < len(cells) else None for _, cells in body]
        if any(_filled(c) for c in column):
            out.append((k + 1, column))
    return out


def _label(cells: list[str | None], n: int) -> str | None:
    """A row's label: its first non-blank cell among the label columns (an outline's level)."""
    return next((c for c in cells[:n] if _filled(c)), None)


def _grouped(body: Records, n: int, width: int, g: int, h: int | None) -> Records:
    """The table's groups of columns as lines: the header (the group's name, then each row's cells
    by heading or place, a row without values as its label alone: a section), then a line per group
    whose first column is its line's number."""
    cell = [list(cells) + [None] * (width - len(cells)) for _, cells in body]
    starts = [j for j in range(n, width) if g < len(cell) and _filled(cell[g][j])]
    groups = [(s, starts[i + 1] if i + 1 < len(starts) else width) for i, s in enumerate(starts)]
    rows = [r for r in range(len(cell)) if r not in (g, h)]
    offsets = sorted({j - s for s, e in groups for j in range(s, e) if any(_filled(cell[r][j]) for r in rows)})
    heading = {}
    for o in offsets:
        text = next(((cell[h][s + o] or "").strip() for s, e in groups if h is not None and s + o < e
                     and _filled(cell[h][s + o])), "")
        heading[o] = text if text and not any(ch.isdigit() for ch in text) else f"+{o}"
    header: list[str | None] = [_label(cell[g], n)]
    layout: list[tuple[int, int | None]] = []  # (row, offset) of each header cell after the name
    for r in rows:
        label = _label(cell[r], n) or ""
        if not any(_filled(cell[r][j]) for j in range(n, width)):
            header.append(label or None)
            layout.append((r, None))
            continue
        for o in offsets:
            header.append(f"{label} {heading[o]}".strip())
            layout.append((r, o))
    out: Records = [(1, header)]
    for s, e in groups:
        out.append((s + 1, [cell[g][s], *[cell[r][s + o] if o is not None and s + o < e else None
                                          for r, o in layout]]))
    return out


def find_layout(cands: list, records: Records) -> tuple[hd.Found | None, hd.Nearest | None, Records]:
    """``header.find_layout`` over the plain layouts on ``records`` and the transposed ones on
    ``records`` transposed: (the header found, or None; the nearest row when none; the records the
    header was found in). The best ``fit`` wins: most fields reached, then fewest block lines of a
    transposed profile missing above its table, then the plain layouts and the shapes' order."""
    plain = [p for p in cands if p.transposed is None]
    found, near = hd.find_layout(plain, records) if plain else (None, None)
    used = records
    for spec in sorted({_shape(p) for p in cands if p.transposed is not None}, key=str):
        group = [p for p in cands if p.transposed is not None and _shape(p) == spec]
        n, two_row, group_row, heading_row, blocks = spec
        turned = transposed(records, n, two_row=two_row, group_row=group_row, heading_row=heading_row, blocks=blocks)
        f, m = hd.find_layout(group, turned)
        if f is not None and (found is None or fit(f, turned) > fit(found, used)):
            found, near, used = f, None, turned
        elif found is None and m is not None and (near is None or hd._score(m.match) > hd._score(near.match)):
            near = m
    return found, (near if found is None else None), used


def fit(found: hd.Found, records: Records) -> tuple[int, int]:
    """How well a header found in ``records`` fits: (the fields its columns reach, less, for a
    transposed layout, its block labels that no line above the table holds). A transposed table's
    block lines stand above it, so a profile whose block lines are not there (another product's
    table of the same items, its dates elsewhere) fits less than one reaching as many fields that
    needs none; a plain layout's block lines may stand anywhere and are not counted."""
    p = found.match.profile
    if p.transposed is None or p.report is None or not p.report.blocks:
        return len(found.match.columns), 0
    above = [c.strip() for _, cells in records[:found.first] for c in cells if c is not None and c.strip()]
    absent = sum(1 for b in p.report.blocks if not any(re.match(b.label, c, re.I) for c in above))
    return len(found.match.columns), -absent


def _shape(p) -> tuple:
    """How a transposed profile turns the table: (label columns, two-row labels, group row, heading
    row, the labels of its block lines)."""
    tr = p.transposed
    blocks = tuple(b.label for b in p.report.blocks) if p.report is not None else ()
    return (tr.label_columns, p.report is not None and p.report.header_rows == 2, tr.group_row, tr.heading_row, blocks)


def find_in_text(cands: list, data: bytes) -> tuple[Records, hd.Found, str] | None:
    """(every record of a delimited file, the header of a transposed layout found in them, the
    delimiter), the layout that fits best (``fit``); None when none reads it."""
    best: tuple[Records, hd.Found, str] | None = None
    for p in cands:
        for d in p.delimiters:
            try:
                text, _ = rd.decode(data, p.encodings)
            except rd.FileUnreadable:
                continue
            found, _, records = find_layout([p], rd.delimited_records(text, d))
            if found is not None and (best is None or fit(found, records) > fit(best[1], best[0])):
                best = (records, found, d)
    return best


__all__ = ["find_in_text", "find_layout", "fit", "table_start", "transposed"]
