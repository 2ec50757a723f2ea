"""A workbook whose tabs are laid out alike, drafted unedited (issue 42 part 6): tabs that repeat one
payroll (by check, by department, by employee: the same employees, dates and column totals) are read
once, the most detailed, the others skipped by name with a foot note saying which figures agree;
tabs that hold different payrolls (a tab per pay year) are all read. Told by the figures, never by
the names. Saved as it is, each draft decides the payroll as the canonical submission does
(``tests/fixtures/exports/code_register.py``'s lines, ``common.PAYROLL``)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import code_register as cr
from tests.fixtures.exports import common
from tests.fixtures.exports.run import by_person, canonical_outputs, decide
from transforms.ingest.read.draft import draft_tabs as dtabs
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return canonical_outputs(tmp_path_factory.mktemp("canonical"))


def _lines():
    rows = cr.rows()
    return rows[0], rows[1:-1], rows[-1]


def _by_department():
    """The lines grouped by department, each department closed by its total (unlike the tab by check)."""
    head, body, _ = _lines()
    out = [["Department", *head]]
    for dept, ids in (("Front", {"1002"}), ("Kitchen", {"1001", "1003"})):
        lines = sorted((r for r in body if r[0] in ids), key=lambda r: (r[0], r[4].value))
        out += [[dept, *r] for r in lines]
        out.append([f"Total {dept}", None, None, None, None, None, *(
            common.Cell(sum((r[k].value for r in lines), Decimal(0)), common.MONEY) for k in range(5, len(head)))])
    return out


def _by_employee():
    """The lines by employee, without dates (a summary per employee and check, the same figures)."""
    head, body, total = _lines()
    keep = [k for k, h in enumerate(head) if h not in ("Period Begin", "Period End", "Check Date")]
    return [[head[k] for k in keep], *([r[k] for k in keep] for r in sorted(body, key=lambda r: r[0]))]


def _submission(root: Path, sheets: dict) -> tuple[Path, Path]:
    sub = common.submission(root, employee_ids=cr.EMPLOYEE_IDS, roster_ssn=cr.ROSTER_SSN)
    path = common.write_xlsx(sub / "payroll" / common.EMPLOYER / "Payroll Register.xlsx", sheets)
    return sub, path


def _drafted(path: Path, profiles: Path, name: str) -> str:
    text = draft_yaml(draft_profile(path, name))
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / f"{name}.yaml").write_text(text, encoding="utf-8")
    return text


def _decides_as_canonical(sub: Path, tmp_path: Path, canonical, name: str, rows: int) -> None:
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_read, rec.rows_accepted) == (name, "accepted", rows, rows)
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, cr.EMPLOYEE_IDS) == canonical


@pytest.mark.parametrize("order", [["By Check", "By Department", "By Employee"],
                                   ["By Employee", "By Department", "By Check"]])
def test_tabs_repeating_one_payroll_are_read_once_and_decide_as_canonical(order, tmp_path, canonical):
    """Three tabs of one payroll: the tab by check (dates on its lines) is read wherever it sits;
    the department and employee tabs are skipped by name, the foot saying which figures agree."""
    head, body, total = _lines()
    tabs = {"By Check": [head, *body, total], "By Department": _by_department(), "By Employee": _by_employee()}
    sub, path = _submission(tmp_path / "sub", {name: tabs[name] for name in order})
    text = _drafted(path, tmp_path / "profiles", "one_of_three")
    others = [n for n in order if n != "By Check"]
    assert yaml.safe_load(text)["sheets"] == {"read": ["By Check"], "skip": others}, text
    assert (f"# GUESSED: sheet(s) {', '.join(map(repr, others))} repeat the payroll of sheet 'By Check' (laid out "
            "alike; earn_bonus 150, earn_overtime 813.90, earn_regular 136,003.35, er_fica 8,491.79, and 6 more column "
            "totals, the same 3 employees") in text
    assert "DOES NOT LOAD" not in text and "passed over:" not in text
    _decides_as_canonical(sub, tmp_path, canonical, "one_of_three", 159)


def test_tabs_laid_out_alike_holding_different_payrolls_are_all_read(tmp_path, canonical):
    """A tab per pay year: laid out alike, other checks, other totals: every tab read, none skipped."""
    head, body, _ = _lines()
    years = sorted({r[4].value.year for r in body})
    sub, path = _submission(tmp_path / "sub", {
        f"Checks {y}": [head, *(r for r in body if r[4].value.year == y)] for y in years})
    text = _drafted(path, tmp_path / "profiles", "a_tab_a_year")
    assert yaml.safe_load(text)["sheets"] == {"read": ["Checks *"]}, text
    assert "repeat the payroll" not in text and "DOES NOT LOAD" not in text
    _decides_as_canonical(sub, tmp_path, canonical, "a_tab_a_year", 159)


def test_a_summary_tab_laid_out_otherwise_is_still_passed_over(tmp_path):
    head, body, total = _lines()
    summary = [["Payroll Summary"], ["Employees", "3"], ["Total Gross", "136,967.25"]]
    _, path = _submission(tmp_path / "sub", {"Summary": summary, "Register": [head, *body, total]})
    text = _drafted(path, tmp_path / "profiles", "with_summary")
    assert yaml.safe_load(text)["sheets"] == {"read": ["Register"], "skip": ["Summary"]}
    assert "repeat the payroll" not in text
    assert "# GUESSED: the payroll is on sheet(s) 'Register'; passed over: 'Summary'" in text


def _payroll(totals: dict, employees=None, dates=None, lines=3) -> dtabs.Payroll:
    return dtabs.Payroll({k: Decimal(v) for k, v in totals.items()}, employees and frozenset(employees),
                         dates and frozenset(dates), lines)


@pytest.mark.parametrize(("a", "b", "same"), [
    # the same totals, employees and dates: one payroll
    (_payroll({"gross_wages": "1000.00", "hours": "80"}, {"e1"}, {"01/06/2023"}),
     _payroll({"gross_wages": "1000.00", "hours": "80"}, {"e1"}, {"01/06/2023"}), True),
    # a tab without dates (a summary by employee) beside one with: its totals decide
    (_payroll({"gross_wages": "1000.00"}, {"e1"}, {"01/06/2023"}), _payroll({"gross_wages": "1000.00"}, {"e1"}), True),
    # salaried pay runs: the same employees and pay, other dates: two payrolls
    (_payroll({"gross_wages": "1000.00"}, {"e1"}, {"01/06/2023"}),
     _payroll({"gross_wages": "1000.00"}, {"e1"}, {"01/20/2023"}), False),
    # a bureau's clients: other employees
    (_payroll({"gross_wages": "1000.00"}, {"e1"}), _payroll({"gross_wages": "1000.00"}, {"e2"}), False),
    # a cent apart, or only hours in common, or nothing paid: not said to be the same
    (_payroll({"gross_wages": "1000.00"}), _payroll({"gross_wages": "1000.01"}), False),
    (_payroll({"hours": "80", "gross_wages": "1"}), _payroll({"hours": "80", "er_futa": "1"}), False),
    (_payroll({"gross_wages": "0"}), _payroll({"gross_wages": "0"}), False),
])
def test_same_payroll_from_the_figures(a, b, same):
    assert (dtabs.agree(a, b) is not None) == same


@pytest.mark.parametrize(("cell", "value"), [("$1,234.56", "1234.56"), ("(12.50)", "-12.50"), ("12.50-", "-12.50"),
                                             ("80", "80"), ("Rivera, Ana", None), ("", None)])
def test_an_amount_as_printed(cell, value):
    assert dtabs.amount(cell) == (Decimal(value) if value is not None else None)


SHIPPED_TABS = "payroll_register_by_group"  # the shipped profile of repeated_tabs: a draft under its name replaces it


def test_the_repeated_tabs_fixture_drafted_unedited_decides_as_canonical(tmp_path, canonical):
    """``tests/fixtures/exports/repeated_tabs.py`` (written from the makers' documentation by another
    hand): one register by department, by location and by employee, each with group headings and
    sub-totals. The department tab is read, the two others skipped by name. Drafted under the
    shipped profile's name (``payroll_register_by_group`` reads this export): the draft replaces it."""
    from tests.fixtures.exports import repeated_tabs as rt

    sub = rt.write_submission(tmp_path / "sub")
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    text = _drafted(path, tmp_path / "profiles", SHIPPED_TABS)
    assert yaml.safe_load(text)["sheets"] == {"read": ["By Department"], "skip": ["By Location", "By Employee"]}, text
    assert ("# GUESSED: sheet(s) 'By Location', 'By Employee' repeat the payroll of sheet 'By Department' (laid out "
            "alike; employer_taxes 15,267.56, gross_wages 136,967.25, hours 10,025.5, the same 3 employees, the same "
            "159 dates): only 'By Department' is read") in text
    assert "DOES NOT LOAD" not in text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_accepted) == (SHIPPED_TABS, "accepted", 159), rec
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, rt.EMPLOYEE_IDS) == canonical


