"""What a report's lines say besides its rows (``report_walk.shape_report`` walks them): block header
lines and the fields they set for the rows below, values printed beside their label on a group's
lines, the fields of the file's name, totals lines checked against the lines they total, and a
column holding two fields cut in two. Dates are given back ISO."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import PurePosixPath

import polars as pl

from transforms.ingest.read.cast.canonical import CellError
from transforms.ingest.read.cast.parsing import UNIVERSAL_DATES, parse_number
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts import profiles as pf
from transforms.ingest.read.layouts.report_layout import BlockLine, ReportLayout, TotalsLine

DATES = ("period_start", "period_end", "pay_date")


def first_cell(cells: list[str | None]) -> tuple[int, str] | None:
    for i, c in enumerate(cells):
        if c is not None and c.strip():
            return i, c.strip()
    return None


def parse_date(text: str, formats: list[str]) -> str:
    """A date as ISO when one of the formats reads it, else the text as given (the staging then
    rejects it, naming the column)."""
    t = text.strip()
    if len(t) > 10 and t[10:] in (" 00:00:00", "T00:00:00"):  # a workbook's date cell
        t = t[:10]
    for f in [*formats, *UNIVERSAL_DATES]:
        try:
            return dt.datetime.strptime(t, f).date().isoformat()
        except ValueError:
            continue
    return t


def _block_value(b: BlockLine, cells: list[str | None], pos: int) -> dict[str, str] | None:
    """The fields the block ``b`` reads from its label in cell ``pos`` (None: not its label)."""
    text = (cells[pos] or "").strip()
    m = re.fullmatch(b.label, text, re.I)
    rest = ""
    if m is None:  # "Check Date: 01/06/2023": the label and its value in one cell
        m = re.match(rf"(?:{b.label})(?:\s*[:#=-]?\s+|\s*[:#=]\s*)", text, re.I)
        if m is None or not text[m.end():].strip():
            return None
        rest = text[m.end():].strip()
    out = {k: v.strip() for k, v in m.groupdict().items() if v is not None}
    wanted = [f for f in b.fields if f not in out]
    if not wanted:
        return out
    value = rest or next((c.strip() for c in cells[pos + 1:] if c and c.strip()), "")
    vm = re.fullmatch(b.value, value)
    for i, f in enumerate(wanted):
        out[f] = vm.group(i + 1).strip() if vm and vm.lastindex and vm.lastindex > i and vm.group(i + 1) else value
    return out


def block(cells: list[str | None], layout: ReportLayout | None, profile: pf.Profile,
           current: dict[str, str | None]) -> int | None:
    """Whether the line is a block header line (the index of its block in the layout, or None);
    the fields it sets are set in ``current``. Every label on the line is read (a line may hold
    ``Check Date: 01/06/2023`` and ``Period: 12/24/2022 - 01/06/2023``)."""
    first = first_cell(cells)
    if layout is None or first is None or not layout.blocks:
        return None
    filled = [i for i, c in enumerate(cells) if c is not None and c.strip()]
    kind: int | None = None
    got: dict[str, str] = {}
    for k, b in enumerate(layout.blocks):
        if b.alone and len(filled) != 1:
            continue
        for pos in ([first[0]] if b.first else filled):
            values = _block_value(b, cells, pos)
            if values is not None:
                kind = k if kind is None else kind
                got |= values
                break
    if kind is None:
        return None
    for f, v in got.items():
        current[f] = parse_date(v, profile.date_formats) if f in DATES else v
    return kind


def close_group(walk, layout: ReportLayout, formats: list[str]) -> None:
    """The labelled values of the group of lines just ended (``report.labels``), set on each of them
    (``walk``: a ``report_walk._Walk``)."""
    if layout.labels and walk.group_start < len(walk.rows):
        found: dict[str, str] = {}
        cols = {v.field: {walk.col_of[c] for c in v.columns if c in walk.col_of} for v in layout.labels}
        for _, cells in walk.rows[walk.group_start:]:
            for i, c in enumerate(cells):
                if not c or not c.strip():
                    continue
                for v in layout.labels:
                    if v.field in found or (cols[v.field] and i not in cols[v.field]):
                        continue
                    got = label_value(v, cells, i)
                    if got is not None:
                        found[v.field] = got
        for f, value in found.items():
            value = parse_date(value, formats) if f in DATES else value
            idx = walk.carried_fields.index(f)
            for row in walk.carried[walk.group_start:]:
                row[idx] = value
    walk.group_start = len(walk.rows)


def label_value(v, cells: list[str | None], i: int) -> str | None:
    """The value of ``v`` at cell ``i``: the label's own group (a cell that is its own label: an
    id alone in the employee column, ``(\d+)``), the rest of the cell after the label, or the next cell."""
    text = (cells[i] or "").strip()
    own = re.fullmatch(v.label, text, re.I)
    if own is not None and own.lastindex:
        return own.group(1).strip()
    if own is not None:
        value = next((c.strip() for c in cells[i + 1:i + 2] if c and c.strip()), "")
    else:
        m = re.match(rf"(?:{v.label})(?:\s*[:#=-]?\s+|\s*[:#=]\s*)", text, re.I)
        if m is None:
            return None
        value = text[m.end():].strip()
    vm = re.fullmatch(v.value, value) if value else None
    if vm is None:
        return None
    return (vm.group(1) if vm.lastindex else value).strip()


def split_columns(table: rd.RawTable, match: hd.Match) -> tuple[rd.RawTable, hd.Match]:
    """A column holding several fields (``Profile.split``: a pay period ``12/24/2022 - 01/06/2023``)
    cut into a column per field, named "period_start (from Pay Period)"; a cell the pattern does not
    read gives no value (the staging then rejects the row, naming the column)."""
    profile = match.profile
    todo = [(f, s) for f, s in profile.split.items() if f in match.columns]
    if not todo:
        return table, match
    columns = dict(match.columns)
    frame, headers = table.frame, list(table.headers)
    for f, s in todo:
        source = headers[match.columns[f]]
        parts = pl.col(f"c{match.columns[f]}").str.strip_chars().str.extract_groups(f"^(?:{s.pattern})$")
        for i, into in enumerate(s.into):
            if into in columns:
                continue
            k = len(headers)
            frame = frame.with_columns(parts.struct.field(str(i + 1)).str.strip_chars().alias(f"c{k}"))
            if into in DATES:
                fmts = profile.date_formats
                frame = frame.with_columns(pl.col(f"c{k}").map_elements(lambda v, fm=fmts: parse_date(v, fm),
                                                                       return_dtype=pl.String).alias(f"c{k}"))
            headers.append(f"{into} (from {source})")
            columns[into] = k
    frame = frame.select(*[f"c{i}" for i in range(len(headers))], "__line")
    out = rd.RawTable(headers, table.header_line, frame, table.ragged, table.sheet, table.encoding, table.delimiter)
    return out, match.with_columns(columns)


def name_fields(profile: pf.Profile, rel: str, sheet: str | None = None) -> dict[str, str]:
    """The fields of the file's name (``report.file_name``) and of the sheet's (``report.sheet_name``:
    the sheet's over the file's), dates as ISO."""
    if profile.report is None:
        return {}
    out = {}
    for spec, name in ((profile.report.file_name, PurePosixPath(rel).name), (profile.report.sheet_name, sheet)):
        m = re.search(spec.pattern, name) if spec is not None and name is not None else None
        for k, v in (m.groupdict().items() if m else ()):
            if v is not None:
                try:
                    out[k] = dt.datetime.strptime(v.strip(), spec.date_format).date().isoformat()
                except ValueError:
                    out[k] = v
    return out


def _value(cells: list[str | None], match: hd.Match, name: str) -> float | None:
    """A logical field's number on a line (a derived column's parts summed)."""
    profile = match.profile
    parts = match.derived.get(name, [name])
    total, seen = 0.0, False
    for p in parts:
        pos = match.columns.get(p)
        if pos is None or pos >= len(cells) or cells[pos] is None or not cells[pos].strip():
            continue
        v = parse_number(cells[pos], profile.number)
        if v is None:
            return None
        total, seen = total + v, True
    return total if seen else None


def check_totals(rule: TotalsLine, cells: list[str | None], rows: list[list[str | None]], match: hd.Match,
                  where: str, line: int) -> list[CellError]:
    """A totals line's checked fields against the sum of the lines it totals (to the cent)."""
    errors = []
    for name in rule.checks:
        said = _value(cells, match, name)
        if said is None:
            continue
        summed = sum(v for r in rows if (v := _value(r, match, name)) is not None)
        if abs(said - summed) > 0.005 + 1e-9:
            errors.append(CellError(where, line, name, f"{said:.2f}", "totals_mismatch",
                                    f"{name}: the totals line says {said:,.2f}; the {len(rows)} line(s) it totals sum "
                                    f"to {summed:,.2f}: a line is missing or was changed"))
    return errors


