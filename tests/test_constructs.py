"""What real reports do that profiles could not say (issue 29, item 4): each construct has a file
read by an agency's profile alone (``--profiles``, ``IMPCREDIT_PROFILES``), and the annual decision
on it equals the decision on the same payroll in the canonical layout, to the cent.

- one column holding two fields (a pay period printed ``12/25/2021 - 01/07/2022``: ``split``);
- a label and its value in one cell (``Check Date: 01/13/2022``, as a report saved to Excel
  writes it: a block line read from one cell);
- the employee named on a group header line above that employee's rows (a block line whose
  label's named groups give the id; ``alone``);
- a pay frequency set per employer, not per row (a report with only check dates: files.csv);
- a two-row header ("REG" above "Hours | Amount");
- a report with no employee id (the printed name is the id; the notice says so);
- ``employer_id`` not declared at all (the folder named by the FEIN gives it).
A file whose every line is rejected stops the run with one short line, the full list in the rejects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.exports import common
from tests.fixtures.exports.common import CURRENCY, DATE, HOURS, MONEY, Cell
from tests.fixtures.exports.run import by_person, canonical_outputs, decide
from transforms.runs.inputs import SubmissionIncomplete


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return canonical_outputs(tmp_path_factory.mktemp("constructs"))


def _run(tmp_path: Path, monkeypatch, profile: str, rows: list[list], *, name: str = "export.csv",
         ids: dict[str, str] | None = None, files_csv: str | None = None, products: bool = False):
    """The rows as Excel saves them to CSV in payroll/100000001/, read with the agency profile
    ``profile`` (YAML): (staged inputs, outputs by person, the output folder)."""
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "construct.yaml").write_text(profile, encoding="utf-8")
    sub = common.submission(tmp_path / "sub", employee_ids=ids, roster_ssn=True)
    common.write_excel_csv(sub / "payroll" / common.EMPLOYER / name, rows)
    if files_csv:
        (sub / "payroll" / "files.csv").write_text(files_csv, encoding="utf-8")
    staged, out = decide(sub, tmp_path / "work", products=products, profiles=profiles)
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert rec.profile == "construct" and rec.status == "accepted", rec
    return staged, by_person(out, ids), out


def _amounts(c) -> list:
    return [Cell(c.hours, HOURS), Cell(c.gross, MONEY), Cell(c.employer_tax_total, MONEY)]


HEAD = """name: construct
description: a construct of item 4
date_formats: ["%m/%d/%Y"]
"""


def test_one_column_holding_two_fields(tmp_path, monkeypatch, canonical):
    rows = [["Payroll Register"], [], ["Employee ID", "Pay Period", "Hours", "Gross Pay", "Employer Taxes"]]
    rows += [[c.employee.employee_id, f"{c.period_start:%m/%d/%Y} - {c.period_end:%m/%d/%Y}", *_amounts(c)]
             for c in common.PAYROLL]
    profile = HEAD + """fields:
  employee_id: [Employee ID]
  pay_period: [Pay Period]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
split:
  pay_period: {into: [period_start, period_end], pattern: "\\\\s*(\\\\S+)\\\\s*-\\\\s*(\\\\S+)\\\\s*"}
"""
    staged, got, _ = _run(tmp_path, monkeypatch, profile, rows)
    assert got == canonical
    assert "employer_id" not in profile  # the folder named by the FEIN gives it


def test_a_label_and_its_value_in_one_cell(tmp_path, monkeypatch, canonical):
    rows: list[list] = [["Payroll Journal"], ["Garden State Bakery LLC"]]
    for pay in sorted({c.pay_date for c in common.PAYROLL}):
        checks = [c for c in common.PAYROLL if c.pay_date == pay]
        rows += [[f"Check Date: {pay:%m/%d/%Y}"],
                 [f"Period: {checks[0].period_start:%m/%d/%Y} to {checks[0].period_end:%m/%d/%Y}"],
                 ["Employee ID", "Hours", "Gross Pay", "Employer Taxes"]]
        rows += [[c.employee.employee_id, *_amounts(c)] for c in checks]
    profile = HEAD + """fields:
  employee_id: [Employee ID]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
report:
  blocks:
    - {label: "check date", fields: [pay_date]}
    - {label: "period", fields: [period_start, period_end], value: "(\\\\S+) to (\\\\S+)"}
"""
    staged, got, _ = _run(tmp_path, monkeypatch, profile, rows)
    assert got == canonical
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert "2 preamble line(s), 106 block header line(s), 52 repeated header(s)" in rec.message


def test_the_employee_named_on_a_group_header_line(tmp_path, monkeypatch, canonical):
    rows: list[list] = [["Earnings Register"], [], ["Period Start", "Period End", "Check Date", "Hours", "Gross",
                                                    "Employer Taxes"]]
    for e in common.EMPLOYEES:
        rows.append([f"Employee: {e.employee_id} - {e.name}"])
        rows += [[Cell(c.period_start, DATE), Cell(c.period_end, DATE), Cell(c.pay_date, DATE), *_amounts(c)]
                 for c in common.PAYROLL if c.employee is e]
    profile = HEAD + """fields:
  period_start: [Period Start]
  period_end: [Period End]
  pay_date: [Check Date]
  hours: [Hours]
  gross_wages: [Gross]
  employer_taxes: [Employer Taxes]
report:
  blocks:
    - {label: "employee:\\\\s*(?P<employee_id>\\\\d+)\\\\s*-\\\\s*(?P<employee_name>.+)", alone: true}
