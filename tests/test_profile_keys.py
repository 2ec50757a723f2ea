"""Profiles for the reports products write (issue 35 parts 5 and 6): sheets read and skipped by
name, a transposed table (items down the side, a column per employee), a column named by its
section or its position, a field given by its total or by the sum of its parts, the one-line
errors of a profile that names what no file has, and the guard against a one-word slip (net pay,
hours or money under the wrong field). Each export is built here, small."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import polars as pl
import pytest

from tests.test_unread_tables import EMPLOYER, submission, workbook
from transforms.ingest import ingest_folder
from transforms.ingest import layout_check as lc
from transforms.ingest.read.layouts.profile_files import ProfileError, load_profiles
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key

KEY = demo_key()

# two pay runs of two employees: (pay date, period, {id: (name, reg h, ot h, reg pay, ot pay, ss, med, futa, sui)})
RUNS = {
    "01/06/2023": ("12/24/2022 - 01/06/2023", {"1001": ("Rivera, Ana", 80, 0, 1130.40, 0, 70.08, 16.39, 6.78, 3.39),
                                               "1002": ("Ortiz, Ben", 72, 4, 1017.36, 84.78, 68.33, 15.98, 6.61, 3.31)}),
    "01/20/2023": ("01/07/2023 - 01/20/2023", {"1001": ("Rivera, Ana", 80, 2, 1130.40, 42.39, 72.71, 17.01, 7.04, 3.52),
                                               "1002": ("Ortiz, Ben", 70, 0, 989.10, 0, 61.32, 14.34, 5.93, 2.97)}),
}


def expected() -> dict[tuple[str, str], tuple[float, float, float]]:
    """(employee, pay date ISO) -> (hours, gross wages, employer taxes)."""
    out = {}
    for pay, (_, people) in RUNS.items():
        m, d, y = pay.split("/")
        for e, (_, rh, oh, rp, op, ss, med, futa, sui) in people.items():
            out[(e, f"{y}-{m}-{d}")] = (rh + oh, round(rp + op, 2), round(ss + med + futa + sui, 2))
    return out


def run_tab(pay: str, *, total: bool = False):
    """One pay run's tab: title, pay date and period lines, then the items down the side and a
    column per employee, earnings and employer taxes in sections (Social Security under both the
    employee's and the employer's taxes)."""
    period, people = RUNS[pay]

    def write(ws) -> None:
        ids = list(people)
        col = [people[e] for e in ids]
        ws.append(["Payroll Register"])
        ws.append([f"Pay Date: {pay}"])
        ws.append([f"Period: {period}"])
        ws.append(["Employee ID", *ids])
        ws.append(["Employee", *[c[0] for c in col]])
        ws.append(["Regular Hours", *[c[1] for c in col]])
        ws.append(["Overtime Hours", *[c[2] for c in col]])
        ws.append(["Earnings"])
        ws.append(["Regular", *[c[3] for c in col]])
        ws.append(["Overtime", *[c[4] for c in col]])
        ws.append(["Employee Taxes"])
        ws.append(["Social Security", *[round(c[3] * 0.062, 2) for c in col]])
        ws.append(["Employer Taxes"])
        for k, name in enumerate(("Social Security", "Medicare", "FUTA", "NJ SUI")):
            ws.append([name, *[c[5 + k] for c in col]])
        if total:
            ws.append(["Total Employer Taxes", *[round(sum(c[5:9]), 2) for c in col]])
    return write


TRANSPOSED = """name: acme_runs
product: Acme Payroll (pay run register, a tab per run)
description: A tab per pay run, the items down the side, a column per employee.
transposed: {label_columns: 1}
sheets: {read: ["Run *"], skip: ["Summary", "Notes*"]}
report:
  blocks:
    - {label: "pay date", fields: [pay_date]}
    - {label: "period", fields: [period_start, period_end], value: '(\\S+)\\s*-\\s*(\\S+)'}
