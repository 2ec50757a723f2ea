"""Canonical payroll rows written as payroll products export them (``data/vendors``): ADP Workforce
Now's payroll history workbook, Paycom's prior payroll workbooks and Gusto's payroll journal.

Each writer takes one employer's canonical rows (text dicts, as ``vendors._rows`` gives them) and
writes the report the way the product does: title and address lines, a header, the employee's
lines, totals lines, block header lines, fields in the file name. Ingesting what it writes gives
the canonical rows back (to the cent), with the employer id from the folder the file is in and, for
exports without an ssn, the roster's.
"""

from __future__ import annotations

import csv
from datetime import date, datetime, timedelta
from pathlib import Path

# employer taxes in columns (ADP, Gusto) or lines (Paycom): shares of a row's employer taxes, the
# last taking what the rounded others leave (so they add up to the row to the cent)
TAX_SHARES = (("Social Security", 0.56), ("Medicare", 0.13), ("FUTA", 0.05), ("NJ SDI", 0.02), ("NJ SUI", None))


def cents(x: str) -> int:
    neg = x.startswith("-")
    whole, _, frac = x.lstrip("+-").partition(".")
    v = int(whole or "0") * 100 + int((frac + "00")[:2] or "0")
    return -v if neg else v


def dec(c: int) -> str:
    return f"{'-' if c < 0 else ''}{abs(c) // 100}.{abs(c) % 100:02d}"


def tax_parts(total: int) -> list[int]:
    sign, left, out = (-1 if total < 0 else 1), abs(total), []
    for _, share in TAX_SHARES:
        part = left if share is None else int(abs(total) * share)
        left -= part if share is not None else 0
        out.append(sign * part)
    return out


def split_hours(hours_c: int, pay_c: int, start: date, end: date) -> tuple[int, int, int, int]:
    """Regular/overtime: hours above 40 a week (by period length) are overtime."""
    days = (end - start).days + 1
    cap = 4000 * days // 7
    ot_h = max(0, hours_c - cap) if hours_c > 0 else 0
    ot_p = round(pay_c * ot_h / hours_c) if hours_c > 0 else 0
    return hours_c - ot_h, ot_h, pay_c - ot_p, ot_p


def _d(s: str) -> date:
    return datetime.strptime(s, "%Y-%m-%d").date()


def _us(d: date) -> str:
    return d.strftime("%m/%d/%Y")


def _masked(ssn: str) -> str:
    digits = ssn.replace("-", "")
    return f"XXX-XX-{digits[-4:]}"


# --- ADP Workforce Now: payroll history ----------------------------------------------------------

ADP_HEADER = ["COMPANY CODE", "NAME", "FILE NUMBER", "TAX ID", "ASSOCIATE ID", "PERIOD BEGINNING DATE",
              "PERIOD ENDING DATE", "PAY DATE", "CHECK/VOUCHER NUMBER", "REGULAR HOURS", "OVERTIME HOURS", "TOTAL HOURS",
              "REGULAR EARNINGS", "OVERTIME EARNINGS", "TOTAL EARNINGS", "GROSS PAY",
              "SOCIAL SECURITY - EMPLOYER TAX", "MEDICARE - EMPLOYER TAX", "FUTA - EMPLOYER TAX",
              "SUI/SDI - EMPLOYER TAX", "TOTAL EMPLOYER TAX"]


