"""A draft an analyst can trust (issue 35 part 6; ``impcredit layouts draft``): the sheet that holds
the payroll (not a Summary tab) and the ``sheets`` patterns, a transposed table, an employee id or
the names as ids, gross wages and employer taxes from their parts, a column named by its section
where its name repeats, never an hours column for money or the reverse, a totals line whatever
column its label is in, and at its foot what was guessed and what to check. Each draft, saved as
it is, loads and reads its export whole (``layouts check``). The exports are built here, small."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.test_profile_keys import SUMMARY, expected, read_payroll, run_tab
from tests.test_unread_tables import EMPLOYER, submission, workbook
from transforms.ingest import ingest_folder
from transforms.ingest import layout_check as lc
from transforms.ingest.read import draft_guess as dg
from transforms.ingest.read.draft import draft_profile, draft_yaml
from transforms.pii import load_key

KEY = load_key({})


def drafted(path: Path, folder: Path, name: str) -> str:
    """The draft of ``path`` written, as it is, into the profiles folder ``folder``."""
    text = draft_yaml(draft_profile(path, name))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(text)
    return text


def test_a_transposed_workbook_with_a_summary_tab_is_drafted_to_read_it_whole(tmp_path, monkeypatch):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {
        "Summary": SUMMARY, "Run 2023-01-06": run_tab("01/06/2023"),
        "Run 2023-01-20": run_tab("01/20/2023", total=True), "Notes": [["Prepared by Acme Payroll"]]})
    text = drafted(path, tmp_path / "profiles", "acme_runs")
    assert 'sheets: {read: ["Run *"], skip: ["Summary", "Notes"]}' in text
    assert "transposed: {label_columns: 1}" in text and "DOES NOT LOAD" not in text
    assert 'er_social_security: [{header: "Social Security", section: "Employer Taxes"}]' in text
    assert "employer_taxes: {total: [\"Total Employer Taxes\"], parts: [" in text
    assert "gross_wages: [earn_regular, earn_overtime]" in text
    assert "# GUESSED: pay_date from the line 'pay date: ...' above the table, for every row" in text
    monkeypatch.setenv("IMPCREDIT_PROFILES", str(tmp_path / "profiles"))
    got = lc.check_file(path)
    assert got.read_whole and got.rows == 4, (got.problem, got.rejects, got.notes)
    ingest_folder(sub, tmp_path / "w", KEY)
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
    text = drafted(path, tmp_path / "profiles", "acme_register")
    profile = yaml.safe_load(text)
    assert profile["employee_id_from"] == ["employee_name"] and profile["fields"]["employee_name"] == ["Employee"]
    assert profile["derived"] == {"hours": ["regular_hours", "overtime_hours"],
                                  "gross_wages": ["earn_regular", "earn_overtime", "earn_bonus"],
                                  "employer_taxes": ["er_social_security", "er_medicare", "er_futa"]}
    assert "gross_wages" not in profile["fields"] and "Net Pay" not in str(profile["fields"])
    assert profile["report"]["totals"] == [{"label": "company total", "checks": ["hours", "gross_wages", "employer_taxes"],
                                            "scope": "file", "first": False}]
    assert "# GUESSED: no gross pay column: gross_wages is the sum of 'Regular Pay', 'OT Pay', 'Bonus'" in text
    monkeypatch.setenv("IMPCREDIT_PROFILES", str(tmp_path / "profiles"))
    got = lc.check_file(path)
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


def test_a_header_of_four_sections_is_drafted_by_section_and_never_the_codes_for_money(tmp_path, monkeypatch):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "checks.xlsx", {"Checks": SECTIONED})
    text = drafted(path, tmp_path / "profiles", "acme_checks")
    profile = yaml.safe_load(text)
    assert profile["fields"]["hours"] == ["Hours"]
    assert profile["fields"]["gross_wages"] == [{"header": "Amount", "section": "Earnings"}]
    assert profile["fields"]["employer_taxes"] == [{"header": "Amount", "section": "Employer Taxes"}]
    assert profile["number"] == {"blank": "zero"}
    assert "# CHECK: 'Employer Taxes' reads as employer_taxes but holds no figures (codes?): not taken" in text
    monkeypatch.setenv("IMPCREDIT_PROFILES", str(tmp_path / "profiles"))
    got = lc.check_file(path)
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