fields:
  employee_id: [Employee ID]
  regular_hours: [Regular Hours]
  overtime_hours: [Overtime Hours]
  regular_pay: [{header: Regular, section: Earnings}]
  overtime_pay: [{header: Overtime, section: Earnings}]
  employer_taxes:
    total: [Total Employer Taxes]
    parts:
      - [{header: Social Security, section: Employer Taxes}]
      - [{header: Medicare, section: Employer Taxes}]
      - [{header: FUTA, section: Employer Taxes}]
      - [{header: NJ SUI, section: Employer Taxes}]
derived:
  hours: [regular_hours, overtime_hours]
  gross_wages: [regular_pay, overtime_pay]
"""

SUMMARY = [["Payroll Summary"], ["Employees", 2], ["Checks", 4], ["Gross Pay", 4394.43], ["Employer Taxes", 381.90]]


def profiles(tmp_path: Path, text: str, name: str = "acme.yaml") -> Path:
    d = tmp_path / "profiles"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    return d


def read_payroll(work: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
    lake = scan_lake(work, "payroll").collect()
    return {(r["employee_id"], r["pay_date"].isoformat()): (round(r["hours"], 2), round(r["gross_wages"], 2),
                                                            round(r["employer_taxes"], 2))
            for r in lake.iter_rows(named=True)}


def test_a_transposed_workbook_with_a_summary_tab_is_read_by_one_profile(tmp_path, monkeypatch):
    """Tabs chosen by name (the Summary and Notes tabs skipped and said), each run's items down the
    side and its employees across the top, the pay date and period from lines above the table, the
    earnings and the employer's Social Security named by their section, the employer taxes from
    their parts where a run has no total and from its total where it has one."""
    layouts = load_profiles(Path(str(profiles(tmp_path, TRANSPOSED))))
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {
        "Summary": SUMMARY, "Run 2023-01-06": run_tab("01/06/2023"),
        "Run 2023-01-20": run_tab("01/20/2023", total=True), "Notes": [["Prepared by Acme Payroll"]]})
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.rows_read, rec.rows_rejected) == ("accepted", "acme_runs", 4, 0), rec.message
    assert "sheet 'Summary' skipped: sheets.skip 'Summary' of 'acme_runs' (5 line(s))" in rec.message
    assert "sheet 'Notes' skipped: sheets.skip 'Notes*' of 'acme_runs' (1 line(s))" in rec.message
    assert read_payroll(tmp_path / "w") == expected()


def test_without_the_skip_the_summary_tab_is_an_unread_table(tmp_path, monkeypatch):
    layouts = load_profiles(Path(str(profiles(tmp_path, TRANSPOSED.replace('"Summary", ', "")))))
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "register.xlsx",
             {"Summary": SUMMARY, "Run 2023-01-06": run_tab("01/06/2023")})
    (rec,) = [f for f in ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts).files if f.dataset == "payroll"]
    assert rec.status == "partial" and rec.rows_rejected == 5
    assert "sheet 'Summary' lines 1-5 hold a table of figures that no layout reads" in rec.message


SECTIONED = """name: acme_checks
product: Acme Payroll (check register, four sections side by side)
description: A line per code of a check, earnings, deductions, taxes and employer taxes side by side.
number: {blank: zero}
fields:
  employee_id: [Employee ID]
  period_start: [Period Start]
  period_end: [Period End]
  pay_date: [Check Date]
  check_id: [Check Number]
  hours: [{header: Hours, section: Earnings}]
  gross_wages: [{header: Amount, section: Earnings}]
  employer_taxes: [{header: Amount, section: Employer Taxes}]
