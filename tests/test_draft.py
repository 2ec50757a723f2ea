"""A draft an analyst can trust (issue 35 part 6; ``impcredit layouts draft``): the sheet that holds
the payroll (not a Summary tab) and the ``sheets`` patterns, a transposed table, an employee id or
the names as ids, gross wages and employer taxes from their parts, a column named by its section
where its name repeats, never an hours column for money or the reverse, a totals line whatever
column its label is in, and at its foot what was guessed and what to check. Each draft, saved as
it is, loads and reads its export whole (``layouts check``). The exports are built here, small."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.test_profile_keys import SUMMARY, expected, read_payroll, run_tab
from tests.test_unread_tables import EMPLOYER, submission, workbook
from transforms.ingest import ingest_folder
from transforms.ingest import layout_check as lc
from transforms.ingest.read.draft import draft_guess as dg
from transforms.ingest.read.draft import draft_ids as di
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key

KEY = demo_key()


def drafted(path: Path, folder: Path, name: str, *, roster: bool = True) -> str:
    """The draft of ``path`` written, as it is, into the profiles folder ``folder`` (``roster=False``:
    drafted without the roster of the submission it sits in, whose ids its payroll does not print)."""
    sub = None if roster else di.Submission(employer=EMPLOYER, employer_from=f"folder payroll/{EMPLOYER}")
    text = draft_yaml(draft_profile(path, name, submission=sub))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(text)
    return text


def test_a_transposed_workbook_with_a_summary_tab_is_drafted_to_read_it_whole(tmp_path, monkeypatch):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {
        "Summary": SUMMARY, "Run 2023-01-06": run_tab("01/06/2023"),
        "Run 2023-01-20": run_tab("01/20/2023", total=True), "Notes": [["Prepared by Acme Payroll"]]})
    text = drafted(path, tmp_path / "profiles", "acme_runs", roster=False)
    assert 'sheets: {read: ["Run *"], skip: ["Summary", "Notes"]}' in text
    assert "transposed: {label_columns: 1}" in text and "DOES NOT LOAD" not in text
    assert 'er_social_security: [{header: "Social Security", section: "Employer Taxes"}]' in text
    assert "employer_taxes: {total: [\"Total Employer Taxes\"], parts: [" in text
    assert "gross_wages: [earn_regular, earn_overtime]" in text
    assert "# GUESSED: pay_date from the line 'pay date: ...' above the table, for every row" in text
    layouts = load_profiles(Path(str(tmp_path / "profiles")))
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == 4, (got.problem, got.rejects, got.notes)
    ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    assert read_payroll(tmp_path / "w") == expected()


REGISTER = [
    ["Acme Bakery LLC"], ["Payroll Register"], ["01/01/2023 - 01/31/2023"], [],
    ["Department", "Employee", "Pay Period", "Reg Hrs", "OT Hrs", "Regular Pay", "OT Pay", "Bonus", "Net Pay",
     "ER Social Security", "ER Medicare", "Federal Unemployment"],
    ["Kitchen", "Rivera, Ana", "12/24/2022 - 01/06/2023", 80, 0, 1130.40, 0, 0, 901.12, 70.08, 16.39, 6.78],
    ["Kitchen", "Ortiz, Ben", "12/24/2022 - 01/06/2023", 72, 4, 1017.36, 84.78, 0, 880.20, 68.33, 15.98, 6.61],
    ["Front", "Lee, Kim", "12/24/2022 - 01/06/2023", 40, 0, 565.20, 0, 50, 480.33, 38.14, 8.92, 3.69],
    ["Kitchen", "Company Total", "", 192, 4, 2712.96, 84.78, 50, 2261.65, 176.55, 41.29, 17.08],
]


def test_a_register_with_gross_and_taxes_only_in_parts_and_names_for_ids_is_drafted_to_load(tmp_path, monkeypatch):
    """No employee id (the names are the ids), no gross pay column (its parts), no total of the
    employer's taxes (its parts), and a Company Total line whose label is under the employee."""
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {"Register": REGISTER})
    text = drafted(path, tmp_path / "profiles", "acme_register", roster=False)
    profile = yaml.safe_load(text)
    assert profile["employee_id_from"] == ["employee_name"] and profile["fields"]["employee_name"] == ["Employee"]
    assert profile["derived"] == {"hours": ["regular_hours", "overtime_hours"],
                                  "gross_wages": ["earn_regular", "earn_overtime", "earn_bonus"],
                                  "employer_taxes": ["er_social_security", "er_medicare", "er_futa"]}
    assert "gross_wages" not in profile["fields"] and "Net Pay" not in str(profile["fields"])
    assert profile["report"]["totals"] == [{"label": "company total", "checks": ["hours", "gross_wages", "employer_taxes"],
                                            "scope": "file", "first": False}]
    assert "# GUESSED: no gross pay column: gross_wages is the sum of 'Regular Pay', 'OT Pay', 'Bonus'" in text
    layouts = load_profiles(Path(str(tmp_path / "profiles")))
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == 3, (got.problem, got.rejects)
    assert "1 totals line(s)" in got.tables[0].skipped


