"""Reports as tables (spec section 1, "Payroll as employers' systems write it").

Real payroll reports are not plain tables: title and address lines sit above the header, "Totals"
and "Payroll Totals" lines below or between employees, block header lines give the payroll period
and pay day of the lines below them, the file name gives the period of a one-payroll workbook, and
facts the export keeps outside its rows (the employer's FEIN) come from the submission: a folder
named by the employer id (``payroll/123456789/...``) or ``payroll/files.csv``.

A profile with a ``report`` section (``profiles.ReportLayout``) says where these are. Here a file's
records (line, cells) become the table the staging reads: the header is the first line that holds
the profile's columns (the lines above it are the preamble), every line after it is a data row, a
totals line (skipped, counted, and checked against the lines it totals), a block header line (its
fields carried down to the rows below), a repeated header, a note line, or blank. The fields of
blocks, the file name and the submission become columns of every row; where the file has the field
too, the two must agree (a disagreement is a reject of the row). Every line is accounted for.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import polars as pl

from transforms.ingest import profiles as pf
from transforms.ingest import readers as rd
from transforms.ingest.parsing import UNIVERSAL_DATES, parse_number
from transforms.ingest.report_layout import ReportLayout, TotalsLine
from transforms.ingest.staging import CellError

CONTEXT_FIELDS = ("employer_id", "period_start", "period_end", "pay_date")
MANIFEST = "payroll/files.csv"
_FEIN = re.compile(r"^\d{2}-?\d{7}$")


@dataclass(frozen=True)
class FileContext:
    """What the submission says of a payroll file outside its rows: its employer (the folder named
    by it, or ``payroll/files.csv``), and from the manifest its period, pay date and layout."""

    values: tuple[tuple[str, str], ...] = ()  # (field, value) of CONTEXT_FIELDS
    layout: str | None = None
    source: str = ""  # where it comes from, for messages

    def get(self, name: str) -> str | None:
        return dict(self.values).get(name)

    @property
    def key(self) -> str:
        """What the file's lines take from outside their rows, for the duplicate test (spec
        section 1: a line's fields from its folder or files.csv are part of it)."""
        return ";".join(f"{k}={v}" for k, v in self.values) + (f";layout={self.layout}" if self.layout else "")


@dataclass
class Shape:
    """How the lines of a table were read: counts of every kind and the rejects of the shape."""

    preamble: list[str] = field(default_factory=list)  # the text of the lines above the header
    totals: int = 0
    blocks: int = 0
    repeated_headers: int = 0
    notes: int = 0
    errors: list[CellError] = field(default_factory=list)  # totals that disagree with their lines

    def words(self) -> str:
        parts = [f"{n} {what}" for n, what in ((len(self.preamble), "preamble line(s)"), (self.totals, "totals line(s)"),
                                                (self.blocks, "block header line(s)"),
                                                (self.repeated_headers, "repeated header(s)"),
                                                (self.notes, "note line(s)")) if n]
        return ", ".join(parts)


# --- the submission's context -------------------------------------------------------------------

def contexts(root: Path, rels: list[str]) -> tuple[dict[str, FileContext], list[CellError]]:
    """The context of each payroll file (by path): the employer of a folder named by a 9-digit
    id (``payroll/123456789/...``, ``NN-NNNNNNN`` too), overlaid by its line of ``payroll/files.csv``
    (``file`` relative to ``payroll/`` or to the submission; ``employer_id`` and optionally
    ``period_start``, ``period_end``, ``pay_date``, ``layout``). A line of the manifest that
    cannot be read is an error naming it."""
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
    for line, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        name = row.get("file", "").removeprefix("payroll/")
        if name not in known:
            errors.append(CellError(MANIFEST, line, "file", name, "unknown_file",
                                    f"file: {name!r} is not a payroll file of the submission"))
            continue
        emp = row.get("employer_id", "").replace("-", "")
        if emp and not re.fullmatch(r"\d{9}", emp):
            errors.append(CellError(MANIFEST, line, "employer_id", row.get("employer_id"), "employer_id_format",
                                    "employer_id must be 9 digits"))
            continue
        values = dict(out[known[name]].values) if known[name] in out else {}
        values |= {k: (v.replace("-", "") if k == "employer_id" else v) for k in CONTEXT_FIELDS if (v := row.get(k))}
        out[known[name]] = FileContext(tuple(sorted(values.items())), row.get("layout") or None, f"{MANIFEST} line {line}")
    return out, errors


