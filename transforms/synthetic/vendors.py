"""Rewrite a canonical submission folder's payroll into the vendor layouts of ``data/vendors``.

Same data, other clothes: each employer's payroll rows go to one layout (employers are spread
over the layouts, seeded), written the way that vendor writes them (headers, dates, money,
delimiter, encoding, hours and pay split into regular and overtime). The other datasets are
copied as they are. Ingesting the result gives the same staged rows as the canonical folder.
"""

from __future__ import annotations

import csv
import random
import shutil
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl

from transforms.schema import SUBMITTED_COLUMNS
from transforms.synthetic import reports as rp

LAYOUTS = ("canonical", "adp_wfn_payroll_history", "gusto_payroll_journal", "paycom_prior_payroll", "peo_export",
           "spreadsheet_xlsx", "register_lines", "journal_lines")
# payroll products' reports, one employer each, in a folder named by its FEIN (the report has none)
REPORT_LAYOUTS = ("adp_wfn_payroll_history", "gusto_payroll_journal", "paycom_prior_payroll")
# layouts without the ssn: the roster gives it (spec section 1)
NO_SSN_LAYOUTS = ("gusto_payroll_journal", "paycom_prior_payroll")
LONG_LAYOUTS = ("register_lines", "journal_lines")

# employer tax codes of the line-per-code layouts and their shares of a row's employer taxes (the
# last takes what the rounded others leave, so the lines add up to the row to the cent)
_TAX_SPLIT = {
    "register_lines": (("FICA-ER", 0.56), ("MED-ER", 0.13), ("FUTA", 0.05), ("SDI-ER", 0.02), ("SUI-ER", None)),
    "journal_lines": (("SOC SEC ER", 0.56), ("MEDICARE ER", 0.13), ("FUTA", 0.05), ("NJ SDI ER", 0.02), ("NJ SUI ER", None)),
}
_CODES = {  # earnings (regular, overtime) and ignored lines (employee taxes, deductions) per layout
    "register_lines": ("REG", "OT", (("FIT", 0.09), ("FICA-EE", 0.062), ("401K", 0.03))),
    "journal_lines": ("REGULAR", "OVERTIME", (("FED WH", 0.09), ("SOC SEC EE", 0.062), ("HEALTH", 0.02))),
}
_FREQUENCY_WORDS = {"weekly": "Weekly", "biweekly": "Bi-Weekly", "semimonthly": "Semi-Monthly", "monthly": "Monthly"}


def _cents(x: str) -> int:
    """'1234.5' -> 123450, exactly (inputs have at most 2 decimals)."""
    neg = x.startswith("-")
    x = x.lstrip("+-")
    whole, _, frac = x.partition(".")
    v = int(whole or "0") * 100 + int((frac + "00")[:2] or "0")
    return -v if neg else v


def _dec(c: int) -> str:
    sign = "-" if c < 0 else ""
    c = abs(c)
    return f"{sign}{c // 100}.{c % 100:02d}"


def _money_adp(c: int) -> str:
    s = f"${abs(c) // 100:,}.{abs(c) % 100:02d}"
    return f"({s})" if c < 0 else s


def _split(hours_c: int, pay_c: int, start: date, end: date) -> tuple[int, int, int, int]:
    """Regular/overtime split: hours above 40 a week (by period length) are overtime."""
    days = (end - start).days + 1
    cap = 4000 * days // 7
    ot_h = max(0, hours_c - cap) if hours_c > 0 else 0
    reg_h = hours_c - ot_h
    ot_p = round(pay_c * ot_h / hours_c) if hours_c > 0 else 0
    return reg_h, ot_h, pay_c - ot_p, ot_p


def _rows(frame: pl.DataFrame) -> list[dict]:
    return frame.to_dicts()


def _write_csv(path: Path, header: list[str], rows: list[list[str]], *, delimiter: str = ",",
               encoding: str = "utf-8", bom: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding=("utf-8-sig" if bom else encoding)) as fh:
        w = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
        w.writerow(header)
        w.writerows(rows)


def _d(s: str) -> date:
    return datetime.strptime(s, "%Y-%m-%d").date()