SECTIONED = [
    ["Employee ID", "Period Start", "Period End", "Earnings", "Hours", "Amount", "Deductions", "Amount", "Taxes",
     "Amount", "Employer Taxes", "Amount"],
    ["1001", "12/24/2022", "01/06/2023", "Regular", 80, 1130.40, "Medical", 50, "Federal Income Tax", 90,
     "Social Security", 70.08],
    ["1001", "12/24/2022", "01/06/2023", "Overtime", 2, 42.39, "401k", 20, "Social Security", 70.08, "Medicare", 16.39],
    ["1001", "12/24/2022", "01/06/2023", None, None, None, None, None, "Medicare", 16.39, "FUTA", 6.78],
    ["1002", "12/24/2022", "01/06/2023", "Regular", 72, 1017.36, None, None, "Federal Income Tax", 80,
     "Social Security", 63.08],
]


def test_an_employee_id_no_roster_line_has_is_not_proposed_and_the_draft_stops(tmp_path):
    """Deciding on ids the roster does not have would pay no claimed employee (a wrong NO_CREDIT_DUE): the
    draft of a register in a submission whose roster names E1 does not take its printed names for the id."""
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {"Register": REGISTER})
    text = drafted(path, tmp_path / "profiles", "acme_register")
    profile = yaml.safe_load(text)
    assert "employee_id_from" not in profile and "employee_id" not in profile["fields"]
    assert "# CHECK: 'Employee' is not read as the employee id: none of its values is a roster's id (" in text
    assert "# NOT FOUND, to add by hand (the column's header as written): employee_id" in text
    assert "# DOES NOT LOAD YET (fix this first)" in text
    assert "the name as printed is the id" not in text


def test_a_header_of_four_sections_is_drafted_by_section_and_never_the_codes_for_money(tmp_path, monkeypatch):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "checks.xlsx", {"Checks": SECTIONED})
    text = drafted(path, tmp_path / "profiles", "acme_checks", roster=False)
    profile = yaml.safe_load(text)
    assert profile["fields"]["hours"] == ["Hours"]
    assert profile["fields"]["gross_wages"] == [{"header": "Amount", "section": "Earnings"}]
    assert profile["fields"]["employer_taxes"] == [{"header": "Amount", "section": "Employer Taxes"}]
    assert profile["number"] == {"blank": "zero"}
    assert "# CHECK: 'Employer Taxes' reads as employer_taxes but holds no figures (codes?): not taken" in text
    layouts = load_profiles(Path(str(tmp_path / "profiles")))
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == 4, (got.problem, got.rejects)


@pytest.mark.parametrize(("header", "values", "unit"), [
    ("Employer Taxes", ["80", "72.5", "7.667"], "mixed"),  # the values say hours: never the employer's taxes
    ("Total", ["80", "72.5", "7.667"], "hours"),
    ("Total", ["1,130.40", "1,017.36"], "money"),
    ("Total", ["$80.00"], "money"),
    ("Reg Hrs", ["1130.40"], "hours"),  # the header's words first
    ("Gross Pay", ["80", "72"], "money"),
    ("Amount", ["80", "72"], "money"),
    ("Social Security", ["80", "72"], "money"),
    ("Regular", ["80", "72"], None),
])
def test_a_columns_unit_from_its_header_then_its_values(header, values, unit):
    assert dg.unit(header, values) == unit
    assert not dg.fits("employer_taxes", "hours") and not dg.fits("hours", "money") and dg.fits("gross_wages", None)


