"""A fiscal-year employer's person paid below the minimum wage on February 4, 2019 (N.J.S.A.
34:11-56a39; spec section 5, ``SUBMINIMUM_ON_EFFECTIVE_DATE``, register I-13), through ingest, in
annual, quarterly and tight-cap runs (issue 27).

A fiscal tax period that begins after the effective date leaves a stretch of days between the
prior calendar year p and T (January-June 2019 for a July-June employer). Its payroll may cover
that stretch with one row of several months: spec section 3 spreads any row evenly over its days,
so the row is read and shows the wage paid on 2019-02-04. Ingest used to reject a row longer than
31 days (``period_too_long``, a rule of its own, not the spec's): the person came out ELIGIBLE
(the row was not read) and the application HELD (the rejected row held it), instead of the person
INELIGIBLE and the application decided. Calendar-year employers' rows of that day lie in T, paid
monthly, and were right."""

from __future__ import annotations

import calendar
import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.runs import quarterly as q
from transforms.settings import AllocationSettings, Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2021, 7, 1)
HEAD = "employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes\n"
SUBMINIMUM = "SUBMINIMUM_ON_EFFECTIVE_DATE"
# E2's credit (960 h in 2018 at $8.60; T at $10.00, $11.00 from 2020): computed by the engine, which
# the YAML cases check; here what matters is that the application is decided on it
E2_CREDIT = {"july-june": "2157.28", "52-53 weeks": "2134.69"}
PERIODS = {"july-june": ("2019-07-01", "2020-06-30"), "52-53 weeks": ("2019-06-30", "2020-06-27")}


def _month(employer: str, employee: str, ssn: str, y: int, m: int, hours: float, rate: float | None = None) -> str:
    start = dt.date(y, m, 1)
    end = dt.date(y, m, calendar.monthrange(y, m)[1])
    wages = round(hours * (rate if rate is not None else PARAMS.value("minimum_wage.general", start)), 2)
    return f"{employer},{employee},{ssn},{start},{end},{hours:g},{wages:.2f},{round(wages * 0.1095, 2):.2f}\n"


def submission(root: Path, period: tuple[str, str]) -> Path:
    """Employer A (100000001, the fiscal ``period``): E1 paid $7.00 an hour in 2018 and over the
    stretch before T (one row, 2019-01-01..2019-06-30, 480 h), then the minimum wage; E2 paid the
    minimum wage throughout (80 h a month, 100 from July 2019). Employer B (100000002, calendar
    2019) with one person at the minimum wage. Monthly rows otherwise."""
    (root / "payroll").mkdir(parents=True)
    rows = [HEAD]
    for m in range(1, 13):
        rows.append(_month("100000001", "E1", "111-22-3301", 2018, m, 80, 7.00))
    rows.append("100000001,E1,111-22-3301,2019-01-01,2019-06-30,480,3360.00,367.92\n")  # 480 h x $7.00
    for y, months in ((2019, range(7, 13)), (2020, range(1, 7))):
        for m in months:
            rows.append(_month("100000001", "E1", "111-22-3301", y, m, 80))
    for y, months in ((2018, range(1, 13)), (2019, range(1, 13)), (2020, range(1, 7))):
        for m in months:
            rows.append(_month("100000001", "E2", "111-22-3302", y, m, 80 if (y, m) < (2019, 7) else 100))
    for y in (2018, 2019):
        for m in range(1, 13):
            rows.append(_month("100000002", "B1", "111-22-3303", y, m, 80 if y == 2018 else 100))
    (root / "payroll" / "payroll.csv").write_text("".join(rows))
    s, e = period
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at,period_start,period_end\n"
        f"A-FISCAL,100000001,Fiscal Foods Inc.,Mercer,CBT,2019,2020-08-03T09:00:00,{s},{e}\n"
        "B-CAL,100000002,Calendar Cleaners LLC,Mercer,CBT,2019,2020-08-04T09:00:00,,\n")
    (root / "roster.csv").write_text("application_id,employee_id,wage_category\nA-FISCAL,E1,general\n"
                                     "A-FISCAL,E2,general\nB-CAL,B1,general\n")
    (root / "certifications.csv").write_text("ssn,certification_id,status,valid_from,valid_to\n" + "".join(
        f"111-22-330{k},C{k},CERTIFIED,2018-01-01,\n" for k in (1, 2, 3)))
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"{e},{y}-07-01,0.0280,0.0050\n" for e in ("100000001", "100000002") for y in range(2016, 2021)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    (root / "estimate_requests.csv").write_text(
        "request_id,employer_id,employer_name,tax_type,tax_year,received_at,period_start,period_end\n"
        f"R-FISCAL,100000001,Fiscal Foods Inc.,CBT,2019,2019-09-02T09:00:00,{s},{e}\n")
    with (root / "roster.csv").open("a") as fh:
        fh.write("R-FISCAL,E1,general\nR-FISCAL,E2,general\n")
    return root


