"""A draft profile for a payroll export no profile reads (``impcredit layouts draft FILE``).

The header is the row among the first 60 whose cells reach the most fields a payroll needs, by
meaning (the vocabulary): the employee (an id, or the name as printed), the pay period (its start
and end, a period printed in one cell, or only a pay date), hours (a total, or regular and
overtime summed), gross wages, the employer's taxes (a total, or each employer tax summed), and
where present the ssn, the FEIN, the check number and the pay frequency. Dates and numbers are
read from the values below the header; lines whose first cell says "total" become totals lines;
the columns that reach nothing are listed as comments. The draft is YAML for an analyst to read,
edit and put in the agency's profiles folder; ``impcredit layouts check`` then verifies it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from transforms.ingest.read import profile_files as pfiles
from transforms.ingest.read import readers as rd
from transforms.ingest.read import workbooks as wbk

# what payrolls call each field (read by meaning: "EE Name" is "Employee Name")
LEXICON: dict[str, list[str]] = {
    "employer_id": ["FEIN", "Federal ID", "Employer ID", "EIN", "Company FEIN"],
    "employee_id": ["Employee ID", "Employee Number", "Employee #", "Employee Code", "File Number", "Emp ID", "ID"],
    "employee_name": ["Employee", "Employee Name", "Name", "Full Name"],
    "last_name": ["Last Name"],
    "first_name": ["First Name"],
    "ssn": ["SSN", "Social Security Number", "Tax ID"],
    "period_start": ["Period Start", "Period Beginning", "Period Start Date", "Start Date", "Period From"],
    "period_end": ["Period End", "Period Ending", "Period End Date", "End Date", "Period To"],
    "pay_period": ["Pay Period", "Period", "Pay Period Dates"],
    "pay_date": ["Pay Date", "Check Date"],
    "check_id": ["Check Number", "Check #", "Voucher Number", "Check/Voucher Number", "Check No"],
    "pay_frequency": ["Pay Frequency", "Frequency"],
    "hours": ["Hours", "Total Hours", "Hours Worked"],
    "regular_hours": ["Regular Hours"],
    "overtime_hours": ["Overtime Hours"],
    "double_time_hours": ["Double Time Hours"],
    "gross_wages": ["Gross Pay", "Gross Wages", "Gross Earnings", "Gross", "Total Earnings", "Total Gross Pay"],
    "employer_taxes": ["Employer Taxes", "Total Employer Taxes", "Total Employer Tax", "Employer Tax Total",
                       "Total Employer Liability", "Employer Liability"],
}
ER_TAXES = ("social_security", "medicare", "futa", "sui", "sdi", "wf_swf", "fli")
SAYS_NOTHING = {"usd", "dollars"}  # a currency in a header ("Employer taxes (USD)") says nothing of the column


@dataclass
class Draft:
    name: str
    source: str
    header_index: int
    header_line: int
    fields: dict[str, str] = field(default_factory=dict)  # field -> the header as written
    er_parts: list[tuple[str, str]] = field(default_factory=list)  # (field, header) of each employer tax
    unmatched: list[str] = field(default_factory=list)
    date_format: str = "%m/%d/%Y"
    totals: list[tuple[str, str]] = field(default_factory=list)  # (label, scope)
    title_lines: int = 0
    sheet: str | None = None


def _records(path: Path) -> tuple[list[tuple[int, list[str | None]]], str | None]:
    if path.suffix.lower() in wbk.WORKBOOK_EXT:
        sheets = [s for s in wbk.read_workbook(path) if s.records]
        if not sheets:
            raise ValueError(f"{path}: the workbook has no sheet with a line")
        best = max(sheets, key=lambda s: len(s.records))  # the data, not the cover
        return best.records, best.name
    text, _ = rd.decode(path.read_bytes(), ["utf-8", "cp1252"])
    delims = [d for d in (",", ";", "\t", "|") if d in text[:20000]] or [","]
    best = max(delims, key=lambda d: max((len(c) for _, c in rd.delimited_records(text, d, limit=60)), default=0))
    return rd.delimited_records(text, best), None


def _reach(words, header: str) -> str | None:
    """The lexicon's field a header reaches, or an employer tax (``er_<tax>``), or None."""
    w = words.words(header) - SAYS_NOTHING
    for f, names in LEXICON.items():
        if any(words.words(n) == w for n in names):
            return f
    if "gross" in w and not ({"ytd", "taxable", "net"} & w):  # "Employee gross pay": the gross
        return "gross_wages"
    if "employer" in w or w == {"futa"}:
        for tax in ER_TAXES:
            if tax in w and not ({"employee", "taxable", "wage", "ytd"} & w):
                return f"er_{tax}"
    return None


def _score(words, cells: list[str | None]) -> int:
    return len({r for c in cells if c and c.strip() and (r := _reach(words, c))})


def draft_profile(path: Path, name: str | None = None) -> Draft:
    """The draft of ``path``'s layout (see the module's docstring)."""
    records, sheet = _records(path)
    words = pfiles.load_profiles()[0].model_copy(update={"match": "words"}).words()
    scored = [(_score(words, cells), -i) for i, (_, cells) in enumerate(records[:60])]
    if not scored or max(scored)[0] == 0:
        raise ValueError(f"{path}: no line among the first 60 names a payroll column (employee, hours, gross pay ...)")
    i = -max(scored)[1]
    d = Draft(name or _slug(path.stem), path.name, i, records[i][0], title_lines=i, sheet=sheet)
    for cell in records[i][1]:
        h = (cell or "").strip()
        if not h:
            continue
        f = _reach(words, h)
        if f is None or f in d.fields or any(f == p for p, _ in d.er_parts):
            d.unmatched.append(h)
        elif f.startswith("er_"):
            d.er_parts.append((f, h))
        else:
            d.fields[f] = h
    below = records[i + 1:i + 200]
    d.date_format = _date_format([c for _, cells in below for c in cells if c])
    d.totals = _totals(records[i + 1:])
    return d


