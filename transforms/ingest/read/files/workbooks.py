"""Workbooks (.xlsx, .xlsm, .xls) read from the cells they store (calamine, through fastexcel):
values, never formulas, every sheet a list of records whose line is the spreadsheet's row number,
whatever size the workbook declares (a 1.6 KB file declaring A1:XFD1048576 reads in milliseconds).
Hidden sheets are said as such. A formula cell that stores no value (a workbook written by a program
that never computed it: ADP's payroll history writes its money as ``=ROUND(780.0,2.0)``) is read
when the formula is a number or ``ROUND`` of a number, nothing more is ever evaluated; any other
such cell stays empty and is counted (``Sheet.unstored``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from transforms.ingest.read.files.readers import FileUnreadable


@dataclass
class Sheet:
    """One sheet of a workbook as records: its non-blank rows (spreadsheet row number, cells)."""

    name: str
    visible: bool
    records: list[tuple[int, list[str | None]]]
    unstored: int = 0  # formula cells with no stored value that could not be read


WORKBOOK_EXT = (".xlsx", ".xlsm", ".xls")


def read_workbook(path: Path) -> list[Sheet]:
    """Every sheet of a workbook (.xlsx, .xlsm, .xls) as text cells, read from the cells it stores
    (calamine, through fastexcel), whatever size it declares: a 1.6 KB file declaring
    A1:XFD1048576 is read in milliseconds. Values, never formulas; a date as ``YYYY-MM-DD
    HH:MM:SS``, a duration (``[h]:mm``) as hours ``H:MM:SS``; rows numbered as the spreadsheet numbers them."""
    import fastexcel

    try:
        reader = fastexcel.read_excel(str(path))
        names = reader.sheet_names
    except Exception as exc:  # a damaged or mislabelled file
        raise FileUnreadable("unreadable", f"not a readable workbook ({exc.__class__.__name__})") from None
    xlsx = path.suffix.lower() in (".xlsx", ".xlsm")
    firsts = _first_rows(path) if xlsx else {}
    formulas = unstored_formulas(path) if xlsx else {}
    sheets = []
    for name in names:
        try:
            sheet = reader.load_sheet(name, header_row=None, dtypes="string")
            frame = sheet.to_polars()
        except Exception as exc:
            raise FileUnreadable("unreadable", f"sheet {name!r} cannot be read ({exc.__class__.__name__})") from None
        offset = firsts.get(name, 1) - 1
        rows = [(offset + i + 1, list(row)) for i, row in enumerate(frame.iter_rows())]
        if clocks := _duration_columns(frame):
            rows = _with_durations(reader, name, rows, clocks)
        unread = 0
        if name in formulas:
            rows, unread = _with_formulas(rows, *formulas[name])
        records = [(line, row) for line, row in rows if any(c is not None and c.strip() for c in row)]
        sheets.append(Sheet(name, getattr(sheet, "visible", "visible") == "visible", records, unread))
    return sheets


def sheet_names(path: Path) -> list[str] | None:
    """The names of a workbook's sheets, read from its directory alone (no cell is read); None
    when the workbook cannot be read (its read says why)."""
    import zipfile

    try:
        if path.suffix.lower() in (".xlsx", ".xlsm"):
            with zipfile.ZipFile(path) as z:
                return list(_sheet_members(z))
        import fastexcel

        return list(fastexcel.read_excel(str(path)).sheet_names)
    except Exception:  # a damaged or mislabelled file: its read names the problem
        return None


# a duration cell ([h]:mm: a fraction of days) as calamine writes it as text: a date-time of its
# first days (1899-12-31 is day 0: up to 8,784 hours); no payroll date is in 1900
_CLOCK_DAY = re.compile(r"^(1899-12-3[01]|1900-\d\d-\d\d) \d\d:\d\d:\d\d(\.\d+)?$")


def _duration_columns(frame) -> list[int]:
    """The columns of a sheet read as text that hold a duration cell (``_CLOCK_DAY``)."""
    import polars as pl

    return [i for i, c in enumerate(frame.columns) if frame.select(pl.col(c).str.contains(_CLOCK_DAY.pattern).any()).item()]


def _with_durations(reader, name: str, rows, columns: list[int]):
    """The duration cells of ``columns`` as hours and minutes, ``H:MM:SS`` (76:45 is 3.1979... days;
    to the second), read again as durations (the text form folds Excel's day 60, 29 Feb 1900)."""
    typed = reader.load_sheet(name, header_row=None, dtypes={i: "duration" for i in columns}).to_polars()
    values = {i: typed.get_column(typed.columns[i]).to_list() for i in columns}
    out = []
    for k, (line, row) in enumerate(rows):
        row = list(row)
        for i in columns:
            if row[i] is not None and _CLOCK_DAY.match(row[i]) and values[i][k] is not None:
                secs = round(values[i][k].total_seconds())
                row[i] = f"{secs // 3600}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
        out.append((line, row))
    return out


def _first_rows(path: Path) -> dict[str, int]:
    """The spreadsheet row number of each sheet's first stored value (calamine numbers the rows
    of a sheet's used range from it): read from the workbook's XML up to that row only."""
    import zipfile
    from xml.etree import ElementTree as ET

    out: dict[str, int] = {}
    try:
        with zipfile.ZipFile(path) as z:
            for name, member in _sheet_members(z).items():
                with z.open(member) as fh:
                    for _, el in ET.iterparse(fh, events=("end",)):
                        if el.tag.endswith("}row") and any(
                                c.tag.endswith("}c") and any(v.tag.endswith(("}v", "}is")) for v in c) for c in el):
                            out[name] = int(el.get("r", "1"))
                            break
                        if el.tag.endswith("}row"):
                            el.clear()
    except (KeyError, zipfile.BadZipFile, ET.ParseError, ValueError, OSError):
        return out
    return out


_CELL = re.compile(rb'<c r="([A-Z]+)(\d+)"[^>]*?(?:/>|>(.*?)</c>)', re.S)
_FORMULA = re.compile(rb"<f(?:\s[^>]*)?>(.*?)</f>", re.S)
_STORED = re.compile(rb"<v>[^<]+</v>|<is>", re.S)
_ROUND = re.compile(r"^=?\s*(?:ROUND\(\s*([-+]?\d+(?:\.\d*)?)\s*,\s*(\d+)(?:\.0*)?\s*\)|([-+]?\d+(?:\.\d*)?))\s*$", re.I)


def _col(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n - 1


def unstored_formulas(path: Path) -> dict[str, tuple[int, dict[tuple[int, int], str | None]]]:
    """Per sheet of an .xlsx whose formula cells store no value: (the first column holding a value,
    {(row, column): the value of a ``ROUND(number, n)`` or number formula, else None})."""
    import zipfile

    out: dict[str, tuple[int, dict[tuple[int, int], str | None]]] = {}
    try:
        with zipfile.ZipFile(path) as z:
            for name, member in _sheet_members(z).items():
                data = z.read(member)
                if b"<f" not in data:
                    continue
                first, cells = 1 << 30, {}
                for m in _CELL.finditer(data):
                    body = m.group(3) or b""
                    col, row = _col(m.group(1)), int(m.group(2))
                    f = _FORMULA.search(body)
                    if f is None or _STORED.search(body):
                        if _STORED.search(body):
                            first = min(first, col)
                        continue
                    first = min(first, col)
                    cells[(row, col)] = _evaluate(unescape(f.group(1).decode("utf-8", "replace")))
                if cells:
                    out[name] = (0 if first == 1 << 30 else first, cells)
    except (KeyError, zipfile.BadZipFile, OSError, ValueError):
        return out
    return out


def _evaluate(formula: str) -> str | None:
    """A number, or ROUND of a number, as text (rounded half away from zero, as Excel does); None
    for anything else (never evaluated)."""
    from decimal import ROUND_HALF_UP, Decimal

    m = _ROUND.match(formula)
    if m is None:
        return None
    if m.group(3) is not None:
        return m.group(3)
    digits = int(m.group(2))
    return str(Decimal(m.group(1)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _with_formulas(rows, first_col: int, cells: dict[tuple[int, int], str | None]):
    """The rows with the formula cells' values in place (columns counted from ``first_col``, where
    the reader's columns begin); how many stayed empty."""
    by_row: dict[int, list[tuple[int, str | None]]] = {}
    for (r, c), v in cells.items():
        by_row.setdefault(r, []).append((c - first_col, v))
    unread = 0
    out = []
    for line, row in rows:
        for c, v in by_row.get(line, []):
            if v is None:
                unread += 1
            elif 0 <= c < len(row) and row[c] is None:
                row[c] = v
        out.append((line, row))
    return out, unread


def _sheet_members(z) -> dict[str, str]:
    """Sheet name -> its XML member in the workbook."""
    wb = z.read("xl/workbook.xml").decode("utf-8", "replace")
    rels = z.read("xl/_rels/workbook.xml.rels").decode("utf-8", "replace")
    target = {m.group(1): m.group(2) for m in re.finditer(r'<Relationship[^>]*Id="([^"]+)"[^>]*Target="([^"]+)"', rels)}
    target |= {m.group(2): m.group(1) for m in re.finditer(r'<Relationship[^>]*Target="([^"]+)"[^>]*Id="([^"]+)"', rels)}
    out = {}
    for m in re.finditer(r'<sheet\b[^>]*>', wb):
        tag = m.group(0)
        name = re.search(r'name="([^"]*)"', tag)
        rid = re.search(r'r:id="([^"]*)"', tag)
        if not name or not rid or rid.group(1) not in target:
            continue
        member = target[rid.group(1)].lstrip("/")
        out[unescape(name.group(1))] = member if member.startswith("xl/") else f"xl/{member}"
    return out
