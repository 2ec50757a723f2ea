"""``awards.xlsx`` for analysts: the awards, the employee credits and the rejected input as
sheets. Text is written as text (an inline string: never a formula, a link or a number, so a
name beginning with ``=`` is a name), money as numbers with two decimals.

The sheets are written as their XML directly, each column's cells built by one Polars expression
(a state-wide run's 50,000 rows take a fraction of a second; a cell-by-cell writer took 3 to 6 s),
into the zip file of the Office Open XML spreadsheet format (ECMA-376).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import polars as pl

from transforms.outputs import XML_INVALID_POLARS, xml_safe

MAX_ROWS = 1_048_575  # a sheet's rows below its header; more are left out, and the sheet says so
NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
STYLES = (f'<styleSheet xmlns="{NS}"><fonts count="2"><font/><font><b/></font></fonts>'
          '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
          '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs>'
          '<cellXfs count="3"><xf/><xf fontId="1" applyFont="1"/><xf numFmtId="4" applyNumberFormat="1"/></cellXfs>'
          '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>')


def _text_cell(s: str) -> str:
    return f'<c t="inlineStr" s="1"><is><t xml:space="preserve">{escape(xml_safe(s))}</t></is></c>'


def _cells(frame: pl.DataFrame) -> pl.Series:
    """Each row's ``<row>`` element: text as inline strings, numbers as values (floats rounded
    to two decimals and styled so), an empty cell for a null."""
    exprs = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if dtype.is_numeric() and dtype != pl.Boolean:
            # a float (money, hours) is the number of its two decimals, as the CSV files print it:
            # cents / 100 in Polars can land one bit off (559.9300000000001), and Excel keeps it
            style, value = (' s="2"', col.round(2)) if dtype.is_float() else ("", col)
            cell = pl.format(f"<c{style}><v>{{}}</v></c>", value.cast(pl.String))
        else:
            text = col.cast(pl.String).str.replace_all(XML_INVALID_POLARS, "\ufffd").str.replace_all(
                "&", "&amp;", literal=True).str.replace_all(
                "<", "&lt;", literal=True).str.replace_all(">", "&gt;", literal=True)
            cell = pl.format('<c t="inlineStr"><is><t xml:space="preserve">{}</t></is></c>', text)
        exprs.append(pl.when(col.is_null()).then(pl.lit("<c/>")).otherwise(cell))
    if not exprs:
        return pl.Series([], dtype=pl.String)
    return frame.select(pl.concat_str([pl.lit("<row>"), *exprs, pl.lit("</row>")]).alias("x")).to_series()


def _sheet(frame: pl.DataFrame) -> str:
    head = "<row>" + "".join(_text_cell(c) for c in frame.columns) + "</row>"
    rows = "".join(_cells(frame.head(MAX_ROWS)).to_list())
    more = ""
    if frame.height > MAX_ROWS:
        more = "<row>" + _text_cell(f"... {frame.height - MAX_ROWS:,} more rows: see the CSV file") + "</row>"
    return (f'<worksheet xmlns="{NS}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" '
            f'state="frozen"/></sheetView></sheetViews><sheetData>{head}{rows}{more}</sheetData></worksheet>')


# every part of the zip carries this time, not the clock's: the same run writes the same bytes
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_workbook(path: Path, sheets: dict[str, pl.DataFrame]) -> Path:
    """One sheet per frame (its columns as they are), written atomically; the same sheets give
    the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # a sheet's name: printable, without the characters Excel refuses in one, at most 31 long
    names = [(re.sub(r"[\[\]:*?/\\]", " ", xml_safe(n)).strip()[:31] or f"Sheet{i}") for i, n in enumerate(sheets, 1)]
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        _put(z, "[Content_Types].xml", (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
            + "".join(f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/vnd.openxmlformats-'
                      'officedocument.spreadsheetml.worksheet+xml"/>' for i in range(1, len(names) + 1))
            + "</Types>"))
        _put(z, "_rels/.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'))
        _put(z, "xl/workbook.xml", (
            f'<workbook xmlns="{NS}" xmlns:r="{REL}"><sheets>'
            + "".join(f'<sheet name="{escape(n, {chr(34): "&quot;"})}" sheetId="{i}" r:id="rId{i}"/>'
                      for i, n in enumerate(names, start=1))
            + "</sheets></workbook>"))
        _put(z, "xl/_rels/workbook.xml.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            + "".join(f'<Relationship Id="rId{i}" Type="{REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
                      for i in range(1, len(names) + 1))
            + f'<Relationship Id="rId{len(names) + 1}" Type="{REL}/styles" Target="styles.xml"/></Relationships>'))
        _put(z, "xl/styles.xml", STYLES)
        for i, frame in enumerate(sheets.values(), start=1):
            _put(z, f"xl/worksheets/sheet{i}.xml", _sheet(frame))
    tmp.replace(path)
    return path


def _put(z: zipfile.ZipFile, name: str, data: str) -> None:
    """Write one part of the zip, dated ``ZIP_TIME``."""
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data, compresslevel=1)
