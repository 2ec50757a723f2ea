"""Payroll reports as the products write them (spec section 1; issue: reports, not just tables):
ADP Workforce Now's payroll history workbook, Paycom's prior payroll workbooks and Gusto's payroll
journal give the credits of the same payroll in the canonical layout, to the cent; the report's
lines are all accounted for; a totals line that disagrees, or a file whose employer id disagrees
with its folder, holds the employer's applications; payroll/files.csv gives what a file lacks;
.xls workbooks are read, a workbook declaring a million rows is read in seconds, hidden sheets are
named."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import polars as pl
import pytest

from transforms.award import ledger
from transforms.ingest import ingest_folder
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic import reports as rp

SHAPES = Path(__file__).parent / "fixtures" / "shapes"
KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
EMPLOYER = "100000001"
SSNS = {"E1": "900-22-0001", "E2": "900-22-0002", "E3": "900-22-0003"}


def rows() -> list[dict]:
    """The regular checks of the shapes fixture (three employees, 2022 and 2023, monthly)."""
    frame = pl.read_csv(SHAPES / "payroll" / "off_cycle.csv", infer_schema=False)
    return frame.filter(pl.col("check_id").str.starts_with("R")).to_dicts()


def submission(root: Path, *, roster_ssn: bool) -> Path:
    (root / "payroll").mkdir(parents=True, exist_ok=True)
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
        f"A1,{EMPLOYER},Acme Bakery LLC,Essex,CBT,2023,2024-02-01T09:00:00\n")
    head = "application_id,employee_id,wage_category" + (",ssn" if roster_ssn else "")
    (root / "roster.csv").write_text(head + "\n" + "".join(
        f"A1,{e},general" + (f",{s}" if roster_ssn else "") + "\n" for e, s in SSNS.items()))
    (root / "certifications.csv").write_text("ssn,certification_id,status,valid_from,valid_to\n" + "".join(
        f"{s},C{k},CERTIFIED,2018-01-01,\n" for k, s in enumerate(SSNS.values())))
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"{EMPLOYER},{y}-07-01,0.0280,0.0050\n" for y in (2021, 2022, 2023)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def decide(sub: Path, work: Path) -> tuple[steps.RunInputs, pl.DataFrame, pl.DataFrame]:
    """(staged, employee credits, awards) of an annual run of the steps."""
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    out = work.parent / f"out-{work.name}"
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema=False).drop("roster_employer_id")
    return staged, credits, pl.read_csv(out / "awards.csv", infer_schema=False)


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    sub = submission(root / "canonical", roster_ssn=False)
    pl.DataFrame(rows()).write_csv(sub / "payroll" / "payroll.csv")
    _, credits, awards = decide(sub, root / "w-canonical")
    assert awards["status"].to_list() == ["APPROVED"] and float(awards["awarded"][0]) > 0
    return {"root": root, "credits": credits, "awards": awards}


def test_adp_workforce_now_payroll_history(canonical):
    """A Report Criteria sheet, a section row above the header, a line per check with the ssn
    masked, employer taxes per column, Totals For Associate ID and Grand Totals lines; the company
    code is ADP's, the FEIN the folder's."""
    sub = submission(canonical["root"] / "adp", roster_ssn=True)
    rp.write_adp_history(rows(), sub / "payroll" / EMPLOYER / "Payroll History.xlsx", company="Acme Bakery LLC",
                         code="K7Q")
    staged, credits, awards = decide(sub, canonical["root"] / "w-adp")
    assert credits.equals(canonical["credits"]) and awards.equals(canonical["awards"])
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert rec.profile == "adp_wfn_payroll_history" and rec.rows_read == rec.rows_accepted == len(rows()) == 73
    assert "1 preamble line(s), 4 totals line(s)" in rec.message
    assert "sheet 'Report Criteria' skipped: no header row and no figures (a cover or notes sheet, 4 line(s))" in rec.message


def test_paycom_prior_payroll_workbooks(canonical):
    """One workbook per payroll, its period and pay date in the name, a line per code with its
    type; no FEIN and no ssn (the folder and the roster give them)."""
    sub = submission(canonical["root"] / "paycom", roster_ssn=True)
    written = rp.write_paycom(rows(), sub / "payroll" / EMPLOYER, company="Acme Bakery LLC")
    assert len(written) == 24 and "Pay Period 01012023 01312023 Pay Date 02052023" in written[12].name
    staged, credits, awards = decide(sub, canonical["root"] / "w-paycom")
    assert credits.equals(canonical["credits"]) and awards.equals(canonical["awards"])
    assert {f.profile for f in staged.report.files if f.dataset == "payroll"} == {"paycom_prior_payroll"}
    lines = scan_lake(canonical["root"] / "w-paycom", "payroll_lines").collect()
    assert set(lines["counts_as"]) == {"hours+wages", "taxes", "ignored"}


def test_paycom_byte_identical_workbooks_of_different_payrolls_both_count(canonical, tmp_path):
    """Paycom writes the same bytes for two payrolls with the same lines: their names differ, so
    do their lines (the period comes from the name); neither is a duplicate of the other."""
    sub = submission(tmp_path / "sub", roster_ssn=True)
    one = [r for r in rows() if r["period_start"] == "2023-03-01"]
    (first,) = rp.write_paycom(one, sub / "payroll" / EMPLOYER, company="Acme")
    again = first.with_name(first.name.replace("03012023 03312023 Pay Date 04052023", "04012023 04302023 Pay Date 05052023"))
    shutil.copy(first, again)
    report = ingest_folder(sub, tmp_path / "w", KEY)
    assert [f.status for f in report.files if f.dataset == "payroll"] == ["accepted", "accepted"]
    periods = scan_lake(tmp_path / "w", "payroll").select("period_start").unique().collect()
    assert sorted(periods["period_start"].to_list()) == [dt.date(2023, 3, 1), dt.date(2023, 4, 1)]


def test_gusto_payroll_journal(canonical):
    """Title and address block, per payroll an "Employee Earnings", a "Payroll period" and a "Pay
    day" line and its own header (an Overtime column only where someone worked overtime), a line
    per employee, a Payroll Totals line; no FEIN, no employee id, no ssn."""
    sub = submission(canonical["root"] / "gusto", roster_ssn=True)
    rp.write_gusto_journal(rows(), sub / "payroll" / EMPLOYER / "Payroll Journal.csv", company="Acme Bakery LLC",
                           address=("100 Broad Street", "Newark, NJ 07102"))
    text = (sub / "payroll" / EMPLOYER / "Payroll Journal.csv").read_text()
    assert text.startswith("Payroll Journal Report\nAcme Bakery LLC\n") and "Payroll period, 01/01/2022 - 01/31/2022" in text
    staged, credits, awards = decide(sub, canonical["root"] / "w-gusto")
    assert credits.equals(canonical["credits"]) and awards.equals(canonical["awards"])
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert rec.profile == "gusto_payroll_journal"
    # every line accounted for: rows, preamble, blocks, totals, repeated headers (and blanks)
    lines = sum(1 for ln in text.splitlines() if ln.strip())
    said = "5 preamble line(s), 24 totals line(s), 48 block header line(s), 23 repeated header(s), 23 note line(s)"
    assert said in rec.message
    assert rec.rows_read + 1 + 5 + 24 + 48 + 23 + 23 == lines  # the first header, then the kinds said


def test_a_totals_line_that_disagrees_holds_the_employers_application(canonical):
    sub = submission(canonical["root"] / "gusto_bad", roster_ssn=True)
    path = rp.write_gusto_journal(rows(), sub / "payroll" / EMPLOYER / "journal.csv", company="Acme",
                                  address=("1 Main St", "Newark, NJ"))
    lines = path.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("E2,,"))
    cells = lines[i].split(",")
    cells[2] = f"{float(cells[2]) + 1:.2f}"  # one more hour than its Payroll Totals line says
    lines[i] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    staged, _, awards = decide(sub, canonical["root"] / "w-gusto-bad")
    assert awards.select("status", "reasons").row(0) == ("HELD", "INPUT_REJECTED")
    bad = staged.rejects.filter(pl.col("rule") == "totals_mismatch")
    # the payroll's Payroll Totals line disagrees with its lines
    (line,) = bad["line"].to_list()
    assert lines[line - 1].startswith("Payroll Totals") and line > i + 1 and "sum to" in bad["message"][0]
    assert all(not ln.startswith("Payroll Totals") for ln in lines[i + 1:line - 1])  # the first one after it


def test_files_csv_gives_the_employer_and_a_disagreeing_folder_is_a_reject(canonical):
    sub = submission(canonical["root"] / "manifest", roster_ssn=True)
    rp.write_adp_history(rows(), sub / "payroll" / "acme_history.xlsx", company="Acme", code="K7Q")
    (sub / "payroll" / "files.csv").write_text(f"file,employer_id\nacme_history.xlsx,{EMPLOYER[:2]}-{EMPLOYER[2:]}\n")
    staged, credits, _ = decide(sub, canonical["root"] / "w-manifest")
    assert credits.equals(canonical["credits"])
    assert any(f.file == "payroll/files.csv" and f.status == "accepted" for f in staged.report.files)
    # a canonical file whose own employer id disagrees with its folder's
    sub = submission(canonical["root"] / "folder", roster_ssn=False)
    other = [dict(r, employer_id="100000009") if r["employee_id"] == "E3" and r["period_start"] == "2023-05-01" else r
             for r in rows()]
    (sub / "payroll" / EMPLOYER).mkdir()
    pl.DataFrame(other).write_csv(sub / "payroll" / EMPLOYER / "payroll.csv")
    staged, _, awards = decide(sub, canonical["root"] / "w-folder")
    bad = staged.rejects.filter(pl.col("rule") == "context_mismatch")
    assert bad.height == 1 and "100000009" in bad["message"][0] and f"folder payroll/{EMPLOYER}" in bad["message"][0]
    assert awards["status"].to_list() == ["HELD"]


def test_a_file_without_employer_id_anywhere_stops_the_run(tmp_path):
    sub = submission(tmp_path / "sub", roster_ssn=True)
    rp.write_adp_history(rows(), sub / "payroll" / "history.xlsx", company="Acme", code="K7Q")
    with pytest.raises(steps.SubmissionIncomplete, match="gives no employer id"):
        steps.stage_inputs(sub, tmp_path / "w", KEY)


def test_xls_workbooks_are_read_like_xlsx(tmp_path):
    import xlwt

    sub = submission(tmp_path / "sub", roster_ssn=False)
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Payroll")
    head = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages", "employer_taxes"]
    ws.write(0, 0, "Payroll 2022-2023")  # a title row above the header
    for j, h in enumerate(head):
        ws.write(2, j, h)
    datefmt = xlwt.easyxf(num_format_str="mm/dd/yyyy")
    for i, r in enumerate(rows(), start=3):
        ws.write(i, 0, int(r["employer_id"]))
        ws.write(i, 1, r["employee_id"])
        ws.write(i, 2, int(r["ssn"].replace("-", "")))  # a numeric cell
        ws.write(i, 3, dt.datetime.fromisoformat(r["period_start"]), datefmt)
        ws.write(i, 4, dt.datetime.fromisoformat(r["period_end"]), datefmt)
        for j, c in enumerate(("hours", "gross_wages", "employer_taxes"), start=5):
            ws.write(i, j, float(r[c]))
    wb.save(str(sub / "payroll" / "payroll.xls"))
    report = ingest_folder(sub, tmp_path / "w", KEY)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.rows_accepted, rec.profile) == ("accepted", len(rows()), "canonical"), report.summary()
    lake = scan_lake(tmp_path / "w", "payroll").collect()
    assert lake["hours"].sum() == pytest.approx(sum(float(r["hours"]) for r in rows()))
    assert sorted(lake["source_line"].to_list())[0] == 4  # the spreadsheet's row numbers


def test_a_workbook_declaring_a_million_rows_is_read_from_its_cells_in_seconds(tmp_path):
    """The 1.6 KB dimension bomb: a sheet that declares A1:XFD1048576 and stores a few cells."""
    import re
    import zipfile

    import xlsxwriter

    plain = tmp_path / "plain.xlsx"
    wb = xlsxwriter.Workbook(str(plain))
    ws = wb.add_worksheet("Payroll")
    head = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages", "employer_taxes"]
    ws.write_row(0, 0, head)
    ws.write_row(1, 0, [EMPLOYER, "E1", "900-22-0001", "2023-01-01", "2023-01-31", 80, 1000, 100])
    hidden = wb.add_worksheet("Lookup")
    hidden.write(0, 0, "codes")
    hidden.hide()
    wb.close()
    bomb = tmp_path / "sub" / "payroll" / "bomb.xlsx"
    bomb.parent.mkdir(parents=True)
    with zipfile.ZipFile(plain) as zin, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet1"):
                data = re.sub(rb'<dimension ref="[^"]+"/>', b'<dimension ref="A1:XFD1048576"/>', data)
            zout.writestr(item, data)
    assert bomb.stat().st_size < 8000
    t = time.perf_counter()
    report = ingest_folder(tmp_path / "sub", tmp_path / "w", KEY)
    assert time.perf_counter() - t < 30
    (rec,) = report.files
    assert rec.status == "accepted" and rec.rows_accepted == 1
    assert "hidden sheet 'Lookup' not read: it matches no layout" in rec.message


def test_impcredit_layouts_lists_the_profiles_and_their_products():
    from typer.testing import CliRunner

    from flows.cli.app import app

    r = CliRunner().invoke(app, ["layouts"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    for name, product in (("adp_wfn_payroll_history", "ADP Workforce Now"), ("paycom_prior_payroll", "Paycom"),
                          ("gusto_payroll_journal", "Gusto"), ("canonical", ""),
                          ("patriot_payroll_details", "Patriot Software Payroll (Payroll Details report of a payroll)"),
                          ("quickbooks_desktop_payroll_summary", "QuickBooks Desktop Payroll (Payroll Summary per check date"),
                          ("gusto_custom_report", "Gusto (Custom report by payroll and employee"),
                          ("payroll_register_by_group", "A payroll register grouped by department, location or employee"),
                          ("dynamics_pay_statement_lines", "Microsoft Dynamics AX 2012 / Dynamics 365 payroll"),
                          ("bureau_client_payroll_register", "A payroll bureau's Payroll Register, a workbook with a tab"),
                          ("payroll_summary_by_pay_run", "Payroll Summary per pay run, QuickBooks-style transposed")):
        assert name in flat and product in flat
        assert f"{name} {product}".strip() in flat  # each profile listed with its product
