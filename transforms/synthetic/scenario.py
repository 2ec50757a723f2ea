"""Small scenarios described in plain terms (as in the spec's worked examples) turned into the
staged frames the engine reads. Used by the YAML cases under ``tests/cases`` and by ``explain``
demonstrations; not part of the production data path.

A scenario names employees, the hours and hourly rate paid per month in each year, and the
application; monthly periods run from the 1st to the last day of each month. ``rate:
minimum_wage`` means the rate of the employee's category in effect on the 1st of the month.
"""

from __future__ import annotations

import calendar
import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from transforms import schema
from transforms.pii import HashKey, hash_one
from transforms.reference.parameters import Parameters

TEST_KEY = HashKey(b"impcredit-scenario-key-0123456789abcdef", "demo")


def _cents(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _lineage(n: int, name: str) -> dict[str, Any]:
    return {"source_file": [name] * n, "source_sheet": [None] * n, "source_line": list(range(2, n + 2))}


def _month_specs(spec: Any) -> list[dict[str, Any]]:
    """A year's ``months`` entry: one spec, or a list of them (different rates in parts of the year)."""
    return list(spec) if isinstance(spec, list) else [spec]


def _employee_rows(e: dict[str, Any], i: int, case: dict[str, Any], params: Parameters, employer_id: str,
                   tax_rate: Decimal, app_id: str) -> tuple[list[dict], list[dict], list[dict]]:
    """(payroll, roster, certification) rows of the scenario's i-th employee: monthly periods
    paid at a rate (the minimum wage by default) or explicit periods; certified from a date, or
    the certifications given. ``employer_id`` of the employee: the member of the group paying
    them (the roster names it when it is not the applicant); ``roster_ssn``: the roster carries
    the ssn; ``payroll_ssn: false``: the payroll rows carry none; ``declared``: the roster line's
    declared totals (``hours_current: 1080.00`` is ``declared_hours_current``)."""
    payroll_rows: list[dict[str, Any]] = []
    roster_rows: list[dict[str, Any]] = []
    cert_rows: list[dict[str, Any]] = []
    emp_id = str(e.get("employee_id", "E1" if i == 0 else f"E{i + 1}"))
    ssn = str(e.get("ssn", "111-22-3333" if i == 0 else f"111-22-{3333 + i:04d}"))
    ssn_hash = hash_one(ssn, TEST_KEY)
    row_ssn = ssn_hash if e.get("payroll_ssn", True) else None
    cat = e.get("category", case.get("category", "general"))
    payer = str(e.get("employer_id", employer_id))
    if e.get("rostered", True):
        roster_rows.append({"application_id": app_id, "employee_id": emp_id, "wage_category": cat,
                            "employer_id": payer if payer != employer_id else None,
                            "ssn_hash": ssn_hash if e.get("roster_ssn") else None,
                            **{f"declared_{k}": float(v) for k, v in (e.get("declared") or {}).items()}})
    for year, specs in (e.get("months") or {}).items():
        for spec in _month_specs(specs):
            for m in spec.get("months", list(range(1, 13))):
                start = dt.date(int(year), m, 1)
                end = dt.date(int(year), m, calendar.monthrange(int(year), m)[1])
                hours = Decimal(str(spec["hours"]))
                rate = spec.get("rate", "minimum_wage")
                if rate == "minimum_wage":
                    rate = params.value(f"minimum_wage.{cat}", start)
                wages = _cents(hours * Decimal(str(rate)))
                taxes = _cents(wages * Decimal(str(spec.get("tax_rate", tax_rate))))
                payroll_rows.append({
                    "employer_id": str(spec.get("employer_id", payer)), "employee_id": emp_id, "ssn_hash": row_ssn,
                    "period_start": start, "period_end": end, "hours": float(hours), "gross_wages": float(wages),
                    "employer_taxes": float(taxes),
                })
    for per in e.get("periods") or []:
        payroll_rows.append(
            {
                "employer_id": str(per.get("employer_id", payer)),
                "employee_id": emp_id,
                "ssn_hash": row_ssn,
                "period_start": dt.date.fromisoformat(str(per["start"])),
                "period_end": dt.date.fromisoformat(str(per["end"])),
                "hours": float(per["hours"]),
                "gross_wages": float(per["wages"]),
                "employer_taxes": float(per.get("taxes", 0)),
            }
        )
    certs = e.get("certifications")
    if certs is None:
        frm = e.get("certified_from", case.get("certified_from", "2018-01-01"))
        certs = [] if frm is None else [{"status": "CERTIFIED", "valid_from": frm, "valid_to": None}]
    for j, c in enumerate(certs):
        cert_rows.append(
            {
                "ssn_hash": ssn_hash,
                "certification_id": f"C-{emp_id}-{j}",
                "status": c.get("status", "CERTIFIED"),
                "valid_from": dt.date.fromisoformat(str(c["valid_from"])),
                "valid_to": None if c.get("valid_to") is None else dt.date.fromisoformat(str(c["valid_to"])),
            }
        )
    return payroll_rows, roster_rows, cert_rows


def _day(value: Any) -> dt.date | None:
    return None if value is None else dt.date.fromisoformat(str(value))


def _application_rows(case: dict[str, Any], tax_year: int, app_id: str, employer_id: str,
                      roster_rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The scenario's applications (one by default) and the roster rows the later ones repeat
    from the first (``roster_like_first``, on by default)."""
    extra: list[dict[str, Any]] = []
    apps = case.get("applications") or [{}]
    app_rows = []
    for k, a in enumerate(apps):
        received = str(a.get("received_at", case.get("received_at", f"{tax_year + 1}-02-01T09:00:00")))
        app_rows.append(
            {
                "application_id": str(a.get("application_id", app_id if k == 0 else f"A{k + 1}")),
                "employer_id": str(a.get("employer_id", employer_id)),
                "employer_name": a.get("employer_name", "Example Employer LLC"),
                "county": a.get("county", "Mercer"),
                "tax_type": a.get("tax_type", "CBT"),
                "tax_year": int(a.get("tax_year", tax_year)),
                "received_at": received,
                "period_start": _day(a.get("period_start", case.get("period_start"))),
                "period_end": _day(a.get("period_end", case.get("period_end"))),
            }
        )
        if k > 0 and a.get("roster_like_first", True):
            extra += [dict(r, application_id=app_rows[-1]["application_id"]) for r in roster_rows + extra
                      if r["application_id"] == app_id]
    return app_rows, extra


def build_frames(case: dict[str, Any], params: Parameters) -> dict[str, pl.DataFrame]:
    """Staged frames for a scenario (see tests/cases/README.md for the keys)."""
    d = case.get("defaults", {})
    employer_id = str(case.get("employer_id", d.get("employer_id", "100000001")))
    tax_rate = Decimal(str(case.get("tax_rate", d.get("tax_rate", "0.1095"))))
    employees = case.get("employees") or [
        {k: case[k] for k in ("employee_id", "ssn", "category", "months", "periods", "certified_from", "certifications",
                              "declared") if k in case}
    ]
    payroll_rows: list[dict[str, Any]] = []
    roster_rows: list[dict[str, Any]] = []
    cert_rows: list[dict[str, Any]] = []
    app_id = str(case.get("application_id", "A1"))
    for i, e in enumerate(employees):
        pay, ros, cert = _employee_rows(e, i, case, params, employer_id, tax_rate, app_id)
        payroll_rows += pay
        roster_rows += ros
        cert_rows += cert
    tax_year = int(case["tax_year"])
    app_rows, more_roster = _application_rows(case, tax_year, app_id, employer_id, roster_rows)
    roster_rows += more_roster
    rates = case.get("employer_rates")
    employers = sorted({employer_id, *(r["employer_id"] for r in payroll_rows),
                        *(str(g["employer_id"]) for g in case.get("control_groups") or [])})
    if rates is None:
        ui = float(case.get("ui_rate", d.get("ui_rate", 0.0280)))
        di = float(case.get("di_rate", d.get("di_rate", 0.0050)))
        rates = [{"employer_id": emp, "rate_year_start": f"{y}-07-01", "ui_rate": ui, "di_rate": di}
                 for emp in employers for y in range(2013, 2027)]

    def frame(name: str, rows: list[dict[str, Any]], cols: pl.Schema) -> pl.DataFrame:
        base = pl.DataFrame(rows, schema={c: t for c, t in cols.items() if c not in schema.LINEAGE and c != "received_date"} | (
            {"received_at": pl.String} if name == "applications" else {}
        ), strict=False) if rows else pl.DataFrame(schema=cols)
        if rows:
            base = base.with_columns(**{k: pl.Series(v, dtype=schema.LINEAGE[k]) for k, v in _lineage(len(rows), f"{name}.csv").items()})
        return base

    for r in app_rows:  # naive = New Jersey local time; an offset is converted
        ts = dt.datetime.fromisoformat(r["received_at"].replace("Z", "+00:00"))
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=ZoneInfo(schema.NJ_TZ))
        r["received_at"] = ts.astimezone(dt.UTC)
        r["received_date"] = ts.astimezone(ZoneInfo(schema.NJ_TZ)).date()
    apps_df = (
        pl.DataFrame(app_rows, schema={c: t for c, t in schema.APPLICATIONS.items() if c not in schema.LINEAGE})
        .with_columns(**{k: pl.Series(v, dtype=schema.LINEAGE[k]) for k, v in _lineage(len(app_rows), "applications.csv").items()})
    )
    rate_rows = [
        {"employer_id": str(r.get("employer_id", employer_id)), "rate_year_start": dt.date.fromisoformat(str(r["rate_year_start"])),
         "ui_rate": float(r["ui_rate"]), "di_rate": float(r["di_rate"])}
        for r in rates
    ]
    frames = {
        "payroll": frame("payroll", payroll_rows, schema.PAYROLL),
        "applications": apps_df,
        "roster": frame("roster", roster_rows, schema.ROSTER),
        "certifications": frame("certifications", cert_rows, schema.CERTIFICATIONS),
        "employer_rates": frame("employer_rates", rate_rows, schema.EMPLOYER_RATES),
        "control_groups": frame("control_groups", [
            {"group_id": str(g["group_id"]), "employer_id": str(g["employer_id"]),
             "member_from": _day(g["member_from"]), "member_to": _day(g.get("member_to"))}
            for g in case.get("control_groups") or []], schema.CONTROL_GROUPS),
    }
    return {k: v.select([pl.col(c).cast(t) for c, t in schema.STAGED[k].items()]) for k, v in frames.items()}
