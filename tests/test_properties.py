"""Invariants of the credit and of the allocation, checked on generated inputs (hypothesis)."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.award.allocation import allocate
from transforms.reference.parameters import load_parameters
from transforms.rules.engine import CreditInputs, compute_credits
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()
CATEGORIES = ["general", "tipped", "seasonal_small", "agricultural"]

money = st.integers(min_value=1, max_value=5_000_000_00)  # cents


@st.composite
def employee(draw, idx: int):
    years = {}
    for y in (2021, 2022, 2023):
        if draw(st.booleans()) or y == 2023:
            hours = draw(st.decimals(min_value=0, max_value=200, places=2))
            rate = draw(st.one_of(st.just("minimum_wage"), st.decimals(min_value=2, max_value=30, places=2)))
            months = draw(st.lists(st.integers(1, 12), min_size=1, max_size=12, unique=True))
            years[y] = {"hours": str(hours), "rate": rate if rate == "minimum_wage" else str(rate), "months": sorted(months)}
    certified = draw(st.sampled_from(["2018-01-01", "2024-06-01", None]))
    return {
        "employee_id": f"E{idx}",
        "ssn": f"123-45-{6000 + idx:04d}",
        "category": draw(st.sampled_from(CATEGORIES)),
        "months": years,
        "certified_from": certified,
    }


@st.composite
def scenario(draw):
    n = draw(st.integers(1, 4))
    return {
        "tax_year": 2023,
        "received_at": draw(st.sampled_from(["2024-02-01T09:00:00", "2025-01-15T09:00:00"])),
        "employees": [draw(employee(i)) for i in range(n)],
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_credit_invariants(case):
    frames = build_frames(case, PARAMS)
    emp = compute_credits(CreditInputs.from_frames(frames), 2023, dt.date(2026, 6, 30), PARAMS).employees
    assert emp.height == len(case["employees"])
    # credit >= 0, and exactly 0 when ineligible
    assert (emp["credit_cents"] >= 0).all()
    assert (emp.filter(pl.col("status") == "INELIGIBLE")["credit_cents"] == 0).all()
    # an employee-year is ineligible exactly when it has a reason
    assert ((emp["status"] == "INELIGIBLE") == (emp["reasons"] != "")).all()
    # part 2 = 0 when hours did not grow
    assert (emp.filter(pl.col("H_t") <= pl.col("H_p"))["part2_cents"] == 0).all()
    # the credit is the rounded sum of the unrounded parts: within a cent of the rounded parts
    assert ((emp["credit_cents"] - emp["part1_cents"] - emp["part2_cents"]).abs() <= 1).all()


def _candidates(requests: list[int], order: list[int]) -> pl.DataFrame:
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    return pl.DataFrame(
        {
            "application_id": [f"APP{i:04d}" for i in range(len(requests))],
            "received_at": [base + dt.timedelta(minutes=o) for o in order],
            "requested_cents": requests,
            "priority_group": [1] * len(requests),
        },
        schema_overrides={"received_at": pl.Datetime("us", "UTC"), "priority_group": pl.Int8},
    )


@st.composite
def allocation_case(draw):
    requests = draw(st.lists(money, min_size=1, max_size=40))
    order = draw(st.permutations(list(range(len(requests)))))
    cap = draw(st.integers(min_value=0, max_value=sum(requests) * 2))
    return requests, order, cap


@settings(max_examples=150, deadline=None)
@given(allocation_case(), st.sampled_from(["fcfs", "pro-rata"]))
def test_allocation_invariants(case, policy):
    requests, order, cap = case
    out = allocate(_candidates(requests, order), cap, policy=policy)
    assert out.height == len(requests)
    assert (out["awarded_cents"] <= out["requested_cents"]).all()
    assert (out["awarded_cents"] >= 0).all()
    assert out["awarded_cents"].sum() <= cap
    if sum(requests) <= cap:
        assert (out["awarded_cents"] == out["requested_cents"]).all()
        assert (out["status"] == "APPROVED").all()
    elif policy == "pro-rata":
        # oversubscribed: pro-rata awards add up to the cap, to the cent
        assert out["awarded_cents"].sum() == cap
    else:
        assert out["awarded_cents"].sum() == cap


@settings(max_examples=150, deadline=None)
@given(allocation_case())
def test_fcfs_respects_arrival_order(case):
    requests, order, cap = case
    out = allocate(_candidates(requests, order), cap, policy="fcfs")
    # rows come back in arrival order; once one application is not served in full, no later one
    # gets anything
    shortfall_seen = False
    for r in out.iter_rows(named=True):
        if shortfall_seen:
            assert r["awarded_cents"] == 0 and r["status"] == "WAITLISTED"
        if r["awarded_cents"] < r["requested_cents"]:
            shortfall_seen = True
    arrival = _candidates(requests, order).sort("received_at")["application_id"].to_list()
    assert out["application_id"].to_list() == arrival


@settings(max_examples=100, deadline=None)
@given(allocation_case())
def test_pro_rata_is_proportional(case):
    requests, order, cap = case
    out = allocate(_candidates(requests, order), cap, policy="pro-rata")
    total = sum(requests)
    if total > cap:
        for r in out.iter_rows(named=True):
            exact = r["requested_cents"] * cap / total
            assert exact - 1 < r["awarded_cents"] < exact + 1


def test_no_partial_awards_setting():
    out = allocate(_candidates([500, 300, 100], [0, 1, 2]), 600, policy="fcfs", partial_awards=False)
    assert out["awarded_cents"].to_list() == [500, 0, 0]
    assert out["status"].to_list() == ["APPROVED", "WAITLISTED", "WAITLISTED"]


def test_fcfs_partial_marginal_application():
    out = allocate(_candidates([500, 300, 100], [0, 1, 2]), 600, policy="fcfs")
    assert out["awarded_cents"].to_list() == [500, 100, 0]
    assert out["status"].to_list() == ["APPROVED", "PARTIAL", "WAITLISTED"]
    assert out["reasons"].to_list() == ["", "CAP_EXHAUSTED", "CAP_EXHAUSTED"]


def test_pro_rata_largest_remainder_ties_by_arrival():
    # 3 equal requests of 100 cents for a cap of 200: 66 each + 2 leftover cents to the first two
    out = allocate(_candidates([100, 100, 100], [2, 0, 1]), 200, policy="pro-rata")
    got = dict(zip(out["application_id"], out["awarded_cents"], strict=True))
    assert got == {"APP0001": 67, "APP0002": 67, "APP0000": 66}
