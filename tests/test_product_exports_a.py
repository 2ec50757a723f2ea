"""Payroll exports of four products, written as each product writes them (tests/fixtures/exports:
adp_wfn, adp_run, paychex_flex, quickbooks_online; each module's header cites its sources and
says what is documented and what is assumed), read through the library: the annual decision on
each export must equal the decision on the same payroll in the canonical layout, to the cent.

The ``test_*_read`` tests need the profiles that read these exports (written independently from
the same documentation); the ``test_*_fixture`` tests check the fixtures on their own terms: the
export's money, read with this file's own knowledge of the layout, adds up to the payroll.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import openpyxl
import polars as pl
import pytest

from tests.fixtures.exports import adp_run, adp_wfn, common, paychex_flex, quickbooks_online
from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
FMTS = ["xlsx", "csv"]


def decide(sub: Path, work: Path):
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    out = work.parent / f"out-{work.name}"
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    return staged, out


def _outputs(out: Path, ids: dict[str, str]) -> tuple[list[tuple], list[tuple]]:
    """employee_credits.csv with employee_id read back as the person (ssn), and awards.csv."""
    person = {v: k for k, v in ids.items()}
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema_length=0)
    credits = credits.with_columns(pl.col("employee_id").replace_strict(person, default=None))
    awards = pl.read_csv(out / "awards.csv", infer_schema_length=0)
    return sorted(credits.rows()), sorted(awards.rows())


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    root = tmp_path_factory.mktemp("canonical")
    sub = common.submission(root / "sub")
    common.write_canonical(sub / "payroll" / "payroll.csv")
    _, out = decide(sub, root / "work")
    return _outputs(out, {e.ssn: e.employee_id for e in common.EMPLOYEES})


def _read_through_library(mod, profile: str, fmt: str, tmp_path: Path, canonical) -> None:
    sub = common.submission(tmp_path / "sub", employee_ids=mod.EMPLOYEE_IDS, roster_ssn=mod.ROSTER_SSN)
    folder = sub / "payroll" / common.EMPLOYER
    written = mod.write(folder, fmt)
    files_csv = mod.files_csv(fmt) if hasattr(mod, "files_csv") else mod.FILES_CSV
    if files_csv:
        (sub / "payroll" / "files.csv").write_text(files_csv, encoding="utf-8")
    staged, out = decide(sub, tmp_path / "work")
    for path in written:
        rel = f"{common.EMPLOYER}/{path.name}"
        recs = [r for r in staged.report.files if r.file.split("[")[0].endswith(rel)]
        assert recs, f"{rel}: not in the ingest report"
        data = [r for r in recs if r.rows_read]
        assert data, f"{rel}: no rows read ({[(r.status, r.message) for r in recs]})"
        for r in data:
            assert r.profile == profile, (rel, r.profile, r.message)
            assert r.status != "rejected" and r.rows_accepted == r.rows_read, (rel, r.status, r.message)
        bad = staged.rejects.filter(pl.col("file").str.contains(rel, literal=True))
        assert bad.height == 0, bad.head(5)
    assert _outputs(out, mod.EMPLOYEE_IDS) == canonical


# --- through the library (need the products' profiles) -----------------------------------------

@pytest.mark.parametrize("fmt", FMTS)
def test_adp_wfn_payroll_history_read(fmt, tmp_path, canonical):
    """ADP Workforce Now "Payroll History" (Run as Excel): ``COMPANY CODE``, ``NAME``, ``FILE
    NUMBER``, ``TAX ID``, ``ASSOCIATE ID``, ``PERIOD BEGINNING DATE``, ``PERIOD ENDING DATE``,
    ``PAY DATE``, ``CHECK/VOUCHER NUMBER`` (shobhit73/Unified_Audit_Tool
    apps/adp/prior_payroll_generator.py), ``TOTAL HOURS`` .. ``TOTAL EARNINGS``, ``SOCIAL SECURITY -
    EMPLOYER TAX``, ``MEDICARE - EMPLOYER TAX``, ``FUTA - EMPLOYER TAX``, ``SUI/SDI - EMPLOYER TAX``
    (apps/adp/prior_payroll_setup_helper.py), money as ``=ROUND(x, 2.0)`` formulas, "Totals For
    Associate ID XYZ:" rows and a Report Criteria sheet (apps/adp/prior_payroll_sanity.py)."""
    _read_through_library(adp_wfn, "adp_wfn_payroll_history", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FMTS)