"""
HEADER = ("Employee ID,Period Start,Period End,Check Date,Check Number,Earnings,Hours,Amount,Deductions,Amount,Taxes,Amount,"
          "Employer Taxes,Amount")
CHECK_LINES = [
    "1001,12/24/2022,01/06/2023,01/06/2023,5001,Regular,80,1130.40,Medical,50.00,Federal Income Tax,90.00,Social Security,70.08",
    "1001,12/24/2022,01/06/2023,01/06/2023,5001,Overtime,2,42.39,401k,20.00,Social Security,70.08,Medicare,16.39",
    "1001,12/24/2022,01/06/2023,01/06/2023,5001,,,,,,Medicare,16.39,FUTA,6.78",
    "1002,12/24/2022,01/06/2023,01/06/2023,5002,Regular,72,1017.36,,,Federal Income Tax,80.00,Social Security,63.08",
]


def test_a_header_of_four_sections_each_with_its_amount_is_read_by_section(tmp_path, monkeypatch):
    """``Earnings | Hours | Amount | Deductions | Amount | Taxes | Amount | Employer Taxes | Amount``:
    the Amount of each section is its own column; the lines of a check add."""
    layouts = load_profiles(Path(str(profiles(tmp_path, SECTIONED))))
    sub = submission(tmp_path / "sub")
    (sub / "payroll" / EMPLOYER / "checks.csv").write_text("\n".join([HEADER, *CHECK_LINES]) + "\n")
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.rows_accepted) == ("accepted", "acme_checks", 4), rec.message
    lake = scan_lake(tmp_path / "w", "payroll").collect().group_by("employee_id").agg(
        pl.col("hours").sum(), pl.col("gross_wages").sum().round(2), pl.col("employer_taxes").sum().round(2)).sort("employee_id")
    assert lake.rows() == [("1001", 82.0, 1172.79, 93.25), ("1002", 72.0, 1017.36, 63.08)]
    # the same columns by their position, and a position this header does not have named in one line
    by_place = SECTIONED.replace("[{header: Hours, section: Earnings}]", "[{column: G}]").replace(
        "[{header: Amount, section: Earnings}]", "[{column: 8}]").replace(
        "[{header: Amount, section: Employer Taxes}]", "[{column: N}]")
    d = profiles(tmp_path / "p2", by_place)
    layouts = load_profiles(Path(str(d)))
    got = lc.check_file(sub / "payroll" / EMPLOYER / "checks.csv", layouts=layouts)
    assert got.read_whole and got.rows == 4
    layouts = load_profiles(Path(str(profiles(tmp_path / "p3", by_place.replace("{column: N}", "{column: Q}")))))
    got = lc.check_file(sub / "payroll" / EMPLOYER / "checks.csv", layouts=layouts)
    assert f"{d.parent.parent / 'p3' / 'profiles' / 'acme.yaml'}: fields.employer_taxes: column Q is beyond the header's 14 column(s)" \
        in got.problem


def test_a_section_the_header_does_not_have_is_named_in_one_line(tmp_path, monkeypatch):
    d = profiles(tmp_path, SECTIONED.replace("section: Employer Taxes}", "section: Company Taxes}"))
    layouts = load_profiles(Path(str(d)))
    sub = submission(tmp_path / "sub")
    (sub / "payroll" / EMPLOYER / "checks.csv").write_text("\n".join([HEADER, *CHECK_LINES]) + "\n")
    got = lc.check_file(sub / "payroll" / EMPLOYER / "checks.csv", layouts=layouts)
    said = (f"{d / 'acme.yaml'}: fields.employer_taxes: section 'Company Taxes' is on no cell of the header; "
            "write the section as the header prints it")
    assert said in got.problem and "missing column(s): 'Amount' after 'Company Taxes'" in got.problem


TOTAL_OR_PARTS = """name: acme_either
product: Acme Payroll (employee earnings, with or without its employer tax detail)
description: One line per check; the employer taxes as a total column or as a column per tax.
fields:
  employee_id: [Employee ID]
  period_start: [Period Start]
  period_end: [Period End]
  hours: [Hours]
  gross_wages: [Gross Pay]
  er_futa: [ER FUTA]
  employer_taxes:
    total: [Total Employer Taxes]
    parts: [[ER Social Security], [ER Medicare], er_futa]
