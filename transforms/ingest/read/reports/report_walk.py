"""Reports as tables (spec section 1, "Payroll as employers' systems write it").

Real payroll reports are not plain tables: title and address lines sit above the header, "Totals"
and "Payroll Totals" lines below or between employees, block header lines give the payroll period
and pay day of the lines below them, the file name gives the period of a one-payroll workbook, and
facts the export keeps outside its rows (the employer's FEIN) come from the submission: a folder
named by the employer id (``payroll/123456789/...``) or ``payroll/files.csv``.

A profile with a ``report`` section (``profiles.ReportLayout``) says where these are. Here a file's
records (line, cells) become the table the staging reads: the header is the first line (or two)
that holds the profile's columns (``header.find_layout``; the lines above it are the preamble),
every line after it is a data row, a totals line (skipped, counted, and checked against the lines
it totals), a block header line (its fields carried down to the rows below: a payroll's period and
pay day, ``Check Date: 01/06/2023`` in one cell, the employee named above their rows), a repeated
header, a note line, or blank. The fields of blocks and of the file name become columns of every
row (``context`` adds the submission's). A column holding two fields (``Profile.split``) is cut in
two (``report_lines.split_columns``). Every line is accounted for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from transforms.ingest.read.cast.canonical import CellError
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts import profiles as pf
from transforms.ingest.read.layouts.report_layout import TotalsLine
from transforms.ingest.read.reports import report_lines as ln


@dataclass
class Shape:
    """How the lines of a table were read: counts of every kind and the rejects of the shape."""

    preamble: list[str] = field(default_factory=list)  # the text of the lines above the header
    totals: int = 0
    blocks: int = 0
    repeated_headers: int = 0
    notes: int = 0
    summary: int = 0  # lines from a report's end line on (its summary)
    cover: int = 0  # lines of a cover or notes sheet skipped beside this table
    skipped: int = 0  # lines of the sheets a profile's ``sheets.skip`` passed over beside this table
    errors: list[CellError] = field(default_factory=list)  # totals that disagree with their lines
    totals_plan: object | None = None  # totals lines to check on the staged rows (``report_frame.TotalsPlan``)

    def words(self) -> str:
        parts = [f"{n} {what}" for n, what in ((len(self.preamble), "preamble line(s)"), (self.totals, "totals line(s)"),
                                                (self.blocks, "block header line(s)"),
                                                (self.repeated_headers, "repeated header(s)"),
                                                (self.notes, "note line(s)"), (self.summary, "summary line(s)"),
                                                (self.cover, "cover sheet line(s)"),
                                                (self.skipped, "line(s) of skipped sheet(s)")) if n]
        return ", ".join(parts)

    @property
    def lines(self) -> int:
        """Every line read that is not a row of the table."""
        return (len(self.preamble) + self.totals + self.blocks + self.repeated_headers + self.notes + self.summary
                + self.cover + self.skipped)


# --- a report's lines ------------------------------------------------------------------------------

@dataclass
class _Walk:
    """The state of a report's walk: the table's columns (the union of every section's header),
    the rows read with what they carry, the lines each totals line totals, the current section's
    header and where each of its cells goes."""

    names: list[str]
    col_of: dict[str, int]
    carried_fields: list[str]
    current: dict[str, str | None]
    rows: list[tuple[int, list[str | None]]] = field(default_factory=list)
    carried: list[list[str | None]] = field(default_factory=list)
    since_last: list[list[str | None]] = field(default_factory=list)
    block_rows: list[list[str | None]] = field(default_factory=list)
    file_rows: list[list[str | None]] = field(default_factory=list)
    file_totals: list[tuple[TotalsLine, list[str | None], int]] = field(default_factory=list)
    group_start: int = 0  # the first row of the current group (since the last totals/block/header line)
    matched: tuple[int, hd.Match] | None = None  # the match over the first n names
    pos: list[int] = field(default_factory=list)  # the current section's cells -> the table's columns
    head_key: list[str] = field(default_factory=list)
    upper_key: list[str] | None = None
    first: tuple[int, str] | None = None  # the current header's first cell
    width: int | None = None  # the first header's number of columns

    def match(self, base: hd.Match) -> hd.Match:
        """The profile's match over the table's columns (every section's header so far)."""
        if self.matched is None or self.matched[0] != len(self.names):
            m = hd.match_headers(base.profile, self.names)
            self.matched = (len(self.names), m if m.ok else base)
        return self.matched[1]

    def section(self, records, index: int, header_rows: int) -> None:
        """A section's header (the first, or one repeated with its own columns) at ``records[index]``."""
        cells = records[index][1]
        names = _section_header(records, index, header_rows, self.width)
        self.width = self.width if self.width is not None else len(names)
        self.pos = self.positions(names)
        self.head_key, self.first = _header_key(cells), ln.first_cell(cells)
        self.upper_key = _header_key(records[index - 1][1]) if header_rows == 2 else None

    def positions(self, header: list[str]) -> list[int]:
        """Each column of a section's header -> its column in the table: by its name and how many
        columns of the header before it have that name ("Hours" under Earning 1, "Hours" under
        Earning 2); a new one adds a column. A column with no name is named by its place."""
        out = []
        seen: dict[str, int] = {}
        for i, h in enumerate(header):
            name = (h or "").strip() or f"(column {i + 1})"
            n = seen[name] = seen.get(name, 0) + 1
            key = name if n == 1 else f"{name}\x00{n}"
            if key not in self.col_of:
                self.col_of[key] = len(self.names)
                self.names.append(name)
            out.append(self.col_of[key])
        return out

    def add_row(self, line: int, cells: list[str | None]) -> None:
        placed = _placed(cells, self.pos, None)
        self.rows.append((line, placed))
        self.carried.append([self.current[f] for f in self.carried_fields])
        for acc in (self.since_last, self.block_rows, self.file_rows):
            acc.append(placed)


def _header_key(cells: list[str | None]) -> list[str]:
    return [(c or "").strip().lower() for c in cells]


def shape_report(records: list[tuple[int, list[str | None]]], found: hd.Found, rel: str,
                 sheet: str | None = None, delimiter: str | None = None) -> tuple[tuple[rd.RawTable, hd.Match], Shape]:
    """The table of a report: the header found in ``records`` (one row, or two), the data rows
    after it with the fields of their block lines, labelled values and the file name as extra
    columns; the counts of every other kind of line and the totals that disagree (``Shape``). A
    section of the report may repeat the header with other columns (a journal that prints an
    Overtime column only where a payroll has overtime): the table's columns are every section's."""
    match = found.match
    profile, layout = match.profile, match.profile.report
    shape = Shape()
    carried = list(dict.fromkeys([*(f for b in layout.blocks for f in b.sets), *(v.field for v in layout.labels)]))
    walk = _Walk([], {}, carried, dict.fromkeys(carried))
    for _, cells in records[:found.first]:  # the first payroll's block lines may come before the header
        if ln.block(cells, layout, profile, walk.current) is None:
            shape.preamble.append(" ".join(c.strip() for c in cells if c and c.strip()))
        else:
            shape.blocks += 1
    walk.section(records, found.index, match.header_rows)
    where = f"{rel}[{sheet}]" if sheet else rel
    for k in range(found.index + 1, len(records)):
        if not _read_line(records, k, walk, shape, match, where):
            break
    ln.close_group(walk, layout, profile.date_formats)
    for total, placed, line in walk.file_totals:
        shape.errors += ln.check_totals(total, placed, walk.file_rows, walk.match(match), where, line)
    return _as_cells(_table(walk, records[found.index][0], profile, rel, sheet, delimiter), walk.match(match)), shape


def _read_line(records, k: int, walk: _Walk, shape: Shape, match: hd.Match, where: str) -> bool:
    """Line ``k`` of a report after its header: a repeated or a section's own header, a totals,
    note or block line, a data row; False at the line that ends the report's rows."""
    profile, layout = match.profile, match.profile.report
    line, cells = records[k]
    first = ln.first_cell(cells)
    if first is None:
        return True
    key = _header_key(cells)
    if key[:len(walk.head_key)] == walk.head_key or (walk.upper_key is not None and key[:len(walk.upper_key)] == walk.upper_key):
        shape.repeated_headers += 1
        return True
    if walk.first is not None and first[0] == walk.first[0] and first[1].lower() == walk.first[1].lower():
        m = hd.match_row(profile, records, k)
        if m.ok:  # a section's own header: its columns may differ
            ln.close_group(walk, layout, profile.date_formats)
            shape.repeated_headers += 1
            walk.section(records, k, m.header_rows)
            return True
    text = first[1]
    if any(re.fullmatch(e, text, re.I) for e in layout.end):
        shape.summary += sum(1 for _, c in records[k:] if ln.first_cell(c) is not None)
        return False
    total = next((t for t in layout.totals if re.fullmatch(t.label, text, re.I)), None)
    if total is None:  # a label in any cell of the line
        total = next((t for t in layout.totals if not t.first and any(
            c and re.fullmatch(t.label, c.strip(), re.I) for c in cells)), None)
    if total is not None:
        shape.totals += 1
        ln.close_group(walk, layout, profile.date_formats)
        placed = _placed(cells, walk.pos, len(walk.names))
        if total.scope == "file":  # a file's total may stand above its lines: checked at the end
            walk.file_totals.append((total, placed, line))
        else:
            lines_totalled = walk.since_last if total.scope == "since_last" else walk.block_rows
            shape.errors += ln.check_totals(total, placed, lines_totalled, walk.match(match), where, line)
        walk.since_last = []
        return True
    if any(re.fullmatch(n, text, re.I) for n in layout.notes):
        shape.notes += 1
        return True
    kind = ln.block(cells, layout, profile, walk.current)
    if kind is not None:
        shape.blocks += 1
        ln.close_group(walk, layout, profile.date_formats)
        walk.since_last = []
        if kind == 0:  # the outermost block (the first listed: a payroll) starts a block's totals
            walk.block_rows = []
        return True
    walk.add_row(line, cells)
    return True


def _table(walk: _Walk, head_line: int, profile: pf.Profile, rel: str, sheet: str | None,
           delimiter: str | None) -> rd.RawTable:
    """The walk's rows as a table, the carried and file-name fields as extra columns."""
    width = len(walk.names)
    # an empty cell and a cell the line does not have are alike (no value): None
    rows = [(head_line, list(walk.names))] + [(n, [x if x != "" else None for x in c] + [None] * (width - len(c)))
                                              for n, c in walk.rows]
    table = rd.table_from_records(rows, sheet=sheet, delimiter=None)
    table.delimiter = delimiter
    extra = {f"__block_{f}": [c[i] for c in walk.carried] for i, f in enumerate(walk.carried_fields)}
    if extra:
        values = pl.DataFrame({"__line": [n for n, _ in walk.rows], **extra},
                              schema={"__line": pl.Int64, **dict.fromkeys(extra, pl.String)})
        table.frame = table.frame.join(values, on="__line", how="left")
    for k, v in ln.name_fields(profile, rel, sheet).items():
        table.frame = table.frame.with_columns(pl.lit(v, dtype=pl.String).alias(f"__name_{k}"))
    return table


def _section_header(records, index: int, header_rows: int, width: int | None = None) -> list[str]:
    """A section's column names (a two-row header's combined); ``width``: the first header's, to
    which a later section's header is held (its blank cells beyond its last name dropped, or
    blank ones added): a line's trailing empty cells say nothing of its columns."""
    if header_rows == 2 and index > 0:
        names = hd.two_row_headers(records[index - 1][1], records[index][1])[0]
    else:
        names = [(c or "").strip() for c in records[index][1]]
    if width is None:
        return names
    last = max((i + 1 for i, n in enumerate(names) if n), default=0)
    keep = max(last, width)
    return (names + [""] * keep)[:keep]


def _placed(cells: list[str | None], pos: list[int], width: int | None) -> list[str | None]:
    """A line's cells in the table's columns (cells beyond the section's header are kept after
    them, for the ragged-line test)."""
    out: list[str | None] = [None] * (max(pos, default=-1) + 1 if width is None else width)
    for i, c in enumerate(cells):
        if i < len(pos):
            out[pos[i]] = c
        elif c is not None and c.strip():
            out.append(c)
    return out


BLOCK_SAID, NAME_SAID = "(block header line)", "(file or sheet name)"  # how such a field's column is headed


def _said_by(column: str) -> str:
    """How a rejected value from outside the rows is named: the field and where it came from."""
    if column.startswith("__block_"):
        return f"{column.removeprefix('__block_')} {BLOCK_SAID}"
    return f"{column.removeprefix('__name_')} {NAME_SAID}"


def _as_cells(table: rd.RawTable, match: hd.Match) -> tuple[rd.RawTable, hd.Match]:
    """The extra columns (block and file-name fields) renamed as cells ``c<n>`` after the
    header's, each mapped to its field unless the file has the field itself."""
    n = len(table.headers)
    columns = dict(match.columns)
    extra = [c for c in table.frame.columns if c.startswith(("__block_", "__name_"))]
    renames = {c: f"c{n + i}" for i, c in enumerate(extra)}
    table.frame = table.frame.rename(renames).select(*[f"c{i}" for i in range(n + len(extra))], "__line")
    table.headers = [*table.headers, *[_said_by(c) for c in extra]]
    for i, c in enumerate(extra):
        columns.setdefault(c.removeprefix("__block_").removeprefix("__name_"), n + i)
    return table, match.with_columns(columns)