def test_adp_run_payroll_register_read(fmt, tmp_path, canonical):
    """RUN Powered by ADP "Payroll Detail", one workbook per payroll: "Company: ...", "Report:
    Payroll Detail", "Check Dates From: 8/19/2026 - Payroll 1", "To: ..." above the header on row 7;
    ``Employee Name``, ``SSN`` (masked), ``TIN``, ``Pay Frequency``, ``Department``, ``Earning  N``/
    ``Hours``/``Rate``/``Amount``, ``Total Hours``, ``Total Earnings``, ``FED FIT``, ``FED SOCSEC``,
    ``FED MEDCARE``, ``Total Taxes``, ``Deduction Total``, ``Net Pay``, ``FED SOCSEC-ER``, ``FED
    MEDCARE-ER``, ``Total Employer Liability``, ``Payment  N  Check Date`` ... (RF-One "Payroll
    Provider Result.md" and rfone_data_store/payroll/adp_importer.py); ``FED FUTA`` (RUN preview
    parser). No period, no id: the frequency comes from payroll/files.csv."""
    _read_through_library(adp_run, "adp_run_payroll_register", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FMTS)
def test_paychex_flex_payroll_journal_read(fmt, tmp_path, canonical):
    """Paychex Flex Payroll Journal (PYRJRN), one per payroll: "Period Start - End" "08/29/26 -
    09/11/26", "Check Date"; groups ``HOURS, EARNINGS, REIMBURSEMENTS & OTHER PAYMENTS``
    (``DESCRIPTION`` ``RATE`` ``HOURS`` ``EARNINGS``), ``WITHHOLDINGS``, ``DEDUCTIONS``, ``NET PAY``;
    one line per code ("Regular", "Social Security", "Fed Income Tax", "NJ Unemploy", ...),
    ``EMPLOYEE TOTAL``, ``COMPANY TOTALS`` (Paychex journal parsers parsePaychexPDF and
    parse_journal; employer liability labels "Fed Unemploy", "NJ ER Work Dev")."""
    _read_through_library(paychex_flex, "paychex_flex_payroll_journal", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FMTS)
def test_quickbooks_payroll_details_read(fmt, tmp_path, canonical):
    """QuickBooks Online "Payroll Details": ``PAY DATE``, ``NAME``, ``HOURS``, ``GROSS PAY``,
    ``OTHER PAY``, ``EMPLOYEE TAXES & DEDUCTIONS``, ``NET PAY``, ``EMPLOYER TAXES & CONTRIBUTIONS``,
    ``TOTAL PAYROLL COST`` under the company, title and period rows, a ``Total`` row first (a
    public QuickBooks-style Payroll Details report view). Pay date only: payroll/files.csv."""
    _read_through_library(quickbooks_online, "quickbooks_payroll_details", fmt, tmp_path, canonical)


# --- the fixtures on their own terms -----------------------------------------------------------

def _expected(ids: dict[str, str]) -> Counter:
    return Counter((ids[c.employee.ssn], c.pay_date, c.hours, c.gross, c.employer_tax_total) for c in common.PAYROLL)


def _totals() -> tuple[Decimal, Decimal, Decimal]:
    return (sum(c.hours for c in common.PAYROLL), sum(c.gross for c in common.PAYROLL),
            sum(c.employer_tax_total for c in common.PAYROLL))


ROUND = re.compile(r"^=ROUND\((-?[\d.]+),2\.0\)$")


def _num(v) -> Decimal | None:
    """A cell's number: an xlsx number, a ``=ROUND(x,2.0)`` formula, or CSV text ("1,040.00")."""
    if v is None or v == "":
        return None
    if isinstance(v, str):
        m = ROUND.match(v)
        return Decimal(m.group(1)) if m else Decimal(v.replace(",", ""))
    return Decimal(str(v))


def _date(v) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    m, d, y = v.split("/")
    return dt.date(int(y) + (2000 if len(y) == 2 else 0), int(m), int(d))