def write_adp_history(rows: list[dict], path: Path, *, company: str, code: str) -> Path:
    """One company's payroll history as ADP Workforce Now runs it to Excel: a Report Criteria
    sheet, then the data sheet: an "EMPLOYEE DETAILS" row above the header, a line per check (the
    ssn masked) with hours and earnings by type, TOTAL EARNINGS and GROSS PAY, each employer tax and
    their total, a "Totals For Associate ID ...:" line under each employee and "Grand Totals:"."""
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: (r["employee_id"], r["period_start"]))
    first, last = min(_d(r["period_start"]) for r in rows), max(_d(r["period_end"]) for r in rows)
    wb = xlsxwriter.Workbook(str(path))
    wb.set_properties({"created": datetime.combine(last, datetime.min.time())})
    cover = wb.add_worksheet("Report Criteria")
    for k, (label, value) in enumerate([("Report Criteria", ""), ("Report Name", "Payroll History"),
                                        ("Company Code", f"{code} - {company}"),
                                        ("Pay Date Range", f"{_us(first)} - {_us(last + timedelta(days=5))}")]):
        cover.write_row(k, 0, [label, value])
    ws = wb.add_worksheet("Payroll History")
    datefmt = wb.add_format({"num_format": "mm/dd/yyyy"})
    ws.write(0, 0, "EMPLOYEE DETAILS")
    ws.write_row(1, 0, ADP_HEADER)
    r_i = 2
    grand = [0] * 12
    for emp in sorted({r["employee_id"] for r in rows}):
        emp_sum = [0] * 12
        associate = f"A{emp}"
        for n, r in enumerate(x for x in rows if x["employee_id"] == emp):
            s, e = _d(r["period_start"]), _d(r["period_end"])
            reg_h, ot_h, reg_p, ot_p = split_hours(cents(r["hours"]), cents(r["gross_wages"]), s, e)
            sui = tax_parts(cents(r["employer_taxes"]))
            taxes = [sui[0], sui[1], sui[2], sui[3] + sui[4]]
            values = [reg_h, ot_h, reg_h + ot_h, reg_p, ot_p, reg_p + ot_p, reg_p + ot_p, *taxes, sum(taxes)]
            ws.write_row(r_i, 0, [code, f"Employee {emp}", emp, _masked(r["ssn"]), associate])
            for j, d in enumerate((s, e, e + timedelta(days=5))):
                ws.write_datetime(r_i, 5 + j, datetime.combine(d, datetime.min.time()), datefmt)
            ws.write(r_i, 8, f"{emp}-{n + 1:04d}")
            for j, v in enumerate(values):
                ws.write_number(r_i, 9 + j, v / 100)
            emp_sum = [a + b for a, b in zip(emp_sum, values, strict=True)]
            r_i += 1
        ws.write(r_i, 0, f"Totals For Associate ID {associate}:")
        for j, v in enumerate(emp_sum):
            ws.write_number(r_i, 9 + j, v / 100)
        grand = [a + b for a, b in zip(grand, emp_sum, strict=True)]
        r_i += 1
    ws.write(r_i, 0, "Grand Totals:")
    for j, v in enumerate(grand):
        ws.write_number(r_i, 9 + j, v / 100)
    wb.close()
    return path


# --- Paycom: prior payroll workbooks --------------------------------------------------------------

PAYCOM_HEADER = ["EE Code", "EE Name", "Type Code", "Type Description", "Code Description", "Hours", "Amount"]
PAYCOM_ER = {"Social Security": "SS", "Medicare": "MED", "FUTA": "FUTA", "NJ SDI": "NJSDI", "NJ SUI": "NJSUI"}


def paycom_name(company: str, start: date, end: date, pay: date) -> str:
    return f"{company} Prior Payroll Pay Period {start:%m%d%Y} {end:%m%d%Y} Pay Date {pay:%m%d%Y}.xlsx"


