"""Workbooks (.xlsx, .xlsm, .xls) read from the cells they store (calamine, through fastexcel):
values, never formulas, every sheet a list of records whose line is the spreadsheet's row number,
whatever size the workbook declares (a 1.6 KB file declaring A1:XFD1048576 reads in milliseconds).
Hidden sheets are said as such."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from transforms.ingest.readers import FileUnreadable


@dataclass
class Sheet:
    """One sheet of a workbook as records: its non-blank rows (spreadsheet row number, cells)."""

    name: str
    visible: bool
    records: list[tuple[int, list[str | None]]]


WORKBOOK_EXT = (".xlsx", ".xlsm", ".xls")


def read_workbook(path: Path) -> list[Sheet]:
    """Every sheet of a workbook (.xlsx, .xlsm, .xls) as text cells, read from the cells it stores
    (calamine, through fastexcel), whatever size it declares: a 1.6 KB file declaring
    A1:XFD1048576 is read in milliseconds. Values, never formulas; a date as ``YYYY-MM-DD
    HH:MM:SS``; rows numbered as the spreadsheet numbers them."""
    import fastexcel

    try:
        reader = fastexcel.read_excel(str(path))
        names = reader.sheet_names
    except Exception as exc:  # a damaged or mislabelled file
        raise FileUnreadable("unreadable", f"not a readable workbook ({exc.__class__.__name__})") from None
    firsts = _first_rows(path) if path.suffix.lower() in (".xlsx", ".xlsm") else {}
    sheets = []
    for name in names:
        try:
            sheet = reader.load_sheet(name, header_row=None, dtypes="string")
            frame = sheet.to_polars()
        except Exception as exc:
            raise FileUnreadable("unreadable", f"sheet {name!r} cannot be read ({exc.__class__.__name__})") from None
        offset = firsts.get(name, 1) - 1
        records = [(offset + i + 1, list(row)) for i, row in enumerate(frame.iter_rows())
                   if any(c is not None and c.strip() for c in row)]
        sheets.append(Sheet(name, getattr(sheet, "visible", "visible") == "visible", records))
    return sheets


def _first_rows(path: Path) -> dict[str, int]:
    """The spreadsheet row number of each sheet's first stored value (calamine numbers the rows
    of a sheet's used range from it): read from the workbook's XML up to that row only."""
    import re
    import zipfile
    from xml.etree import ElementTree as ET

    out: dict[str, int] = {}
    try:
        with zipfile.ZipFile(path) as z:
            wb = z.read("xl/workbook.xml").decode("utf-8", "replace")
            rels = z.read("xl/_rels/workbook.xml.rels").decode("utf-8", "replace")
            target = {m.group(1): m.group(2) for m in re.finditer(r'<Relationship[^>]*Id="([^"]+)"[^>]*Target="([^"]+)"', rels)}
            target |= {m.group(2): m.group(1) for m in re.finditer(r'<Relationship[^>]*Target="([^"]+)"[^>]*Id="([^"]+)"', rels)}
            for m in re.finditer(r'<sheet\b[^>]*>', wb):
                tag = m.group(0)
                name = re.search(r'name="([^"]*)"', tag)
                rid = re.search(r'r:id="([^"]*)"', tag)
                if not name or not rid or rid.group(1) not in target:
                    continue
                member = target[rid.group(1)].lstrip("/")
                member = member if member.startswith("xl/") else f"xl/{member}"
                with z.open(member) as fh:
                    for _, el in ET.iterparse(fh, events=("end",)):
                        if el.tag.endswith("}row") and any(
                                c.tag.endswith("}c") and any(v.tag.endswith(("}v", "}is")) for v in c) for c in el):
                            out[_unescape(name.group(1))] = int(el.get("r", "1"))
                            break
                        if el.tag.endswith("}row"):
                            el.clear()
    except (KeyError, zipfile.BadZipFile, ET.ParseError, ValueError, OSError):
        return out
    return out


def _unescape(name: str) -> str:
    from html import unescape

    return unescape(name)
