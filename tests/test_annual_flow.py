"""The annual job end to end: the real Prefect flow and the real CLI on a generated submission."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.reference.parameters import load_parameters
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

EMPLOYEE_COLS = ("application_id,employer_id,employee_id,tax_year,wage_category,hours_prior,hours_current,"
                 "part1_credit,part2_credit,credit,status,reasons,roster_employer_id,period_start,period_end")
AWARD_COLS = "application_id,employer_id,tax_year,tax_type,approval_year,requested,awarded,status,reasons,period_start,period_end"


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sub") / "submission"
    generate_submission(out, employers=40, seed=11, tax_year=2023)
    return out


def test_annual_flow_outputs_and_rerun(prefect_harness, submission, tmp_path):
    from flows.annual import annual_flow

    kwargs = dict(input_dir=submission, tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=tmp_path / "out",
                  workdir=tmp_path / "work", params=load_parameters(), settings=Settings())
    s1 = annual_flow(**kwargs)
    out = tmp_path / "out"
    emp = (out / "employee_credits.csv").read_text().splitlines()
    awards = (out / "awards.csv").read_text().splitlines()
    assert emp[0] == EMPLOYEE_COLS and awards[0] == AWARD_COLS
    manifest = json.loads((out / "manifest.json").read_text())
    for field in ("run_id", "kind", "tax_year", "as_of", "policy", "cap", "parameters", "inputs", "code_version",
                  "row_counts", "totals"):
        assert field in manifest
    assert manifest["policy"] == "fcfs" and manifest["cap"] == 10_000_000
    assert manifest["totals"]["awarded"] == s1.awarded
    a = pl.read_csv(out / "awards.csv")
    assert a.height == s1.applications
    assert abs(a["awarded"].sum() - s1.awarded) < 0.005
    assert (a["awarded"] <= a["requested"]).all()
    e = pl.read_csv(out / "employee_credits.csv", schema_overrides={"reasons": pl.String})
    assert e["application_id"].to_list() == sorted(e["application_id"].to_list())
    assert (e.filter(pl.col("status") == "INELIGIBLE")["credit"] == 0).all()
    # requested = sum of the eligible credits of each application
    req = e.filter(pl.col("status") == "ELIGIBLE").group_by("application_id").agg(pl.col("credit").sum())
    joined = a.join(req, on="application_id", how="left").with_columns(pl.col("credit").fill_null(0))
    assert ((joined["requested"] - joined["credit"]).abs() < 0.005).all()

    before = (out / "awards.csv").read_bytes()
    s2 = annual_flow(**kwargs)
    assert (out / "awards.csv").read_bytes() == before
    assert s2.cap_left == s1.cap_left


def test_no_ssn_anywhere_after_a_run(prefect_harness, submission, tmp_path):
    from flows.annual import annual_flow

    annual_flow(input_dir=submission, tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=tmp_path / "out",
                workdir=tmp_path / "work", params=load_parameters(), settings=Settings())
    ssns = set()
    for f in list((submission / "payroll").glob("*.csv")) + [submission / "certifications.csv"]:
        ssns |= set(pl.read_csv(f, infer_schema=False)["ssn"].to_list())
    needles = {s.replace("-", "") for s in ssns} | {f"{s[:3]}-{s[3:5]}-{s[5:]}" for s in (x.replace("-", "") for x in ssns)}
    assert len(needles) > 50
    for path in list((tmp_path / "work").rglob("*")) + list((tmp_path / "out").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            hits = [n for n in needles if n.encode() in data]
            assert not hits, f"ssn found in {path}"


def test_cli_bad_arguments_fail_cleanly(tmp_path):
    from flows.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["annual", "--input", str(tmp_path / "missing"), "--tax-year", "2023"])
    assert r.exit_code == 2
    assert "is not a folder" in r.output and "Traceback" not in r.output
    (tmp_path / "in").mkdir()
    r = runner.invoke(app, ["annual", "--input", str(tmp_path / "in"), "--tax-year", "2023", "--as-of", "July 1"])
    assert r.exit_code == 2 and "ISO date" in r.output
    r = runner.invoke(app, ["annual", "--input", str(tmp_path / "in"), "--tax-year", "2023", "--policy", "lottery"])
    assert r.exit_code == 2 and "fcfs or pro-rata" in r.output


def test_cli_tax_year_without_reference_data_names_the_parameter(tmp_path):
    from flows.cli import app

    (tmp_path / "in").mkdir()
    r = CliRunner().invoke(app, ["annual", "--input", str(tmp_path / "in"), "--tax-year", "2027",
                                 "--as-of", "2028-03-01", "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "o")],
                           env={"IMPCREDIT_TODAY": "2028-03-01"})  # (a later date than today is refused first)
    assert r.exit_code == 2
    assert "has no value" in r.output and "2027" in r.output and "Traceback" not in r.output


def test_cli_empty_submission_folder_is_an_error_not_an_empty_success(prefect_harness, tmp_path):
    from flows.cli import app

    (tmp_path / "in").mkdir()
    r = CliRunner().invoke(app, ["annual", "--input", str(tmp_path / "in"), "--tax-year", "2023",
                                 "--as-of", "2024-07-01", "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "no submission files found" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o" / "awards.csv").exists()