optional: [er_futa]
"""


def test_one_profile_reads_a_report_with_the_total_and_one_with_its_parts(tmp_path, monkeypatch):
    layouts = load_profiles(Path(str(profiles(tmp_path, TOTAL_OR_PARTS))))
    sub = submission(tmp_path / "sub")
    (sub / "payroll" / EMPLOYER / "total.csv").write_text(
        "Employee ID,Period Start,Period End,Hours,Gross Pay,Total Employer Taxes\n"
        "1001,12/24/2022,01/06/2023,80,1130.40,93.25\n")
    (sub / "payroll" / EMPLOYER / "parts.csv").write_text(
        "Employee ID,Period Start,Period End,Hours,Gross Pay,ER Social Security,ER Medicare,ER FUTA\n"
        "1002,12/24/2022,01/06/2023,72,1017.36,63.08,14.75,6.10\n")
    (sub / "payroll" / EMPLOYER / "no_futa.csv").write_text(
        "Employee ID,Period Start,Period End,Hours,Gross Pay,ER Social Security,ER Medicare\n"
        "1003,12/24/2022,01/06/2023,40,565.20,35.04,8.20\n")
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    assert {f.file.rsplit("/", 1)[1]: f.status for f in report.files if f.dataset == "payroll"} == {
        "total.csv": "accepted", "parts.csv": "accepted", "no_futa.csv": "accepted"}
    lake = scan_lake(tmp_path / "w", "payroll").collect().sort("employee_id")
    assert [round(x, 2) for x in lake["employer_taxes"]] == [93.25, 83.93, 43.24]
    # neither the total nor every part: the message says both
    (sub / "payroll" / EMPLOYER / "neither.csv").write_text(
        "Employee ID,Period Start,Period End,Hours,Gross Pay,ER Social Security\n1004,12/24/2022,01/06/2023,40,565.20,35.04\n")
    got = lc.check_file(sub / "payroll" / EMPLOYER / "neither.csv", layouts=layouts)
    assert "Total Employer Taxes (or its parts: ER Social Security + ER Medicare + ER FUTA)" in got.problem


BASE = """name: acme
description: Acme
fields:
  employee_id: [Employee ID]
  period_start: [Period Start]
  period_end: [Period End]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