def annual(sub: Path, work: Path, out: Path, cap: float | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    settings = Settings(allocation=AllocationSettings(cap=cap))
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2019, AS_OF, PARAMS, settings)
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2019, staged.inputs_sha256), tax_year=2019, as_of=AS_OF,
        params=PARAMS, settings=settings, workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema=False)
    return awards, credits


def row(frame: pl.DataFrame, **where) -> dict:
    got = frame.filter(pl.all_horizontal(pl.col(k) == v for k, v in where.items())).to_dicts()
    assert len(got) == 1, (where, frame)
    return got[0]


@pytest.fixture(scope="module", params=list(PERIODS))
def case(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("fiscal")
    return {"name": request.param, "root": root, "sub": submission(root / "sub", PERIODS[request.param])}


def test_the_row_over_the_stretch_before_t_is_read_not_rejected(case):
    staged = steps.stage_inputs(case["sub"], case["root"] / "w-read", KEY)
    assert staged.rejects.height == 0, staged.rejects
    assert staged.standing.height == 0


def test_annual_the_person_is_ineligible_and_the_application_decided(case):
    awards, credits = annual(case["sub"], case["root"] / "w-annual", case["root"] / "o-annual")
    e1 = row(credits, application_id="A-FISCAL", employee_id="E1")
    assert (e1["status"], e1["credit"]) == ("INELIGIBLE", "0.00")
    # July-June: that reason alone; 52-53 weeks from June 30: T's year is 8 hours short of p's too
    assert e1["reasons"] == {"july-june": SUBMINIMUM, "52-53 weeks": f"HOURS_DECREASED;{SUBMINIMUM}"}[case["name"]]
    e2 = row(credits, application_id="A-FISCAL", employee_id="E2")
    assert (e2["status"], e2["credit"]) == ("ELIGIBLE", E2_CREDIT[case["name"]])
    a = row(awards, application_id="A-FISCAL")
    assert (a["status"], a["reasons"]) == ("APPROVED", "")  # decided, not HELD
    assert a["requested"] == a["awarded"] == e2["credit"]  # E2's credit alone
    assert not (case["root"] / "o-annual" / "held.csv").exists()


def test_tight_cap_the_fiscal_application_takes_its_place_in_the_queue(case):
    """A cap of $100.00: the fiscal application (received first) is decided and takes the cap,
    the calendar one waits. Held, it would have taken none and left the cap to the other."""
    awards, credits = annual(case["sub"], case["root"] / "w-cap", case["root"] / "o-cap", cap=100.0)
    assert SUBMINIMUM in row(credits, application_id="A-FISCAL", employee_id="E1")["reasons"].split(";")
    a, b = row(awards, application_id="A-FISCAL"), row(awards, application_id="B-CAL")
    assert (a["status"], a["awarded"], a["reasons"]) == ("PARTIAL", "100.00", "CAP_EXHAUSTED")
    assert (b["status"], b["awarded"], b["reasons"]) == ("WAITLISTED", "0.00", "CAP_EXHAUSTED")


@pytest.mark.parametrize("quarter", [2, 4])
def test_quarterly_the_person_is_estimated_ineligible(case, quarter):
    staged = steps.stage_inputs(case["sub"], case["root"] / f"w-q{quarter}", KEY)
    as_of = dt.date(2020, 1, 15) if quarter == 2 else dt.date(2020, 7, 15)
    result = q.estimate_credits(staged.frames, 2019, quarter, as_of, PARAMS, Settings())
    est = q.estimates_output(result, quarter)
    e1 = row(est, application_id="R-FISCAL", employee_id="E1")
    assert (e1["status"], e1["projected_credit"]) == ("INELIGIBLE", 0.0)
    assert SUBMINIMUM in e1["reasons"].split(";")
    assert row(est, application_id="R-FISCAL", employee_id="E2")["status"] == "ELIGIBLE"
