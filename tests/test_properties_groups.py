"""Invariants of the employer and its tax year (N.J.S.A. 34:11-56a39; spec section 1), on
generated scenarios (hypothesis): a group of one member is the employer alone; an explicit
calendar period is no period; renaming the groups changes nothing (also when a person works at
the other member); the rows of an unrelated employer for the same person change nothing."""

from __future__ import annotations

import copy
import datetime as dt

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.reference.parameters import load_parameters
from transforms.rules.engine import CreditInputs, compute_credits, employee_output
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()
AS_OF = dt.date(2026, 6, 30)
A, B, C = "100000001", "100000002", "100000009"


@st.composite
def person(draw, idx: int):
    years = {}
    for y in (2021, 2022, 2023):
        if draw(st.booleans()) or y == 2023:
            hours = draw(st.decimals(min_value=1, max_value=160, places=2))
            rate = draw(st.one_of(st.just("minimum_wage"), st.decimals(min_value=8, max_value=25, places=2)))
            months = draw(st.lists(st.integers(1, 12), min_size=1, max_size=12, unique=True))
            years[y] = {"hours": str(hours), "rate": rate if rate == "minimum_wage" else str(rate), "months": sorted(months)}
    return {"employee_id": f"E{idx}", "ssn": f"123-45-{6000 + idx:04d}",
            "category": draw(st.sampled_from(["general", "tipped", "seasonal_small"])), "months": years,
            "certified_from": draw(st.sampled_from(["2018-01-01", None]))}


@st.composite
def scenario(draw):
    return {"tax_year": 2023, "employees": [draw(person(i)) for i in range(draw(st.integers(1, 3)))]}


def run(case: dict) -> pl.DataFrame:
    frames = build_frames(case, PARAMS)
    result = compute_credits(CreditInputs.from_frames(frames), 2023, AS_OF, PARAMS)
    return employee_output(result.employees)


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenario())
def test_a_group_of_one_member_is_the_employer_alone(case):
    grouped = {**case, "control_groups": [{"group_id": "G", "employer_id": A, "member_from": "2015-01-01"}]}
    assert run(grouped).equals(run(case))


@SETTINGS
@given(scenario())
def test_an_explicit_calendar_period_is_no_period(case):
    explicit = {**case, "period_start": "2023-01-01", "period_end": "2023-12-31"}
    assert run(explicit).equals(run(case))


@SETTINGS
@given(scenario(), st.sampled_from(["G1", "ZZ", "a group with spaces", "9"]))
def test_renaming_the_groups_changes_nothing(case, name):
    groups = [{"group_id": "G1", "employer_id": e, "member_from": "2015-01-01"} for e in (A, B)]
    one = {**case, "control_groups": groups}
    other = {**case, "control_groups": [{**g, "group_id": name} for g in groups]}
    moved = copy.deepcopy(one)
    moved["employees"][0]["employer_id"] = B  # the first person works at the other member
    assert run(one).equals(run(other))
    assert run(moved).drop("roster_employer_id").equals(
        run({**moved, "control_groups": other["control_groups"]}).drop("roster_employer_id"))


@SETTINGS
@given(scenario(), st.decimals(min_value=1, max_value=100, places=2))
def test_an_unrelated_employers_rows_for_the_same_person_change_nothing(case, hours):
    extra = copy.deepcopy(case)
    first = extra["employees"][0]
    extra["employees"].append({"employee_id": "Z1", "employer_id": C, "ssn": first["ssn"], "rostered": False,
                               "category": first["category"], "certified_from": None,
                               "months": {2022: {"hours": str(hours)}, 2023: {"hours": str(hours)}}})
    assert run(extra).equals(run(case))
