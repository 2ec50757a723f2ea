"""Two exports of issue 42 written from what their makers document, checked on their own terms with
openpyxl and Python's csv module only (never impcredit's readers or profiles):

- ``repeated_tabs``: one payroll register printed three times in one workbook (``By Department``,
  ``By Location``, ``By Employee``); every tab is the whole payroll, grouped differently, with a
  sub-total per group and a report total;
- ``code_lines_register``: Dynamics-style pay statement lines, one line per earning, benefit and tax
  code of each check; the employer's taxes the tax lines marked ``Employer`` = ``Yes`` (``ER_FICA``,
  ``ER_MEDI``, ``ER_FUTA``, ``ER_SUTA``, ``ER_SDI``), never the employee's ``FICA`` / ``MEDI``.

Every check of ``common.PAYROLL`` must come out of each to the cent (hours, gross wages, employer
taxes), the files must be written the same way twice, and no ssn-shaped text may appear in them.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal

import openpyxl
import pytest

from tests.fixtures.exports import code_lines_register as lines_mod
from tests.fixtures.exports import common
from tests.fixtures.exports import repeated_tabs as tabs_mod
from tests.test_export_fixtures_docs import (
    SSN,
    _all_text,
    _csv_rows,
    _expected,
    _xlsx_sheets,
    cents,
    day,
    text,
)

BY_ID = {e.employee_id: e for e in common.EMPLOYEES}


# --- 1. one payroll on three tabs -------------------------------------------------------------

def _tab(rows: list[list], tab: str) -> tuple[Counter, dict[str, tuple], tuple]:
    """One tab read plainly: (its checks as (ssn, pay date, start, end, hours, gross, employer
    taxes), each group's sums, the report total's sums); every sub-total checked against its lines."""
    T = tabs_mod
    head = [text(h) for h in rows[T.HEADER_ROW]]
    assert head == T.HEADER[tab] and text(rows[1][0]) == T.TITLES[tab]
    col = {h: j for j, h in enumerate(head)}
    figures = [col[k] for k in T.FIGURES]
    got: Counter = Counter()
    groups: dict[str, tuple] = {}
    heading, mine, total = None, [], None
    for r in rows[T.HEADER_ROW + 1:]:
        first = text(r[0])
        if not any(text(x) for x in r):
            continue
        if first == "Report Total":
            total = tuple(cents(r[j]) for j in figures)
        elif first.startswith(("Department: ", "Location: ", "Employee: ")) and not any(text(x) for x in r[1:]):
            heading, mine = first, []
        elif first.startswith("Total "):
            assert heading and first == T.total_label(heading), (tab, first)
            sums = tuple(cents(r[j]) for j in figures)
            assert sums == tuple(sum(ln[j] for ln in mine) for j in range(len(figures))), (tab, first)
            groups[heading] = sums
            heading = None
        else:
            assert heading, (tab, r)
            if tab == T.TAB_EMPLOYEE:
                e = BY_ID[heading.removeprefix("Employee: ").split(" ", 1)[0]]
                assert heading == f"Employee: {e.employee_id} {e.name}"
                assert (text(r[col["Department"]]), text(r[col["Location"]])) == (
                    T.DEPARTMENT[e.employee_id], T.LOCATION[e.employee_id])
            else:
                e = BY_ID[text(r[col["Emp #"]])]
                assert text(r[col["Employee"]]) == e.name and T.group_of(tab, _a_check(e)) == heading
            hours, gross, ee_tax, er_tax, net = (cents(r[j]) for j in figures)
            assert net == gross - ee_tax - sum(_a_check(e, day(r[col["Check Date"]])).deductions.values())
            got[(e.ssn, day(r[col["Check Date"]]), day(r[col["Period Begin"]]), day(r[col["Period End"]]),
                 hours, gross, er_tax)] += 1
            mine.append((hours, gross, ee_tax, er_tax, net))
    assert total == tuple(sum(g[j] for g in groups.values()) for j in range(len(figures))), tab
    return got, groups, total


def _a_check(e: common.Employee, pay: dt.date | None = None) -> common.Check:
    return next(c for c in common.PAYROLL if c.employee is e and (pay is None or c.pay_date == pay))


def test_repeated_tabs_each_tab_is_the_whole_payroll(tmp_path):
    """Three tabs in the documented order, each giving every check of the payroll once to the cent,
    grouped by department (2 groups), location (2, not the departments' split) and employee (3); the
    report totals agree across the tabs, so reading all three would count the payroll three times."""
    T = tabs_mod
    (path,) = T.write(tmp_path)
    assert path.name == T.FILE_NAME
    sheets = _xlsx_sheets(path)
    assert tuple(sheets) == T.TABS == ("By Department", "By Location", "By Employee")
    seen = {tab: _tab(sheets[tab], tab) for tab in T.TABS}
    for tab, (got, _, _) in seen.items():
        assert got == _expected(period=True), tab
    assert set(seen[T.TAB_DEPARTMENT][1]) == {"Department: 100 Baking", "Department: 200 Retail"}
    assert set(seen[T.TAB_LOCATION][1]) == {"Location: Newark", "Location: Trenton"}
    assert len(seen[T.TAB_EMPLOYEE][1]) == 3
    assert seen[T.TAB_DEPARTMENT][1]["Department: 100 Baking"] != seen[T.TAB_LOCATION][1]["Location: Newark"]
    totals = {total for _, _, total in seen.values()}
    (total,) = totals
    payroll = common.PAYROLL
    assert total[:2] == (sum(c.hours for c in payroll), sum(c.gross for c in payroll))
    assert total[3] == sum(c.employer_tax_total for c in payroll) == Decimal("15267.56")
    everything = sum((got for got, _, _ in seen.values()), Counter())
    assert set(everything.values()) == {3} and len(everything) == len(payroll) == 159


def test_repeated_tabs_cells_are_typed(tmp_path):
    """Dates are dates and figures numbers (``mm/dd/yyyy``, ``0.00``, ``#,##0.00``); the employee
    number is text; the workbook has no CSV form."""
    (path,) = tabs_mod.write(tmp_path)
    ws = openpyxl.load_workbook(path)[tabs_mod.TAB_DEPARTMENT]
    first = tabs_mod.HEADER_ROW + 3  # Excel row of the first check: after the header and a group heading
    assert ws.cell(first, 1).value == "1002" and isinstance(ws.cell(first, 5).value, dt.datetime)
    assert (ws.cell(first, 5).number_format, ws.cell(first, 7).number_format, ws.cell(first, 8).number_format) == (
        common.DATE, common.HOURS, common.MONEY)
    with pytest.raises(ValueError, match="xlsx only"):
        tabs_mod.write(tmp_path / "csv", "csv")


# --- 2. a register printed as code lines ------------------------------------------------------

def _statements(rows: list[list]) -> dict[tuple, list[dict]]:
    head = [text(h) for h in rows[0]]
    assert head == lines_mod.HEADER
    out: dict[tuple, list[dict]] = {}
    for r in rows[1:]:
        ln = dict(zip(head, r, strict=True))
        out.setdefault((text(ln["Personnel number"]), text(ln["Pay statement"])), []).append(ln)
    return out


@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_code_lines_register_adds_up(fmt, tmp_path):
    """Per pay statement: hours = the earning lines' Quantity, gross = their Amount, employer taxes =
    the tax lines marked Employer = Yes, whose codes are the ER_ codes and nothing else; the
    employee's FICA and MEDI lines carry the same amounts as ER_FICA and ER_MEDI (so taking both
    sides double counts them); personnel numbers keep their leading zeros."""
    (path,) = lines_mod.write(tmp_path, fmt)
    assert path.name == f"{lines_mod.FILE_STEM}.{fmt}"
    rows = _xlsx_sheets(path)[lines_mod.SHEET] if fmt == "xlsx" else _csv_rows(path, utf8=False)
    people = {v: k for k, v in lines_mod.EMPLOYEE_IDS.items()}
    got: Counter = Counter()
    statements = _statements(rows)
    for (person, _), lns in statements.items():
        assert person in people and person.startswith("00")
        assert len({(text(ln["Payment date"]), text(ln["Period start date"]), text(ln["Period end date"]))
                    for ln in lns}) == 1
        kinds = [text(ln["Line type"]) for ln in lns]
        assert kinds == sorted(kinds, key=["Earning", "Benefit", "Tax"].index)
        earning = [ln for ln in lns if text(ln["Line type"]) == "Earning"]
        employer = [ln for ln in lns if text(ln["Line type"]) == "Tax" and text(ln["Employer"]) == "Yes"]
        assert {text(ln["Employer"]) for ln in lns if ln not in employer} == {"No"}
        assert [text(ln["Code"]) for ln in employer] == list(lines_mod.EMPLOYER_CODES)
        amount = {text(ln["Code"]): cents(ln["Amount"]) for ln in lns}
        assert (amount["FICA"], amount["MEDI"]) == (amount["ER_FICA"], amount["ER_MEDI"])
        first = lns[0]
        got[(people[person], day(first["Payment date"]), day(first["Period start date"]),
             day(first["Period end date"]), sum(cents(ln["Quantity"]) for ln in earning),
             sum(cents(ln["Amount"]) for ln in earning), sum(cents(ln["Amount"]) for ln in employer))] += 1
    assert got == _expected(period=True) and len(statements) == 159
    assert len(rows) - 1 == sum(len(c.earnings) + len(c.deductions) + len(c.employee_taxes) + len(c.employer_taxes)
                                for c in common.PAYROLL)


def test_code_lines_register_the_bonus_and_overtime(tmp_path):
    """The bonus is an earning line with no hours and no rate; overtime a line of its own at 1.5x the
    rate (shown in General format, ``21.195``)."""
    (path,) = lines_mod.write(tmp_path, "csv")
    rows = _csv_rows(path, utf8=False)
    head = rows[0]
    lines = [dict(zip(head, r, strict=True)) for r in rows[1:]]
    (bonus,) = [ln for ln in lines if ln["Code"] == "BONUS"]
    assert (bonus["Quantity"], bonus["Rate"], bonus["Amount"], bonus["Personnel number"]) == (None, None, "150.00",
                                                                                            "001001")
    ot = [ln for ln in lines if ln["Code"] == "OT"]
    assert ot and {ln["Quantity"] for ln in ot} == {"4.00"} and "21.195" in {ln["Rate"] for ln in ot}


# --- both: written the same way twice, no ssn -------------------------------------------------

WRITERS = {"repeated_tabs": (tabs_mod.write, ["xlsx"]), "code_lines_register": (lines_mod.write, ["xlsx", "csv"])}
CASES = [(name, fmt) for name, (_, fmts) in WRITERS.items() for fmt in fmts]


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_written_the_same_way_twice_and_no_ssn(name, fmt, tmp_path):
    write = WRITERS[name][0]
    first, second = write(tmp_path / "1", fmt), write(tmp_path / "2", fmt)
    ssns = {e.ssn for e in common.EMPLOYEES} | {e.ssn.replace("-", "") for e in common.EMPLOYEES}
    for a, b in zip(first, second, strict=True):
        assert a.name == b.name
        if fmt == "csv":
            assert a.read_bytes() == b.read_bytes()
        else:
            assert _xlsx_sheets(a) == _xlsx_sheets(b)
        for t in _all_text(a):
            assert not SSN.search(t) and not any(s in t for s in ssns), a.name


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_submission(name, fmt, tmp_path):
    """``write_submission`` lays out the agency's files and the payroll folder; the roster's ids are
    the ones the export prints (``Emp #`` / ``Personnel number``); no ``payroll/files.csv``."""
    mod = tabs_mod if name == "repeated_tabs" else lines_mod
    sub = mod.write_submission(tmp_path, fmt)
    folder = sub / "payroll" / common.EMPLOYER
    assert [p.suffix for p in folder.iterdir()] == [f".{fmt}"]
    assert mod.FILES_CSV is None and not (sub / "payroll" / "files.csv").exists()
    roster = (sub / "roster.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(r.split(",")[1] for r in roster) == sorted(mod.EMPLOYEE_IDS.values())