def test_an_hours_column_is_never_drafted_as_money(tmp_path):
    rows = [["Employee ID", "Period Start", "Period End", "Hours", "Gross Pay", "Employer Taxes"],
            ["1001", "01/01/2023", "01/15/2023", 80, 1130.40, 7.667],
            ["1002", "01/01/2023", "01/15/2023", 72, 1017.36, 6.5]]
    path = workbook(tmp_path / "x.xlsx", {"Sheet1": rows})
    text = draft_yaml(draft_profile(path, "x"))
    assert "employer_taxes" not in yaml.safe_load(text)["fields"]
    assert "# CHECK: 'Employer Taxes' reads as employer_taxes but its header says money, its values hours" in text
    assert "# NOT FOUND, to add by hand (the column's header as written): employer_taxes" in text


# two pay runs, (name, hours, gross, employer taxes): a tab each, named by its check date
RUN_SHEETS = {"Jan 6, 23": [("Ortiz, Ben", 72, 1017.36, 111.40), ("Rivera, Ana", 80, 1130.40, 123.78)],
              "Jan 20, 23": [("Ortiz, Ben", 70, 989.10, 108.31), ("Rivera, Ana", 82, 1172.79, 128.42)]}


def pay_run_sheet(date: str):
    """A pay run's tab as a desktop product exports it: the employees across row 1, each over a
    group of columns (Hours, Rate, the amount headed by the check date, spacers between), the
    items down columns A-D by outline level, a TOTAL group."""
    people = RUN_SHEETS[date]

    def write(ws) -> None:
        groups = [*people, ("TOTAL", sum(p[1] for p in people), round(sum(p[2] for p in people), 2),
                            round(sum(p[3] for p in people), 2))]
        row1, row2 = [None] * 4, [None] * 4
        for name, *_ in groups:
            row1 += [name, None, None, None, None, None]
            row2 += ["Hours", None, "Rate", None, date, None]
        ws.append(row1)
        ws.append(row2)
        ws.append(["Employee Wages, Taxes and Adjustments"])
        ws.append([None, None, "Gross Pay"])

        def line(level: int, label: str, hours=None, rate=None, amount=None) -> list:
            cells = [None] * 4
            cells[level] = label
            for _, h, g, t in groups:
                v = {"hours": h, "gross": g, "taxes": t}
                cells += [v.get(hours), None, rate, None, v.get(amount), None]
            return cells

        ws.append(line(3, "Hourly Rate", "hours", 14.13, "gross"))
        ws.append(line(2, "Total Gross Pay", "hours", None, "gross"))
        ws.append(line(0, "Net Pay", "hours", None, "gross"))
        ws.append(["Employer Taxes and Contributions"])
        ws.append(line(0, "Total Employer Taxes and Contributions", None, None, "taxes"))
    return write


def test_a_workbook_of_pay_run_tabs_with_a_group_of_columns_per_employee_is_drafted_to_read_it(tmp_path, monkeypatch):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "Payroll Summary 2023.xlsx",
                    {"Summary": [["Acme Bakery LLC"], ["Employees", 2], ["Pay runs", 2], ["Total gross pay", 4309.65],
                                 ["Total employer taxes and contributions", 471.91]],
                     **{d: pay_run_sheet(d) for d in RUN_SHEETS}})
    (sub / "payroll" / "files.csv").write_text(
        f"file,employer_id,pay_frequency,pay_lag_days\n{EMPLOYER}/{path.name},{EMPLOYER},biweekly,6\n")
    text = drafted(path, tmp_path / "profiles", "acme_summary")
    assert "transposed: {label_columns: 4, group_row: 1, heading_row: 2}" in text and 'skip: ["Summary"]}' in text
    profile = yaml.safe_load(text)
    assert profile["fields"] == {"hours": ["Total Gross Pay Hours"], "gross_wages": ["Total Gross Pay +4"],
                                 "employer_taxes": ["Total Employer Taxes and Contributions +4"],
                                 "employee_name": [{"column": 1}]}
    assert profile["report"]["sheet_name"]["date_format"] == "%b %d, %y" and "DOES NOT LOAD" not in text
    layouts = load_profiles(Path(str(tmp_path / "profiles")))
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == 4, (got.problem, got.rejects)
    ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    lake = scan_lake(tmp_path / "w", "payroll").collect()
    read = {(r["employee_id"], r["pay_date"].isoformat()): (r["hours"], r["gross_wages"], r["employer_taxes"])
            for r in lake.iter_rows(named=True)}
    assert read == {(n, dt.datetime.strptime(d, "%b %d, %y").date().isoformat()): (h, g, t)
                    for d, people in RUN_SHEETS.items() for n, h, g, t in people}


