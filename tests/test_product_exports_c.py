"""Payroll exports of Patriot Software, QuickBooks Desktop and Gusto's Custom report, written as
each product writes them (``tests/fixtures/exports/``: ``patriot_payroll_details``,
``quickbooks_desktop_payroll_summary``, ``gusto_custom_report``; written from the makers'
documentation by someone other than the profiles' author, their layout in
``tests/fixtures/exports/NEW_FIXTURES.md``), read by the shipped profiles that the reader's keys
for these shapes exist for (``data/vendors/<profile>.yaml``):

- Patriot's Payroll Details: a sectioned header whose five ``Amount`` columns are told apart by
  the section they follow (``{header, section}``), a block per paycheck;
- QuickBooks Desktop's Payroll Summary: a transposed workbook (``transposed`` with groups of
  columns per employee, the check date in the sheet's name, ``report.sheet_name``), its Summary
  sheet passed over by ``sheets.skip``; each pay-run sheet also as CSV (the date in the file's name);
- Gusto's Custom report: ONE profile for the report with a total employer taxes column and the
  one with its parts (``{total, parts}``).

Each export, as .xlsx and as Excel's CSV of it, through a real annual decision
(``tests/fixtures/exports/run.py``) gives exactly the canonical layout's ``employee_credits.csv``
and ``awards.csv``, every line read (no reject, nothing held), the file's message saying what was
passed over; a totals line that disagrees with its lines is a reject; and the Summary sheet
without the profile's ``sheets.skip`` is an unread table that holds the application.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
import pytest

from tests.fixtures.exports import common, run
from tests.fixtures.exports import gusto_custom_report as gusto_custom
from tests.fixtures.exports import patriot_payroll_details as patriot
from tests.fixtures.exports import quickbooks_desktop_payroll_summary as qb_desktop
from transforms.ingest import layout_check as lc

ROOT = Path(__file__).resolve().parents[1]
CHECKS = len(common.PAYROLL)


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    """The canonical submission's decision (employee_credits by person, awards), once."""
    return run.canonical_outputs(tmp_path_factory.mktemp("canonical"))


def _decides_as_canonical(mod, profile: str, fmt: str, tmp_path: Path, canonical, *variant: str) -> list:
    """The export's submission through an annual run: every payroll file read whole by
    ``profile``, no reject, nothing held, the credits and awards of the canonical layout. The
    payroll files' ingest records, for what their messages say."""
    sub = mod.write_submission(tmp_path / "sub", fmt, *variant)
    written = sorted(p.relative_to(sub).as_posix() for p in (sub / "payroll" / common.EMPLOYER).iterdir())
    return run.read_whole_as(sub, tmp_path / "work", profile, written, canonical, mod.EMPLOYEE_IDS)


# --- Patriot Software, Payroll Details (sectioned header, a block per paycheck) --------------------

@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_patriot_payroll_details_decides_as_canonical(fmt, tmp_path, canonical):
    """53 files, one per payroll, read by ``patriot_payroll_details``: the Hours and Amount after
    ``Hours and Earnings`` and the Amount after ``Employer Taxes`` (the employee's ``Social
    Security`` and ``Medicare`` under Employee Taxes never read), a line per code summed per check,
    the pay date and period from the title lines, the employee from the name line; each
    ``Paycheck Totals`` checked, the payroll's totals block and its ``Total`` line the summary."""
    recs = _decides_as_canonical(patriot, "patriot_payroll_details", fmt, tmp_path, canonical)
    assert len(recs) == 53 and sum(r.rows_read for r in recs) > CHECKS  # several code lines a check
    for rec in recs:
        assert "2 preamble line(s), 3 totals line(s), 5 block header line(s), 8 summary line(s)" in rec.message, (
            rec.file, rec.message)


# --- QuickBooks Desktop, Payroll Summary (transposed, a sheet per check date, a Summary sheet) ----

@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_quickbooks_desktop_payroll_summary_decides_as_canonical(fmt, tmp_path, canonical):
    """A workbook per year (the Summary sheet skipped and said, a sheet per check date), or a CSV
    per check date, read by ``quickbooks_desktop_payroll_summary``: a line per employee's group of
    columns, hours and gross on Total Gross Pay, the employer's taxes on Total Employer Taxes and
    Contributions, the check date from the sheet's (or the CSV's) name, the period from
    payroll/files.csv; the TOTAL group checked on every sheet."""
    recs = _decides_as_canonical(qb_desktop, "quickbooks_desktop_payroll_summary", fmt, tmp_path, canonical)
    assert sum(r.rows_read for r in recs) == CHECKS
    if fmt == "xlsx":
        assert [r.file.rsplit("/", 1)[1] for r in recs] == [qb_desktop.workbook_name(y) for y in (2022, 2023, 2024)]
        for rec in recs:
            assert "sheet 'Summary' skipped: sheets.skip 'Summary' of 'quickbooks_desktop_payroll_summary' " \
                   "(11 line(s))" in rec.message, rec.message
            runs = len(qb_desktop.years()[int(rec.file[-9:-5])])
            assert rec.message.count(": 1 totals line(s)") == runs, rec.message
    else:
        assert len(recs) == 53
        assert all("1 totals line(s)" in r.message and "Summary" not in r.message for r in recs)


# --- Gusto, Custom report: the employer taxes' total, or their parts ------------------------------

