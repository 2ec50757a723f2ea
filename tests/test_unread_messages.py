"""Every "could not be read" message names the profile and the sheet (issue 42 part 5): the
agency's own profile that reads no tab of a workbook says so, sheet by sheet and why (not only a
shipped profile's word on another tab); a report block that matched no line is said as such
(never as the empty values of its fields), and so is a file name pattern that matched nothing; a
profile key that could only read nothing stops the profile when it loads. Real files in tmp_path,
staged through the library (``annual.stage_inputs``) and checked through ``impcredit check``
(piped, 80 columns)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.exports.run import decide
from tests.test_unread_tables import EMPLOYER, submission, workbook
from transforms.ingest.read.layouts.profile_files import ProfileError, load_profiles
from transforms.pii import demo_key
from transforms.runs import annual as steps
from transforms.runs.inputs import SubmissionIncomplete

ROOT = Path(__file__).resolve().parents[1]
KEY = demo_key()
FILE = f"payroll/{EMPLOYER}/register"

ACME = """name: acme_register
product: Acme Payroll (register)
description: Acme's register, one tab
sheets: {read: ["Payroll"]}
fields:
  employee_id: [Employee Number]
  ssn: [SSN]
  period_start: [Period Start]
  period_end: [Period End]
  hours: [Hours Worked]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
"""

# the register prints its pay period on a line above each month's rows: "Period: 2023-01-01 - 2023-01-31"
BLOCKS = """name: acme_periods
product: Acme Payroll (register by period)
description: A period line above each payroll's rows
report:
  blocks:
    - {label: "pay period", fields: [period_start, period_end], value: '(\\S+)\\s*-\\s*(\\S+)'}
fields:
  employee_id: [Employee Number]
  ssn: [SSN]
  hours: [Hours Worked]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
"""

MONTHS = [(f"2023-{m:02d}-01", f"2023-{m:02d}-28") for m in range(1, 13)]
ROW = ["E1", "111-22-3333", 86.67, 1224.65, 134.10]


def profiles(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "profiles"
    d.mkdir(exist_ok=True)
    (d / "acme.yaml").write_text(text)
    return d


def acme_tabs(totals_taxes: bool) -> dict[str, list]:
    """The agency's tab (its hours column printed as 'Hours', not 'Hours Worked'), and a tab of
    totals in the canonical layout (with its employer_taxes column: a shipped profile reads it)."""
    head = ["Employee Number", "SSN", "Period Start", "Period End", "Hours", "Gross Pay", "Employer Taxes"]
    canon = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages"]
    line = [EMPLOYER, "E1", "111-22-3333", "2023-01-01", "2023-01-31", 10, 100]
    return {"Payroll": [head, *[[ROW[0], ROW[1], s, e, *ROW[2:]] for s, e in MONTHS]],
            "Totals": [canon + ["employer_taxes"] * totals_taxes, line + [10] * totals_taxes]}


def check(sub: Path, prof: Path, tmp_path: Path) -> list[str]:
    """``impcredit check`` piped at 80 columns: its lines."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80", "IMPCREDIT_PROFILES": ""}
    r = subprocess.run([sys.executable, "-m", "flows.cli", "check", "--input", str(sub), "--profiles", str(prof),
                        "--out", str(tmp_path / "check.html")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "111-22-3333" not in r.stdout + r.stderr and "111223333" not in r.stdout + r.stderr
    return r.stdout.splitlines()


AGENCY_SAID = ("profile 'acme_register' reads no sheet of the workbook: sheet 'Payroll': line 1 holds 6 of 7 "
               "fields, missing column(s): Hours Worked; sheet 'Totals': no sheets.read pattern ('Payroll') names it")


def test_the_agency_profile_that_reads_no_tab_names_itself_each_sheet_and_why(tmp_path):
    """No tab read: the file could not be read, and its message is the agency's profile's, each
    sheet and why (the shipped profiles' nearest rows stay in each sheet's reject)."""
    prof = profiles(tmp_path, ACME)
    sub = submission(tmp_path / "sub")
    workbook(sub / f"{FILE}.xlsx", acme_tabs(totals_taxes=False))
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    assert str(err.value) == (
        f"nothing was decided: {FILE}.xlsx could not be read ({AGENCY_SAID}; 13 row(s) rejected). Correct or "
        "re-export these files (rejects.csv of `impcredit ingest` has the details), then run again.")
    assert f"  {FILE}.xlsx: not read ({AGENCY_SAID}; 13 row(s) rejected)" in check(sub, prof, tmp_path)


def test_a_shipped_profile_reading_another_tab_no_longer_speaks_alone(tmp_path):
    """A shipped profile (canonical) reads the Totals tab: the file is read in part, and its
    message says first that the agency's profile read nothing, sheet by sheet."""
    prof = profiles(tmp_path, ACME)
    sub = submission(tmp_path / "sub")
    workbook(sub / f"{FILE}.xlsx", acme_tabs(totals_taxes=True))
    staged = steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.rows_accepted, rec.rows_rejected) == ("partial", "canonical", 1, 13)
    assert rec.message == (f"{AGENCY_SAID}; sheet 'Payroll' lines 1-13 hold a table of figures that no layout "
                           "reads: the file is not read whole; 13 row(s) rejected")
    # a workbook of another product, read whole: the agency's profile came near no sheet, nothing said of it
    (sub / f"{FILE}.xlsx").unlink()
    workbook(sub / f"{FILE}.xlsx", {"Totals": acme_tabs(totals_taxes=True)["Totals"]})
    staged = steps.stage_inputs(sub, tmp_path / "w2", KEY, layouts=load_profiles(prof))
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.message) == ("accepted", "canonical", ""), rec.message


