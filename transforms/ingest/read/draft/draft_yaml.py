"""A draft profile (``draft.Draft``) written as the YAML of a profile: what was found beside each
key, and at the foot what was guessed, what to check, what was not found, and whether the draft
loads as a profile (``profiles.Profile``: the strict schema any profile is read through)."""

from __future__ import annotations

import datetime as dt
import shlex

import yaml
from pydantic import ValidationError

from transforms.ingest.read.draft.draft_codes import codes_yaml
from transforms.ingest.read.layouts.profiles import Profile

HOURS_PARTS = ("regular_hours", "overtime_hours", "double_time_hours")


def _q(text: str) -> str:
    """A YAML scalar in double quotes."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _alias(a: str | dict) -> str:
    if isinstance(a, str):
        return _q(a)
    if "column" in a:
        col = a["column"]
        return f"{{column: {col if isinstance(col, int) else _q(col)}}}"
    return f"{{header: {_q(a['header'])}, section: {_q(a['section'])}}}"


def draft_yaml(d) -> str:
    """The draft as a profile file: what it found said in comments beside each key."""
    f = d.fields
    n = d.transposed_spec[0]
    labels = ("labels in column A, " if n == 1 else f"labels in columns A-{chr(64 + n)}, ") if d.transposed else ""
    where = (f"sheet {d.sheet!r}, " if d.sheet else "") + labels
    lines = [f"# Draft profile for {d.source} ({where}header on line {d.header_line}), written by "
             f"`impcredit layouts draft` on {dt.date.today().isoformat()}.",
             "# Read it, edit what is wrong, name the product and cite its documentation, then check it:",
             f"#   impcredit layouts check --profiles DIR {shlex.quote(d.source)}",
             f"name: {d.name}", f"product: {_q('')}",
             f"description: {_q('Drafted from ' + d.source + ': an export no shipped profile reads.')}",
             f"date_formats: [{_q(d.date_format)}]"]
    if d.blank_zero:
        lines.append("number: {blank: zero}")
    if d.fixed_width is not None:
        cont = f", continued: [{', '.join(_q(c) for c in d.fixed_width)}]" if d.fixed_width else ""
        lines += ["# printed in columns: each line cut at the heading line's columns (page headers after a form feed skipped)",
                  "formats: [csv]", f"extensions: [{_q(d.extension or '.txt')}]", f"fixed_width: {{cut: heading{cont}}}"]
    if d.sheets_read or d.sheets_skip:
        lines.append("# the sheets read, and those passed over whatever they hold")
        said = ([f"read: [{', '.join(_q(s) for s in d.sheets_read)}]"] if d.sheets_read else []) + (
            [f"skip: [{', '.join(_q(s) for s in d.sheets_skip)}]"] if d.sheets_skip else [])
        lines.append(f"sheets: {{{', '.join(said)}}}")
    if d.transposed:
        n, group, heading = d.transposed_spec
        lines.append("# the items run down the side, a column per employee or check" + (
            f" (their labels over columns A-{chr(64 + n)})" if n > 1 else "") + (
            "; the names across row 1 each head a group of columns, row 2 heads those" if group else ""))
        extra = f", group_row: {group}, heading_row: {heading}" if group else ""
        lines.append(f"transposed: {{label_columns: {n}{extra}}}")
    if d.ids_from:
        lines.append("# no employee id: the name as printed is the id (the roster names the employee the same way)")
        lines.append(f"employee_id_from: [{', '.join(d.ids_from)}]")
    lines.append("fields:")
    for name, alias in f.items():
        lines.append(f"  {name}: [{_alias(alias)}]")
    parts = [] if "employer_taxes" in f else d.er_parts
    pays = [] if "gross_wages" in f else d.pay_parts
    for name, alias in [*parts, *pays]:
        lines.append(f"  {name}: [{_alias(alias)}]")
    for name, total in d.either.items():  # its total where the file has one, else its parts summed
        summed = pays if name == "gross_wages" else parts
        lines.append(f"  {name}: {{total: [{_q(total)}], parts: [{', '.join(n for n, _ in summed)}]}}")
    if d.units:
        lines.append("# hours written as hours and minutes (44:30): read as decimal hours")
        lines.append(f"units: {{{', '.join(f'{k}: {_q(v)}' for k, v in d.units.items())}}}")
    derived = []
    hours = [k for k in f if k in HOURS_PARTS or k.startswith("hours_")]  # a pivot's hours column per earning
    if "hours" not in f and hours:
        derived.append(f"  hours: [{', '.join(hours)}]")
    if pays and "gross_wages" not in d.either:
        derived.append(f"  gross_wages: [{', '.join(n for n, _ in pays)}]")
    if parts and "employer_taxes" not in d.either:
        derived.append(f"  employer_taxes: [{', '.join(n for n, _ in parts)}]")
    if derived:
        lines += ["derived:", *derived]
    lines += codes_yaml(d)
    optional = [k for k in f if k in ("overtime_hours", "double_time_hours", "check_id") or k.startswith("hours_")] + [
        n for n, _ in pays[1:]]  # the kinds of earnings past the first: a file may print none of it
    if optional:
        lines.append(f"optional: [{', '.join(optional)}]")
    if d.carry:
        lines.append("# printed on a check's first line only: a blank takes the line above's (same employee)")
        lines.append(f"carry: [{', '.join(d.carry)}]")
    lines += _periods(d)
    lines += _report(d)
    unused = [f"{_said(a)} (one of the employer's taxes: in the total)" for _, a in d.er_parts if not parts] + [
        f"{_said(a)} (a kind of earnings: in the gross pay)" for _, a in d.pay_parts if not pays]
    if d.unmatched or unused:
        lines.append("# columns that reach no field (read, not used):")
        lines += [f"#   {h}" for h in [*d.unmatched, *unused]]
    lines += _foot(d)
    text = "\n".join(lines) + "\n"
    if (err := loads(text)) is not None:
        text += f"# DOES NOT LOAD YET (fix this first): {err}\n"
    return text


def _said(a: str | dict) -> str:
    if isinstance(a, str):
        return a
    return f"column {a['column']}" if "column" in a else f"{a['header']} (after {a['section']})"


def _periods(d) -> list[str]:
    f, from_blocks = d.fields, {x for _, fields, _ in d.blocks for x in fields}
    has = set(f) | from_blocks
    if "pay_period" in f and not {"period_start", "period_end"} <= has:
        return ["# the pay period is printed in one cell (12/24/2022 - 01/06/2023): cut in two",
                'split: {pay_period: {into: [period_start, period_end], pattern: "\\\\s*(\\\\S+)\\\\s*-\\\\s*(\\\\S+)\\\\s*"}}']
    if d.sheet_date:
        has.add("pay_date")
    if not {"period_start", "period_end"} <= has and "pay_date" in has:
        freq = ", frequency: pay_frequency" if "pay_frequency" in f else ""
        return ["# only a pay date: the period ends pay_lag_days before it, by the pay frequency"
                + (" of the line" if "pay_frequency" in f else ": state pay_frequency and pay_lag_days in payroll/files.csv"),
                f"period_from_pay_date: {{rule: period_ending_on_pay_date{freq}}}"]
    return []


def _report(d) -> list[str]:
    f = d.fields
    report = [f"  header_within: {max(d.header_index + 10, 20)}"] if d.header_index >= 50 else []
    if d.totals:
        report.append("  totals:")
        for label, scope, first in d.totals:
            checks = [k for k in ("hours", "gross_wages", "employer_taxes")
                      if k in f or d.codes or (k == "hours" and "regular_hours" in f) or (k == "employer_taxes" and d.er_parts)
                      or (k == "gross_wages" and d.pay_parts)]
            anywhere = "" if first else ", first: false"
            report.append(f"    - {{label: {_q(label)}, checks: [{', '.join(checks)}], scope: {scope}{anywhere}}}")
    if d.notes:
        report.append(f"  notes: [{', '.join(_q(n) for n in d.notes)}]")
    if d.end:
        report.append(f"  end: [{', '.join(_q(e) for e in d.end)}]")
    if d.sheet_date:
        report.append(f"  sheet_name: {{pattern: {_q(d.sheet_date[0])}, date_format: {_q(d.sheet_date[1])}}}")
    if d.blocks or d.employee_block:
        report.append("  blocks:")
        for label, fields, value in d.blocks:
            extra = f", value: {_q(value)}" if value else ""
            report.append(f"    - {{label: {_q(label)}, fields: [{', '.join(fields)}]{extra}}}")
        if d.employee_block:
            report.append(f"    - {{label: {_q(d.employee_block)}, alone: true}}")
    return ["report:", *report] if report else []


def _foot(d) -> list[str]:
    """What was guessed, what to check, what was not found, and whether the draft loads."""
    f = d.fields
    out = []
    for g in d.guessed:
        out.append(f"# GUESSED: {g}")
    for c in d.check:
        out.append(f"# CHECK: {c}")
    if d.files_csv:
        out.append("# payroll/files.csv (the period from each check date needs the file's pay frequency):")
        out += [f"#   {line}" for line in d.files_csv]
    missing = [k for k in ("hours", "gross_wages", "employer_taxes") if k not in f and not d.codes and not (
        (k == "hours" and any(x in f or x.startswith("hours_") for x in [*HOURS_PARTS, *f])) or (k == "employer_taxes" and d.er_parts)
        or (k == "gross_wages" and d.pay_parts))]
    if "employee_id" not in f and not d.ids_from:
        missing.append("employee_id")
    if missing:
        out.append(f"# NOT FOUND, to add by hand (the column's header as written): {', '.join(missing)}")
    return out


def loads(text: str) -> str | None:
    """None when the draft loads as a profile, else the first error (``key: what is wrong``)."""
    try:
        Profile.model_validate(yaml.safe_load(text))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"] if not str(x).startswith("~"))
        msg = err["msg"].removeprefix("Value error, ")
        return f"{loc}: {msg}" if loc else msg
    except ValueError as exc:
        return str(exc).splitlines()[0]
    return None


__all__ = ["draft_yaml", "loads"]
