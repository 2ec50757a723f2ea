"""The tabs of a workbook that repeat one payroll (by department, by title, by employee), told by their figures.

Tabs laid out alike (``draft._choose_sheets``) hold the same payroll when their figures agree: the
totals of each hours and money column both tabs have (lines saying total left out), and, where both
tabs print them, the same employees and the same dates (and no other date in their names). One of them is read, the most detailed
(dates on its lines, then the most lines of figures, then the fewest totals lines, else the first), the others are skipped by
name; tabs that hold different payrolls (a tab per pay run, per client company) are all read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from transforms.ingest.read import figures as fg
from transforms.ingest.read.draft import draft_guess as dg

EMPLOYEE = ("employee_id", "employee_name")
DATES = ("period_start", "period_end", "pay_date", "pay_period")
DATE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")


@dataclass(frozen=True)
class Payroll:
    """What a tab's lines add up to: each hours and money column's total (by field), its
    employees and its dates (None where the tab prints none), its lines of figures and its lines
    saying total (a department's, an employee's)."""

    totals: dict[str, Decimal]
    employees: frozenset[str] | None
    dates: frozenset[str] | None
    lines: int
    totals_lines: int = 0


def amount(cell: str | None) -> Decimal | None:
    """A figure as printed (``$1,234.56``, ``(12.50)``, ``12.50-``), or None."""
    if not fg.figure(cell):
        return None
    t = (cell or "").strip()
    neg = t.startswith(("(", "-")) or t.endswith("-")
    try:
        x = Decimal(re.sub(r"[^\d.]", "", t))
    except InvalidOperation:
        return None
    return -x if neg else x


def payroll(words, cand) -> Payroll:
    """The figures of a candidate tab (``draft._Candidate``) below its header."""
    header = [(c or "").strip() for c in cand.records[cand.index][1]]
    fields: dict[int, str] = {}
    for k, h in enumerate(header):
        f = h and (dg.reach(words, dg.no_place(h)) or dg.earning(words, h))
        if f and f not in fields.values():
            fields[k] = f
    totals: dict[str, Decimal] = {f: Decimal(0) for f in fields.values() if dg.counted(f)}
    employees: set[str] = set()
    dates: set[str] = set()
    lines = said_total = 0
    for _, cells in cand.records[cand.index + 1:]:
        if any(c and not fg.figure(c) and dg.TOTAL.search(c) for c in cells):
            said_total += 1  # a totals line (a department's, an employee's, the report's): not summed
            continue
        got = {f: x for k, f in fields.items() if f in totals and (x := amount(cells[k] if k < len(cells) else None)) is not None}
        if not got:
            continue  # a group's heading (``Department: 100 Baking``), a note: no employee nor date of the payroll
        for f, x in got.items():
            totals[f] += x
        for k, f in fields.items():
            c = cells[k] if k < len(cells) else None
            if f in EMPLOYEE and c and c.strip() and f == _first(fields, EMPLOYEE):
                employees.add(" ".join(c.split()).lower())
            elif f in DATES and c and (m := DATE.search(c)):
                dates.add(m.group(0))
        lines += 1
    return Payroll(totals, frozenset(employees) or None, frozenset(dates) or None, lines, said_total)


def _first(fields: dict[int, str], wanted: tuple[str, ...]) -> str | None:
    return next((f for f in wanted if f in fields.values()), None)


def agree(a: Payroll, b: Payroll) -> list[str] | None:
    """The figures two tabs agree on when they hold the same payroll (a money column's total
    among them, none zero), else None."""
    common = sorted(set(a.totals) & set(b.totals))
    money = [f for f in common if f not in dg.HOURS_FIELDS and not f.startswith("hours_")]
    if not money or any(a.totals[f] != b.totals[f] for f in common) or not any(a.totals[f] for f in money):
        return None
    if a.employees and b.employees and a.employees != b.employees:
        return None
    if a.dates and b.dates and a.dates != b.dates:
        return None
    said = [f"{f} {a.totals[f]:,}" for f in common][:4] + ([f"and {len(common) - 4} more column totals"]
                                                         if len(common) > 4 else [])
    if a.employees and b.employees:
        said.append(f"the same {len(a.employees)} employees")
    if a.dates and b.dates:
        said.append(f"the same {len(a.dates)} dates")
    return said


def _dated_apart(a: str | None, b: str | None) -> bool:
    """Whether two sheets' names carry other dates (a tab per pay run, ``Run 2023-01-06``)."""
    got = dg.sheet_dates([a, b]) if a and b else None
    if got is None:
        return False
    return re.search(got[0], a).group(0) != re.search(got[0], b).group(0)


def one_of_each(words, alike: list) -> tuple[list, list[tuple[object, list, list[str]]]]:
    """(the tabs to read, [(a tab read, the tabs repeating its payroll, the figures they agree on)]):
    ``alike`` (tabs laid out alike, in the workbook's order) cut into payrolls, one tab read of each."""
    groups: list[tuple[list, Payroll, list[str]]] = []  # (tabs, the first tab's payroll, figures agreed)
    for cand in alike:
        got = payroll(words, cand)
        for tabs, first, said in groups:
            if _dated_apart(tabs[0][0].sheet, cand.sheet):
                continue
            if (agreed := agree(first, got)) is not None:
                tabs.append((cand, got))
                said[:] = said or agreed
                break
        else:
            groups.append(([(cand, got)], got, []))
    read, repeats = [], []
    for tabs, _, said in groups:
        keep = max(enumerate(tabs), key=lambda it: (it[1][1].dates is not None, it[1][1].lines,
                                                     -it[1][1].totals_lines, -it[0]))[1][0]
        read.append(keep)
        if len(tabs) > 1:
            repeats.append((keep, [c for c, _ in tabs if c is not keep], said))
    return read, repeats


__all__ = ["Payroll", "agree", "amount", "one_of_each", "payroll"]
