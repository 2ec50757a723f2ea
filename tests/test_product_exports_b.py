"""Payroll exports of Paylocity, Rippling, Paycom and Gusto (and one product impcredit ships no
profile for, Square Payroll), written as each product writes them (``tests/fixtures/exports/``,
built from what the makers document and what public tools that read these exports show, never
from impcredit's profiles), decide the 2023 credits exactly as the canonical payroll does.

Two kinds of test:

- ``test_<product>_decides_as_canonical``: the export (xlsx, and Excel's "Save As CSV" of it) in a
  submission's ``payroll/100000001/`` is read by the product's profile, every payroll file accepted
  with no reject, and ``employee_credits.csv`` / ``awards.csv`` equal those of the canonical
  submission to the cent. These fail until the profiles exist (another engineer writes them).
- ``test_<product>_export_adds_up``: the fixture on its own terms — what ``write`` produced, opened
  with openpyxl or Python's csv module and read by this file's knowledge of the layout, carries
  all 159 checks and adds up to the canonical totals (gross, hours, employer taxes), its own
  totals lines included.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest

from tests.fixtures.exports import common, gusto, onboard_product, paycom, paylocity, rippling

FORMATS = ["xlsx", "csv"]
CHECKS = len(common.PAYROLL)
GROSS = sum(c.gross for c in common.PAYROLL)
HOURS = sum(c.hours for c in common.PAYROLL)
EMPLOYER_TAXES = sum(c.employer_tax_total for c in common.PAYROLL)


# --- the annual decision, through the library (imported lazily: the self-checks need none of it) ----

def decide(sub: Path, work: Path):
    from transforms.award import ledger
    from transforms.pii import demo_key
    from transforms.reference.parameters import load_parameters
    from transforms.runs import annual as steps
    from transforms.settings import Settings

    key, params, as_of = demo_key(), load_parameters(), dt.date(2024, 7, 1)
    staged = steps.stage_inputs(sub, work, key)
    result = steps.compute(staged.frames, 2023, as_of, params, Settings())
    out = work.parent / f"out-{work.name}"
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=as_of,
        params=params, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    return staged, out  # out/employee_credits.csv, out/awards.csv


def _read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _credits_by_person(out: Path, employee_ids: dict[str, str]) -> dict[str, dict]:
    """employee_credits.csv keyed by the person (ssn), the export's own id set aside."""
    person = {v: ssn for ssn, v in employee_ids.items()}
    rows = {}
    for r in _read_csv(out / "employee_credits.csv"):
        ssn = person[r.pop("employee_id")]
        rows[ssn] = r
    return rows


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    """The canonical submission's decision, once for the module."""
    root = tmp_path_factory.mktemp("canonical")
    sub = common.submission(root / "sub")
    common.write_canonical(sub / "payroll" / "payroll.csv")
    _, out = decide(sub, root / "work")
    ids = {e.ssn: e.employee_id for e in common.EMPLOYEES}
    return {"credits": _credits_by_person(out, ids), "awards": _read_csv(out / "awards.csv")}


