"""Two exports of issue 42 written from what their makers document (tests/fixtures/exports; each
module's header cites its sources and says what is documented and what is assumed), checked on
their own terms with openpyxl and Python's csv module -- never with impcredit's readers or
profiles:

- ``bureau_workbook``: a payroll bureau's workbook, a tab per client company (three clients, no
  employer id printed; ``payroll/files.csv`` routes each tab to its employer);
- ``transposed_register``: QuickBooks' Payroll Summary table per pay run (employees across,
  items down) with the check date and the pay period printed once above it as label | value, the
  value in the first employee's column.

Each tab, file or column must give every check's hours, gross wages and employer taxes to the cent
(the clients' ``common.payroll`` rows), its totals must add up, the files must be written the same
way twice, and no ssn- or EIN-shaped text may appear in them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from tests.fixtures.exports import bureau_workbook as bureau
from tests.fixtures.exports import common
from tests.fixtures.exports import transposed_register as transposed
from tests.test_export_fixtures_docs import (
    PERSON,
    SSN,
    _all_text,
    _csv_rows,
    _expected,
    _pay_run,
    _xlsx_sheets,
    cents,
    day,
    text,
)

FORMATS = ["xlsx", "csv"]
EIN = re.compile(r"(?<!\d)\d{2}-\d{7}(?!\d)")


def _canonical(rows: list[dict[str, str]]) -> Counter:
    """(employee id, period start, period end, pay date, hours, gross wages, employer taxes) per check."""
    return Counter((r["employee_id"], dt.date.fromisoformat(r["period_start"]), dt.date.fromisoformat(r["period_end"]),
                    dt.date.fromisoformat(r["pay_date"]), Decimal(r["hours"]), Decimal(r["gross_wages"]),
                    Decimal(r["employer_taxes"])) for r in rows)


# --- 1. the bureau's workbook, a tab per client --------------------------------------------------

def _tab(rows: list[list], client: bureau.Client) -> Counter:
    """One client's register: its title lines, the header on row 6, a line per check (gross = the
    sum of its earnings, net = gross - taxes - deductions), a blank row and ``Company Total``."""
    assert text(rows[0][0]) == f"{client.company} (Client {client.number})"
    assert text(rows[1][0]) == bureau.TITLE and text(rows[3][0]) == f"Prepared by {bureau.BUREAU}"
    assert not any(text(c) for c in rows[4])
    head = [text(c) for c in rows[5]]
    assert head == bureau.HEADER
    end = next(i for i in range(6, len(rows)) if not any(text(c) for c in rows[i]))
    lines = [dict(zip(head, r, strict=True)) for r in rows[6:end]]
    (total,) = [dict(zip(head, r, strict=True)) for r in rows[end + 1:]]
    assert text(total["Employee No"]) == "Company Total"
    got: Counter = Counter()
    for ln in lines:
        gross = cents(ln["Gross Pay"])
        assert gross == cents(ln["Regular Pay"]) + cents(ln["Overtime Pay"]) + cents(ln["Bonus"])
        assert cents(ln["Net Pay"]) == gross - cents(ln["Employee Taxes"]) - cents(ln["Deductions"])
        got[(text(ln["Employee No"]), day(ln["Period Start"]), day(ln["Period End"]), day(ln["Check Date"]),
             cents(ln["Regular Hours"]) + cents(ln["Overtime Hours"]), gross, cents(ln["Employer Taxes"]))] += 1
    for h in bureau.SUMMED:
        assert cents(total[h]) == sum(cents(ln[h]) for ln in lines), h
    first, last = min(k[3] for k in got), max(k[3] for k in got)
    assert text(rows[2][0]) == f"Check Dates {first:%m/%d/%Y} - {last:%m/%d/%Y}"
    return got


@pytest.mark.parametrize("fmt", FORMATS)
def test_bureau_workbook_adds_up(fmt, tmp_path):
    """Each tab (or, as CSV, each file) is one client's payroll to the cent: the checks of
    ``client.checks`` in the canonical layout; the three clients' employees and figures differ;
    ``files.csv`` routes each tab (file) to its client's EIN, which no tab prints."""
    paths = bureau.write(tmp_path, fmt)
    if fmt == "xlsx":
        assert [p.name for p in paths] == [bureau.WORKBOOK]
        tabs = _xlsx_sheets(paths[0])
        assert list(tabs) == [c.tab for c in bureau.CLIENTS]
        got = {c.tab: _tab(tabs[c.tab], c) for c in bureau.CLIENTS}
    else:
        assert [p.name for p in paths] == [bureau.csv_name(c) for c in bureau.CLIENTS]
        got = {c.tab: _tab(_csv_rows(p, utf8=False), c) for c, p in zip(bureau.CLIENTS, paths, strict=True)}
    for c in bureau.CLIENTS:
        assert got[c.tab] == _canonical(bureau.expected(c)) and sum(got[c.tab].values()) == 159
    ids = [{k[0] for k in g} for g in got.values()]
    assert ids == [{"1001", "1002", "1003"}, {"P01", "P02", "P03"}, {"S01", "S02", "S03"}]
    hours = [sum(k[4] * n for k, n in g.items()) for g in got.values()]
    gross = [sum(k[5] * n for k, n in g.items()) for g in got.values()]
    assert hours == [Decimal("10025.50"), Decimal("5032.75"), Decimal("9026.95")]
    assert gross == [Decimal("136967.25"), Decimal("68965.44"), Decimal("123216.78")]
    routes = list(csv.DictReader(io.StringIO(bureau.files_csv(fmt))))
    if fmt == "xlsx":
        assert [(r["file"], r["sheet"], r["employer_id"]) for r in routes] == [
            (bureau.WORKBOOK, "Garden State Bakery", "10-0000001"), (bureau.WORKBOOK, "Pine Barrens Hardware", "10-0000002"),
            (bureau.WORKBOOK, "Shore Point Diner", "10-0000003")]
    else:
        assert [(r["file"], r["employer_id"]) for r in routes] == [(p.name, c.fein) for c, p in
                                                                  zip(bureau.CLIENTS, paths, strict=True)]
    for path in paths:
        assert not any(EIN.search(t) or SSN.search(t) for t in _all_text(path)), path.name