def _slug(stem: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    return s if re.match(r"^[a-z]", s or "") else f"draft_{s}"


def _date_format(cells: list[str]) -> str:
    found = Counter()
    for c in cells:
        t = c.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}( 00:00:00)?", t):
            found["%Y-%m-%d"] += 1
        elif re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", t):
            found["%m/%d/%Y"] += 1
        elif re.fullmatch(r"\d{1,2}/\d{1,2}/\d{2}", t):
            found["%m/%d/%y"] += 1
    return found.most_common(1)[0][0] if found else "%m/%d/%Y"


def _totals(rows) -> list[tuple[str, str]]:
    """(label, scope) of the lines whose first cell says total: once in the file, its total;
    more often, the lines since the last one."""
    labels = Counter()
    for _, cells in rows:
        first = next((c.strip() for c in cells if c and c.strip()), None)
        if first and re.search(r"\btotals?\b", first, re.I) and len(first) < 60:
            labels[first] += 1
    return [(re.escape(label.lower()).replace(r"\ ", " "), "file" if n == 1 else "since_last")
            for label, n in labels.items()]


def _q(text: str) -> str:
    """A YAML scalar in double quotes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def draft_yaml(d: Draft) -> str:
    """The draft as a profile file: what it found said in comments beside each key."""
    f = d.fields
    lines = [f"# Draft profile for {d.source} ({'sheet ' + repr(d.sheet) + ', ' if d.sheet else ''}header on line "
             f"{d.header_line}), written by `impcredit layouts draft` on {dt.date.today().isoformat()}.",
             "# Read it, edit what is wrong, name the product and cite its documentation, then check it:",
             "#   impcredit layouts check --profiles DIR FILE",
             f"name: {d.name}", f"product: {_q('')}",
             f"description: {_q('Drafted from ' + d.source + ': an export no shipped profile reads.')}",
             f"date_formats: [{_q(d.date_format)}]"]
    ids: list[str] = []
    if "employee_id" not in f:
        if "last_name" in f and "first_name" in f:
            ids = ["last_name", "first_name"]
        elif "employee_name" in f:
            ids = ["employee_name"]
        if ids:
            lines.append("# no employee id: the name as printed is the id (the roster names the employee the same way)")
            lines.append(f"employee_id_from: [{', '.join(ids)}]")
    lines.append("fields:")
    for name, header in f.items():
        lines.append(f"  {name}: [{_q(header)}]")
    for name, header in d.er_parts:
        if "employer_taxes" not in f:
            lines.append(f"  {name}: [{_q(header)}]")
    derived = []
    if "hours" not in f and any(k in f for k in ("regular_hours", "overtime_hours")):
        derived.append(f"  hours: [{', '.join(k for k in ('regular_hours', 'overtime_hours', 'double_time_hours') if k in f)}]")
    if "employer_taxes" not in f and d.er_parts:
        derived.append(f"  employer_taxes: [{', '.join(n for n, _ in d.er_parts)}]")
    if derived:
        lines += ["derived:", *derived]
    optional = [k for k in ("overtime_hours", "double_time_hours", "check_id", "ssn") if k in f and (k != "ssn")]
    if optional:
        lines.append(f"optional: [{', '.join(optional)}]")
    if "pay_period" in f and not ("period_start" in f and "period_end" in f):
        lines.append("# the pay period is printed in one cell (12/24/2022 - 01/06/2023): cut in two")
        lines.append('split: {pay_period: {into: [period_start, period_end], pattern: "\\\\s*(\\\\S+)\\\\s*-\\\\s*(\\\\S+)\\\\s*"}}')
    elif not ("period_start" in f and "period_end" in f) and "pay_date" in f:
        lines.append("# only a pay date: the period ends pay_lag_days before it, by the pay frequency"
                     + (" of the line" if "pay_frequency" in f else ": state pay_frequency and pay_lag_days in payroll/files.csv"))
        freq = ", frequency: pay_frequency" if "pay_frequency" in f else ""
        lines.append(f"period_from_pay_date: {{rule: period_ending_on_pay_date{freq}}}")
    report = [f"  header_within: {max(d.header_index + 10, 20)}"] if d.header_index >= 50 else []
    if d.totals:
        report.append("  totals:")
        for label, scope in d.totals:
            checks = [k for k in ("hours", "gross_wages", "employer_taxes")
                      if k in f or (k == "hours" and "regular_hours" in f) or (k == "employer_taxes" and d.er_parts)]
            report.append(f"    - {{label: {_q(label)}, checks: [{', '.join(checks)}], scope: {scope}}}")
    if report:
        lines += ["report:", *report]
    if d.unmatched:
        lines.append("# columns that reach no field (read, not used):")
        lines += [f"#   {h}" for h in d.unmatched]
    missing = [k for k in ("hours", "gross_wages", "employer_taxes") if k not in f and not (
        (k == "hours" and any(x in f for x in ("regular_hours", "overtime_hours"))) or (k == "employer_taxes" and d.er_parts))]
    if "employee_id" not in f and not ids:
        missing.append("employee_id")
    if missing:
        lines.append(f"# NOT FOUND, to add by hand (the column's header as written): {', '.join(missing)}")
    return "\n".join(lines) + "\n"


__all__ = ["Draft", "draft_profile", "draft_yaml"]
