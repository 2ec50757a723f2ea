"""Reconciliation (spec section 1, "What the employer declares, and what was read") against a
plain reading of the paragraph, on generated claims, groups and payroll rows (hypothesis).

``transforms.rules.declared.reconcile`` sums every figure of both windows in one pass over the
claimed persons' rows; the reference below walks each declared figure and each row one by one."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.rules.declared import EPS, FIGURES, SHARE, reconcile
from transforms.schema import DECLARED

T = (dt.date(2023, 1, 1), dt.date(2023, 12, 31))
P = (dt.date(2022, 1, 1), dt.date(2022, 12, 31))
EMPLOYERS = ["100000001", "100000002", "100000003"]
SSNS = ["h1", "h2", "h3"]

day = st.dates(dt.date(2021, 12, 1), dt.date(2024, 1, 31))
row = st.fixed_dictionaries({
    "employer_id": st.sampled_from(EMPLOYERS), "ssn_hash": st.sampled_from(SSNS), "period_end": day,
    "pay_date": st.one_of(st.none(), day),
    "hours": st.floats(-40, 90, allow_nan=False).map(lambda v: round(v, 2)),
    "gross_wages": st.floats(-500, 3000, allow_nan=False).map(lambda v: round(v, 2)),
    "employer_taxes": st.floats(-50, 300, allow_nan=False).map(lambda v: round(v, 2)),
})
declared = st.one_of(st.none(), st.floats(0, 5000, allow_nan=False).map(lambda v: round(v, 2)))
claim = st.fixed_dictionaries({"employee_id": st.sampled_from(["E1", "E2", "E3"]), "ssn": st.sampled_from(SSNS),
                               **{c: declared for c in DECLARED}})


def reference(claims: list[dict], members: dict[str, list[str]], rows: list[dict]) -> list[tuple]:
    out = []
    for c in claims:
        for figure, (column, window) in FIGURES.items():
            if c[figure] is None:
                continue
            lo, hi = P if window == "prior" else T
            mine = [r for r in rows if r["ssn_hash"] == c["ssn"] and r["employer_id"] in members[c["application_id"]]]
            read = sum(r[column] for r in mine if lo <= (r["pay_date"] or r["period_end"]) <= hi)
            largest = max([abs(r[column]) for r in mine
                           if lo <= r["period_end"] <= hi or (r["pay_date"] is not None and lo <= r["pay_date"] <= hi)],
                          default=0.0)
            tolerance = max(abs(c[figure]) * SHARE, largest)
            out.append((c["application_id"], c["employee_id"], figure, round(read, 6), largest, tolerance,
                        abs(c[figure] - read) > tolerance + EPS))
    return sorted(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(claims=st.lists(claim, min_size=1, max_size=4, unique_by=lambda c: c["employee_id"]),
       rows=st.lists(row, max_size=40), grouped=st.booleans())
def test_reconcile_matches_a_plain_reading_of_the_paragraph(claims, rows, grouped):
    # one application of the first employer; its group holds the second when ``grouped``
    members = {"APP-1": EMPLOYERS[:2] if grouped else EMPLOYERS[:1]}
    for c in claims:
        c["application_id"] = "APP-1"
    frame = pl.DataFrame([{"__claim": i, "application_id": "APP-1", "employer_id": EMPLOYERS[0],
                           "roster_employer_id": EMPLOYERS[0], "employee_id": c["employee_id"], "ssn": c["ssn"],
                           "T_start": T[0], "T_end": T[1], "p_start": P[0], "p_end": P[1]} for i, c in enumerate(claims)])
    roster = pl.DataFrame([{"application_id": "APP-1", "employee_id": c["employee_id"], "employer_id": None,
                            **{d: c[d] for d in DECLARED}, "source_file": "roster.csv", "source_line": i + 2}
                           for i, c in enumerate(claims)],
                          schema={"application_id": pl.String, "employee_id": pl.String, "employer_id": pl.String,
                                  **{d: pl.Float64 for d in DECLARED}, "source_file": pl.String, "source_line": pl.Int64})
    payroll = pl.DataFrame(rows, schema={"employer_id": pl.String, "ssn_hash": pl.String, "period_end": pl.Date,
                                         "pay_date": pl.Date, "hours": pl.Float64, "gross_wages": pl.Float64,
                                         "employer_taxes": pl.Float64})
    mem = pl.DataFrame({"application_id": "APP-1", "member_id": members["APP-1"]})
    got = reconcile(frame, mem, payroll.lazy(), roster.lazy())
    assert sorted(
        (r["application_id"], r["employee_id"], r["figure"], round(r["read"], 6), r["largest_row"], r["tolerance"],
         r["differs"]) for r in got.iter_rows(named=True)) == reference(claims, members, rows)
    assert got.get_column("period_start").to_list() == [P[0] if "prior" in f else T[0] for f in got.get_column("figure")]