def test_the_bureau_workbook_a_tab_per_client_is_read_whole_and_decides_as_canonical(tmp_path):
    """``tests/fixtures/exports/bureau_workbook.py``: tabs laid out alike holding three clients'
    payrolls (other employees, other totals): every tab read, none said to repeat another; with
    ``payroll/files.csv`` routing each tab, the unedited draft decides as each client's canonical file."""
    from tests.fixtures.exports import bureau_workbook as bw

    sub = bw.write_submission(tmp_path / "sub")
    text = _drafted(sub / "payroll" / bw.WORKBOOK, tmp_path / "profiles", "bureau_draft")
    assert yaml.safe_load(text)["sheets"] == {"read": [c.tab for c in bw.CLIENTS]}, text
    assert "repeat the payroll" not in text and "DOES NOT LOAD" not in text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    _, want = decide(bw.write_canonical_submission(tmp_path / "csub"), tmp_path / "cwork")
    assert by_person(out, bw.EMPLOYEE_IDS) == by_person(want, bw.EMPLOYEE_IDS)
    assert len(by_person(out, bw.EMPLOYEE_IDS)[1]) == 3  # an award per client


def test_a_profile_reading_two_tabs_of_one_payroll_does_not_crash(tmp_path):
    """The draft edited to read two tabs of one payroll (``By Department`` and ``By Location``):
    ingest does not crash (was ``IndexError``); each line of the second tab is an exact copy of
    one of the first, rejected and named, so the payroll counts once; its own totals lines, the
    first tab's labels not theirs, are rejects too, so the application is HELD, never decided on
    what is left. Under the shipped profile's name, which it replaces (the shipped one skips
    ``By Location``)."""
    from tests.fixtures.exports import repeated_tabs as rt

    sub = rt.write_submission(tmp_path / "sub")
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    text = _drafted(path, tmp_path / "profiles", SHIPPED_TABS)
    text = text.replace('sheets: {read: ["By Department"], skip: ["By Location", "By Employee"]}',
                        'sheets: {read: ["By Department", "By Location"], skip: ["By Employee"]}')
    (tmp_path / "profiles" / f"{SHIPPED_TABS}.yaml").write_text(text, encoding="utf-8")
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    rejects = staged.rejects.filter(pl.col("file").str.starts_with("payroll/"))
    assert set(rejects["file"]) == {f"payroll/{common.EMPLOYER}/{rt.FILE_NAME}[By Location]"}
    assert rejects.filter(pl.col("rule") == "duplicate_row").height == 159  # every check of the second tab
    (award,) = by_person(out, rt.EMPLOYEE_IDS)[1]
    assert award[5:9] == ("1405.49", "0.00", "HELD", "INPUT_REJECTED")  # the credit computed, held on the rejects


@pytest.mark.parametrize(("names", "read"), [
    (["By Department", "By Employee"], ["By Department"]),
    # the same pay on two runs, the dates only in the tabs' names: two payrolls
    (["Run 2023-01-06", "Run 2023-01-20"], ["Run 2023-01-06", "Run 2023-01-20"]),
    (["Run 2023-01-06", "Run 2023-01-06 (copy)"], ["Run 2023-01-06"]),
])
def test_tabs_of_the_same_figures_without_dates(names, read):
    from types import SimpleNamespace

    from transforms.ingest.read.layouts.profile_files import vocabulary

    lines = [(1, ["Employee", "Hours", "Gross Pay"]), (2, ["Rivera, Ana", "80", "1,040.00"]), (3, ["Muñoz, José", "60", "780.00"])]
    cands = [SimpleNamespace(sheet=n, records=lines, index=0) for n in names]
    got, repeats = dtabs.one_of_each(vocabulary(None).reader(), cands)
    assert [c.sheet for c in got] == read
    assert [(k.sheet, [c.sheet for c in copies]) for k, copies, _ in repeats] == (
        [] if len(read) == 2 else [(read[0], names[1:])])