"""


@pytest.mark.parametrize(("text", "key", "said"), [
    (BASE.replace("[Gross Pay]", "[Net Pay]"), "fields.gross_wages", "alias 'Net Pay' says net pay"),
    (BASE.replace("[Gross Pay]", "[Gross Pay, NET PAY]"), "fields.gross_wages", "alias 'NET PAY' says net pay"),
    (BASE.replace("[Hours]", "[Regular Pay]"), "fields.hours", "alias 'Regular Pay' says money"),
    (BASE.replace("[Employer Taxes]", "[Total Hours]"), "fields.employer_taxes", "alias 'Total Hours' says hours"),
    (BASE.replace("  gross_wages: [Gross Pay]\n", "  regular_pay: [Regular Hrs]\n") + "derived: {gross_wages: [regular_pay]}\n",
     "fields.regular_pay", "says hours, and regular_pay is money"),
    (BASE + "sheets: {read: ['Run *'], skip: ['run *']}\n", "sheets", "read and skip both name ['run *']"),
    (BASE.replace("[Hours]", "[{column: 0}]"), "fields.hours", "positions count from 1"),
    (BASE.replace("[Hours]", "[{section: Earnings}]"), "fields.hours", "write the header of the column under it too"),
    (BASE.replace("[Hours]", "[{header: Hours, section: Earnings, column: C}]"), "fields.hours", "write one of them"),
    (BASE + "trust_aliases: [net_pay]\n", "trust_aliases", "'net_pay' is not a field"),
    (BASE.replace("  employer_taxes: [Employer Taxes]\n", "  employer_taxes: {total: [Employer Taxes], parts: [er_x]}\n"),
     "fields.employer_taxes.parts.0", "'er_x' is not a field"),
    (BASE + "transposed: {label_columns: 1}\nreport: {header_rows: 2}\n", "transposed.label_columns",
     "write label_columns: 2"),
    (BASE + "transposed: {heading_row: 2}\n", "transposed", "write group_row too"),
    (BASE + "transposed: {label_columns: 4, group_row: 1}\n", "transposed", "write heading_row too"),
])
def test_a_profile_that_slips_is_one_line_naming_file_key_and_what_to_write(tmp_path, text, key, said):
    d = profiles(tmp_path, text)
    with pytest.raises(ProfileError) as err:
        load_profiles(d)
    msg = str(err.value)
    assert msg.startswith(f"{d / 'acme.yaml'}: {key}") and said in msg and "\n" not in msg, msg


def test_a_profile_that_says_it_prints_gross_pay_as_net_loads(tmp_path):
    d = profiles(tmp_path, BASE.replace("[Gross Pay]", "[Net Pay]") + "trust_aliases: [gross_wages]\n")
    assert "acme" in {p.name for p in load_profiles(d)}


def test_a_sheet_pattern_that_names_no_sheet_is_said_with_the_profiles_file_and_key(tmp_path, monkeypatch):
    d = profiles(tmp_path, TRANSPOSED.replace('read: ["Run *"]', 'read: ["Pay Run *"]'))
    layouts = load_profiles(Path(str(d)))
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {"Run 2023-01-06": run_tab("01/06/2023")})
    got = lc.check_file(path, layouts=layouts)
    assert not got.read_whole
    said = f"{d / 'acme.yaml'}: sheets.read: no pattern ('Pay Run *') names sheet 'Run 2023-01-06'"
    assert said in (got.problem or "") or any(said in r["message"] for r in got.rejects), (got.problem, got.rejects)


def test_the_canonical_workbook_still_reads_every_sheet(tmp_path):
    """Two shipped profiles name sheets: QuickBooks Desktop's, only to skip its Summary tab, and
    the register repeated on three tabs, to read one of them; every other shipped profile tries
    every sheet; a profile's skip counts only where it reads a sheet of the file, so a Summary sheet
    of figures beside a canonical sheet is still an unread table."""
    shipped = load_profiles()
    assert [p.name for p in shipped if p.sheets is not None] == [
        "payroll_register_by_group", "quickbooks_desktop_payroll_summary"]
    assert [p.name for p in shipped if p.transposed is not None] == [
        "payroll_summary_by_pay_run", "quickbooks_desktop_payroll_summary"]
    tabs, qbd = [p for p in shipped if p.sheets is not None]
    assert qbd.sheets.read == [] and qbd.sheets.skip == ["Summary"]
    assert tabs.sheets.read == ["By Department"] and tabs.sheets.skip == ["By Location", "By Employee"]
    sub = submission(tmp_path / "sub")
    head = ["employer_id", "employee_id", "period_start", "period_end", "hours", "gross_wages", "employer_taxes"]
    workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx", {
        "Payroll": [head, [EMPLOYER, "E1", "2023-01-01", "2023-01-31", 86.67, 1224.65, 134.10]],
        "Summary": SUMMARY})
    (rec,) = [f for f in ingest_folder(sub, tmp_path / "w", KEY).files if f.dataset == "payroll"]
    assert (rec.profile, rec.status, rec.rows_accepted) == ("canonical", "partial", 1), rec.message
    assert "sheet 'Summary' lines 1-5 hold a table of figures that no layout reads" in rec.message


def test_a_transposed_table_saved_as_csv_is_read_alike(tmp_path, monkeypatch):
    """Excel's "Save As CSV" of one run's tab (every line as wide as the used range)."""
    import csv

    layouts = load_profiles(Path(str(profiles(tmp_path, TRANSPOSED))))
    sub = submission(tmp_path / "sub")
    path = workbook(tmp_path / "run.xlsx", {"Run 2023-01-06": run_tab("01/06/2023")})
    ws = openpyxl.load_workbook(path)["Run 2023-01-06"]
    with (sub / "payroll" / EMPLOYER / "run 2023-01-06.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["" if c is None else c for c in row] for row in ws.iter_rows(values_only=True)])
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.rows_accepted) == ("accepted", "acme_runs", 2), rec.message
    assert read_payroll(tmp_path / "w") == {k: v for k, v in expected().items() if k[1] == "2023-01-06"}


BLOCKS = """name: acme_blocks
product: Acme Payroll (check register, a block per check)
description: A block per check, its employee and check date above a header of four sections side by side.
number: {blank: zero}
period_from_pay_date: {rule: period_ending_on_pay_date}
report:
  blocks:
    - {label: 'employee:\\s*(?P<employee_id>\\d+)\\s+(?P<employee_name>.+)'}
    - {label: "check date", fields: [pay_date]}
  totals:
    - {label: "check total", checks: [hours, gross_wages, employer_taxes], scope: since_last}