"""
    _, got, _ = _run(tmp_path, monkeypatch, profile, rows)
    assert got == canonical


def test_a_pay_frequency_set_per_employer(tmp_path, monkeypatch, canonical):
    rows = [["Check Date", "Employee ID", "Hours", "Gross Pay", "Employer Taxes"]]
    rows += [[Cell(c.pay_date, DATE), c.employee.employee_id, *_amounts(c)] for c in common.PAYROLL]
    profile = HEAD + """fields:
  pay_date: [Check Date]
  employee_id: [Employee ID]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
period_from_pay_date: {rule: period_ending_on_pay_date}
"""
    files_csv = f"file,employer_id,pay_frequency,pay_lag_days\n{common.EMPLOYER}/,{common.EMPLOYER},Bi-Weekly,6\n"
    _, got, _ = _run(tmp_path, monkeypatch, profile, rows, files_csv=files_csv)
    assert got == canonical


def test_without_the_frequency_the_file_is_not_read_and_says_what_to_state(tmp_path, monkeypatch):
    rows = [["Check Date", "Employee ID", "Hours", "Gross Pay", "Employer Taxes"]]
    rows += [[Cell(c.pay_date, DATE), c.employee.employee_id, *_amounts(c)] for c in common.PAYROLL[:3]]
    profile = HEAD + """fields:
  pay_date: [Check Date]
  employee_id: [Employee ID]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
period_from_pay_date: {rule: period_ending_on_pay_date}
"""
    with pytest.raises(SubmissionIncomplete, match="no pay frequency: state the employer's pay_frequency"):
        _run(tmp_path, monkeypatch, profile, rows)


def test_a_two_row_header(tmp_path, monkeypatch, canonical):
    rows: list[list] = [["Payroll Summary"], [],
                        ["", "", "", "REG", "", "OT", "", "BONUS", "", "Employer", ""],
                        ["Employee ID", "From", "To", "Hours", "Amount", "Hours", "Amount", "Amount", "Gross",
                         "Taxes", "Net"]]
    for c in common.PAYROLL:
        reg, ot, bonus = (c.earnings.get(k, (None, None, None)) for k in ("REG", "OT", "BONUS"))
        rows.append([c.employee.employee_id, Cell(c.period_start, DATE), Cell(c.period_end, DATE),
                     Cell(reg[0], HOURS), Cell(reg[2], MONEY), Cell(ot[0], HOURS), Cell(ot[2], MONEY),
                     Cell(bonus[2], MONEY), Cell(c.gross, MONEY), Cell(c.employer_tax_total, CURRENCY),
                     Cell(c.net, MONEY)])
    profile = HEAD + """fields:
  employee_id: [Employee ID]
  period_start: [From]
  period_end: [To]
  regular_hours: [REG Hours]
  regular_pay: [REG Amount]
  overtime_hours: [OT Hours]
  overtime_pay: [OT Amount]
  bonus: [BONUS Amount]
  employer_taxes: [Employer Taxes]
derived:
  hours: [regular_hours, overtime_hours]
  gross_wages: [regular_pay, overtime_pay, bonus]
optional: [overtime_hours, overtime_pay, bonus]
report:
  header_rows: 2
"""
    staged, got, _ = _run(tmp_path, monkeypatch, profile, rows)
    assert got == canonical


def test_no_employee_id_the_printed_name_is_the_id_and_the_notice_says_so(tmp_path, monkeypatch, canonical):
    names = {e.ssn: e.name for e in common.EMPLOYEES}
    rows = [["Employee", "Period Start", "Period End", "Hours", "Gross Pay", "Employer Taxes"]]
    rows += [[c.employee.name, Cell(c.period_start, DATE), Cell(c.period_end, DATE), *_amounts(c)]
             for c in common.PAYROLL]
    profile = HEAD + """product: "Acme Payroll (earnings report)"
employee_id_from: [employee_name]
fields:
  employee_name: [Employee]
  period_start: [Period Start]
  period_end: [Period End]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
"""
    _, got, out = _run(tmp_path, monkeypatch, profile, rows, ids=names, products=True)
    assert got == canonical
    notice = (out / "notices" / "A1.html").read_text(encoding="utf-8")
    assert "Your payroll report (Acme Payroll (earnings report)) has no employee id" in notice
    assert "Muñoz, José" in notice


def test_every_line_rejected_stops_the_run_in_one_short_line(tmp_path, monkeypatch):
    """A report saved to Excel writes the check date in one labelled cell (``Check Date:
    01/13/2022``); a profile that looks for another label reads no pay date on any line: the file is
    rejected whole and the run stops with one short line, the full list in the rejects."""
    rows: list[list] = [["Payroll Journal"]]
    for pay in sorted({c.pay_date for c in common.PAYROLL}):
        rows += [[f"Check Date: {pay:%m/%d/%Y}"], ["Employee ID", "Hours", "Gross Pay", "Employer Taxes"]]
        rows += [[c.employee.employee_id, *_amounts(c)] for c in common.PAYROLL if c.pay_date == pay]
    profile = HEAD + """fields:
  employee_id: [Employee ID]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
period_from_pay_date: {rule: period_ending_on_pay_date}
report:
  blocks:
    - {label: "pay day", fields: [pay_date]}
"""
    files_csv = f"file,employer_id,pay_frequency,pay_lag_days\n{common.EMPLOYER}/,{common.EMPLOYER},biweekly,6\n"
    with pytest.raises(SubmissionIncomplete) as err:
        _run(tmp_path, monkeypatch, profile, rows, files_csv=files_csv)
    message = str(err.value)
    assert len(message) < 700 and "\n" not in message and "could not be read" in message, message