CHECKS = [
    ["Acme Bakery LLC"], ["Payroll Details"], ["Pay Date: 01/13/2023"], ["Pay Period: 12/31/2022 - 01/13/2023"], [],
    ["Employee", "Hours and Earnings", "Hours", "Amount", "Deductions", "Amount", "Employee Taxes", "Amount",
     "Employer Taxes", "Amount"],
    ["Ortiz, Ben"],
    [None, "Regular", 72, 1017.36, "401(k)", 20, "Social Security", 63.08, "Social Security", 63.08],
    [None, None, None, None, None, None, "Medicare", 14.75, "Medicare", 14.75],
    [None, None, None, None, None, None, None, None, "FUTA", 6.10],
    ["Paycheck Totals", None, 72, 1017.36, None, 20, None, 77.83, None, 83.93],
    ["Rivera, Ana"],
    [None, "Regular", 80, 1130.40, None, None, "Social Security", 70.08, "Social Security", 70.08],
    [None, "Overtime", 2, 42.39, None, None, "Medicare", 17.01, "Medicare", 17.01],
    ["Paycheck Totals", None, 82, 1172.79, None, None, None, 87.09, None, 87.09],
    ["Payroll Totals", "Regular", 152, 2147.76, "401(k)", 20, "Social Security", 133.16, "Social Security", 133.16],
    ["Employees 2", "Overtime", 2, 42.39, None, None, "Medicare", 31.76, "Medicare", 31.76],
    [None, None, None, None, None, None, None, None, "FUTA", 6.10],
    ["Total", None, 154, 2190.15, None, 20, None, 164.92, None, 171.02],
]


def test_a_block_per_paycheck_named_on_its_own_line_with_a_summary_is_drafted_to_read_it(tmp_path, monkeypatch):
    """The employee alone on a line above each paycheck's code lines, the sections side by side, a
    Paycheck Totals line each, the payroll's totals by code after the last paycheck."""
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "Payroll Details.xlsx", {"Payroll Details": CHECKS})
    text = drafted(path, tmp_path / "profiles", "acme_details", roster=False)
    profile = yaml.safe_load(text)
    assert profile["fields"]["gross_wages"] == [{"header": "Amount", "section": "Hours and Earnings"}]
    assert profile["fields"]["employer_taxes"] == [{"header": "Amount", "section": "Employer Taxes"}]
    assert {"label": "(?P<employee_name>[^,\\d]+, [^,\\d]+)", "alone": True} in profile["report"]["blocks"]
    assert profile["report"]["end"] == ["payroll totals"]
    layouts = load_profiles(Path(str(tmp_path / "profiles")))
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole, (got.problem, got.rejects)
    ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    lake = scan_lake(tmp_path / "w", "payroll").collect().group_by("employee_id").agg(
        pl.col("hours").sum(), pl.col("gross_wages").sum().round(2), pl.col("employer_taxes").sum().round(2)).sort("employee_id")
    assert lake.rows() == [("Ortiz, Ben", 72.0, 1017.36, 83.93), ("Rivera, Ana", 82.0, 1172.79, 87.09)]


