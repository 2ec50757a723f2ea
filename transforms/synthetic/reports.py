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

ADP_HEADER = ["Company Code", "Company Name", "File Number", "Name", "Tax ID", "Period Beginning Date",
              "Period Ending Date", "Pay Date", "Check/Voucher Number", "Regular Hours", "Overtime Hours",
              "Regular Earnings", "Overtime Earnings", "Gross Pay", "Employer Social Security Tax",
              "Employer Medicare Tax", "Employer FUTA Tax", "Employer SDI Tax", "Employer SUI Tax"]


def write_adp_history(rows: list[dict], path: Path, *, company: str, code: str) -> Path:
    """One company's payroll history as ADP Workforce Now exports it to Excel: the report's title,
    the company and the pay dates above the header, a line per check (the ssn masked), employer
    taxes per column, a "Total" line under each employee, a "Company Total" line and a page footer."""
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: (r["employee_id"], r["period_start"]))
    first, last = min(_d(r["period_start"]) for r in rows), max(_d(r["period_end"]) for r in rows)
    wb = xlsxwriter.Workbook(str(path))
    wb.set_properties({"created": datetime.combine(last, datetime.min.time())})
    ws = wb.add_worksheet("Payroll History")
    datefmt = wb.add_format({"num_format": "mm/dd/yyyy"})
    ws.write(0, 0, "Payroll History")
    ws.write(1, 0, f"Company: {company} ({code})")
    ws.write(2, 0, f"Pay Dates: {_us(first)} - {_us(last + timedelta(days=5))}")
    ws.write_row(4, 0, ADP_HEADER)
    r_i = 5
    company_sum = [0] * 10
    for emp in sorted({r["employee_id"] for r in rows}):
        emp_sum = [0] * 10
        for n, r in enumerate(x for x in rows if x["employee_id"] == emp):
            s, e = _d(r["period_start"]), _d(r["period_end"])
            reg_h, ot_h, reg_p, ot_p = split_hours(cents(r["hours"]), cents(r["gross_wages"]), s, e)
            taxes = tax_parts(cents(r["employer_taxes"]))
            values = [reg_h, ot_h, reg_p, ot_p, reg_p + ot_p, *taxes]
            ws.write_row(r_i, 0, [code, company, emp, f"Employee {emp}", _masked(r["ssn"])])
            for j, d in enumerate((s, e, e + timedelta(days=5))):
                ws.write_datetime(r_i, 5 + j, datetime.combine(d, datetime.min.time()), datefmt)
            ws.write(r_i, 8, f"{emp}-{n + 1:04d}")
            for j, v in enumerate(values):
                ws.write_number(r_i, 9 + j, v / 100)
            emp_sum = [a + b for a, b in zip(emp_sum, values, strict=True)]
            r_i += 1
        ws.write(r_i, 0, "Total")
        for j, v in enumerate(emp_sum):
            ws.write_number(r_i, 9 + j, v / 100)
        company_sum = [a + b for a, b in zip(company_sum, emp_sum, strict=True)]
        r_i += 1
    ws.write(r_i, 0, "Company Total")
    for j, v in enumerate(company_sum):
        ws.write_number(r_i, 9 + j, v / 100)
    ws.write(r_i + 2, 0, "Page 1 of 1")
    wb.close()
    return path


# --- Paycom: prior payroll workbooks --------------------------------------------------------------

PAYCOM_HEADER = ["Employee Code", "Employee Name", "Type Code", "Type Description", "Code", "Code Description",
                 "Hours", "Amount"]


def paycom_name(company: str, start: date, end: date, pay: date) -> str:
    return f"{company} Prior Payroll Pay Period {start:%m%d%Y} {end:%m%d%Y} Pay Date {pay:%m%d%Y}.xlsx"


def write_paycom(rows: list[dict], folder: Path, *, company: str) -> list[Path]:
    """One company's payroll as Paycom's prior payroll workbooks: one workbook per payroll (period),
    named with its period and pay date, a line per code of each employee (earnings with hours,
    employee taxes, deductions, employer taxes), no FEIN and no ssn."""
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
            lines = [("E", "Earnings", "REG", "Regular", reg_h, reg_p)]
            if ot_h or ot_p:
                lines.append(("E", "Earnings", "OT", "Overtime", ot_h, ot_p))
            lines.append(("T", "Taxes", "FITW", "Federal Income Tax", None, round((reg_p + ot_p) * 0.08)))
            lines.append(("D", "Deductions", "401K", "401(k)", None, round((reg_p + ot_p) * 0.03)))
            for (name, _), part in zip(TAX_SHARES, tax_parts(cents(r["employer_taxes"])), strict=True):
                if part:
                    lines.append(("ER", "Employer Taxes", name.upper().replace(" ", "-") + "-ER", f"{name} (Employer)",
                                  None, part))
            for kind, kind_text, code, code_text, hours, amount in lines:
                ws.write_row(i, 0, [r["employee_id"], f"Employee {r['employee_id']}", kind, kind_text, code, code_text])
                if hours is not None:
                    ws.write_number(i, 6, hours / 100)
                ws.write_number(i, 7, amount / 100)
                i += 1
        wb.close()
        out.append(path)
    return out


# --- Gusto: payroll journal ------------------------------------------------------------------------

GUSTO_HEADER = ["Employee", "Pay Type", "Hours", "Gross Earnings", "Employer Social Security", "Employer Medicare",
                "Employer FUTA", "Employer NJ SDI", "Employer NJ SUI"]


def write_gusto_journal(rows: list[dict], path: Path, *, company: str, address: tuple[str, str]) -> Path:
    """One company's payroll as Gusto's payroll journal (CSV): title, company and address, then
    per payroll a "Payroll period" and a "Pay day" line, the header, a line per employee and pay
    type (regular, overtime), a "Totals" line under each employee and a "Payroll Totals" line.
    No FEIN, no employee id (the name as printed), no ssn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerows([["Payroll Journal"], [company], [address[0]], [address[1]], []])
        for (start, end) in sorted({(r["period_start"], r["period_end"]) for r in rows}):
            s, e = _d(start), _d(end)
            w.writerow(["Payroll period", f" {_us(s)} - {_us(e)}"])
            w.writerow(["Pay day", _us(e + timedelta(days=5))])
            w.writerow(GUSTO_HEADER)
            payroll = [0] * 7
            for r in sorted((x for x in rows if (x["period_start"], x["period_end"]) == (start, end)),
                            key=lambda x: x["employee_id"]):
                reg_h, ot_h, reg_p, ot_p = split_hours(cents(r["hours"]), cents(r["gross_wages"]), s, e)
                taxes = tax_parts(cents(r["employer_taxes"]))
                lines = [("Regular", reg_h, reg_p, taxes)]
                if ot_h or ot_p:  # the employer taxes are on the regular line
                    lines.append(("Overtime", ot_h, ot_p, [0] * 5))
                emp = [0] * 7
                for kind, h, p, t in lines:
                    w.writerow([r["employee_id"], kind, dec(h), dec(p), *[dec(x) for x in t]])
                    emp = [a + b for a, b in zip(emp, [h, p, *t], strict=True)]
                w.writerow(["Totals", "", *[dec(x) for x in emp]])
                payroll = [a + b for a, b in zip(payroll, emp, strict=True)]
            w.writerow(["Payroll Totals", "", *[dec(x) for x in payroll]])
            w.writerow([])
    return path
