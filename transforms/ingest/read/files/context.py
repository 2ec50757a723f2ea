"""The submission's context of a payroll file (spec section 1): what it says of a file outside its
rows. A folder named by the employer's FEIN (``payroll/123456789/...``) gives the employer id;
``payroll/files.csv`` names, per file (or per folder, ``123456789/``), its ``employer_id`` and
optionally ``period_start``, ``period_end``, ``pay_date``, ``pay_frequency`` and ``pay_lag_days``
(a report with only check dates) and ``layout``; a line with a ``sheet`` names them for that sheet
of a workbook (a payroll bureau's workbook, a tab per client company), the file's other sheets
keeping the file's line. Where the file has the field too, the two must agree: a disagreement is a
reject of the row. The fields a line takes from outside its rows are
part of its identity for the duplicate test (``FileContext.key``).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import polars as pl

from transforms.ingest.read import problems as pb
from transforms.ingest.read.cast.row_checks import CellError
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files import workbooks as wbk
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts import profiles as pf

CONTEXT_FIELDS = ("employer_id", "period_start", "period_end", "pay_date", "pay_frequency", "pay_lag_days")
MANIFEST = "payroll/files.csv"
_FEIN = re.compile(r"^\d{2}-?\d{7}$")


@dataclass(frozen=True)
class FileContext:
    """What the submission says of a payroll file outside its rows: its employer (the folder named
    by it, or ``payroll/files.csv``), and from the manifest its period, pay date and layout."""

    values: tuple[tuple[str, str], ...] = ()  # (field, value) of CONTEXT_FIELDS
    layout: str | None = None
    source: str = ""  # where it comes from, for messages
    sheets: tuple[tuple[str, FileContext], ...] = ()  # a workbook's sheet -> its own context

    def get(self, name: str) -> str | None:
        return dict(self.values).get(name)

    def for_sheet(self, name: str | None) -> FileContext:
        """The context of a sheet of the workbook: its files.csv line's, else the file's."""
        return dict(self.sheets).get(name, self) if name is not None else self

    def employers(self) -> list[str]:
        """The employers the context gives: the file's and each of its sheets'."""
        return [e for c in (self, *(c for _, c in self.sheets)) if (e := c.get("employer_id"))]

    @property
    def key(self) -> str:
        """What the file's lines take from outside their rows, for the duplicate test (spec
        section 1: a line's fields from its folder or files.csv are part of it)."""
        return (";".join(f"{k}={v}" for k, v in self.values) + (f";layout={self.layout}" if self.layout else "")
                + "".join(f";sheet[{n}]:{c.key}" for n, c in self.sheets))


def contexts(root: Path, rels: list[str]) -> tuple[dict[str, FileContext], list[CellError]]:
    """The context of each payroll file (by path): the employer of a folder named by a 9-digit
    id (``payroll/123456789/...``, ``NN-NNNNNNN`` too), overlaid by its line of ``payroll/files.csv``
    (``file`` relative to ``payroll/`` or to the submission, or a folder ending in ``/`` for every
    file under it; ``employer_id`` and optionally ``period_start``, ``period_end``, ``pay_date``,
    ``pay_frequency`` and ``pay_lag_days`` (a report with only check dates), ``layout``). A line of
    the manifest that cannot be read is an error naming it."""
    out: dict[str, FileContext] = {}
    for rel in rels:
        parts = PurePosixPath(rel).parts
        for folder in parts[1:-1]:
            if _FEIN.match(folder):
                out[rel] = FileContext((("employer_id", folder.replace("-", "")),), None, f"folder {'/'.join(parts[:-1])}")
    manifest = root / MANIFEST
    errors: list[CellError] = []
    if not manifest.is_file():
        return out, errors
    text, _ = rd.decode(manifest.read_bytes(), ["utf-8", "cp1252"])
    rows = list(csv.DictReader(text.splitlines()))
    known = {r.removeprefix("payroll/"): r for r in rels}
    by_sheet: list[tuple[int, dict[str, str], str]] = []
    for line, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        name = row.get("file", "").removeprefix("payroll/")
        if row.get("sheet"):
            by_sheet.append((line, row, name))
            continue
        targets = [known[name]] if name in known else [r for k, r in known.items() if name.endswith("/") and k.startswith(name)]
        if not targets:
            errors.append(CellError(MANIFEST, line, "file", name, "unknown_file",
                                    f"file: {name!r} is not a payroll file or folder of the submission"))
            continue
        bad = _manifest_error(row, line)
        if bad is not None:
            errors.append(bad)
            continue
        for target in targets:
            values = dict(out[target].values) if target in out else {}
            values |= {k: _context_value(k, v) for k in CONTEXT_FIELDS if (v := row.get(k))}
            out[target] = FileContext(tuple(sorted(values.items())), row.get("layout") or None, f"{MANIFEST} line {line}")
    errors += _sheet_contexts(root, known, by_sheet, out)
    return out, errors