@pytest.mark.parametrize("variant", ["total", "parts"])
@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_gusto_custom_report_decides_as_canonical(fmt, variant, tmp_path, canonical):
    """One report, read by ``gusto_custom_report`` whichever way the clerk built its employer
    taxes (the ``Total employer taxes`` column, or the five ``Employer ...`` columns summed): a line
    per employee per payroll, the id from the last and first name columns; each ``Subtotal``
    checked against its payroll, the ``Grand total`` against the file; the title and time period
    passed over."""
    (rec,) = _decides_as_canonical(gusto_custom, "gusto_custom_report", fmt, tmp_path, canonical, variant)
    assert rec.rows_read == CHECKS
    assert "2 preamble line(s), 54 totals line(s)" in rec.message, rec.message


# --- the totals lines are checked -----------------------------------------------------------------

def _csv_rows(path: Path) -> tuple[list[list[str]], str]:
    raw = path.read_bytes()
    encoding = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "cp1252"
    return list(csv.reader(io.StringIO(raw.decode(encoding), newline=""))), encoding


def _write_csv(path: Path, rows: list[list[str]], encoding: str) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    path.write_bytes(buf.getvalue().encode(encoding))


def _patriot_changed(rows: list[list[str]]) -> None:
    """The first paycheck's first employer tax (Social Security, column J) one cent more."""
    r = next(r for r in rows if r[patriot.R_CODE] == "Social Security")
    r[patriot.R_AMT] = f"{float(r[patriot.R_AMT].replace(',', '')) + 0.01:,.2f}"


def _qb_desktop_changed(rows: list[list[str]]) -> None:
    """The first employee's Total Gross Pay amount one cent more (the TOTAL group disagrees)."""
    r = next(r for r in rows if "Total Gross Pay" in r[:qb_desktop.LABEL_COLUMNS])
    at = qb_desktop.FIRST + qb_desktop.AMOUNT_AT
    r[at] = f"{float(r[at].replace(',', '')) + 0.01:,.2f}"


def _gusto_changed(rows: list[list[str]]) -> None:
    """The first employee line's Gross earnings one cent more (its Subtotal and the Grand total)."""
    col = rows[gusto_custom.HEADER_ROW].index("Gross earnings")
    r = rows[gusto_custom.HEADER_ROW + 1]
    r[col] = f"{float(r[col].replace(',', '')) + 0.01:,.2f}"


@pytest.mark.parametrize(("mod", "args", "change", "mismatches"), [
    (patriot, (), _patriot_changed, 1),
    (qb_desktop, (), _qb_desktop_changed, 1),
    (gusto_custom, ("total",), _gusto_changed, 2),
], ids=["patriot", "quickbooks_desktop", "gusto_custom"])
def test_a_line_changed_under_its_totals_line_is_a_reject(mod, args, change, mismatches, tmp_path):
    """A cent changed on one line of the export's CSV: the totals line over it (Paycheck Totals,
    the TOTAL group, Subtotal and Grand total) disagrees, a ``totals_mismatch`` reject."""
    sub = mod.write_submission(tmp_path / "sub", "csv", *args)
    path = sorted((sub / "payroll" / common.EMPLOYER).iterdir())[0]
    assert lc.check_file(path).read_whole
    rows, encoding = _csv_rows(path)
    change(rows)
    _write_csv(path, rows, encoding)
    got = lc.check_file(path)
    assert not got.read_whole
    rules = [r["rule"] for r in got.rejects]
    assert rules.count("totals_mismatch") == mismatches, got.rejects


# --- the Summary sheet without sheets.skip: the reason the key exists ----------------------------

def test_the_summary_sheet_without_sheets_skip_is_an_unread_table_that_holds_the_application(tmp_path, monkeypatch):
    """The shipped QuickBooks Desktop profile less its ``sheets: {skip: [Summary]}``, as the
    agency's own (same name: it replaces the shipped one): the Summary sheet of each workbook is
    a table of figures that no layout reads (its labels beside the year's totals), its 11 lines
    (every one but the blank) rejected ``unread_table`` naming the sheet, the file not read whole, the application HELD."""
    text = (ROOT / "data" / "vendors" / "quickbooks_desktop_payroll_summary.yaml").read_text(encoding="utf-8")
    assert text.count('sheets: {skip: ["Summary"]}\n') == 1
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "quickbooks_desktop_payroll_summary.yaml").write_text(
        text.replace('sheets: {skip: ["Summary"]}\n', ""), encoding="utf-8")
    sub = qb_desktop.write_submission(tmp_path / "sub", "xlsx")
    staged, out = run.decide(sub, tmp_path / "work", profiles=profiles)
    recs = [f for f in staged.report.files if f.dataset == "payroll" and f.file != "payroll/files.csv"]
    assert len(recs) == 3
    for rec in recs:
        assert rec.profile == "quickbooks_desktop_payroll_summary" and rec.status == "partial", (rec.status, rec.message)
        assert rec.rows_rejected == 11 and rec.rows_read == rec.rows_accepted + rec.rows_rejected
        assert "sheet 'Summary' lines 1-12 hold a table of figures that no layout reads" in rec.message, rec.message
    sheets = {f"payroll/{common.EMPLOYER}/{qb_desktop.workbook_name(y)}[Summary]" for y in (2022, 2023, 2024)}
    rejects = pl.read_csv(out / "rejects.csv", infer_schema=False)
    assert set(rejects["rule"]) == {"unread_table"} and set(rejects["file"]) == sheets  # one a sheet
    assert rejects["message"].str.starts_with("sheet 'Summary' lines 1-12 hold a table of figures").all()
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert awards.select("status", "reasons").rows() == [("HELD", "INPUT_REJECTED")]
    held = pl.read_csv(out / "held.csv", infer_schema=False)  # each of the sheets' lines holds A1
    assert set(held["application_id"]) == {"A1"} and set(held["file"]) == sheets and held.height == 3 * 11
