"""Quarterly estimates during the tax year (N.J.S.A. 34:11-56a40(e); spec section 9): estimate
requests are requests, an application replaces an earlier request of the same employer, and each
request's quarters are quarters of its own tax period."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from transforms import schema
from transforms.reference.parameters import load_parameters
from transforms.rules.engine import CreditInputs, compute_credits
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()
NJ = ZoneInfo(schema.NJ_TZ)


def requests(*rows: dict) -> pl.DataFrame:
    out = []
    for r in rows:
        at = dt.datetime.fromisoformat(r["received_at"]).replace(tzinfo=NJ)
        out.append({"request_id": r["request_id"], "employer_id": "100000001", "employer_name": "Example LLC",
                    "tax_type": "CBT", "tax_year": r.get("tax_year", 2023), "received_at": at.astimezone(dt.UTC),
                    "received_date": at.date(), "period_start": r.get("period_start"), "period_end": r.get("period_end"),
                    "source_file": "estimate_requests.csv", "source_sheet": None, "source_line": 2})
    return pl.DataFrame(out, schema=schema.ESTIMATE_REQUESTS)


def estimate(case: dict, reqs: pl.DataFrame, quarter: int, as_of: str):
    frames = build_frames(case, PARAMS)
    roster = frames["roster"]
    frames["roster"] = pl.concat([roster, *[roster.with_columns(pl.lit(r).alias("application_id"))
                                            for r in reqs["request_id"].to_list()]])
    frames["estimate_requests"] = reqs
    return compute_credits(CreditInputs.from_frames(frames), 2023, dt.date.fromisoformat(as_of), PARAMS,
                           quarter=quarter)


CASE = {"tax_year": 2023, "received_at": "2024-02-01T09:00:00",
        "months": {2022: {"hours": 80}, 2023: {"hours": 100}, 2024: {"hours": 100}}}


def test_a_request_received_in_the_year_is_estimated_from_its_first_quarter():
    res = estimate(CASE, requests({"request_id": "R1", "received_at": "2023-04-10T10:00:00"}), 1, "2023-04-15")
    emp = res.employees
    assert emp["application_id"].to_list() == ["R1"]  # the application (received 2024) is not seen yet
    row = emp.row(0, named=True)
    assert row["H_t_observed"] == pytest.approx(300.0)  # January-March
    assert row["H_t"] == pytest.approx(300.0 * 365 / 90)  # projected to the year
    assert row["status"] == "ELIGIBLE" and row["credit_cents"] > 0


def test_an_application_replaces_an_earlier_request_of_the_same_employer():
    reqs = requests({"request_id": "R1", "received_at": "2023-04-10T10:00:00"})
    res = estimate(CASE, reqs, 4, "2024-02-15")
    assert res.applications["application_id"].to_list() == ["A1"]
    assert "DUPLICATE_APPLICATION" not in (res.employees["reasons"].to_list()[0] or "")


def test_a_fiscal_request_is_estimated_in_its_own_quarters():
    reqs = requests({"request_id": "RF", "received_at": "2023-10-05T10:00:00", "period_start": dt.date(2023, 7, 1),
                     "period_end": dt.date(2024, 6, 30)})
    res = estimate({**CASE, "received_at": "2025-02-01T09:00:00"}, reqs, 1, "2023-10-15")
    row = res.employees.filter(pl.col("application_id") == "RF").row(0, named=True)
    # Q1 of July-June ends September 30: July-September observed, projected over 366 days
    assert row["H_t_observed"] == pytest.approx(300.0)
    assert row["H_t"] == pytest.approx(300.0 * 366 / 92)
    assert (row["T_start"], row["T_end"]) == (dt.date(2023, 7, 1), dt.date(2024, 6, 30))
