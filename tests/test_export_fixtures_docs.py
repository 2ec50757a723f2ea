"""Three exports written from what their makers document (tests/fixtures/exports; each module's
header cites its sources and says what is documented and what is assumed), checked on their own
terms: the files are opened with openpyxl or Python's csv module and read with this file's own
knowledge of the layout -- never with impcredit's reader or profiles (none exists for them yet).

- ``patriot_payroll_details``: a sectioned header (Hours and Earnings | Hours | Amount | Deductions |
  Amount | Employee Taxes | Amount | Employer Taxes | Amount | ...), a block per paycheck;
- ``quickbooks_desktop_payroll_summary``: a transposed workbook, a Summary sheet then one sheet
  per check date with the employees across the top;
- ``gusto_custom_report``: a configurable report in two variants, the employer taxes' total only or
  their parts only.

For every check of ``common.PAYROLL`` each export must give its hours, gross wages and employer
taxes to the cent (``common.canonical_rows()``), its own totals lines must add up, the files must
be written the same way twice, and no ssn-shaped text may appear anywhere in them.
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
import pytest

from tests.fixtures.exports import common
from tests.fixtures.exports import gusto_custom_report as gusto_custom
from tests.fixtures.exports import patriot_payroll_details as patriot
from tests.fixtures.exports import quickbooks_desktop_payroll_summary as qbd

FORMATS = ["xlsx", "csv"]
PERSON = {e.name: e.ssn for e in common.EMPLOYEES}  # every one of these exports prints "Last, First"


# --- reading the files, plainly ---------------------------------------------------------------

def _csv_rows(path: Path, *, utf8: bool) -> list[list]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") == utf8, path.name
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b""), "Excel writes CRLF"
    text = raw[3:].decode("utf-8") if utf8 else raw.decode("cp1252")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len({len(r) for r in rows}) == 1, "Excel writes every line as wide as the used range"
    return [[c if c != "" else None for c in r] for r in rows]


def _xlsx_sheets(path: Path) -> dict[str, list[list]]:
    wb = openpyxl.load_workbook(path, data_only=True)
    return {ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in wb.worksheets}


def _rows(path: Path, *, utf8: bool = False) -> list[list]:
    if path.suffix == ".xlsx":
        (rows,) = _xlsx_sheets(path).values()
        return rows
    return _csv_rows(path, utf8=utf8)


def num(x) -> Decimal | None:
    """A cell's number: a typed value, or the text Excel shows (1,234.56, -5.00, $1.00, (1.00))."""
    if x is None or x == "":
        return None
    if isinstance(x, (int, float)):
        return Decimal(str(x))
    s = str(x).strip().replace("$", "").replace(",", "")
    neg = s.startswith("(") and s.endswith(")")
    d = Decimal(s.strip("()"))
    return -d if neg else d


def cents(x) -> Decimal:
    return (num(x) or Decimal(0)).quantize(common.CENT)


def text(x) -> str:
    if x is None:
        return ""
    if isinstance(x, dt.datetime):
        return f"{x:%m/%d/%Y}"
    return str(x)


def day(x) -> dt.date:
    if isinstance(x, dt.datetime):
        return x.date()
    return dt.datetime.strptime(str(x).strip(), "%m/%d/%Y").date()


def _expected(*, period: bool) -> Counter:
    """The canonical rows, one per check: (ssn, pay date, [period,] hours, gross wages, employer taxes)."""
    out: Counter = Counter()
    for r in common.canonical_rows():
        key = (r["ssn"], dt.date.fromisoformat(r["pay_date"]))
        if period:
            key += (dt.date.fromisoformat(r["period_start"]), dt.date.fromisoformat(r["period_end"]))
        out[key + (Decimal(r["hours"]), Decimal(r["gross_wages"]), Decimal(r["employer_taxes"]))] += 1
    return out