def period_register(path: Path) -> None:
    lines = ["Acme Payroll Register"]
    for k, (s, e) in enumerate(MONTHS):
        lines.append(f"Period: {s} - {e}")
        if k == 0:
            lines.append("Employee Number,SSN,Hours Worked,Gross Pay,Employer Taxes")
        lines.append(",".join(str(c) for c in ROW))
    path.write_text("\n".join(lines) + "\n")


def test_a_block_that_matched_no_line_is_said_not_its_fields_values(tmp_path):
    """The profile looks for 'pay period'; the register prints 'Period:': no line is a block line,
    so the period is empty on every row. The message names the block, the profile and what it
    looked for (it said 'most values of period_end ... are empty or of the wrong type')."""
    prof = profiles(tmp_path, BLOCKS)
    sub = submission(tmp_path / "sub")
    period_register(sub / f"{FILE}.csv")
    said = ("profile 'acme_periods': no line matched report.blocks label 'pay period' (in the first cell of a "
            "line; it sets period_start, period_end): the file is rejected")
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    assert f"{FILE}.csv could not be read ({said}; 2 preamble line(s); 23 row(s) rejected)" in str(err.value)
    assert f"  {FILE}.csv: not read ({said}; 2 preamble line(s); 23 row(s) rejected)" in check(sub, prof, tmp_path)
    # the same register as a workbook's tab: the sheet named too
    (sub / f"{FILE}.csv").unlink()
    period_register(tmp_path / "register.csv")
    rows = [ln.split(",") for ln in (tmp_path / "register.csv").read_text().splitlines()]
    workbook(sub / f"{FILE}.xlsx", {"Payroll": rows})
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w2", KEY, layouts=load_profiles(prof))
    assert (f"{FILE}.xlsx could not be read (profile 'acme_periods', sheet 'Payroll': no line matched report.blocks "
            "label 'pay period' (in the first cell of a line; it sets period_start, period_end): the file is "
            "rejected; sheet 'Payroll': 2 preamble line(s); 23 row(s) rejected)") in str(err.value)
    # the block as the register prints it: read, and decided
    fixed = profiles(tmp_path, BLOCKS.replace('label: "pay period"', 'label: "period"'))
    staged, out = decide(sub, tmp_path / "w3", profiles=fixed)
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert (rec.status, rec.rows_accepted) == ("accepted", 12), rec.message