def file_name_key(rel: str, profiles: list[pf.Profile]) -> str:
    """The fields a report profile would take from the file's name (period, pay date), for the
    duplicate test: byte-identical workbooks of different payrolls are different files."""
    name = PurePosixPath(rel).name
    for p in profiles:
        if p.report is not None and p.report.file_name is not None and (m := re.search(p.report.file_name.pattern, name)):
            return ";".join(f"{k}={v}" for k, v in sorted(m.groupdict().items()) if v)
    return ""


# --- a report's lines ------------------------------------------------------------------------------

def _first(cells: list[str | None]) -> tuple[int, str] | None:
    for i, c in enumerate(cells):
        if c is not None and c.strip():
            return i, c.strip()
    return None


def find_header(records: list[tuple[int, list[str | None]]], profile: pf.Profile) -> tuple[int, pf.Match] | None:
    """The index of the first record (within the profile's ``header_within``) whose cells hold
    the profile's columns, and its match."""
    within = profile.report.header_within if profile.report is not None else 1
    for i, (_, cells) in enumerate(records[:within]):
        m = pf.match_headers(profile, [(c or "").strip() for c in cells])
        if m.ok:
            return i, m
    return None


def _parse_date(text: str, formats: list[str]) -> str:
    """A date as ISO when one of the formats reads it, else the text as given (the staging then
    rejects it, naming the column)."""
    for f in [*formats, *UNIVERSAL_DATES]:
        try:
            return dt.datetime.strptime(text.strip(), f).date().isoformat()
        except ValueError:
            continue
    return text.strip()


def shape_report(records: list[tuple[int, list[str | None]]], header: int, match: pf.Match, rel: str,
                 sheet: str | None = None, delimiter: str | None = None) -> tuple[tuple[rd.RawTable, pf.Match], Shape]:
    """The table of a report: the header record ``header`` of ``records``, the data rows after it
    with the fields of their block header lines and of the file name as extra columns; the
    counts of every other kind of line and the totals that disagree (``Shape``)."""
    profile, layout = match.profile, match.profile.report
    shape = Shape()
    head_line, head = records[header]
    head_key = [(c or "").strip().lower() for c in head]
    block_fields = [f for b in layout.blocks for f in b.fields] if layout else []
    current: dict[str, str | None] = dict.fromkeys(block_fields)
    for _, cells in records[:header]:  # the first payroll's block lines may come before the header
        if not _block(cells, layout, profile, current):
            shape.preamble.append(" ".join(c.strip() for c in cells if c and c.strip()))
        else:
            shape.blocks += 1
    rows: list[tuple[int, list[str | None]]] = [(head_line, list(head))]
    carried: list[list[str | None]] = []  # the block fields of each data row
    since_last: list[list[str | None]] = []
    block_rows: list[list[str | None]] = []
    file_rows: list[list[str | None]] = []
    where = f"{rel}[{sheet}]" if sheet else rel
    for line, cells in records[header + 1:]:
        first = _first(cells)
        if first is None:
            continue
        if [(c or "").strip().lower() for c in cells[:len(head_key)]] == head_key:
            shape.repeated_headers += 1
            continue
        pos, text = first
        if _block(cells, layout, profile, current):
            shape.blocks += 1
            since_last, block_rows = [], []
            continue
        total = next((t for t in (layout.totals if layout else []) if re.fullmatch(t.label, text, re.I)), None)
        if total is not None:
            shape.totals += 1
            lines_totalled = {"since_last": since_last, "block": block_rows, "file": file_rows}[total.scope]
            shape.errors += _check_totals(total, cells, lines_totalled, match, where, line)
            since_last = []
            continue
        if layout and any(re.fullmatch(n, text, re.I) for n in layout.notes):
            shape.notes += 1
            continue
        rows.append((line, list(cells)))
        carried.append([current[f] for f in block_fields])
        since_last.append(cells)
        block_rows.append(cells)
        file_rows.append(cells)
    table = rd.table_from_records(rows, sheet=sheet, delimiter=delimiter)
    name_fields = _name_fields(profile, rel)
    extra = {f"__block_{f}": [c[i] for c in carried] for i, f in enumerate(block_fields)}
    if extra:
        values = pl.DataFrame({"__line": [ln for ln, _ in rows[1:]], **extra},
                              schema={"__line": pl.Int64, **dict.fromkeys(extra, pl.String)})
        table.frame = table.frame.join(values, on="__line", how="left")
    for k, v in name_fields.items():
        table.frame = table.frame.with_columns(pl.lit(v, dtype=pl.String).alias(f"__name_{k}"))
    return _as_cells(table, match, [*(f for f in block_fields), *name_fields]), shape