# --- 1. Patriot Software: the sectioned header, a block per paycheck --------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_patriot_payroll_details_adds_up(fmt, tmp_path):
    """One file per payroll with its pay date and period in the title lines; the header's sections
    side by side, each with its own Amount; a block per paycheck (the name alone, the code lines,
    "Paycheck Totals"); the Employer Taxes column gives the employer taxes, the Employee Taxes column
    (whose labels repeat "Social Security", "Medicare") does not; the Total line sums the paychecks."""
    P = patriot
    paths = P.write(tmp_path, fmt)
    assert [p.name for p in paths] == [P.file_name(d, fmt) for d, _ in P.payrolls()]
    assert len(paths) == 53
    got: Counter = Counter()
    for path in paths:
        rows = _rows(path)
        assert text(rows[1][0]) == "Payroll Details"
        pay = day(text(rows[2][0]).removeprefix("Pay Date: "))
        start, end = (day(x) for x in text(rows[3][0]).removeprefix("Pay Period: ").split(" - "))
        head = [text(h) for h in rows[P.HEADER_ROW]]
        assert head == P.HEADER and set(P.DOCUMENTED_COLUMNS) <= set(head)
        assert [j for j, h in enumerate(head) if h == "Amount"] == [P.E_AMT, P.D_AMT, P.T_AMT, P.R_AMT, P.P_AMT]
        name, block, papers = None, [], []
        for r in rows[P.HEADER_ROW + 1:]:
            first = text(r[P.NAME])
            if not any(text(x) for x in r):
                break  # the blank line before the payroll's totals
            if first and not any(text(x) for x in r[1:]):
                name, block = first, []
            elif first == "Paycheck Totals":
                hours = sum(cents(x[P.E_HOURS]) for x in block)
                gross = sum(cents(x[P.E_AMT]) for x in block)
                employer = sum(cents(x[P.R_AMT]) for x in block)
                assert (cents(r[P.E_HOURS]), cents(r[P.E_AMT]), cents(r[P.R_AMT])) == (hours, gross, employer)
                assert cents(r[P.T_AMT]) == sum(cents(x[P.T_AMT]) for x in block)
                assert cents(r[P.D_AMT]) == sum(cents(x[P.D_AMT]) for x in block)
                assert cents(r[P.P_AMT]) == gross - cents(r[P.T_AMT]) - cents(r[P.D_AMT])  # net pay
                assert {"Social Security", "Medicare"} <= {text(x[P.T_CODE]) for x in block}
                assert {"Social Security", "Medicare"} <= {text(x[P.R_CODE]) for x in block}
                got[(PERSON[name], pay, start, end, hours, gross, employer)] += 1
                papers.append(r)
            else:
                assert not first, (path.name, first)
                block.append(r)
        total = rows[-1]
        assert text(total[P.NAME]) == "Total"
        for j in (P.E_HOURS, P.E_AMT, P.D_AMT, P.T_AMT, P.R_AMT, P.P_AMT):
            assert cents(total[j]) == sum(cents(r[j]) for r in papers), (path.name, j)
        start = next(i for i, r in enumerate(rows) if text(r[P.NAME]) == "Payroll Totals")
        block = rows[start:-1]  # the payroll's lines by code, then the Total line
        assert [text(r[P.NAME]) for r in block[:3]] == ["Payroll Totals", f"Employees {len(papers)}",
                                                         f"Paychecks {len(papers)}"]
        for j in (P.E_HOURS, P.E_AMT, P.D_AMT, P.T_AMT, P.R_AMT, P.P_AMT):
            assert sum(cents(r[j]) for r in block) == cents(total[j]), (path.name, j)
    assert got == _expected(period=True)


# --- 2. QuickBooks Desktop: the transposed workbook with a Summary sheet -----------------------

def _label(row: list) -> tuple[int, str] | None:
    for j in range(qbd.LABEL_COLUMNS):
        if text(row[j]):
            return j, text(row[j])
    return None