def _split_taxes(layout: str, taxes_c: int) -> list[tuple[str, int]]:
    """A row's employer taxes (cents) as tax code lines adding up to it exactly (zero lines left out)."""
    sign, left = (-1 if taxes_c < 0 else 1), abs(taxes_c)
    out = []
    for code, share in _TAX_SPLIT[layout]:
        part = left if share is None else int(abs(taxes_c) * share)
        left -= part if share is not None else 0
        if part:
            out.append((code, sign * part))
    return out


def period_frequency(start: date, end: date) -> str | None:
    """The pay frequency whose ``period_ending_on_pay_date`` period ending on ``end`` is exactly
    ``start``..``end`` (transforms.ingest.read.cast.canonical.period_from_pay_date), or None."""
    days = (end - start).days + 1
    month_end = (date(end.year + (end.month == 12), end.month % 12 + 1, 1) - timedelta(days=1)).day
    if days == 7:
        return "weekly"
    if days == 14:
        return "biweekly"
    if start.day == 1 and end.day == 15 or start.day == 16 and end.day == month_end and start.month == end.month:
        return "semimonthly"
    if start.day == 1 and end.day == month_end and start.month == end.month:
        return "monthly"
    return None


def write_long(layout: str, rows: list[dict], path: Path, *, seed: int = 0) -> Path:
    """Canonical payroll ``rows`` (text dicts, an optional ``check_id``) as a line-per-code export:
    per row, a regular and an overtime earnings line (hours above 40 a week are overtime), employer
    tax lines adding up to the row's taxes, and employee tax and deduction lines that ingest
    ignores. ``register_lines`` writes the earnings lines of the file first, then the tax lines,
    then the deductions (line sets); ``journal_lines`` writes each check's lines together and no
    period (the check date is the period's last day, the frequency says the rest)."""
    rng = random.Random(seed)
    reg_code, ot_code, ignored = _CODES[layout]
    earn, taxes, deds = [], [], []
    money = _money_adp if layout == "register_lines" else _dec
    for i, r in enumerate(rows):
        s, e = _d(r["period_start"]), _d(r["period_end"])
        hours_c, pay_c, tax_c = _cents(r["hours"]), _cents(r["gross_wages"]), _cents(r["employer_taxes"])
        sh, sp = (-1 if hours_c < 0 else 1), (-1 if pay_c < 0 else 1)  # a reversal is written negative
        reg_h, ot_h, reg_p, ot_p = _split(abs(hours_c), abs(pay_c), s, e)
        digits = r["ssn"].replace("-", "")
        ein = r["employer_id"]
        check = r.get("check_id") or f"{700000 + i}"
        if layout == "register_lines":
            key = [ein[:2] + "-" + ein[2:], r["employee_id"], f"{digits[:3]}-{digits[3:5]}-{digits[5:]}", check,
                   e.strftime("%m/%d/%Y"), s.strftime("%m/%d/%Y"), e.strftime("%m/%d/%Y")]
            line = lambda kind, code, h, a, k=key: [*k, kind, code, h, money(a)]  # noqa: E731
        else:
            freq = period_frequency(s, e)
            if freq is None:
                raise ValueError(f"{layout}: the period {s}..{e} is no pay period ending on its check date")
            key = [ein, r["employee_id"], digits, e.strftime("%m/%d/%Y"), _FREQUENCY_WORDS[freq], check]
            line = lambda kind, code, h, a, k=key: [*k, kind, code, h, money(a)]  # noqa: E731
        earn.append(line("E" if layout == "register_lines" else "Earning", reg_code, _dec(sh * reg_h), sp * reg_p))
        if ot_h or ot_p:
            earn.append(line("E" if layout == "register_lines" else "Earning", ot_code, _dec(sh * ot_h), sp * ot_p))
        for code, cents in _split_taxes(layout, tax_c):
            taxes.append(line("T" if layout == "register_lines" else "Employer Tax", code, "", cents))
        for code, share in ignored:
            cents = sp * int(abs(pay_c) * share * (0.8 + 0.4 * rng.random()))
            if cents:
                deds.append(line("D" if layout == "register_lines" else "Deduction", code, "", cents))
    if layout == "register_lines":
        header = ["Co FEIN", "File #", "Tax ID (SSN)", "Check #", "Pay Date", "Period Beginning Date",
                  "Period Ending Date", "Line Type", "Code", "Hours", "Amount"]
        out = earn + taxes + deds
        p = path.with_suffix(".csv")
        _write_csv(p, header, out, encoding="cp1252")
    else:
        header = ["Company Tax ID", "Employee No", "Social Security No", "Check Date", "Pay Frequency", "Check No",
                  "Code Type", "Code", "Hours", "Amount"]
        out = sorted(earn + taxes + deds, key=lambda x: (x[5], {"Earning": 0, "Employer Tax": 1}.get(x[6], 2)))
        p = path.with_suffix(".csv")
        _write_csv(p, header, out)
    return p


