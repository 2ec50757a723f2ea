"""``awards.xlsx`` for analysts: the awards, the employee credits and the rejected input as
sheets. Text is written as text (never a formula, a link or a number: a name beginning with
``=`` is a name), money as numbers with two decimals."""

from __future__ import annotations

from pathlib import Path

import polars as pl

MAX_ROWS = 1_048_575  # a sheet's rows below its header; more are left out, and the sheet says so


def write_workbook(path: Path, sheets: dict[str, pl.DataFrame]) -> Path:
    """One sheet per frame (its columns as they are; floats with 2 decimals)."""
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False,
                                         "strings_to_numbers": False, "constant_memory": True})
    try:
        bold = wb.add_format({"bold": True})
        money = wb.add_format({"num_format": "#,##0.00"})
        for name, frame in sheets.items():
            ws = wb.add_worksheet(name[:31])
            ws.write_row(0, 0, frame.columns, bold)
            floats = {i for i, t in enumerate(frame.dtypes) if t.is_float()}
            for r, row in enumerate(frame.head(MAX_ROWS).iter_rows(), start=1):
                for c, v in enumerate(row):
                    if v is None:
                        continue
                    if isinstance(v, str):
                        ws.write_string(r, c, v)
                    elif isinstance(v, bool):
                        ws.write_boolean(r, c, v)
                    elif isinstance(v, int | float):
                        ws.write_number(r, c, v, money if c in floats else None)
                    else:
                        ws.write_string(r, c, str(v))
            if frame.height > MAX_ROWS:
                ws.write_string(MAX_ROWS + 1, 0, f"... {frame.height - MAX_ROWS:,} more rows: see the CSV file")
            ws.freeze_panes(1, 0)
    finally:
        wb.close()
    return path