def _pay_run(rows: list[list]) -> tuple[dt.date, list[tuple]]:
    """One check date's Payroll Summary: (check date, per employee (name, hours, gross, employer
    taxes, employer parts)); the TOTAL group checked against the employees' columns."""
    names, j = [], qbd.FIRST
    while text(rows[0][j]) != "TOTAL":
        names.append(text(rows[0][j]))
        assert not any(text(rows[0][k]) for k in range(j + 1, j + qbd.GROUP)), "spacer columns are empty"
        j += qbd.GROUP
    assert len(names) == len(common.EMPLOYEES)
    sub = rows[1]
    headings = {text(sub[qbd.FIRST + qbd.GROUP * i + qbd.AMOUNT_AT]) for i in range(len(names) + 1)}
    (heading,) = headings
    assert all(text(sub[qbd.FIRST + qbd.GROUP * i + qbd.HOURS_AT]) == "Hours" for i in range(len(names) + 1))
    assert all(text(sub[qbd.FIRST + qbd.GROUP * i + qbd.RATE_AT]) == "Rate" for i in range(len(names) + 1))
    pay = dt.datetime.strptime(heading, "%b %d, %y").date()
    by_label: dict[str, tuple[int, list]] = {}
    order: list[str] = []
    for r in rows[2:]:
        lab = _label(r)
        if lab:
            by_label[lab[1]] = (lab[0], r)
            order.append(lab[1])
    assert set(qbd.DOCUMENTED_ROWS) <= set(order)
    # the places the readers of real exports rely on
    assert by_label["Total Gross Pay"][0] == 2 and by_label["Total Employer Taxes and Contributions"][0] == 0
    assert by_label["Net Pay"][0] == 0 and by_label["Employee Wages, Taxes and Adjustments"][0] == 0
    er_items = order[order.index("Employer Taxes and Contributions") + 1:order.index(
        "Total Employer Taxes and Contributions")]
    earn_items = order[order.index("Gross Pay") + 1:order.index("Total Gross Pay")]
    assert er_items and earn_items
    out = []
    for i, name in enumerate(names + ["TOTAL"]):
        base = qbd.FIRST + qbd.GROUP * i

        def amount(label: str, base=base) -> Decimal:
            return cents(by_label[label][1][base + qbd.AMOUNT_AT])

        def hours(label: str, base=base) -> Decimal:
            return cents(by_label[label][1][base + qbd.HOURS_AT])

        gross, er = amount("Total Gross Pay"), amount("Total Employer Taxes and Contributions")
        assert sum(amount(x) for x in er_items) == er
        assert sum(amount(x) for x in earn_items) == gross
        assert sum(hours(x) for x in earn_items) == hours("Total Gross Pay") == hours("Net Pay")
        assert amount("Net Pay") == amount("Adjusted Gross Pay") + amount("Total Taxes Withheld")
        assert amount("Total Taxes Withheld") < 0
        out.append((name, hours("Total Gross Pay"), gross, er))
    *people, total = out
    for k in (1, 2, 3):
        assert total[k] == sum(p[k] for p in people)
    return pay, people


@pytest.mark.parametrize("fmt", FORMATS)
def test_quickbooks_desktop_payroll_summary_adds_up(fmt, tmp_path):
    """The workbook of a year: "Summary" first, then one sheet per check date named by the report's
    date heading; on each, the employees across row 1 (each over Hours, Rate and the date heading,
    spacer columns between) and TOTAL last; Total Gross Pay (hours and amount) and Total Employer
    Taxes and Contributions (the sum of its items) per employee. The Summary's figures equal the
    sheets'. The CSVs are the pay-run sheets, one per check date."""
    Q = qbd
    paths = Q.write(tmp_path, fmt)
    got: Counter = Counter()
    if fmt == "xlsx":
        assert [p.name for p in paths] == [Q.workbook_name(y) for y in (2022, 2023, 2024)]
        for path in paths:
            sheets = _xlsx_sheets(path)
            names = list(sheets)
            assert names[0] == Q.SUMMARY
            runs = []
            for name in names[1:]:
                pay, people = _pay_run(sheets[name])
                assert name == Q.heading(pay)
                runs.append((pay, people))
                got.update((PERSON[n], pay, h, g, e) for n, h, g, e in people)
            summary = {text(r[0]): r[1] for r in sheets[Q.SUMMARY] if len(r) > 1 and r[1] is not None}
            checks = [p for _, people in runs for p in people]
            assert int(summary["Employees"]) == len({p[0] for p in checks}) == 3
            assert int(summary["Pay runs"]) == len(runs)
            assert int(summary["Paychecks"]) == len(checks)
            assert cents(summary["Total hours"]) == sum(p[1] for p in checks)
            assert cents(summary["Total gross pay"]) == sum(p[2] for p in checks)
            assert cents(summary["Total employer taxes and contributions"]) == sum(p[3] for p in checks)
            assert {d.year for d, _ in runs} == {int(path.stem[-4:])}
    else:
        assert len(paths) == 53
        for path in paths:
            pay, people = _pay_run(_csv_rows(path, utf8=False))
            assert path.name == Q.csv_name(pay)
            got.update((PERSON[n], pay, h, g, e) for n, h, g, e in people)
    assert got == _expected(period=False)
    files = list(csv.DictReader(io.StringIO(Q.files_csv(fmt))))
    assert [f["file"] for f in files] == [f"{common.EMPLOYER}/{p.name}" for p in paths]
    assert {(f["employer_id"], f["pay_frequency"], f["pay_lag_days"]) for f in files} == {
        (common.EMPLOYER, "biweekly", "6")}
    assert all((c.pay_date - c.period_end).days == 6 and (c.period_end - c.period_start).days == 13
               for c in common.PAYROLL)