def _sheet_contexts(root: Path, known: dict[str, str], lines: list[tuple[int, dict[str, str], str]],
                    out: dict[str, FileContext]) -> list[CellError]:
    """The files.csv lines with a ``sheet``: each gives that sheet of a workbook its context (the
    file's, overlaid by the line's fields), set in ``out``; a line naming a file that is not a
    workbook of the submission or a sheet the workbook does not have is an error naming both (only
    the workbook's sheet names are read)."""
    errors: list[CellError] = []
    for line, row, name in lines:
        sheet = row["sheet"]
        if name not in known or PurePosixPath(name).suffix.lower() not in wbk.WORKBOOK_EXT:
            errors.append(CellError(MANIFEST, line, "file", name, "unknown_file",
                                    f"file: {name!r} is not a workbook of the submission (a line with a sheet "
                                    f"names one workbook's sheet)"))
            continue
        rel = known[name]
        names = wbk.sheet_names(root / rel)
        if names is not None and sheet not in names:
            errors.append(CellError(MANIFEST, line, "sheet", sheet, "unknown_sheet",
                                    f"sheet: {name} has no sheet {sheet!r} (its sheets: "
                                    f"{', '.join(repr(n) for n in names)})"))
            continue
        if row.get("layout"):
            errors.append(CellError(MANIFEST, line, "layout", row["layout"], "sheet_layout",
                                    "layout is named per file: write it on the file's line without a sheet"))
            continue
        if (bad := _manifest_error(row, line)) is not None:
            errors.append(bad)
            continue
        base = out.get(rel, FileContext())
        values = dict(base.values) | {k: _context_value(k, v) for k in CONTEXT_FIELDS if (v := row.get(k))}
        mine = FileContext(tuple(sorted(values.items())), None, f"{MANIFEST} line {line} (sheet '{sheet}')")
        out[rel] = FileContext(base.values, base.layout, base.source or MANIFEST,
                               tuple(sorted({**dict(base.sheets), sheet: mine}.items())))
    return errors


def _context_value(name: str, value: str) -> str:
    if name == "employer_id":
        return value.replace("-", "")
    if name == "pay_frequency":
        return pf.USUAL_FREQUENCIES.get(value.upper().replace(" ", ""), value.lower())
    return value


def _manifest_error(row: dict[str, str], line: int) -> CellError | None:
    """A value of a files.csv line that cannot be used, named."""
    emp = row.get("employer_id", "").replace("-", "")
    if emp and not re.fullmatch(r"\d{9}", emp):
        return CellError(MANIFEST, line, "employer_id", row.get("employer_id"), "employer_id_format",
                         "employer_id must be 9 digits")
    freq = row.get("pay_frequency", "")
    if freq and _context_value("pay_frequency", freq) not in pf.FREQUENCIES:
        return CellError(MANIFEST, line, "pay_frequency", freq, "unknown_frequency",
                         f"pay_frequency must be one of {', '.join(pf.FREQUENCIES)}")
    lag = row.get("pay_lag_days", "")
    if lag and not (lag.isdigit() and int(lag) <= 31):
        return CellError(MANIFEST, line, "pay_lag_days", lag, "not_a_number",
                         "pay_lag_days must be a whole number of days from 0 to 31 (days from the period's end to the pay date)")
    return None


def file_name_key(rel: str, profiles: list[pf.Profile]) -> str:
    """The fields a report profile would take from the file's name (period, pay date), for the
    duplicate test: byte-identical workbooks of different payrolls are different files."""
    name = PurePosixPath(rel).name
    for p in profiles:
        if p.report is not None and p.report.file_name is not None and (m := re.search(p.report.file_name.pattern, name)):
            return ";".join(f"{k}={v}" for k, v in sorted(m.groupdict().items()) if v)
    return ""


# --- the submission's fields on every row -------------------------------------------------------------

