"""The variance report by employer and tax year (spec section 9, amended): an estimate request
(``EST-...``) and the application that follows it (``APP-...``) meet by employer and tax year; a
projection with no final credit yet, or a final credit with no projection, says so and is never a
variance of 0.00. Real Prefect flows (``prefect_harness``) over staged frames (``fake_stage``), then
``impcredit variance`` in each format."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from helpers import employer_case, frames_for
from typer.testing import CliRunner

from transforms import schema
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

PARAMS = load_parameters()
NJ = ZoneInfo(schema.NJ_TZ)
REJECTS_SCHEMA = {c: pl.String for c in ("file", "line", "column", "value", "rule", "message")}


def _requests(*rows: tuple[str, str, str]) -> pl.DataFrame:
    out = []
    for request_id, employer_id, received in rows:
        at = dt.datetime.fromisoformat(received).replace(tzinfo=NJ)
        out.append({"request_id": request_id, "employer_id": employer_id, "employer_name": "Example LLC",
                    "tax_type": "CBT", "tax_year": 2023, "received_at": at.astimezone(dt.UTC), "received_date": at.date(),
                    "period_start": None, "period_end": None, "source_file": "estimate_requests.csv",
                    "source_sheet": None, "source_line": 2})
    return pl.DataFrame(out, schema=schema.ESTIMATE_REQUESTS)


def _frames() -> dict[str, pl.DataFrame]:
    """Employer 1: a request in April 2023 (EST-2023-0001), its application in February 2024;
    employer 2: a request only (no application yet); employer 3: an application only."""
    frames = frames_for([employer_case(1, "2024-02-01T09:00:00"), employer_case(2, "2024-02-02T09:00:00"),
                         employer_case(3, "2024-02-03T09:00:00")])
    roster = frames["roster"]
    as_request = [roster.filter(pl.col("application_id") == f"APP-2023-00{n}").with_columns(
        pl.lit(f"EST-2023-000{n}").alias("application_id")) for n in (1, 2)]
    frames["roster"] = pl.concat([roster.filter(pl.col("application_id") != "APP-2023-002"), *as_request])
    frames["applications"] = frames["applications"].filter(pl.col("application_id") != "APP-2023-002")
    frames["estimate_requests"] = _requests(("EST-2023-0001", "100000001", "2023-04-10T10:00:00"),
                                            ("EST-2023-0002", "100000002", "2023-04-11T10:00:00"))
    return frames


def fake_stage(input_dir: Path, workdir: Path, key, **_) -> steps.RunInputs:
    sha = hashlib.sha256(str(input_dir).encode()).hexdigest()
    return steps.RunInputs(_frames(), pl.DataFrame(schema=REJECTS_SCHEMA), [{"path": "x.csv", "sha256": sha, "bytes": 1}],
                           "demo", "test")


@pytest.fixture
def ran(prefect_harness, tmp_path, monkeypatch):
    """A quarterly run (Q1, as of April 15, 2023) then the annual run (as of July 1, 2024)."""
    from flows.annual import annual_flow
    from flows.quarterly import quarterly_flow

    monkeypatch.setattr(steps, "stage_inputs", fake_stage)
    inp = tmp_path / "in"
    inp.mkdir()
    common = {"input_dir": inp, "workdir": tmp_path / "work", "params": PARAMS, "settings": Settings()}
    q1 = quarterly_flow(tax_year=2023, quarter=1, as_of=dt.date(2023, 4, 15), out_dir=tmp_path / "q1", **common)
    annual_flow(tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=tmp_path / "annual", **common)
    return tmp_path, q1


def test_a_request_meets_its_employers_application_by_employer_and_tax_year(ran):
    from transforms.runs.variance import variance_report

    tmp, q1 = ran
    emp_est = pl.read_csv(tmp / "q1" / "employer_estimates.csv", schema_overrides={"employer_id": pl.String})
    assert emp_est["application_id"].to_list() == ["EST-2023-0001", "EST-2023-0002"]  # requests, not applications
    credits = pl.read_csv(tmp / "annual" / "employee_credits.csv", schema_overrides={"employer_id": pl.String})
    final = dict(credits.group_by("employer_id").agg(pl.col("credit").sum()).iter_rows())
    var = pl.read_csv(variance_report(tmp / "work", tmp / "v", 2023), infer_schema=False)
    assert var.columns == ["employer_id", "tax_year", "status", "estimated_ids", "application_ids", "final_credit",
                           "awarded", "projected_q1", "variance_q1", "final_status"]
    rows = {r["employer_id"]: r for r in var.iter_rows(named=True)}
    assert list(rows) == ["100000001", "100000002", "100000003"]
    one = rows["100000001"]
    assert (one["status"], one["estimated_ids"], one["application_ids"]) == ("compared", "EST-2023-0001", "APP-2023-001")
    assert (one["final_credit"], one["projected_q1"], one["variance_q1"]) == ("433.20", "438.30", "-5.10")
    assert float(one["final_credit"]) == pytest.approx(final["100000001"])
    assert float(one["projected_q1"]) == emp_est.filter(pl.col("employer_id") == "100000001")["projected_credit"][0]
    two = rows["100000002"]  # projected, never applied: no final credit yet, no variance
    assert (two["status"], two["application_ids"], two["final_credit"], two["variance_q1"]) == (
        "no final credit yet", None, None, None)
    assert two["projected_q1"] == "438.30"
    three = rows["100000003"]  # decided, never projected: no projection, no variance
    assert (three["status"], three["estimated_ids"], three["projected_q1"], three["variance_q1"]) == (
        "no projection", None, None, None)
    assert float(three["final_credit"]) == pytest.approx(final["100000003"]) and three["final_status"] == "APPROVED"
    assert q1.variance_written is False


def _cli(*args):
    from flows.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_variance_command_in_each_format(ran):
    tmp, _ = ran
    r = _cli("variance", "--tax-year", "2023", "--workdir", tmp / "work", "--out", tmp / "v")
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.replace("│", " ").split())
    assert "Employers 3: compared 1, no final credit yet 1, no projection 1" in flat
    # the total variance is the one employer that has both: $5.10 below, never "final equals the projection"
    assert "Q1 variance (final - projected, 1 employers with both) $5.10 below the projection" in flat
    assert "final equals" not in flat
    assert "100000001 compared EST-2023-0001 APP-2023-001 433.20 438.30 -5.10" in flat
    assert "100000002 no final credit yet EST-2023-0002 438.30" in flat
    r = _cli("variance", "--tax-year", "2023", "--workdir", tmp / "work", "--out", tmp / "v", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert [(d["employer_id"], d["status"], d["final_credit"], d["projected_q1"], d["variance_q1"]) for d in doc] == [
        ("100000001", "compared", 433.2, 438.3, -5.1), ("100000002", "no final credit yet", None, 438.3, None),
        ("100000003", "no projection", doc[2]["final_credit"], None, None)]
    r = _cli("variance", "--tax-year", "2023", "--workdir", tmp / "work", "--out", tmp / "v", "--format", "csv")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "employer_id,tax_year,status,estimated_ids,application_ids,final_credit,awarded,projected_q1," \
                       "variance_q1,final_status"
    assert lines[1] == "100000001,2023,compared,EST-2023-0001,APP-2023-001,433.20,433.20,438.30,-5.10,APPROVED"
    assert lines[2] == "100000002,2023,no final credit yet,EST-2023-0002,,,,438.30,,"