# --- 3. Gusto custom report: the employer taxes' total, or their parts ------------------------

def _custom_lines(rows: list[list], cols: list[str]) -> list[dict]:
    """The report's rows by column label; "Subtotal" lines checked against the payroll's rows above
    them and "Grand total" against all of them."""
    G = gusto_custom
    col = {h: i for i, h in enumerate(cols)}
    numeric = [h for h in cols if h not in G.DATE_COLUMNS | G.TEXT_COLUMNS]
    lines, since = [], []
    for r in rows[G.HEADER_ROW + 1:]:
        first = text(r[0])
        if first in ("Subtotal", "Grand total"):
            over = since if first == "Subtotal" else lines
            for h in numeric:
                assert cents(r[col[h]]) == sum(cents(ln[h]) for ln in over), (first, h)
            since = []
            continue
        ln = {h: r[col[h]] for h in cols}
        lines.append(ln)
        since.append(ln)
    assert text(rows[-1][0]) == "Grand total"
    return lines


@pytest.mark.parametrize("variant", ["total", "parts"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_gusto_custom_report_adds_up(fmt, variant, tmp_path):
    """The title and time period above the header; one row per employee per payroll, named by
    "Employee last name" / "Employee first name", its check date and pay period; gross = its
    earnings columns; the employer taxes the "Total employer taxes" column (variant "total") or the
    sum of the employer columns (variant "parts"), never both in one file."""
    G = gusto_custom
    (path,) = G.write(tmp_path, fmt, variant)
    assert path.name == G.file_name(variant, fmt)
    rows = _rows(path, utf8=True)
    assert text(rows[0][0]) == G.TITLES[variant] and text(rows[1][0]).startswith("Time period: ")
    cols = [text(h) for h in rows[G.HEADER_ROW] if text(h)]
    assert cols == G.header(variant)
    parts = list(G.ER_PARTS)
    if variant == "total":
        assert "Total employer taxes" in cols and not set(parts) & set(cols)
    else:
        assert "Total employer taxes" not in cols and set(parts) <= set(cols)
    assert set(cols) - {"Employer additional taxes"} <= set(G.DOCUMENTED_COLUMNS)
    got: Counter = Counter()
    for ln in _custom_lines(rows, cols):
        gross = cents(ln["Gross earnings"])
        assert gross == sum(cents(ln[h]) for h in ("Regular earnings", "Overtime earnings", "Bonus"))
        assert cents(ln["Net pay"]) == gross - cents(ln["Total employee taxes"]) - cents(ln["Employee deductions"])
        employer = (cents(ln["Total employer taxes"]) if variant == "total"
                    else sum(cents(ln[h]) for h in parts))
        hours = cents(ln["Regular hours"]) + cents(ln["Overtime hours"])
        name = f"{text(ln['Employee last name'])}, {text(ln['Employee first name'])}"
        got[(PERSON[name], day(ln["Payroll pay date"]), day(ln["Pay period start"]), day(ln["Pay period end"]),
             hours, gross, employer)] += 1
    assert got == _expected(period=True)


def test_gusto_custom_report_variants_agree(tmp_path):
    """Row by row the parts add up to the total: the two variants are one payroll."""
    G = gusto_custom
    (a,) = G.write(tmp_path / "a", "csv", "total")
    (b,) = G.write(tmp_path / "b", "csv", "parts")
    la = _custom_lines(_rows(a, utf8=True), G.header("total"))
    lb = _custom_lines(_rows(b, utf8=True), G.header("parts"))
    assert len(la) == len(lb) == len(common.PAYROLL)
    for x, y in zip(la, lb, strict=True):
        assert cents(x["Total employer taxes"]) == sum(cents(y[h]) for h in G.ER_PARTS)
        assert {h: text(v) for h, v in x.items() if h != "Total employer taxes"} == {
            h: text(v) for h, v in y.items() if h not in G.ER_PARTS}


# --- all three: written the same way twice, no ssn ------------------------------------------

WRITERS = {
    "patriot": patriot.write,
    "qbd": qbd.write,
    "gusto_total": lambda folder, fmt: gusto_custom.write(folder, fmt, "total"),
    "gusto_parts": lambda folder, fmt: gusto_custom.write(folder, fmt, "parts"),
}
SSN = re.compile(r"(?<!\d)(\d{3}-\d{2}-\d{4}|\d{3} \d{2} \d{4}|\d{9})(?!\d)")


def _all_text(path: Path) -> list[str]:
    if path.suffix == ".xlsx":
        wb = openpyxl.load_workbook(path)
        return [ws.title for ws in wb.worksheets] + [
            text(v) for ws in wb.worksheets for r in ws.iter_rows(values_only=True) for v in r if v is not None]
    raw = path.read_bytes()
    return [raw.decode("utf-8-sig") if raw.startswith(b"\xef\xbb\xbf") else raw.decode("cp1252")]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(WRITERS))
def test_written_the_same_way_twice(name, fmt, tmp_path):
    """CSV bytes are identical run to run; workbooks hold the same sheets and cell values."""
    first = WRITERS[name](tmp_path / "1", fmt)
    second = WRITERS[name](tmp_path / "2", fmt)
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second, strict=True):
        if fmt == "csv":
            assert a.read_bytes() == b.read_bytes(), a.name
        else:
            assert _xlsx_sheets(a) == _xlsx_sheets(b), a.name


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(WRITERS))
def test_no_ssn_anywhere(name, fmt, tmp_path):
    """None of these exports prints an ssn (the roster gives it): no ssn-shaped text in any cell or
    sheet name, and none of the payroll's (fictitious) ssns, however written."""
    ssns = {e.ssn for e in common.EMPLOYEES} | {e.ssn.replace("-", "") for e in common.EMPLOYEES}
    for path in WRITERS[name](tmp_path, fmt):
        for t in _all_text(path):
            assert not SSN.search(t), (path.name, SSN.search(t).group(0))
            assert not any(s in t for s in ssns), path.name