def test_a_file_name_pattern_that_matches_nothing_is_said(tmp_path):
    """The period is read from the file's name, which holds no dates: the pattern is named."""
    prof = profiles(tmp_path, BLOCKS.replace(
        """  blocks:
    - {label: "pay period", fields: [period_start, period_end], value: '(\\S+)\\s*-\\s*(\\S+)'}""",
        """  file_name: {pattern: '(?P<period_start>[0-9]{8})-(?P<period_end>[0-9]{8})'}"""))
    sub = submission(tmp_path / "sub")
    (sub / f"{FILE}.csv").write_text("Employee Number,SSN,Hours Worked,Gross Pay,Employer Taxes\n"
                                     + ",".join(str(c) for c in ROW) + "\n")
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    said = ("profile 'acme_periods': report.file_name '(?P<period_start>[0-9]{8})-(?P<period_end>[0-9]{8})' matches "
            "nothing in the file's name 'register.csv'; the file gives no pay period (period start and end): name "
            "them in payroll/files.csv (period_start, period_end) for a file of one payroll")
    assert str(err.value) == (f"nothing was decided: {FILE}.csv could not be read ({said}). Correct or re-export "
                              "these files (rejects.csv of `impcredit ingest` has the details), then run again.")


@pytest.mark.parametrize(("old", "new", "said"), [
    ("fields: [period_start, period_end], ", "fields: [], ",
     "report.blocks.0: sets no field: write fields: [its field] (e.g. [pay_date]) or name a group of label"),
    ("value: '(\\S+)\\s*-\\s*(\\S+)'", "value: '(\\S+ - \\S+)'",
     "report.blocks.0: value: '(\\S+ - \\S+)' has 1 group(s) for the 2 fields period_start, period_end: write a "
     "group per field, e.g. '(\\S+)\\s*-\\s*(\\S+)'"),
    ('label: "pay period"', 'label: " "',
     "report.blocks.0: label: empty: write the label the line prints, e.g. 'check date'"),
    ("value: '(\\S+)\\s*-\\s*(\\S+)'}", "value: '(\\S+)\\s*-\\s*(\\S+)'}\n    - {label: check no, fields: [check_no]}",
     "report.blocks.1.fields: sets 'check_no', which nothing reads: write a canonical column (e.g. pay_date, "
     "period_start) or a field that derived or a total's parts use"),
])
def test_a_block_that_could_only_read_nothing_stops_the_profile(tmp_path, old, new, said):
    assert old in BLOCKS
    d = profiles(tmp_path, BLOCKS.replace(old, new))
    with pytest.raises(ProfileError) as err:
        load_profiles(d)
    assert str(err.value) == f"{d / 'acme.yaml'}: {said}"


def test_a_name_pattern_without_a_group_stops_the_profile(tmp_path):
    d = profiles(tmp_path, BLOCKS.replace("report:\n", "report:\n  file_name: {pattern: 'register_[0-9]+'}\n"))
    with pytest.raises(ProfileError) as err:
        load_profiles(d)
    assert str(err.value) == (f"{d / 'acme.yaml'}: report.file_name.pattern: 'register_[0-9]+' names no group: name "
                              r"each field it reads, e.g. '(?P<period_end>\d{8})' (period_start, period_end or "
                              "pay_date)")