@pytest.mark.parametrize(("header", "field"), [
    ("Employer additional taxes", "er_additional"), ("Medicare Company", "er_medicare"),
    ("NJ - Unemployment Company", "er_sui"), ("Federal Unemployment", "er_futa"), ("Employer 401(k) Match", None),
    ("Total Employer Taxes and Contributions +4", "employer_taxes"), ("Adjusted Gross Pay", None),
    ("Total Gross Pay Hours", "hours"), ("Hours and Earnings Amount", "gross_wages"),
    ("Employee last name", "last_name"), ("Employee first name", "first_name"), ("Employee", "employee_name"),
    ("Co FEIN", "employer_id"), ("Company Tax ID", "employer_id"),  # not an employer tax ('er_id' before)
])
def test_what_a_header_reaches(header, field):
    from transforms.ingest.read.layouts import profile_files as pfiles

    assert dg.reach(pfiles.vocabulary().reader(), dg.no_place(header)) == field


def test_a_csv_per_pay_run_named_by_its_check_date_takes_the_date_from_its_name(tmp_path):
    """No date in the file: the pay date is the file's name (``report.file_name``), the period from
    it by ``payroll/files.csv``'s frequency; a name without a date gives none."""
    rows = "Employee ID,Hours,Gross Pay,Employer Taxes\nE1,80.00,1040.00,113.88\nE2,72.00,936.00,102.49\n"
    (tmp_path / "Payroll Summary 2023-01-13.csv").write_text(rows)
    text = draft_yaml(draft_profile(tmp_path / "Payroll Summary 2023-01-13.csv", "runs"))
    assert '  file_name: {pattern: "(?P<pay_date>\\\\d{4}-\\\\d{2}-\\\\d{2})", date_format: "%Y-%m-%d"}\n' in text, text
    assert "period_from_pay_date: {rule: period_ending_on_pay_date}\n" in text
    assert "# GUESSED: pay_date from the file's name ('Payroll Summary 2023-01-13.csv'): check every file is named so" in text
    (tmp_path / "Payroll Summary.csv").write_text(rows)
    text = draft_yaml(draft_profile(tmp_path / "Payroll Summary.csv", "runs"))
    assert "file_name" not in text and "period_from_pay_date" not in text


def test_a_check_date_and_period_above_a_transposed_table_as_two_cells_are_block_lines(tmp_path):
    """QuickBooks-style register (``tests/fixtures/exports/transposed_register.py``): ``Check date |
    01/11/2024`` and ``Pay period | 12/23/2023 - 01/05/2024`` above the table, the value in the first
    employee's column, are drafted as block lines, not as the table's first rows (which hid the
    employees' names: the draft did not load)."""
    from tests.fixtures.exports import transposed_register as qb

    (path, *_) = sorted(qb.write(tmp_path, "csv"))
    text = draft_yaml(draft_profile(path, "qb"))
    profile = yaml.safe_load(text)
    assert profile["report"]["blocks"][:2] == [
        {"label": "check date", "fields": ["pay_date"]},
        {"label": "pay period", "fields": ["period_start", "period_end"], "value": r"(\S+)\s*(?:-|to|through|thru)\s*(\S+)"}]
    assert profile["transposed"] == {"label_columns": 4, "group_row": 1, "heading_row": 2}
    assert profile["employee_id_from"] == ["employee_name"] and "pay_date" not in profile["fields"]
    assert "DOES NOT LOAD" not in text


@pytest.mark.parametrize(("stem", "got"), [
    ("Payroll Summary 2023-01-13", (r"(?P<pay_date>\d{4}-\d{2}-\d{2})", "%Y-%m-%d")),
    ("Garden State Bakery LLC Prior Payroll Pay Period 12252021 01072022 Pay Date 01132022",
     (r"(?P<period_start>(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:19|20)\d{2})\ "
      r"(?P<period_end>(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:19|20)\d{2})\ Pay\ Date\ "
      r"(?P<pay_date>(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:19|20)\d{2})", "%m%d%Y")),
    ("Payroll 2023-01-01 2023-01-14", None),  # two dates, no period said: not guessed
    ("Payroll Register", None), ("Payroll 13012023", None),  # no date, or not one
])
def test_the_dates_a_files_name_gives(stem, got):
    assert dg.name_dates(stem) == got
    if got is not None and "period_start" in got[0]:
        import re

        m = re.search(got[0], stem + ".csv")
        assert m.groupdict() == {"period_start": "12252021", "period_end": "01072022", "pay_date": "01132022"}