@pytest.mark.parametrize("fmt", FORMATS)
def test_submissions(fmt, tmp_path):
    """``write_submission`` lays out the agency's files and the payroll folder; only the QuickBooks
    Desktop export (check dates only) needs ``payroll/files.csv``, and it names every file written."""
    for mod, kwargs in ((patriot, {}), (qbd, {}), (gusto_custom, {"variant": "parts"})):
        sub = mod.write_submission(tmp_path / mod.__name__.rsplit(".", 1)[1], fmt, **kwargs)
        folder = sub / "payroll" / common.EMPLOYER
        written = sorted(p.name for p in folder.iterdir())
        assert written and all(n.endswith(f".{fmt}") for n in written)
        files = sub / "payroll" / "files.csv"
        if mod is qbd:
            listed = sorted(r["file"].split("/", 1)[1] for r in csv.DictReader(files.open(encoding="utf-8")))
            assert listed == written
        else:
            assert not files.exists() and mod.FILES_CSV is None
        roster = list(csv.DictReader((sub / "roster.csv").open(encoding="utf-8")))
        assert {r["employee_id"] for r in roster} == set(mod.EMPLOYEE_IDS.values()) == set(PERSON)


# --- issue 42: a register printed to a text file; hours written as hours and minutes --------------

_PRINTED_LINE = re.compile(r"^(\d{4}) +(\S+(?: \S+)*) +(\d\d/\d\d/\d{4}) +(\d\d/\d\d/\d{4}) +(\d\d/\d\d/\d{4}) +(\d+) +"
                           r"([\d.]+) +([\d,]+\.\d\d) +([\d,]+\.\d\d)$")