def _said_by(column: str) -> str:
    """How a rejected value from outside the rows is named: the field and where it came from."""
    if column.startswith("__block_"):
        return f"{column.removeprefix('__block_')} (block header line)"
    return f"{column.removeprefix('__name_')} (file name)"


def _block(cells: list[str | None], layout: ReportLayout | None, profile: pf.Profile,
           current: dict[str, str | None]) -> bool:
    """Whether the line is a block header line; its fields are then set in ``current``."""
    first = _first(cells)
    if layout is None or first is None:
        return False
    pos, text = first
    block = next((b for b in layout.blocks if re.fullmatch(b.label, text, re.I)), None)
    if block is None:
        return False
    value = next((c.strip() for c in cells[pos + 1:] if c and c.strip()), "")
    m = re.fullmatch(block.value, value)
    for i, f in enumerate(block.fields):
        v = m.group(i + 1).strip() if m and m.lastindex and m.lastindex > i else value
        current[f] = _parse_date(v, profile.date_formats) if f in ("period_start", "period_end", "pay_date") else v
    return True


def _as_cells(table: rd.RawTable, match: pf.Match, fields: list[str]) -> tuple[rd.RawTable, pf.Match]:
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
    return table, pf.Match(match.profile, columns, match.missing, match.unmatched, match.duplicated)


def _name_fields(profile: pf.Profile, rel: str) -> dict[str, str]:
    """The fields of the file's name (``report.file_name``), dates as ISO."""
    spec = profile.report.file_name if profile.report is not None else None
    if spec is None:
        return {}
    m = re.search(spec.pattern, PurePosixPath(rel).name)
    if not m:
        return {}
    out = {}
    for k, v in m.groupdict().items():
        if v is not None:
            try:
                out[k] = dt.datetime.strptime(v, spec.date_format).date().isoformat()
            except ValueError:
                out[k] = v
    return out


def _value(cells: list[str | None], match: pf.Match, name: str) -> float | None:
    """A logical field's number on a line (a derived column's parts summed)."""
    profile = match.profile
    parts = profile.derived.get(name, [name])
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


def _check_totals(rule: TotalsLine, cells: list[str | None], rows: list[list[str | None]], match: pf.Match,
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


# --- the submission's fields on every row -------------------------------------------------------------

def apply_context(table: rd.RawTable, match: pf.Match, context: FileContext | None,
                  where: str) -> tuple[rd.RawTable, pf.Match, list[CellError]]:
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
    return out, pf.Match(match.profile, columns, match.missing, match.unmatched, match.duplicated), errors


def unread_employer(match: pf.Match, where: str) -> CellError | None:
    """A payroll table that gives no employer id at all (no column, no folder, no files.csv):
    what to do, said once for the file."""
    if match.profile.dataset == "payroll" and "employer_id" not in match.columns:
        return CellError(where, None, "employer_id", None, "no_employer_id",
                         "the file gives no employer id: put it in a folder named by the employer's FEIN "
                         "(payroll/123456789/) or name it in payroll/files.csv")
    return None