@pytest.mark.parametrize("fmt", FORMATS)
def test_bureau_submissions(fmt, tmp_path):
    """The bureau's submission (three applications, the workbook or its CSVs in ``payroll/``,
    ``files.csv`` naming each) and the canonical one to compare it with (each client's payroll as
    ``payroll/<employer>/payroll.csv``) share the agency's files."""
    sub = bureau.write_submission(tmp_path / "bureau", fmt)
    canon = bureau.write_canonical_submission(tmp_path / "canonical")
    for name in ("applications.csv", "roster.csv", "certifications.csv", "employer_rates.csv"):
        assert (sub / name).read_bytes() == (canon / name).read_bytes(), name
    apps = list(csv.DictReader((sub / "applications.csv").open(encoding="utf-8")))
    assert [(a["application_id"], a["employer_id"]) for a in apps] == [
        ("A1", "100000001"), ("A2", "100000002"), ("A3", "100000003")]
    roster = list(csv.DictReader((sub / "roster.csv").open(encoding="utf-8")))
    assert {(r["employee_id"], r["ssn"]) for r in roster} == {(v, k) for k, v in bureau.EMPLOYEE_IDS.items()}
    assert len(roster) == 9 and len({r["ssn"] for r in roster}) == 9
    certified = {r["ssn"] for r in csv.DictReader((sub / "certifications.csv").open(encoding="utf-8"))}
    assert certified == set(bureau.EMPLOYEE_IDS)
    listed = [r["file"] for r in csv.DictReader((sub / "payroll" / "files.csv").open(encoding="utf-8"))]
    assert listed and all((sub / "payroll" / f).is_file() for f in listed)
    assert not [p for p in (sub / "payroll").rglob("*") if p.is_file() and p.parent != sub / "payroll"]
    for c in bureau.CLIENTS:
        rows = list(csv.DictReader((canon / "payroll" / c.employer_id / "payroll.csv").open(encoding="utf-8")))
        assert rows == bureau.expected(c) and {r["employer_id"] for r in rows} == {c.employer_id}


# --- 2. the transposed register, its check date and period above the table ------------------------