def write_paycom(rows: list[dict], folder: Path, *, company: str) -> list[Path]:
    """One company's payroll as Paycom's prior payroll workbooks: one workbook per payroll (period),
    named with its period and pay date, a line per employee and code with its category (Earnings
    with hours, W/H Taxes, Deductions, Client Side Liabilities: the employer's taxes), no FEIN and
    no ssn."""
    import xlsxwriter

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for (start, end) in sorted({(r["period_start"], r["period_end"]) for r in rows}):
        s, e = _d(start), _d(end)
        path = folder / paycom_name(company, s, e, e + timedelta(days=5))
        wb = xlsxwriter.Workbook(str(path))
        wb.set_properties({"created": datetime.combine(e, datetime.min.time())})
        ws = wb.add_worksheet("Prior Payroll")
        ws.write_row(0, 0, PAYCOM_HEADER)
        i = 1
        for r in sorted((x for x in rows if (x["period_start"], x["period_end"]) == (start, end)),
                        key=lambda x: x["employee_id"]):
            reg_h, ot_h, reg_p, ot_p = split_hours(cents(r["hours"]), cents(r["gross_wages"]), s, e)
            lines = [("REG", "Regular", "Earnings", reg_h, reg_p)]
            if ot_h or ot_p:
                lines.append(("OT", "Overtime", "Earnings", ot_h, ot_p))
            lines.append(("FIT", "Federal Income Tax", "W/H Taxes", None, round((reg_p + ot_p) * 0.08)))
            lines.append(("401K", "401(k)", "Deductions", None, round((reg_p + ot_p) * 0.03)))
            for (name, _), part in zip(TAX_SHARES, tax_parts(cents(r["employer_taxes"])), strict=True):
                if part:
                    lines.append((PAYCOM_ER[name], name, "Client Side Liabilities", None, part))
            for code, code_text, category, hours, amount in lines:
                ws.write_row(i, 0, [r["employee_id"], f"EMPLOYEE  {r['employee_id']}", code, code_text, category])
                if hours is not None:
                    ws.write_number(i, 5, hours / 100)
                ws.write_number(i, 6, amount / 100)
                i += 1
        wb.close()
        out.append(path)
    return out


# --- Gusto: payroll journal ------------------------------------------------------------------------

GUSTO_TAXES = ["Social Security (Employer)", "Medicare (Employer)", "FUTA (Employer)",
               "NJ Disability Insurance (Employer)", "NJ Unemployment Tax (Employer)"]


def write_gusto_journal(rows: list[dict], path: Path, *, company: str, address: tuple[str, str]) -> Path:
    """One company's payroll as Gusto's payroll journal report (CSV): title, company and address,
    then per payroll an "Employee Earnings" line, a "Payroll period" line (the period in one cell)
    and a "Pay day" line, the payroll's own header (an Overtime column only where someone worked
    overtime), a line per employee named by last and first name (here the employee id, no first
    name: the roster names the employee the same way) and a "Payroll Totals" line. No FEIN, no
    employee id, no ssn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerows([["Payroll Journal Report"], [company], [address[0]], [address[1]], []])
        for (start, end) in sorted({(r["period_start"], r["period_end"]) for r in rows}):
            s, e = _d(start), _d(end)
            payroll = sorted((x for x in rows if (x["period_start"], x["period_end"]) == (start, end)),
                             key=lambda x: x["employee_id"])
            parts = [split_hours(cents(r["hours"]), cents(r["gross_wages"]), s, e) for r in payroll]
            overtime = any(p[1] or p[3] for p in parts)
            w.writerow(["Employee Earnings"])
            w.writerow(["Payroll period", f" {_us(s)} - {_us(e)}"])
            w.writerow(["Pay day", f" {_us(e + timedelta(days=5))}"])
            w.writerow(["Last Name", "First Name", "Regular (Hours)", "Regular (Amount)",
                        *(["Overtime (Hours)", "Overtime (Amount)"] if overtime else []), "Gross Earnings",
                        *GUSTO_TAXES, "Employer Taxes"])
            total = None
            for r, (reg_h, ot_h, reg_p, ot_p) in zip(payroll, parts, strict=True):
                taxes = tax_parts(cents(r["employer_taxes"]))
                values = [reg_h, reg_p, *([ot_h, ot_p] if overtime else []), reg_p + ot_p, *taxes, sum(taxes)]
                w.writerow([r["employee_id"], "", *[dec(x) for x in values]])
                total = values if total is None else [a + b for a, b in zip(total, values, strict=True)]
            w.writerow(["Payroll Totals", "", *[dec(x) for x in total or []]])
            w.writerow([])
    return path
