"""Nothing that looks like data is skipped in silence (spec section 1; issue 35 part 2).

A sheet, or a run of lines, holding a table of figures that no layout reads makes its file not
read whole: its lines are rejected (``unread_table``, the message naming the sheet and the lines),
with no readable employer id, so they hold every application of the employers the file names
(spec section 7; worked example M3). Covers, titles and what a profile names to skip are passed
over and said. Every route of the ingest does it, and for every file rows read = accepted +
rejected.
"""

from __future__ import annotations

import calendar
import datetime as dt
from pathlib import Path

import openpyxl
import polars as pl
import pytest

from transforms.award import ledger
from transforms.ingest import ingest_folder
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
EMPLOYER = "100000001"
HEAD = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages", "employer_taxes"]
# worked example A: 86.67 h a month at the minimum wage; taxes 10.95% of wages
MONTHLY = {2022: (86.67, 1126.71, 123.37), 2023: (86.67, 1224.65, 134.10)}


def month_rows(year: int) -> list[list]:
    h, w, t = MONTHLY[year]
    return [[EMPLOYER, "E1", "111-22-3333", f"{year}-{m:02d}-01", f"{year}-{m:02d}-{calendar.monthrange(year, m)[1]}",
             h, w, t] for m in range(1, 13)]


def submission(root: Path) -> Path:
    """Example A's submission without its payroll (employer 100000001, E1, application A1)."""
    (root / "payroll" / EMPLOYER).mkdir(parents=True, exist_ok=True)
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
        f"A1,{EMPLOYER},Acme Bakery LLC,Essex,CBT,2023,2024-02-01T09:00:00\n")
    (root / "roster.csv").write_text("application_id,employee_id,wage_category\nA1,E1,general\n")
    (root / "certifications.csv").write_text(
        "ssn,certification_id,status,valid_from,valid_to\n111-22-3333,C1,CERTIFIED,2018-01-01,\n")
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"{EMPLOYER},{y}-07-01,0.0280,0.0050\n" for y in range(2020, 2024)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def transposed_2023(ws) -> None:
    """The 2023 rows with the months across the top and the items down the side: a layout
    nothing reads (each line has twelve figures)."""
    ws.append(["Employee E1", *[f"{m:02d}/2023" for m in range(1, 13)]])
    h, w, t = MONTHLY[2023]
    ws.append(["Hours", *[h] * 12])
    ws.append(["Gross", *[w] * 12])
    ws.append(["ER Taxes", *[t] * 12])


def workbook(path: Path, sheets: dict[str, object]) -> Path:
    """A workbook of the sheets given: a list of rows, or a function that writes the sheet."""
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        if callable(rows):
            rows(ws)
        else:
            for r in rows:
                ws.append(r)
    wb.save(path)
    return path


def annual(sub: Path, work: Path, cluster: str | None = None) -> tuple[steps.RunInputs, Path]:
    staged = steps.stage_inputs(sub, work, KEY, cluster=cluster)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    out = work.parent / f"out-{work.name}"
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    return staged, out


def payroll_record(report):
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert rec.rows_read == rec.rows_accepted + rec.rows_rejected
    return rec


def test_m3_a_sheet_holding_the_2023_rows_in_a_layout_nothing_reads_holds_the_application(tmp_path):
    """Worked example M3: as A, with the 2023 rows on a sheet of the same workbook in a layout
    nothing reads: A1 is HELD (INPUT_REJECTED), the message names the sheet; as A when both years
    are read."""
    whole = submission(tmp_path / "whole")
    workbook(whole / "payroll" / EMPLOYER / "payroll.xlsx",
             {"Payroll 2022": [HEAD, *month_rows(2022)], "Payroll 2023": [HEAD, *month_rows(2023)]})
    _, out = annual(whole, tmp_path / "w-whole")
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert awards.select("status", "awarded").row(0) == ("APPROVED", "388.24")

    sub = submission(tmp_path / "m3")
    workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx",
             {"Payroll 2022": [HEAD, *month_rows(2022)], "Run 2023": transposed_2023})
    staged, out = annual(sub, tmp_path / "w-m3")
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert awards.select("status", "reasons").row(0) == ("HELD", "INPUT_REJECTED")
    rec = payroll_record(staged.report)
    assert (rec.status, rec.rows_read, rec.rows_accepted, rec.rows_rejected) == ("partial", 16, 12, 4)
    said = "sheet 'Run 2023' lines 1-4 hold a table of figures that no layout reads: the file is not read whole"
    assert said in rec.message
    held = pl.read_csv(out / "held.csv", infer_schema=False)
    assert set(held["application_id"]) == {"A1"} and sorted(held["line"].cast(int)) == [1, 2, 3, 4]
    assert held["file"].str.contains("Run 2023").all() and held["messages"].str.contains(said).all()
    rejects = pl.read_csv(out / "rejects.csv", infer_schema=False)
    (row,) = rejects.filter(pl.col("rule") == "unread_table").to_dicts()
    assert row["file"] == f"payroll/{EMPLOYER}/payroll.xlsx[Run 2023]" and row["message"].startswith(said)