def _register(rows: list[list]) -> tuple[dt.date, tuple[dt.date, dt.date], list[tuple]]:
    """A pay run's sheet: the two label | value lines (A6 / E6, A7 / E7, nothing else on them),
    then the QuickBooks table from row 9, checked as ``test_export_fixtures_docs`` checks it."""
    assert text(rows[0][0]) == common.COMPANY and text(rows[1][0]) == transposed.TITLE
    for r in (rows[4], rows[7]):
        assert not any(text(c) for c in r)
    dates = {}
    for r in rows[5:7]:
        filled = [j for j, c in enumerate(r) if text(c)]
        assert filled == [0, transposed.VALUE_COLUMN], filled
        dates[text(r[0])] = r[transposed.VALUE_COLUMN]
    assert list(dates) == ["Check date", "Pay period"]
    start, end = (day(x) for x in text(dates["Pay period"]).split(" - "))
    pay, people = _pay_run(rows[transposed.TABLE_ROW - 1:])
    assert day(dates["Check date"]) == pay and text(rows[transposed.TABLE_ROW - 1][transposed.VALUE_COLUMN])
    return pay, (start, end), people


@pytest.mark.parametrize("fmt", FORMATS)
def test_transposed_register_adds_up(fmt, tmp_path):
    """Every pay run's sheet (or CSV) gives each employee's check -- its period and check date from
    the two lines above the table, hours and gross from Total Gross Pay, employer taxes from Total
    Employer Taxes and Contributions -- equal to ``common.PAYROLL`` to the cent."""
    paths = transposed.write(tmp_path, fmt)
    got: Counter = Counter()
    runs = []
    if fmt == "xlsx":
        assert [p.name for p in paths] == [transposed.workbook_name(y) for y in (2022, 2023, 2024)]
        for path in paths:
            for name, rows in _xlsx_sheets(path).items():
                runs.append(_register(rows))
                assert name == transposed.sheet_name(runs[-1][0]) and str(runs[-1][0].year) in path.name
    else:
        for path in paths:
            runs.append(_register(_csv_rows(path, utf8=False)))
            assert path.name == transposed.csv_name(runs[-1][0])
    assert len(runs) == 53
    for pay, (start, end), people in runs:
        assert (end - start).days == 13 and (pay - end).days == 6
        got.update((PERSON[n], pay, start, end, h, g, e) for n, h, g, e in people)
    assert got == _expected(period=True)


# --- both: deterministic, no ssn --------------------------------------------------------------------

WRITERS = {"bureau_workbook": bureau.write, "transposed_register": transposed.write}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(WRITERS))
def test_written_the_same_way_twice_and_no_ssn(name, fmt, tmp_path):
    first, second = WRITERS[name](tmp_path / "1", fmt), WRITERS[name](tmp_path / "2", fmt)
    assert [p.name for p in first] == [p.name for p in second]
    ssns = set(bureau.EMPLOYEE_IDS) | {s.replace("-", "") for s in bureau.EMPLOYEE_IDS}
    for a, b in zip(first, second, strict=True):
        assert (a.read_bytes() == b.read_bytes()) if fmt == "csv" else (_xlsx_sheets(a) == _xlsx_sheets(b)), a.name
        for t in _all_text(a):
            assert not SSN.search(t) and not any(s in t for s in ssns), (a.name, t[:80])


def test_the_two_dates_stand_once_above_the_table(tmp_path):
    """Cell by cell (NEW_FIXTURES.md): A6 ``Check date`` | E6 the date, A7 ``Pay period`` | E7
    ``12/25/2021 - 01/07/2022``; row 9 the employees' names from E; the value column is the first
    employee's (its name over the Hours sub-column)."""
    (path, *_) = transposed.write(tmp_path, "csv")
    rows = _csv_rows(path, utf8=False)
    assert (rows[5][0], rows[5][4], rows[6][0], rows[6][4]) == ("Check date", "01/13/2022", "Pay period",
                                                                 "12/25/2021 - 01/07/2022")
    assert rows[8][4] == "Muñoz, José" and rows[9][4] == "Hours" and rows[9][8] == "Jan 13, 22"
    assert sum(1 for r in rows if r[0] in ("Check date", "Pay period")) == 2
    assert Path(path).name == "Payroll Summary 01-13-2022.csv"