def apply_context(table: rd.RawTable, match: hd.Match, context: FileContext | None,
                  where: str) -> tuple[rd.RawTable, hd.Match, list[CellError]]:
    """The context's fields as columns of every row where the file lacks them; where it has them,
    a row whose value disagrees is a reject (spec section 1)."""
    if context is None or not context.values:
        return table, match, []
    frame, headers, columns = table.frame, list(table.headers), dict(match.columns)
    errors: list[CellError] = []
    for name, value in context.values:
        if name in columns:
            cell = pl.col(f"c{columns[name]}").str.strip_chars()
            if name == "employer_id":
                cell = cell.str.replace_all(r"[- ]", "")
            elif name == "pay_frequency":  # "Bi-Weekly" is biweekly
                codes = {**pf.USUAL_FREQUENCIES, **{f.upper(): f for f in pf.FREQUENCIES}}
                cell = cell.str.to_uppercase().str.replace_all(" ", "").replace_strict(codes, default=cell)
            other = frame.filter(cell.is_not_null() & (cell != "") & (cell != value)).select("__line", f"c{columns[name]}")
            errors += [CellError(where, line, name, v, "context_mismatch",
                                 f"{name}: {v!r} disagrees with {value} given by {context.source}")
                       for line, v in other.iter_rows()]
            continue
        columns[name] = len(headers)
        frame = frame.with_columns(pl.lit(value, dtype=pl.String).alias(f"c{len(headers)}"))
        headers.append(f"{name} ({context.source})")
    frame = frame.select(*[f"c{i}" for i in range(len(headers))], "__line")
    out = rd.RawTable(headers, table.header_line, frame, table.ragged, table.sheet, table.encoding, table.delimiter)
    return out, match.with_columns(columns), errors


def unread_context(match: hd.Match, rel: str, sheet: str | None = None) -> CellError | None:
    """A payroll table that gives no employer id, no pay period or no pay frequency at all (no
    column, no block line, no file name, no folder, no files.csv): what to do, said once for the
    file, naming the profile and the sheet (and a name pattern of the profile that matched nothing)."""
    profile, cols = match.profile, match.columns
    if profile.dataset != "payroll":
        return None
    where = f"{rel}[{sheet}]" if sheet else rel
    said = pb.said_at(profile.name, sheet)
    if "employer_id" not in cols:
        return CellError(where, None, "employer_id", None, "no_employer_id",
                         said + "the file gives no employer id: put it in a folder named by the employer's FEIN "
                         "(payroll/123456789/) or name it in payroll/files.csv")
    rule = profile.period_from_pay_date
    if rule is not None:
        if rule.frequency is None and "pay_frequency" not in cols:
            return CellError(where, None, "pay_frequency", None, "no_pay_frequency",
                             said + "the report gives only check dates and no pay frequency: state the employer's "
                             "pay_frequency (weekly, biweekly, semimonthly, monthly) for this file in payroll/files.csv")
        if "pay_date" not in cols:
            return CellError(where, None, "pay_date", None, "no_period",
                             said + _name_missed(profile, rel, sheet, {"pay_date"})
                             + "the file gives no check date to derive the pay period from")
    elif "period_start" not in cols or "period_end" not in cols:
        return CellError(where, None, "period_start", None, "no_period",
                         said + _name_missed(profile, rel, sheet, {"period_start", "period_end"})
                         + "the file gives no pay period (period start and end): name them in payroll/files.csv "
                         "(period_start, period_end) for a file of one payroll")
    return None


def _name_missed(profile, rel: str, sheet: str | None, fields: set[str]) -> str:
    """``report.file_name 'P' matches nothing in the file's name 'N'; `` where the profile reads
    ``fields`` from the file's (or the sheet's) name and the name gave none of them."""
    return "".join(f"{said}; " for said, _ in names_missed(profile, rel, sheet, fields)[:1])


def names_missed(profile, rel: str, sheet: str | None, fields: set[str]) -> list[tuple[str, set[str]]]:
    """Each name pattern of ``profile`` (``report.file_name``, ``report.sheet_name``) that reads one of
    ``fields`` from the file's (the sheet's) name, which gave none: what it matched nothing in, and
    those fields."""
    report, out = profile.report, []
    for key, spec, name in (("file_name", report and report.file_name, PurePosixPath(rel).name),
                            ("sheet_name", report and report.sheet_name, sheet)):
        if spec and name is not None and (lost := fields & set(re.compile(spec.pattern).groupindex)):
            out.append((f"report.{key} '{spec.pattern}' matches nothing in the {key.split('_')[0]}'s name '{name}'",
                        lost))
    return out