@pytest.mark.parametrize("route", ["local:1", "dask"])
def test_every_route_of_the_ingest_rejects_an_unread_table_alike(tmp_path, route, monkeypatch):
    """The staged routes (in this process, and on a Dask cluster) give the plain route's report,
    rejects and lake for a workbook with an unread sheet."""
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx",
             {"Payroll 2022": [HEAD, *month_rows(2022)], "Run 2023": transposed_2023})
    now = dt.datetime(2024, 7, 1, 12)
    plain = ingest_folder(sub, tmp_path / "plain", KEY, now=now)
    if route == "dask":
        from distributed import LocalCluster

        monkeypatch.delenv("IMPCREDIT_HMAC_KEY", raising=False)
        monkeypatch.delenv("IMPCREDIT_HMAC_KEY_FILE", raising=False)
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as c:
            other = ingest_folder(sub, tmp_path / "other", KEY, now=now, cluster=c.scheduler_address, key_loader=demo_key)
    else:
        other = ingest_folder(sub, tmp_path / "other", KEY, now=now, cluster=route)
    assert other.files == plain.files
    assert other.rejects.equals(plain.rejects)
    assert other.lake_sha256 == plain.lake_sha256
    rec = payroll_record(other)
    assert rec.rows_rejected == 4 and "sheet 'Run 2023' lines 1-4" in rec.message


def two_employees_run(ws) -> None:
    """A tab of one pay run, the two employees across the top: two figures a line."""
    ws.append(["Pay Run 01/06/2023"])
    ws.append(["", "Rivera, Ana", "Ortiz, Ben"])
    ws.append(["Regular Hours", 80, 72])
    ws.append(["Overtime Hours", 0, 4])
    ws.append(["Gross Pay", 1130.4, 1102.08])
    ws.append(["Employer Taxes", 123.78, 120.68])


def test_a_tab_with_two_employees_across_the_top_is_not_passed_over_and_a_cover_is(tmp_path):
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx", {
        "Notes": [["Payroll export"], ["Prepared by", "Acme Payroll"], ["Company code", "K7Q"], ["Employees", 2]],
        "Payroll 2022": [HEAD, *month_rows(2022)],
        "Run 2023-01-06": two_employees_run,
    })
    rec = payroll_record(ingest_folder(sub, tmp_path / "w", KEY))
    assert (rec.rows_accepted, rec.rows_rejected) == (12, 6)
    assert "sheet 'Run 2023-01-06' lines 1-6 hold a table of figures that no layout reads" in rec.message
    assert "sheet 'Notes' skipped: no header row and no figures (a cover or notes sheet, 4 line(s))" in rec.message


def test_a_table_of_figures_above_the_header_is_a_run_of_lines_not_read(tmp_path):
    """Title lines above a header are its preamble; a summary by code above it, which no layout
    reads, is not: its lines are rejected, the title lines still said."""
    sub = submission(tmp_path / "sub")
    lines = ["Acme Bakery LLC,,,,,,,", "Payroll 2022,,,,,,,", "Code,Hours,Amount,,,,,", "REG,1040.04,13520.52,,,,,",
             "OT,0,0,,,,,", "TOTAL,1040.04,13520.52,,,,,", ",".join(HEAD)]
    lines += [",".join(str(c) for c in r) for r in month_rows(2022)]
    (sub / "payroll" / EMPLOYER / "payroll.csv").write_text("\n".join(lines) + "\n")
    report = ingest_folder(sub, tmp_path / "w", KEY)
    rec = payroll_record(report)
    assert (rec.rows_read, rec.rows_accepted, rec.rows_rejected) == (16, 12, 4)
    assert "lines 3-6 (above the header on line 7) hold a table of figures that no layout reads" in rec.message
    assert "2 preamble line(s)" in rec.message
    bad = report.rejects.filter(pl.col("rule") == "unread_table")
    assert bad["file"].to_list() == [f"payroll/{EMPLOYER}/payroll.csv"] and bad["employer_id"].to_list() == [None]


def test_a_workbook_that_no_layout_reads_stays_a_whole_file_problem(tmp_path):
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx", {"Run 2023": transposed_2023, "Run 2023-01-06": two_employees_run})
    report = ingest_folder(sub, tmp_path / "w", KEY)
    rec = payroll_record(report)
    assert rec.status == "rejected" and rec.rows_accepted == 0
    assert set(report.rejects.filter(pl.col("file").str.starts_with("payroll/"))["rule"]) == {"unknown_layout"}


def test_a_hidden_sheet_of_figures_is_not_passed_over(tmp_path):
    sub = submission(tmp_path / "sub")
    path = workbook(sub / "payroll" / EMPLOYER / "payroll.xlsx",
                    {"Payroll 2022": [HEAD, *month_rows(2022)], "Run 2023": transposed_2023, "Lookup": [["codes"]]})
    wb = openpyxl.load_workbook(path)
    wb["Run 2023"].sheet_state = "hidden"
    wb["Lookup"].sheet_state = "hidden"
    wb.save(path)
    rec = payroll_record(ingest_folder(sub, tmp_path / "w", KEY))
    assert rec.rows_rejected == 4 and "sheet 'Run 2023' lines 1-4 hold a table of figures" in rec.message
    assert "hidden sheet 'Lookup' not read: it matches no layout" in rec.message
