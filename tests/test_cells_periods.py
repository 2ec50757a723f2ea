"""``Cells.periods``: a pay-date rule's periods worked out once per distinct (pay date,
frequency, lag) are the rule's per-row expression's, row by row; with neither cell in the
file, one null period per row."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import hypothesis.strategies as st
import polars as pl
from hypothesis import given, settings

from transforms.ingest.read.cast.cells import Cells
from transforms.ingest.read.cast.parsing import date_expr, period_from_pay_date, text_expr
from transforms.ingest.read.layouts.profiles import PeriodFromPayDate

RULE = PeriodFromPayDate(rule="period_ending_on_pay_date", frequency="pay_frequency", lag_days=3,
                         frequencies={"W": "weekly", "BW": "biweekly", "SM": "semimonthly", "M": "monthly"})
FREQ = st.sampled_from(["W", "BW", "SM", "M", " w ", "Q", "", None])
DAY = st.one_of(st.none(), st.dates(dt.date(2021, 1, 1), dt.date(2024, 12, 31)).map(lambda d: d.strftime("%m/%d/%Y")))
LAG = st.sampled_from(["0", "5", " 14", "", "x", None])


def cells(frame: pl.DataFrame, columns: dict[str, int]) -> Cells:
    profile = SimpleNamespace(date_formats=["%m/%d/%Y"], number=None, derived={}, employer_id_strip=[],
                              employee_id_from=[], carry=[])
    table = SimpleNamespace(frame=frame, headers=list(frame.columns))
    return Cells(table, SimpleNamespace(profile=profile, columns=columns))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(DAY, FREQ, LAG), min_size=1, max_size=40))
def test_periods_per_distinct_key_are_the_per_row_rule(rows):
    frame = pl.DataFrame(rows, schema={"c0": pl.String, "c1": pl.String, "c2": pl.String}, orient="row")
    c = cells(frame, {"pay_date": 0, "pay_frequency": 1, "pay_lag_days": 2})
    start, end = c.periods(RULE, "pay_lag_days")
    got = c.work.select(start.alias("s"), end.alias("e"))
    pay = date_expr(pl.col("c0"), ["%m/%d/%Y"])
    s, e = period_from_pay_date(pay, text_expr(pl.col("c1")), RULE, text_expr(pl.col("c2")))
    want = frame.select(s.alias("s"), e.alias("e"))
    assert got.equals(want)


def test_a_rule_without_its_cells_gives_a_null_period_per_row():
    frame = pl.DataFrame({"c0": ["a", "b", "c"]})
    c = cells(frame, {})
    start, end = c.periods(RULE, None)
    got = c.work.select(start.alias("s"), end.alias("e"))
    assert got.height == 3 and got.null_count().row(0) == (3, 3)