def write_layout(layout: str, rows: list[dict], path: Path) -> Path:
    """Write canonical payroll ``rows`` (text dicts) in ``layout``; returns the file written."""
    if layout in LONG_LAYOUTS:
        return write_long(layout, rows, path)
    if layout == "canonical":
        cols = SUBMITTED_COLUMNS["payroll"]
        p = path.with_suffix(".csv")
        _write_csv(p, cols, [[r[c] for c in cols] for r in rows])
        return p
    out: list[list[str]] = []
    for r in rows:
        s, e = _d(r["period_start"]), _d(r["period_end"])
        reg_h, ot_h, reg_p, ot_p = _split(_cents(r["hours"]), _cents(r["gross_wages"]), s, e)
        digits = r["ssn"].replace("-", "")
        dashed = f"{digits[:3]}-{digits[3:5]}-{digits[5:]}" if len(digits) == 9 else r["ssn"]
        ein = r["employer_id"]
        if layout == "peo_export":
            out.append(["C" + ein[-4:], ein, r["employee_id"], digits, s.strftime("%Y%m%d"), e.strftime("%Y%m%d"),
                        _dec(reg_h), _dec(ot_h), _dec(reg_p), _dec(ot_p), _dec(_cents(r["employer_taxes"])), "NJ"])
        elif layout == "spreadsheet_xlsx":
            out.append([ein, r["employee_id"], dashed, s, e, _cents(r["hours"]) / 100,
                        _cents(r["gross_wages"]) / 100, _cents(r["employer_taxes"]) / 100])
        else:
            raise KeyError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if layout == "peo_export":
        p = path.with_suffix(".txt")
        _write_csv(p, ["CLIENT_ID", "CLIENT_FEIN", "WSE_ID", "WSE_SSN", "PER_BEG_DT", "PER_END_DT", "REG_HRS",
                       "OT_HRS", "REG_WAGES", "OT_WAGES", "ER_TAX_TOTAL", "WORKSITE_ST"], out, delimiter="|")
    else:
        p = path.with_suffix(".xlsx")
        _write_xlsx(p, out)
    return p


def _write_xlsx(path: Path, rows: list[list]) -> None:
    """One sheet per year of period_start (a hand-kept workbook), real date cells."""
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    header = ["Employer FEIN", "Employee", "Social Security #", "From", "To", "Hours Worked", "Wages Paid",
              "Employer Taxes Paid"]
    by_year: dict[int, list[list]] = {}
    for r in rows:
        by_year.setdefault(r[3].year, []).append(r)
    wb = xlsxwriter.Workbook(str(path))
    # dated by the data, not the clock: the same seed writes the same bytes
    latest = max((r[4] for r in rows), default=date(2000, 1, 1))
    wb.set_properties({"created": datetime.combine(latest, datetime.min.time())})
    datefmt = wb.add_format({"num_format": "mm/dd/yyyy"})
    money = wb.add_format({"num_format": "$#,##0.00"})
    for year in sorted(by_year) or [date.today().year]:
        ws = wb.add_worksheet(str(year))
        ws.write_row(0, 0, header)
        for i, r in enumerate(by_year.get(year, []), start=1):
            ws.write_string(i, 0, r[0])
            ws.write_string(i, 1, r[1])
            ws.write_string(i, 2, r[2])
            ws.write_datetime(i, 3, datetime.combine(r[3], datetime.min.time()), datefmt)
            ws.write_datetime(i, 4, datetime.combine(r[4], datetime.min.time()), datefmt)
            ws.write_number(i, 5, r[5])
            ws.write_number(i, 6, r[6], money)
            ws.write_number(i, 7, r[7], money)
    wb.close()