def _sheets(paths: list[Path], fmt: str, *, sheet: str | None = None, utf8: bool) -> list[list[list]]:
    out = []
    for p in paths:
        if fmt == "xlsx":
            wb = openpyxl.load_workbook(p)
            ws = wb[sheet] if sheet else wb.worksheets[0]
            out.append([list(r) for r in ws.iter_rows(values_only=True)])
        else:
            raw = p.read_bytes()
            assert raw.startswith(b"\xef\xbb\xbf") == utf8 and b"\r\n" in raw
            text = raw.decode("utf-8-sig" if utf8 else "cp1252")
            out.append([[c if c != "" else None for c in r] for r in csv.reader(io.StringIO(text, newline=""))])
    return out


def _close(a, b) -> None:
    assert Decimal(a).quantize(common.CENT) == Decimal(b).quantize(common.CENT), (a, b)


@pytest.mark.parametrize("fmt", FMTS)
def test_adp_wfn_fixture(fmt, tmp_path):
    """One row per check below the section row and the header; the per-associate and grand totals
    sum the checks (the xlsx holds ROUND/SUM formulas, the CSV what Excel shows)."""
    paths = adp_wfn.write(tmp_path, fmt)
    (rows,) = _sheets(paths, fmt, sheet=adp_wfn.SHEET if fmt == "xlsx" else None, utf8=False)
    if fmt == "xlsx":
        assert openpyxl.load_workbook(paths[0]).sheetnames == ["Report Criteria", "Payroll History"]
    assert rows[0][0] == "EMPLOYEE DETAILS"
    head = rows[1]
    assert set(adp_wfn.DOCUMENTED_COLUMNS) <= set(head)
    col = {h: j for j, h in enumerate(head)}
    checks = [r for r in rows[2:] if r[col["PAY DATE"]]]
    got = Counter((r[col["FILE NUMBER"]], _date(r[col["PAY DATE"]]), _num(r[col["TOTAL HOURS"]]),
                   _num(r[col["GROSS PAY"]]), _num(r[col["TOTAL EMPLOYER TAX"]])) for r in checks)
    assert got == _expected(adp_wfn.EMPLOYEE_IDS)
    for r in checks:  # the employer taxes are the four employer columns
        er = sum(_num(r[col[h]]) for h, _ in adp_wfn.ER_TAXES)
        _close(er, _num(r[col["TOTAL EMPLOYER TAX"]]))
        _close(_num(r[col["TOTAL EARNINGS"]]), _num(r[col["GROSS PAY"]]))
    subtotal = [r for r in rows[2:] if str(r[0] or "").startswith("Totals For Associate ID")]
    assert len(subtotal) == 3 and all(r[col["ASSOCIATE ID"]] is None for r in subtotal)
    grand = rows[-1]
    assert grand[0] == "Grand Totals:" and grand[col["PAY DATE"]] is None
    if fmt == "csv":
        hours, gross, er = _totals()
        _close(_num(grand[col["TOTAL HOURS"]]), hours)
        _close(_num(grand[col["GROSS PAY"]]), gross)
        _close(_num(grand[col["TOTAL EMPLOYER TAX"]]), er)
        _close(sum(_num(r[col["GROSS PAY"]]) for r in subtotal), gross)
    else:  # no cached results: the sums are formulas over the check rows
        assert all(isinstance(r[col["GROSS PAY"]], str) and r[col["GROSS PAY"]].startswith("=SUM(") for r in subtotal)


@pytest.mark.parametrize("fmt", FMTS)
def test_adp_run_fixture(fmt, tmp_path):
    """One workbook per payroll; the header on row 7; one row per employee; the check date in the
    title and in the payment group; the two totals rows sum the employees."""
    paths = adp_run.write(tmp_path, fmt)
    assert len(paths) == 53
    got: Counter = Counter()
    for rows in _sheets(paths, fmt, utf8=True):
        assert rows[1][0] == "Report: Payroll Detail" and rows[2][0].startswith("Check Dates From: ")
        pay = _date(rows[2][0].removeprefix("Check Dates From: ").split(" - ")[0])
        head = rows[6]
        assert set(adp_run.DOCUMENTED_COLUMNS) <= set(head)
        col = {h: j for j, h in enumerate(head) if h not in ("Hours", "Rate", "Amount")}
        people = []
        for r in rows[7:]:
            if not r[0]:
                break
            people.append(r)
        for r in people:
            assert _date(r[col["Payment  1  Check Date"]]) == pay
            er = sum(_num(r[col[h]]) for h, _ in adp_run.ER_TAXES)
            _close(er, _num(r[col["Total Employer Liability"]]))
            got[(r[0], pay, _num(r[col["Total Hours"]]), _num(r[col["Total Earnings"]]),
                 _num(r[col["Total Employer Liability"]]))] += 1
        totals = [r for r in rows if r and r[0] and "Total and Employee Count" in str(r[0])]
        assert len(totals) == 2
        for t in totals:
            assert int(_num(t[1])) == len(people)
            for h in ("Total Hours", "Total Earnings", "Total Employer Liability", "Net Pay"):
                _close(_num(t[col[h]]), sum(_num(r[col[h]]) for r in people))
    assert got == _expected(adp_run.EMPLOYEE_IDS)


