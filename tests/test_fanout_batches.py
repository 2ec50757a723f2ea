"""The credit computation's per-employer batches (``batches.employer_batches``): a lazy
payroll (the lake's) stays lazy, so a Dask worker reads its batch's rows itself and none passes
through the driver; the batches' merged credits are exactly the unbatched ones."""

from __future__ import annotations

import datetime as dt
import pickle
from pathlib import Path

import polars as pl
import yaml
from helpers import employer_case, frames_for

from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.runs.batches import employer_batches, merge_results
from transforms.settings import Settings

PARAMS = load_parameters()
CASES = Path(__file__).parent / "cases"


def _frames() -> dict[str, pl.DataFrame]:
    """Case J (a group of two employers; the applicant's roster names the other member's
    employee, the same person) beside six single employers."""
    doc = yaml.safe_load((CASES / "56a39-employer-and-tax-year.yaml").read_text())
    case_j = next(c for c in doc["cases"] if c["id"] == "J")
    return frames_for([case_j, *[employer_case(i, f"2023-02-0{i}T09:00:00", hours=90 + 5 * i) for i in range(3, 9)]])


def _credits(frames) -> tuple[pl.DataFrame, pl.DataFrame]:
    r = steps.compute(frames, 2023, dt.date(2024, 7, 1), PARAMS, Settings())
    return _rows(r)


def _rows(r) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The result's rows in a fixed order, without ``__claim`` (a batch's own row index)."""
    return (r.employees.drop("__claim").sort("application_id", "employee_id"), r.applications.sort("application_id"))


def test_lazy_payroll_batches_carry_no_payroll_row_and_give_the_unbatched_credits(tmp_path):
    frames = _frames()
    frames["payroll"].write_parquet(tmp_path / "payroll.parquet")
    lazy = {**{k: v.lazy() for k, v in frames.items()}, "payroll": pl.scan_parquet(tmp_path / "payroll.parquet")}

    batches = employer_batches(lazy, 3)
    assert len(batches) == 3
    assert all(isinstance(b["payroll"], pl.LazyFrame) for b in batches)
    # what is sent to a worker is the plan: no ssn hash of a payroll row is in it
    hashes = [h.encode() for h in frames["payroll"].get_column("ssn_hash").drop_nulls().unique().to_list()]
    assert len(hashes) == 7  # J's E1 and B7 are one person
    for b in batches:
        blob = pickle.dumps(b["payroll"])
        assert not any(h in blob for h in hashes)
    # each employer's rows are read in exactly one batch, the group's two members together
    got = [b["payroll"].select("employer_id").unique().collect().get_column("employer_id").to_list() for b in batches]
    flat = sorted(e for g in got for e in g)
    assert flat == sorted(frames["payroll"].get_column("employer_id").unique().to_list())
    assert any({"100000001", "100000002"} <= set(g) for g in got)

    whole = _credits(lazy)
    merged = merge_results([steps.compute(b, 2023, dt.date(2024, 7, 1), PARAMS, Settings()) for b in batches])
    eager = merge_results([steps.compute(b, 2023, dt.date(2024, 7, 1), PARAMS, Settings())
                           for b in employer_batches(frames, 3)])
    for r in (merged, eager):
        employees, applications = _rows(r)
        assert employees.equals(whole[0])
        assert applications.equals(whole[1])
    b7 = whole[0].filter(pl.col("employee_id") == "B7")
    assert b7.get_column("credit_cents").to_list() == [43318]  # case J's expected credit: the group kept whole