def write_vendor_mix(canonical_dir: Path, out_dir: Path, *, seed: int) -> None:
    """Rewrite ``canonical_dir``'s payroll into the vendor layouts under ``out_dir``.

    Employers are dealt over the layouts in a seeded order (every layout gets employers when
    there are at least as many employers as layouts); one file per layout,
    ``payroll/<layout>.<ext>``, but a payroll product's reports (ADP, Paycom, Gusto), written per
    employer in a folder named by its FEIN (``payroll/<FEIN>/``). The other datasets are copied
    unchanged, the roster with each claimed employee's ssn when a layout has none.
    """
    src, out = Path(canonical_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in SUBMITTED_COLUMNS:
        if name == "payroll":
            continue
        p = src / f"{name}.csv"
        if p.exists():
            shutil.copyfile(p, out / p.name)
    files = sorted((src / "payroll").glob("*.csv"))
    if not files:
        return
    frame = pl.concat([pl.read_csv(f, infer_schema=False) for f in files], how="vertical")
    employers = sorted(frame.get_column("employer_id").unique().to_list())
    rng = random.Random(seed)
    rng.shuffle(employers)
    layouts = list(LAYOUTS)
    rng.shuffle(layouts)
    assign = {e: layouts[i % len(layouts)] for i, e in enumerate(employers)}
    # the journal derives periods from check dates: only employers whose periods all are pay
    # periods ending on their check date go to it (the others to the register)
    fits = frame.with_columns(pl.struct("period_start", "period_end").map_elements(
        lambda x: period_frequency(_d(x["period_start"]), _d(x["period_end"])) is not None, return_dtype=pl.Boolean
    ).alias("__fits")).group_by("employer_id").agg(pl.col("__fits").all())
    for emp, ok in fits.iter_rows():
        if assign[emp] == "journal_lines" and not ok:
            assign[emp] = "register_lines"
    frame = frame.with_columns(pl.col("employer_id").replace_strict(assign).alias("__layout"))
    names = dict(pl.read_csv(src / "applications.csv", infer_schema=False).select("employer_id", "employer_name")
                 .unique("employer_id", keep="first").iter_rows()) if (src / "applications.csv").exists() else {}
    for layout in LAYOUTS:
        part = frame.filter(pl.col("__layout") == layout).drop("__layout")
        if not part.height:
            continue
        if layout in REPORT_LAYOUTS:
            for (emp,), rows in part.group_by(["employer_id"], maintain_order=True):
                write_report(layout, _rows(rows), out / "payroll" / emp, company=names.get(emp, f"Employer {emp}"))
        else:
            write_layout(layout, _rows(part), out / "payroll" / layout)
    if any(a in NO_SSN_LAYOUTS for a in assign.values()):
        _roster_with_ssns(src, out, frame)


def write_report(layout: str, rows: list[dict], folder: Path, *, company: str) -> list[Path]:
    """One employer's rows as a payroll product's report, in the folder named by its FEIN."""
    if layout == "adp_wfn_payroll_history":
        return [rp.write_adp_history(rows, folder / "payroll_history.xlsx", company=company, code="A" + folder.name[-3:])]
    if layout == "paycom_prior_payroll":
        return rp.write_paycom(rows, folder, company=company)
    return [rp.write_gusto_journal(rows, folder / "payroll_journal.csv", company=company,
                                   address=("100 Broad Street", "Newark, NJ 07102"))]


def _roster_with_ssns(src: Path, out: Path, payroll: pl.DataFrame) -> None:
    """The roster with each claimed employee's ssn (exports without one take the roster's)."""
    roster = pl.read_csv(src / "roster.csv", infer_schema=False)
    apps = pl.read_csv(src / "applications.csv", infer_schema=False).select("application_id", "employer_id")
    emp_col = pl.col("employer_id") if "employer_id" in roster.columns else pl.lit(None, dtype=pl.String)
    keyed = roster.with_row_index("__i").join(apps.rename({"employer_id": "__app_employer"}), on="application_id",
                                              how="left").with_columns(
        pl.coalesce(emp_col, "__app_employer").alias("__employer"))
    ssns = payroll.select(pl.col("employer_id").alias("__employer"), "employee_id", "ssn").unique(
        ["__employer", "employee_id"], keep="first")
    with_ssn = keyed.join(ssns, on=["__employer", "employee_id"], how="left").sort("__i")
    with_ssn.select(*roster.columns, "ssn").write_csv(out / "roster.csv")
