"""Runs every YAML case under tests/cases: scenario -> credits -> decisions -> expected values."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
import yaml

from transforms.award.decide import awards_output, decide
from transforms.reference.parameters import load_parameters
from transforms.rules.engine import CreditInputs, compute_credits, employee_output
from transforms.settings import Settings
from transforms.synthetic.scenario import build_frames

CASES_DIR = Path(__file__).parent / "cases"


def _load_cases():
    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.stem}:{case['id']}")


def run_case(case: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
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
    return employee_output(result.employees), awards_output(decisions.awards)


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
        row = employees.filter((pl.col("employee_id") == emp_id) & (pl.col("application_id") == app_id)).to_dicts()
        assert len(row) == 1, f"no employee-year for {emp_id}"
        for key, want in expect["employee"].items():
            got = row[0][key]
            if isinstance(want, float | int) and not isinstance(want, bool):
                assert got == pytest.approx(want, abs=0.001), f"{key}: {got} != {want}"
            else:
                assert (got or "") == (want or ""), f"{key}: {got!r} != {want!r}"
    if "application" in expect:
        row = awards.filter(pl.col("application_id") == app_id).to_dicts()
        assert len(row) == 1
        for key, want in expect["application"].items():
            got = row[0][key]
            if isinstance(want, float | int) and not isinstance(want, bool):
                assert got == pytest.approx(want, abs=0.001), f"{key}: {got} != {want}"
            else:
                assert (got or "") == (want or ""), f"{key}: {got!r} != {want!r}"
