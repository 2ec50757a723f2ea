"""Runs every YAML case under tests/cases: scenario -> credits -> decisions -> expected values."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
import yaml

from transforms.award.decide import awards_output, decide
from transforms.reference.parameters import load_parameters
from transforms.rules.engine import EMPLOYEE_COLUMNS, CreditInputs, compute_credits, employee_output
from transforms.settings import Settings
from transforms.synthetic.scenario import build_frames

CASES_DIR = Path(__file__).parent / "cases"
# the intermediate quantities a case may assert beside the contract columns (spec section 4):
# unrounded, compared to half a cent as the spec prints them rounded (a case asserting a name the
# engine does not know fails)
QUANTITY_KEYS = {"H_t", "H_p", "W_p", "T_p", "RW_t", "RT_t", "ADJ_t", "MWavg_t", "MWavg_p", "part1", "part2"}
APPLICATION_KEYS = {"application_id", "employer_id", "tax_year", "tax_type", "approval_year", "requested", "awarded",
                    "status", "reasons", "period_start", "period_end"}


def _load_cases():
    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for case in doc.get("cases", []):  # (a file of findings' cases has its own runner: test_findings_cases.py)
            yield pytest.param(case, id=f"{path.stem}:{case['id']}")


def run_case(case: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(employee rows: the contract columns and the quantities, awards) of a case."""
    params = load_parameters()
    if case.get("overrides"):
        params = params.with_overrides(case["overrides"])
    settings = Settings().with_assignments({k: str(v) for k, v in (case.get("settings") or {}).items()})
    frames = build_frames(case, params)
    as_of = dt.date.fromisoformat(str(case.get("as_of", "2026-06-30")))
    result = compute_credits(CreditInputs.from_frames(frames), int(case["tax_year"]), as_of, params, settings.rules)
    cap = int(round(float(case.get("cap", params.value("program.annual_cap", as_of))) * 100))
    decisions = decide(
        result.applications,
        approval_year=as_of.year,
        cap_cents=cap,
        approved_before_cents=int(round(float(case.get("approved_before", 0)) * 100)),
        settings=settings.allocation,
    )
    employees = employee_output(result.employees)
    if result.employees.height and "H_t" in result.employees.columns:
        employees = employees.join(
            result.employees.select("application_id", "roster_employer_id", "employee_id", *sorted(QUANTITY_KEYS)),
            on=["application_id", "roster_employer_id", "employee_id"], how="left")
    return employees, awards_output(decisions.awards)


def _compare(got, want, key: str) -> None:
    if isinstance(want, float | int) and not isinstance(want, bool):
        tol = 0.005 if key in QUANTITY_KEYS else 0.001
        assert got == pytest.approx(want, abs=tol), f"{key}: {got} != {want}"
    else:
        assert str(got or "") == str(want or ""), f"{key}: {got!r} != {want!r}"


@pytest.mark.parametrize("case", list(_load_cases()))
def test_case(case):
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(ValueError, match=expect["error"]):
            run_case(case)
        return
    employees, awards = run_case(case)
    if expect.get("absent"):
        assert employees.height == 0 and awards.height == 0
        return
    app_id = expect.get("application_id", "A1")
    if "employee" in expect:
        emp_id = expect.get("employee_id", "E1")
        unknown = set(expect["employee"]) - set(EMPLOYEE_COLUMNS) - QUANTITY_KEYS
        assert not unknown, f"unknown expect key(s) {sorted(unknown)}; known: {sorted(set(EMPLOYEE_COLUMNS) | QUANTITY_KEYS)}"
        sel = (pl.col("employee_id") == emp_id) & (pl.col("application_id") == app_id)
        if "roster_employer_id" in expect:
            sel = sel & (pl.col("roster_employer_id") == str(expect["roster_employer_id"]))
        row = employees.filter(sel).to_dicts()
        assert len(row) == 1, f"no (or several) employee-year(s) for {emp_id}"
        for key, want in expect["employee"].items():
            _compare(row[0][key], want, key)
    if "application" in expect:
        unknown = set(expect["application"]) - APPLICATION_KEYS
        assert not unknown, f"unknown expect key(s) {sorted(unknown)}; known: {sorted(APPLICATION_KEYS)}"
        row = awards.filter(pl.col("application_id") == app_id).to_dicts()
        assert len(row) == 1
        for key, want in expect["application"].items():
            _compare(row[0][key], want, key)