fields:
  hours: [{header: Hours, section: Earnings}]
  gross_wages: [{header: Amount, section: Earnings}]
  employer_taxes: [{header: Amount, section: Employer Taxes}]
"""
SECTIONS = "Earnings,Hours,Amount,Deductions,Amount,Taxes,Amount,Employer Taxes,Amount"
BLOCK_LINES = [
    "Check Register,,,,,,,,", "Employee: 1001 Rivera Ana,,,,,,,,", "Check Date: 01/06/2023,,,,,,,,", SECTIONS,
    "Regular,80,1130.40,Medical,50.00,Federal Income Tax,90.00,Social Security,70.08",
    "Overtime,2,42.39,,,Social Security,70.08,Medicare,16.39",
    ",,,,,Medicare,16.39,FUTA,6.78",
    "Check Total,82,1172.79,,50.00,,176.47,,93.25",
    "Employee: 1002 Ortiz Ben,,,,,,,,", "Check Date: 01/06/2023,,,,,,,,", SECTIONS,
    "Regular,72,1017.36,,,Federal Income Tax,80.00,Social Security,63.08",
    "Check Total,72,1017.36,,,,80.00,,63.08",
]


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_block_per_check_with_four_sections_side_by_side(tmp_path, monkeypatch, fmt):
    """The register's lines walked as one frame (CSV) or line by line (a workbook): the blocks'
    employee and check date, the header repeated per block, each section's Amount its own column,
    the check's totals line checked against its lines."""
    import csv
    import io

    layouts = load_profiles(Path(str(profiles(tmp_path, BLOCKS))))
    sub = submission(tmp_path / "sub")
    folder = sub / "payroll" / EMPLOYER
    rows = list(csv.reader(io.StringIO("\n".join(BLOCK_LINES))))
    if fmt == "csv":
        (folder / "register.csv").write_text("\n".join(BLOCK_LINES) + "\n")
    else:
        workbook(folder / "register.xlsx", {"Register": [[c if c else None for c in r] for r in rows]})
    (sub / "payroll" / "files.csv").write_text(f"file,employer_id,pay_frequency\n{EMPLOYER}/register.{fmt},{EMPLOYER},biweekly\n")
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.profile, rec.rows_accepted) == ("accepted", "acme_blocks", 4), rec.message
    assert "2 totals line(s)" in rec.message and "1 repeated header(s)" in rec.message
    lake = scan_lake(tmp_path / "w", "payroll").collect().group_by("employee_id").agg(
        pl.col("hours").sum(), pl.col("gross_wages").sum().round(2), pl.col("employer_taxes").sum().round(2)).sort("employee_id")
    assert lake.rows() == [("1001", 82.0, 1172.79, 93.25), ("1002", 72.0, 1017.36, 63.08)]


def test_a_transposed_row_with_no_label_is_named_by_its_position(tmp_path, monkeypatch):
    """The employees' names across the top with no label beside them: ``{column: 2}`` (the
    table's second row), the names as the ids."""
    def unlabelled(ws) -> None:
        run_tab("01/06/2023")(ws)
        ws["A5"] = None  # the "Employee" label of the names' row

    text = TRANSPOSED.replace("  employee_id: [Employee ID]\n", "  employee_name: [{column: 2}]\n").replace(
        "transposed:", "employee_id_from: [employee_name]\ntransposed:")
    layouts = load_profiles(Path(str(profiles(tmp_path, text))))
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "register.xlsx", {"Run 2023-01-06": unlabelled})
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.rows_accepted) == ("accepted", 2), rec.message
    ids = sorted(scan_lake(tmp_path / "w", "payroll").collect()["employee_id"])
    assert ids == ["Ortiz, Ben", "Rivera, Ana"]