def _decides_as_canonical(mod, profile: str, fmt: str, tmp_path: Path, canonical: dict) -> None:
    import polars as pl

    sub = common.submission(tmp_path / "sub", employee_ids=mod.EMPLOYEE_IDS, roster_ssn=mod.ROSTER_SSN)
    written = mod.write(sub / "payroll" / common.EMPLOYER, fmt)
    if mod.FILES_CSV:
        text = mod.files_csv(fmt) if hasattr(mod, "files_csv") else mod.FILES_CSV
        (sub / "payroll" / "files.csv").write_text(text, encoding="utf-8")
    staged, out = decide(sub, tmp_path / "work")

    expected = sorted(f"payroll/{common.EMPLOYER}/{p.name}" for p in written)
    recs = [f for f in staged.report.files if f.file in expected]
    assert sorted(f.file for f in recs) == expected, [f.file for f in staged.report.files]
    for rec in recs:
        assert rec.profile == profile, (rec.file, rec.profile, rec.message)
        assert rec.status == "accepted", (rec.file, rec.status, rec.message)
        assert rec.rows_read > 0 and rec.rows_accepted == rec.rows_read, (rec.file, rec.rows_read, rec.rows_accepted)
    # a line per check, or (a register, a line per code) several lines of each check summed into one
    lines = sum(rec.rows_accepted for rec in recs)
    assert lines == CHECKS if mod not in (paylocity, paycom) else lines > CHECKS
    rejects = staged.rejects.filter(pl.col("file").str.starts_with("payroll/"))
    assert rejects.height == 0, rejects.head(10)

    assert _credits_by_person(out, mod.EMPLOYEE_IDS) == canonical["credits"]
    assert _read_csv(out / "awards.csv") == canonical["awards"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_paylocity_decides_as_canonical(fmt, tmp_path, canonical):
    """Paylocity Payroll Register, read by ``paylocity_payroll_register``. The register's column
    header as a public parser of Paylocity registers anchors it (search index id 61003215775):
    ``['Code', 'Hours', 'Rate', 'Amount', 'Code', 'Status', 'Taxable', 'Amount', 'Code', 'Amount',
    'Vchr']``; header lines ``Check Dates: mm/dd/yyyy to mm/dd/yyyy``, ``Processes:``,
    ``Pay Periods:``; gutters ``Emp Id``, ``Chk Date``, ``Net``, ``Dir Dep``; ``Totals`` per block;
    ``Report Totals``. Check dates only: ``payroll/files.csv`` states biweekly, 6 days' lag."""
    _decides_as_canonical(paylocity, "paylocity_payroll_register", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FORMATS)
def test_rippling_decides_as_canonical(fmt, tmp_path, canonical):
    """Rippling payroll register report, read by ``rippling_payroll_register``. Columns as public
    readers of Rippling payroll reports use them (search index ids 9998048134, 61491425239):
    ``Employee``, ``Pay run check date``, ``Pay run status`` (``Paid``), ``Start date``,
    ``End date``, ``Employee gross pay (USD)``, ``Employee taxes (USD)``,
    ``401K (Employee, Flat amount) (USD)``, ``Employee net pay (USD)``; summary lines ``All``."""
    _decides_as_canonical(rippling, "rippling_payroll_register", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FORMATS)
def test_paycom_decides_as_canonical(fmt, tmp_path, canonical):
    """Paycom Prior Payroll report, one workbook per payroll, read by ``paycom_prior_payroll``.
    Columns as shobhit73/Unified_Audit_Tool ``apps/paycom/prior_payroll_generator.py`` reads them:
    ``EE Code``, ``EE Name``, ``Type Code``, ``Type Description``, ``Code Description``,
    ``Amount``; Code Description ``Earnings`` / ``W/H Taxes`` / ``Client Side Liabilities`` /
    ``Deductions`` / ``Net Pay Distribution``; the period and pay date only in the file name
    (``... Pay Period MMDDYYYY MMDDYYYY Pay Date MMDDYYYY``)."""
    _decides_as_canonical(paycom, "paycom_prior_payroll", fmt, tmp_path, canonical)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gusto_decides_as_canonical(fmt, tmp_path, canonical):
    """Gusto Payroll Journal Report, one per year of pay days, read by ``gusto_payroll_journal``.
    Columns as real exports show them (search index id 66272946668): ``Last Name``,
    ``First Name``, ``Work Address``, ``Employee Type``, ``Payment``, ``Regular (Hours)``,
    ``Regular (Rate)``, ``Regular (Amount)``, ``Gross Earnings``, ``Employee Taxes``,
    ``Federal Income Tax (Employee)``, ..., ``Employer Taxes``, ``Social Security (Employer)``,
    ``Medicare (Employer)``, ``FUTA (Employer)``, ..., ``Net Pay``, ``Check Amount``,
    ``Employer Cost``; sections ``Employee Earnings`` / ``Payroll period`` ``" 12/25/2021 -
    01/07/2022"`` / ``Pay day``; ``Payroll Totals``."""
    _decides_as_canonical(gusto, "gusto_payroll_journal", fmt, tmp_path, canonical)


# --- the fixtures on their own terms ------------------------------------------------------------------

def _sheet(path: Path) -> list[list]:
    """A file's cells: openpyxl values for a workbook, Python's csv module for a CSV."""
    if path.suffix == ".xlsx":
        import openpyxl

        wb = openpyxl.load_workbook(path, data_only=True)
        ws = wb.worksheets[0]
        return [list(r) for r in ws.iter_rows(values_only=True)]
    raw = path.read_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    text = raw[3:].decode("utf-8") if raw.startswith(b"\xef\xbb\xbf") else raw.decode("cp1252")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len({len(r) for r in rows}) == 1, "Excel writes every line as wide as the used range"
    return rows


def num(x) -> Decimal | None:
    """A cell's number: a typed value, or the text Excel shows ($1,234.56, (1.00), 1,234.56)."""
    if x is None or x == "":
        return None
    if isinstance(x, (int, float)):
        return Decimal(str(x))
    if isinstance(x, Decimal):
        return x
    s = str(x).strip().replace("$", "").replace(",", "")
    neg = s.startswith("(") and s.endswith(")")
    d = Decimal(s.strip("()"))
    return -d if neg else d


def text(x) -> str:
    if x is None:
        return ""
    if isinstance(x, dt.datetime):
        return f"{x:%m/%d/%Y}"
    return str(x)


def cents(x) -> Decimal:
    return (num(x) or Decimal(0)).quantize(common.CENT)


def _assert_canonical_totals(n: int, hours: Decimal, gross: Decimal, employer: Decimal) -> None:
    assert n == CHECKS
    assert hours == HOURS
    assert gross == GROSS
    assert employer == EMPLOYER_TAXES


@pytest.mark.parametrize("fmt", FORMATS)
def test_paylocity_export_adds_up(fmt, tmp_path):
    """Each check's block closes with a Totals line (hours, gross, employee taxes, deductions,
    employer taxes) that sums its code lines; the Report Totals sum the blocks; all 159 checks."""
    (path,) = paylocity.write(tmp_path, fmt)
    rows = _sheet(path)
    c = paylocity.COL
    assert text(rows[0][0]) == "Payroll Register"
    assert text(rows[2][0]).startswith("Check Dates: 01/13/2022 to 01/11/2024")
    start = next(i for i, r in enumerate(rows) if text(r[0]) == "Employee" and text(r[1]) == "Code") + 1
    end = next(i for i, r in enumerate(rows) if text(r[0]) == "Report Totals")
    n = 0
    hours = gross = employer = Decimal(0)
    block = {"h": Decimal(0), "e": Decimal(0), "t": Decimal(0), "d": Decimal(0), "r": Decimal(0)}
    ids, dates = [], []
    for r in rows[start:end]:
        if text(r[c["e_code"]]) == "Totals":
            assert cents(r[c["e_hours"]]) == block["h"] and cents(r[c["e_amount"]]) == block["e"]
            assert cents(r[c["t_amount"]]) == block["t"] and cents(r[c["d_amount"]]) == block["d"]
            assert cents(r[c["r_amount"]]) == block["r"]
            n += 1
            hours += block["h"]
            gross += block["e"]
            employer += block["r"]
            block = dict.fromkeys(block, Decimal(0))
            continue
        if r[c["e_code"]]:
            block["h"] += cents(r[c["e_hours"]])
            block["e"] += cents(r[c["e_amount"]])
        if r[c["t_code"]]:
            block["t"] += cents(r[c["t_amount"]])
        if r[c["d_code"]]:
            block["d"] += cents(r[c["d_amount"]])
        if r[c["r_code"]]:
            block["r"] += cents(r[c["r_amount"]])
        if text(r[0]).startswith("Emp Id "):
            ids.append(text(r[0])[len("Emp Id "):])
        if text(r[c["c_label"]]) == "Chk Date":
            dates.append(text(r[c["c_value"]]))
    _assert_canonical_totals(n, hours, gross, employer)
    last = rows[-1]
    assert text(last[c["e_code"]]) == "Totals"
    assert (cents(last[c["e_hours"]]), cents(last[c["e_amount"]]), cents(last[c["r_amount"]])) == (
        HOURS, GROSS, EMPLOYER_TAXES)
    assert sorted(zip(ids, dates, strict=True)) == sorted((ch.employee.employee_id, f"{ch.pay_date:%m/%d/%Y}")
                                             for ch in common.PAYROLL)
    assert set(ids) == set(paylocity.EMPLOYEE_IDS.values())
    assert paylocity.files_csv(fmt).splitlines()[1].startswith(f"{common.EMPLOYER}/{path.name},")


@pytest.mark.parametrize("fmt", FORMATS)
def test_rippling_export_adds_up(fmt, tmp_path):
    """One line per employee per pay run with its pay period; the ``All`` line sums the columns."""
    (path,) = rippling.write(tmp_path, fmt)
    rows = _sheet(path)
    head = [text(h) for h in rows[0]]
    assert head == rippling.HEADER
    col = {h: i for i, h in enumerate(head)}
    lines = [r for r in rows[1:] if text(r[0]) != "All"]
    hours = sum(cents(r[col["Regular hours"]]) + cents(r[col["Overtime hours"]]) for r in lines)
    gross = sum(cents(r[col["Employee gross pay (USD)"]]) for r in lines)
    employer = sum(cents(r[col["Employer taxes (USD)"]]) for r in lines)
    _assert_canonical_totals(len(lines), hours, gross, employer)
    for r in lines:
        parts = sum(cents(r[col[h]]) for h in ("Regular (USD)", "Overtime (USD)", "Bonus (USD)"))
        assert parts == cents(r[col["Employee gross pay (USD)"]])
        assert text(r[col["Pay run status"]]) == "Paid"
    total = rows[-1]
    assert text(total[0]) == "All"
    for h in rippling.SUMMED:
        assert cents(total[col[h]]) == sum(cents(r[col[h]]) for r in lines), h
    periods = {(text(r[col["Employee"]]), text(r[col["Start date"]]), text(r[col["End date"]])) for r in lines}
    assert periods == {(rippling.printed_name(ch.employee), f"{ch.period_start:%m/%d/%Y}", f"{ch.period_end:%m/%d/%Y}")
                       for ch in common.PAYROLL}
    assert set(rippling.EMPLOYEE_IDS.values()) == {text(r[0]) for r in lines}


@pytest.mark.parametrize("fmt", FORMATS)
def test_paycom_export_adds_up(fmt, tmp_path):
    """One file per payroll (period and pay date in the name), one line per code: Earnings lines
    give hours and gross, Client Side Liabilities the employer taxes, and each employee's Net Pay
    Distribution equals gross less W/H taxes and deductions."""
    paths = paycom.write(tmp_path, fmt)
    assert len(paths) == len(paycom.payrolls())
    n = 0
    hours = gross = employer = Decimal(0)
    seen = set()
    for path in paths:
        m = re.search(r"Pay Period (\d{8}) (\d{8}) Pay Date (\d{8})", path.stem)
        assert m, path.name
        period = tuple(dt.datetime.strptime(g, "%m%d%Y").date() for g in m.groups())
        assert period in paycom.payrolls()
        rows = _sheet(path)
        head = [text(h) for h in rows[0]]
        assert head == paycom.HEADER
        col = {h: i for i, h in enumerate(head)}
        per: dict[str, dict[str, Decimal]] = {}
        for r in rows[1:]:
            ee = text(r[col["EE Code"]])
            cat = text(r[col["Code Description"]])
            acc = per.setdefault(ee, {})
            acc[cat] = acc.get(cat, Decimal(0)) + cents(r[col["Amount"]])
            if cat == "Earnings":
                acc["hours"] = acc.get("hours", Decimal(0)) + cents(r[col["Hours"]])
        for ee, acc in per.items():
            seen.add((ee, period))
            n += 1
            hours += acc.get("hours", Decimal(0))
            gross += acc["Earnings"]
            employer += acc["Client Side Liabilities"]
            assert acc["Net Pay Distribution"] == acc["Earnings"] - acc["W/H Taxes"] - acc.get("Deductions", Decimal(0))
    _assert_canonical_totals(n, hours, gross, employer)
    assert seen == {(ch.employee.employee_id, (ch.period_start, ch.period_end, ch.pay_date)) for ch in common.PAYROLL}


@pytest.mark.parametrize("fmt", FORMATS)
def test_gusto_export_adds_up(fmt, tmp_path):
    """Sections per payroll (period in one cell, pay day), a header in each, one row per employee
    named by Last/First Name; gross = its earnings columns, Employer Taxes = its (Employer)
    columns; each section's Payroll Totals sums its rows."""
    paths = gusto.write(tmp_path, fmt)
    assert [p.stem for p in paths] == ["Payroll Journal Report 2022", "Payroll Journal Report 2023",
                                       "Payroll Journal Report 2024"]
    n = 0
    hours = gross = employer = Decimal(0)
    seen = set()
    for path in paths:
        rows = _sheet(path)
        assert text(rows[0][0]) == "Payroll Journal Report" and text(rows[2][0]) == common.COMPANY
        period = payday = col = None
        lines: list = []
        for r in rows:
            first = text(r[0])
            if first == "Payroll period":
                period = text(r[1])
                assert re.fullmatch(r" \d\d/\d\d/\d{4} - \d\d/\d\d/\d{4}", period)
            elif first == "Pay day":
                payday = text(r[1]).strip()
            elif first == "Last Name":
                col = {text(h): i for i, h in enumerate(r) if text(h)}
                lines = []
            elif first == "Payroll Totals":
                for h, i in col.items():
                    if i >= 5 and "(Rate)" not in h:
                        assert cents(r[i]) == sum(cents(ln[i]) for ln in lines), (path.name, period, h)
            elif col is not None and first and first not in ("Employee Earnings",):
                lines.append(r)
                earn = sum(cents(r[col[h]]) for h in col if h.endswith("(Amount)") or h == "Bonus")
                assert earn == cents(r[col["Gross Earnings"]])
                er = sum(cents(r[i]) for h, i in col.items() if h.endswith("(Employer)"))
                assert er == cents(r[col["Employer Taxes"]])
                n += 1
                hours += sum(cents(r[col[h]]) for h in col if h.endswith("(Hours)"))
                gross += cents(r[col["Gross Earnings"]])
                employer += cents(r[col["Employer Taxes"]])
                start, end = (dt.datetime.strptime(d, "%m/%d/%Y").date() for d in period.strip().split(" - "))
                seen.add((f"{first}, {text(r[1])}", start, end, dt.datetime.strptime(payday, "%m/%d/%Y").date()))
    _assert_canonical_totals(n, hours, gross, employer)
    assert seen == {(ch.employee.name, ch.period_start, ch.period_end, ch.pay_date) for ch in common.PAYROLL}
    assert {name for name, *_ in seen} == set(gusto.EMPLOYEE_IDS.values())


@pytest.mark.parametrize("fmt", FORMATS)
def test_onboard_product_export_adds_up(fmt, tmp_path):
    """Square Payroll Paycheck Details (no profile ships for it; an analyst onboards it later): one
    line per paycheck with its pay date only, employee and employer taxes by tax and totalled, a
    Total line; ``files.csv`` states the frequency and lag."""
    (path,) = onboard_product.write(tmp_path, fmt)
    rows = _sheet(path)
    start = next(i for i, r in enumerate(rows) if text(r[0]) == "Pay Date")
    head = [text(h) for h in rows[start]]
    assert head == onboard_product.HEADER
    col = {h: i for i, h in enumerate(head)}
    lines = [r for r in rows[start + 1:] if text(r[0]) != "Total"]
    hours = sum(cents(r[col["Regular Hours"]]) + cents(r[col["Overtime Hours"]]) for r in lines)
    gross = sum(cents(r[col["Gross Pay"]]) for r in lines)
    employer = sum(cents(r[col["Total Employer Taxes"]]) for r in lines)
    _assert_canonical_totals(len(lines), hours, gross, employer)
    for r in lines:
        assert sum(cents(r[col[h]]) for h in onboard_product.ER.values()) == cents(r[col["Total Employer Taxes"]])
        assert sum(cents(r[col[h]]) for h in onboard_product.EE.values()) == cents(r[col["Total Employee Taxes"]])
        assert cents(r[col["Gross Pay"]]) == sum(cents(r[col[h]]) for h in ("Regular Pay", "Overtime Pay", "Bonus"))
        assert cents(r[col["Net Pay"]]) == (cents(r[col["Gross Pay"]]) - cents(r[col["Total Employee Taxes"]])
                                           - cents(r[col["401(k)"]]))
    total = rows[-1]
    assert text(total[0]) == "Total"
    for h in onboard_product.SUMMED:
        assert cents(total[col[h]]) == sum(cents(r[col[h]]) for r in lines), h
    assert {text(r[col["Team Member"]]) for r in lines} == set(onboard_product.EMPLOYEE_IDS.values())
    files = list(csv.DictReader(io.StringIO(onboard_product.files_csv(fmt))))
    assert files == [{"file": f"{common.EMPLOYER}/{path.name}", "employer_id": common.EMPLOYER,
                      "pay_frequency": "biweekly", "pay_lag_days": "6"}]
    assert all((ch.pay_date - ch.period_end).days == 6 for ch in common.PAYROLL)