@pytest.mark.parametrize("fmt", FMTS)
def test_paychex_flex_fixture(fmt, tmp_path):
    """One journal per payroll; the period and check date in the title cells; each employee's
    block lists one line per code beside the other groups and closes with EMPLOYEE TOTAL; the
    COMPANY TOTAL sums the employees."""
    P = paychex_flex
    paths = P.write(tmp_path, fmt)
    assert len(paths) == 53
    got: Counter = Counter()
    for rows in _sheets(paths, fmt, utf8=False):
        assert rows[2][0] == "Period Start - End" and rows[3][0] == "Check Date"
        start, end = (_date(x) for x in rows[2][1].split(" - "))
        assert end - start == dt.timedelta(days=13)
        pay = _date(rows[3][1])
        block: list[list] = []
        employees = []
        for r in rows[7:]:
            if r[0] == "COMPANY TOTALS":
                break
            if not any(r):
                continue
            if r[0] == "EMPLOYEE TOTAL":
                hours = sum((_num(x[P.E_HRS]) or Decimal(0)) for x in block)
                earn = sum(_num(x[P.E_AMT]) for x in block if x[P.E_AMT])
                er = sum(_num(x[P.L_AMT]) for x in block if x[P.L_AMT])
                wh = sum(_num(x[P.W_AMT]) for x in block if x[P.W_AMT])
                _close(hours, _num(r[P.E_HRS]))
                _close(earn, _num(r[P.E_AMT]))
                _close(er, _num(r[P.L_AMT]))
                _close(wh, _num(r[P.W_AMT]))
                got[(str(block[1][P.NAME]), pay, hours, earn, er)] += 1
                employees.append(r)
                block = []
            else:
                block.append(r)
        company = next(r for r in rows if r[0] == "COMPANY TOTAL")
        for j in (P.E_HRS, P.E_AMT, P.W_AMT, P.D_AMT, P.N_AMT, P.L_AMT):
            _close(_num(company[j]), sum(_num(r[j]) for r in employees))
    assert got == _expected(P.EMPLOYEE_IDS)


@pytest.mark.parametrize("fmt", FMTS)
def test_quickbooks_fixture(fmt, tmp_path):
    """One report; three title rows; the header; the Total row first, then one row per paycheck
    (pay date only); the Total row sums the paychecks."""
    Q = quickbooks_online
    (rows,) = _sheets(Q.write(tmp_path, fmt), fmt, utf8=True)
    assert rows[1][0] == "Payroll Details" and rows[4] == Q.HEADER
    col = {h: j for j, h in enumerate(Q.HEADER)}
    total = rows[5]
    assert total[0] == "Total"
    checks = []
    for r in rows[6:]:
        if not r or not r[0]:
            break
        checks.append(r)
    assert len(checks) == 159
    got = Counter((r[col["NAME"]], _date(r[col["PAY DATE"]]), _num(r[col["HOURS"]]), _num(r[col["GROSS PAY"]]),
                   _num(r[col["EMPLOYER TAXES & CONTRIBUTIONS"]])) for r in checks)
    assert got == _expected(Q.EMPLOYEE_IDS)
    for h in Q.HEADER[2:]:
        if h != "OTHER PAY":
            _close(_num(total[col[h]]), sum(_num(r[col[h]]) for r in checks))
    hours, gross, er = _totals()
    _close(_num(total[col["HOURS"]]), hours)
    _close(_num(total[col["GROSS PAY"]]), gross)
    _close(_num(total[col["EMPLOYER TAXES & CONTRIBUTIONS"]]), er)