def test_printed_payroll_register_adds_up(tmp_path):
    """PAYREG.PRN read with plain Python: Windows-1252, CRLF, 8 pages parted by form feeds, each
    opening with the title and the headings; a line per check (its name's rest on the next line),
    each page's ``Page Total`` and the ``Report Total`` the sums of their lines; every check of the
    payroll to the cent, and no ssn-shaped text."""
    from tests.fixtures.exports import printed_payroll_register as printed

    (path,) = printed.write(tmp_path)
    raw = path.read_bytes()
    assert b"\n" not in raw.replace(b"\r\n", b"") and printed.write(tmp_path / "again")[0].read_bytes() == raw
    pages = raw.decode("cp1252").split("\f")
    assert len(pages) == 8
    got: Counter = Counter()
    ids = {e.employee_id: e for e in common.EMPLOYEES}
    every = []
    for page in pages:
        lines = page.split("\r\n")
        assert lines[0].startswith(common.COMPANY) and lines[1] == "Payroll Register"
        assert re.split(r"\s{2,}", lines[4].strip()) == [h for h, _, _ in printed.COLUMNS]
        rows = []
        for k, ln in enumerate(lines):
            if (m := _PRINTED_LINE.match(ln)) is None:
                continue
            e = ids[m[1]]
            assert f"{m[2]} {lines[k + 1].strip()}" == e.name  # the name's rest on the next line
            row = (e.ssn, day(m[5]), day(m[3]), day(m[4]), Decimal(m[7]), num(m[8]), num(m[9]))
            got[row] += 1
            rows.append(row)
        (total,) = [ln.split() for ln in lines if ln.strip().startswith("Page Total")]
        assert [Decimal(total[2]), num(total[3]), num(total[4])] == [sum(r[i] for r in rows) for i in (4, 5, 6)]
        every += rows
    assert got == _expected(period=True) and len(every) == len(common.PAYROLL)
    assert not SSN.search(raw.decode("cp1252"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_timeclock_hours_minutes_adds_up(fmt, tmp_path):
    """The summary's Total Hours are the Regular and Overtime times summed, as hours and minutes
    (``44:30``; in the workbook, ``[h]:mm`` durations stored as fractions of days); every check of
    the payroll to the cent."""
    from tests.fixtures.exports import timeclock_hours_minutes as tc

    (path,) = tc.write(tmp_path, fmt)
    if fmt == "xlsx":
        wb = openpyxl.load_workbook(path)
        ws = wb.active
        assert ws.cell(5, 8).number_format == "[h]:mm"
    rows = _rows(path)
    assert [text(c) for c in rows[3]] == tc.HEADER

    def hours(x) -> Decimal:
        if x is None or x == "":
            return Decimal(0)
        if isinstance(x, dt.timedelta):
            return Decimal(round(x.total_seconds())) / 3600
        if isinstance(x, (int, float)):  # a duration openpyxl did not take for one: days
            return (Decimal(str(x)) * 24).quantize(common.CENT)
        h, m = str(x).split(":")
        assert 0 <= int(m) <= 59
        return Decimal(h) + Decimal(m) / 60

    got: Counter = Counter()
    people = {e.employee_id: e.ssn for e in common.EMPLOYEES}
    for r in rows[4:]:
        assert hours(r[5]) + hours(r[6]) == hours(r[7])
        got[(people[text(r[0])], day(r[4]), day(r[2]), day(r[3]), hours(r[7]), cents(r[8]), cents(r[9]))] += 1
    assert got == _expected(period=True)