def test_a_workbook_whose_every_sheet_is_skipped_names_each_sheet_pattern_and_profile(tmp_path):
    """Said once: each sheet with the pattern and the profile that skipped it."""
    skip = 'sheets: {read: ["Payroll"], skip: ["Summary", "Notes*"]}'
    prof = profiles(tmp_path, ACME.replace('sheets: {read: ["Payroll"]}', skip))
    sub = submission(tmp_path / "sub")
    workbook(sub / f"{FILE}.xlsx", {"Summary": [["Payroll Summary"], ["Employees", 1], ["Gross Pay", 14695.80]],
                                    "Notes 2023": [["Prepared by Acme Payroll"]]})
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    assert str(err.value).split(" could not be read (")[1].split(". Correct or")[0] == (
        "no sheet of the workbook is read: every sheet is skipped by sheets.skip; sheet 'Summary' skipped: "
        "sheets.skip 'Summary' of 'acme_register' (3 line(s)); sheet 'Notes 2023' skipped: sheets.skip 'Notes*' of "
        "'acme_register' (1 line(s)))")


def test_a_text_file_names_the_agency_profile_beside_the_nearest_shipped_one(tmp_path):
    """The canonical layout comes nearest (7 of 8 fields, as the agency's profile does): the
    agency's profile is said after it, with its own missing column."""
    prof = profiles(tmp_path, """name: acme_export
product: Acme Payroll (export)
description: Acme's export, the canonical names but its hours column
fields:
  employer_id: [employer_id]
  employee_id: [employee_id]
  ssn: [ssn]
  period_start: [period_start]
  period_end: [period_end]
  hours: [Paid Hours]
  gross_wages: [gross_wages]
  employer_taxes: [employer_taxes]
""")
    sub = submission(tmp_path / "sub")
    head = "employer_id,employee_id,ssn,period_start,period_end,Hours Paid Total,gross_wages,employer_taxes\n"
    (sub / f"{FILE}.csv").write_text(head + "".join(f"{EMPLOYER},E1,111-22-3333,{s},{e},86.67,1224.65,134.10\n"
                                                    for s, e in MONTHS))
    with pytest.raises(SubmissionIncomplete) as err:
        steps.stage_inputs(sub, tmp_path / "w", KEY, layouts=load_profiles(prof))
    said = ("the header matches no known payroll layout; nearest: profile 'canonical', line 1 (7 of 8 fields); "
            "missing column(s): hours; unmatched column(s): Hours Paid Total; profile 'acme_export': line 1 holds "
            "7 of 8 fields, missing column(s): Paid Hours")
    assert str(err.value) == (f"nothing was decided: {FILE}.csv could not be read ({said}). Correct or re-export "
                              "these files (rejects.csv of `impcredit ingest` has the details), then run again.")
    assert f"  {FILE}.csv: not read ({said})" in check(sub, prof, tmp_path)


def test_a_file_of_its_header_only_names_the_profile_that_read_it(tmp_path):
    sub = submission(tmp_path / "sub")
    (sub / f"{FILE}.csv").write_text("employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,"
                                     "employer_taxes\n")
    staged = steps.stage_inputs(sub, tmp_path / "w", KEY)
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.message) == ("accepted", "canonical", "profile 'canonical': no data rows (header only)")


def test_a_skip_that_names_every_sheet_a_read_names_stops_the_profile(tmp_path):
    d = profiles(tmp_path, ACME.replace('sheets: {read: ["Payroll"]}', 'sheets: {read: ["Run 2023*"], skip: ["Run *"]}'))
    with pytest.raises(ProfileError) as err:
        load_profiles(d)
    assert str(err.value) == (f"{d / 'acme.yaml'}: sheets: skip 'Run *' names every sheet read 'Run 2023*' names: "
                              "it would read none; remove one, or narrow the skip")
    # a skip of some of them reads the others
    (d / "acme.yaml").write_text(ACME.replace('sheets: {read: ["Payroll"]}', 'sheets: {read: ["Run *"], skip: ["Run 2022*"]}'))
    assert next(p for p in load_profiles(d) if p.name == "acme_register").takes_sheet("Run 2023-01-06")
