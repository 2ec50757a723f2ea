"""The bench's second data set: the same payroll shaped as employers send it (issue 28).

From a generated (clean) submission: every payroll file keeps its employers (about 50 a file) and
is written again in one of the layouts employers' systems write (rotating over the files): the
canonical columns as a spreadsheet saves them (dates ``1/13/2023``, money ``$1,234.56`` with
thousands and ``($12.50)`` for a negative, the FEIN ``10-0000001``, CRLF, quoted where a cell
holds a comma), a register with a line per earnings, tax and deduction code (``register_lines``),
a journal keyed by check date (``journal_lines``), a PEO's pipe-delimited export (``peo_export``).
The other files are the clean set's. Per-employer report exports (one workbook per payroll) are
measured apart (``formats.py``): their cost is per file, not per row.
"""

from __future__ import annotations

import csv
import json
import shutil
from datetime import date
from pathlib import Path

import polars as pl

LAYOUTS = ("canonical", "register_lines", "journal_lines", "peo_export")


def _money(v: str) -> str:
    c = round(float(v) * 100)
    s = f"${abs(c) // 100:,}.{abs(c) % 100:02d}"
    return f"({s})" if c < 0 else s


def _day(v: str) -> str:
    d = date.fromisoformat(v)
    return f"{d.month}/{d.day}/{d.year}"


def write_spreadsheet_csv(rows: list[dict], path: Path) -> Path:
    """The canonical columns as a spreadsheet saves them to CSV."""
    cols = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages", "employer_taxes"]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(cols)
        for r in rows:
            e = r["employer_id"]
            w.writerow([f"{e[:2]}-{e[2:]}", r["employee_id"], r["ssn"], _day(r["period_start"]), _day(r["period_end"]),
                        r["hours"], _money(r["gross_wages"]), _money(r["employer_taxes"])])
    return path


def shaped(clean: Path) -> Path:
    """The shaped copy of the clean submission ``clean`` (made once, beside it)."""
    from transforms.synthetic.vendors import write_layout

    out = clean.with_name(clean.name + "-shaped")
    marker = out / ".bench.json"
    info = json.loads((clean / ".bench.json").read_text())
    if marker.exists() and json.loads(marker.read_text()).get("generator") == info.get("generator"):
        return out
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(clean, out, ignore=shutil.ignore_patterns("payroll"))
    (out / "payroll").mkdir()
    for k, src in enumerate(sorted((clean / "payroll").glob("*.csv"))):
        rows = pl.read_csv(src, infer_schema=False).to_dicts()
        layout = LAYOUTS[k % len(LAYOUTS)]
        if layout == "canonical":
            write_spreadsheet_csv(rows, out / "payroll" / src.name)
        else:
            write_layout(layout, rows, out / "payroll" / f"{src.stem}_{layout}")
    marker.write_text(json.dumps({**info, "shaped": list(LAYOUTS)}, indent=1))
    return out
