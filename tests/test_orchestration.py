"""Orchestration: quarterly estimates and variance, what-if, backfill, CLI argument errors.

Real Prefect flows on the session's test server (``prefect_harness``). Staging is replaced by
frames built with ``transforms.synthetic.scenario.build_frames`` (``fake_stage``): these tests are about
orchestration; ingest has its own (tests/test_ingest*.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers import employer_case, frames_for

from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import AllocationSettings, Settings

PARAMS = load_parameters()
KEY = demo_key()
CASES: dict[str, list[dict]] = {}
REJECTS_SCHEMA = {c: pl.String for c in ("file", "line", "column", "value", "rule", "message")}


def fake_stage(input_dir: Path, workdir: Path, key, *, data_docs: bool = False, **_) -> steps.RunInputs:
    frames = frames_for(CASES[str(Path(input_dir).resolve())])
    sha = hashlib.sha256(str(input_dir).encode()).hexdigest()
    return steps.RunInputs(frames, pl.DataFrame(schema=REJECTS_SCHEMA), [{"path": "x.csv", "sha256": sha, "bytes": 1}],
                              "demo", "test")


@pytest.fixture
def submission(tmp_path, monkeypatch):
    monkeypatch.setattr(steps, "stage_inputs", fake_stage)

    def make(cases: list[dict], name: str = "in") -> Path:
        d = (tmp_path / name).resolve()
        d.mkdir()
        CASES[str(d)] = cases
        return d

    return make


def ledger_state(workdir: Path) -> tuple:
    con = duckdb.connect(str(workdir / "impcredit.duckdb"), read_only=True)
    try:
        return (
            con.sql("SELECT count(*), coalesce(sum(requested_cents), 0), coalesce(sum(awarded_cents), 0) FROM decisions").fetchall()[0],
            con.sql("SELECT count(*) FROM runs").fetchall()[0],
            con.sql("SELECT list(run_id ORDER BY run_id) FROM runs").fetchall()[0],
        )
    finally:
        con.close()


def annual(input_dir: Path, tmp: Path, *, tax_year: int = 2023, as_of=dt.date(2024, 7, 1), cap=None, policy="fcfs"):
    from flows.annual import annual_flow

    return annual_flow(
        input_dir=input_dir, tax_year=tax_year, as_of=as_of, out_dir=tmp / "out" / "annual", workdir=tmp / "work",
        params=PARAMS, settings=Settings(allocation=AllocationSettings(cap=cap, policy=policy)),
    )


def quarterly(input_dir: Path, tmp: Path, quarter: int, as_of: dt.date, tax_year: int = 2023, batches: int = 1):
    from flows.quarterly import quarterly_flow

    return quarterly_flow(
        input_dir=input_dir, tax_year=tax_year, quarter=quarter, as_of=as_of, out_dir=tmp / "out" / f"q{quarter}",
        workdir=tmp / "work", params=PARAMS, settings=Settings(), batches=batches,
    )


QUARTER_AS_OF = {1: dt.date(2023, 4, 15), 2: dt.date(2023, 7, 15), 3: dt.date(2023, 10, 15), 4: dt.date(2024, 1, 15)}


def test_quarterly_runs_then_annual_give_the_variance_report(prefect_harness, submission, tmp_path):
    cases = [employer_case(1, "2023-02-01T09:00:00"), employer_case(2, "2023-02-02T09:00:00", hours=120),
             employer_case(3, "2023-02-03T09:00:00", hours=60)]  # 3: fewer hours than 2022 -> ineligible
    inp = submission(cases)
    projected = {}
    for q in (1, 2, 3, 4):
        s = quarterly(inp, tmp_path, q, QUARTER_AS_OF[q])
        est = pl.read_csv(tmp_path / "out" / f"q{q}" / "estimates.csv", schema_overrides={"employer_id": pl.String})
        emp_est = pl.read_csv(tmp_path / "out" / f"q{q}" / "employer_estimates.csv", schema_overrides={"employer_id": pl.String})
        assert est.columns == ["application_id", "employer_id", "employee_id", "tax_year", "quarter", "hours_so_far",
                               "projected_hours", "projected_credit", "status", "reasons"]
        # hours so far are the observed hours (before projection): 100 h a month
        assert est.filter(pl.col("application_id") == "APP-2023-001")["hours_so_far"][0] == pytest.approx(300.0 * q)
        assert est.filter(pl.col("application_id") == "APP-2023-003")["projected_credit"][0] == 0.0
        assert est.filter(pl.col("application_id") == "APP-2023-003")["reasons"][0] == "HOURS_DECREASED"
        row = emp_est.filter(pl.col("application_id") == "APP-2023-001").row(0, named=True)
        assert row["installment_4"] == row["projected_credit"]
        assert row["installment_2"] == pytest.approx(int(row["projected_credit"] * 100 * 2 // 4) / 100)
        assert s.projected_total == pytest.approx(emp_est["projected_credit"].sum())
        assert "cap_pressure" in __import__("json").loads((tmp_path / "out" / f"q{q}" / "manifest.json").read_text())
        assert not s.variance_written
        projected[q] = dict(zip(emp_est["application_id"], emp_est["projected_credit"], strict=True))
    # Spec case B (80 h / 100 h a month, at the minimum wage): 433.20 for the year.
    assert [projected[q]["APP-2023-001"] for q in (1, 2, 3, 4)] == [438.30, 436.24, 434.21, 433.20]

    con = duckdb.connect(str(tmp_path / "work" / "impcredit.duckdb"), read_only=True)
    runs = con.sql("SELECT kind, quarter FROM runs ORDER BY committed_at").fetchall()
    assert runs == [("quarterly", 1), ("quarterly", 2), ("quarterly", 3), ("quarterly", 4)]
    assert con.sql("SELECT count(*) FROM decisions").fetchall()[0][0] == 0  # allocates nothing
    con.close()

    annual(inp, tmp_path)
    from transforms.runs.variance import variance_report

    path = variance_report(tmp_path / "work", tmp_path / "out" / "variance", 2023)
    var = pl.read_csv(path, schema_overrides={"employer_id": pl.String})
    credits = pl.read_csv(tmp_path / "out" / "annual" / "employee_credits.csv")
    final = dict(credits.group_by("application_id").agg(pl.col("credit").sum()).iter_rows())
    assert [c for c in var.columns if c.startswith(("projected_q", "variance_q"))] == [
        "projected_q1", "projected_q2", "projected_q3", "projected_q4", "variance_q1", "variance_q2", "variance_q3", "variance_q4"]
    assert var["status"].to_list() == ["compared"] * 3  # one row per employer, each projected and decided
    for r in var.iter_rows(named=True):
        app = r["application_ids"]
        assert r["estimated_ids"] == app  # the applications were their own requests
        assert r["final_credit"] == pytest.approx(final[app])
        assert r["projected_q4"] == pytest.approx(r["final_credit"])  # all data present: Q4 = annual
        for q in (1, 2, 3, 4):
            assert r[f"variance_q{q}"] == pytest.approx(round(r["final_credit"] - projected[q][app], 2))
    a1 = var.filter(pl.col("application_ids") == "APP-2023-001").row(0, named=True)
    assert (a1["employer_id"], a1["final_credit"], a1["variance_q1"], a1["variance_q2"], a1["variance_q3"],
            a1["variance_q4"]) == ("100000001", 433.20, -5.10, -3.04, -1.01, 0.0)

    # A quarterly run after the annual one writes the variance report too.
    s = quarterly(inp, tmp_path, 4, dt.date(2024, 7, 2))
    assert s.variance_written and (tmp_path / "out" / "q4" / "variance.csv").exists()


def test_whatif_with_the_cap_raised_changes_exactly_the_capped_awards(prefect_harness, submission, tmp_path):
    from flows.whatif import whatif_flow

    cases = [employer_case(i, f"2024-02-0{i}T09:00:00") for i in range(1, 5)]
    inp = submission(cases)
    per_app = 433.20
    first = annual(inp, tmp_path, cap=round(per_app * 1.5, 2))
    assert first.statuses == {"APPROVED": 1, "PARTIAL": 1, "WAITLISTED": 2}
    before = ledger_state(tmp_path / "work")

    settings = Settings().with_assignments({"cap": "10000000"})
    out = tmp_path / "work" / "whatif" / "t1"
    outcome = whatif_flow(
        input_dir=inp, tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=out, workdir=tmp_path / "work",
        params=PARAMS, settings=settings, assignments={"cap": "10000000"},
    )
    diff = pl.read_csv(out / "diff.csv")
    assert diff["application_id"].to_list() == ["APP-2023-002", "APP-2023-003", "APP-2023-004"]
    assert diff["status_before"].to_list() == ["PARTIAL", "WAITLISTED", "WAITLISTED"]
    assert diff["status_whatif"].to_list() == ["APPROVED"] * 3
    assert diff["awarded_whatif"].to_list() == [per_app] * 3
    assert diff["change"].to_list() == pytest.approx([per_app - (round(per_app * 1.5, 2) - per_app), per_app, per_app])
    assert set(diff["why"]) == {"cap"}
    assert outcome.changed == 3
    assert {p.name for p in out.iterdir()} >= {"awards.csv", "employee_credits.csv", "manifest.json", "diff.csv"}
    assert ledger_state(tmp_path / "work") == before  # the ledger is untouched

    # A what-if with another policy and the same cap: why = policy.
    out2 = tmp_path / "work" / "whatif" / "t2"
    whatif_flow(
        input_dir=inp, tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=out2, workdir=tmp_path / "work", params=PARAMS,
        settings=Settings(allocation=AllocationSettings(cap=round(per_app * 1.5, 2), policy="pro-rata")),
    )
    diff2 = pl.read_csv(out2 / "diff.csv")
    assert diff2.height == 4 and set(diff2["why"]) == {"policy"}
    assert diff2["awarded_whatif"].sum() == pytest.approx(round(per_app * 1.5, 2))
    assert ledger_state(tmp_path / "work") == before


def test_backfill_runs_years_in_order_and_reports_a_failed_year(prefect_harness, submission, tmp_path):
    """A year that fails (2025: no application; a year dated after today, like 2099, is refused before
    anything is read: tests/test_decision_guards.py) is reported beside the years that completed."""
    from flows.backfill import backfill_flow

    cases = [employer_case(1, "2023-02-01T09:00:00", tax_year=2022), employer_case(2, "2024-02-01T09:00:00", tax_year=2023)]
    inp = submission(cases)
    state = backfill_flow(
        input_dir=inp, years=[2023, 2022, 2025], as_of=None, out_dir=tmp_path / "out", workdir=tmp_path / "work",
        params=PARAMS, settings=Settings(), return_state=True,
    )
    report = state.result(raise_on_failure=False)
    assert state.is_failed()
    assert report.completed == [2022, 2023] and report.failed == [2025]
    assert "completed: 2022, 2023" in state.message and "failed: 2025" in state.message
    assert "2025" in report.years[-1].message or report.years[-1].message
    con = duckdb.connect(str(tmp_path / "work" / "impcredit.duckdb"), read_only=True)
    runs = con.sql("SELECT tax_year, approval_year FROM runs WHERE kind = 'annual' ORDER BY committed_at").fetchall()
    con.close()
    assert runs == [(2022, 2023), (2023, 2024)]
    assert (tmp_path / "out" / "2022" / "awards.csv").exists() and (tmp_path / "out" / "2023" / "awards.csv").exists()


def test_backfill_two_years_completes(prefect_harness, submission, tmp_path):
    from flows.backfill import backfill_flow

    cases = [employer_case(1, "2023-02-01T09:00:00", tax_year=2022), employer_case(2, "2024-02-01T09:00:00", tax_year=2023)]
    inp = submission(cases)
    state = backfill_flow(
        input_dir=inp, years=[2022, 2023], as_of=None, out_dir=tmp_path / "out", workdir=tmp_path / "work",
        params=PARAMS, settings=Settings(), return_state=True,
    )
    assert state.is_completed()
    assert state.result().completed == [2022, 2023]
    # in Prefect: each subflow run named by its run id and tagged; the parent named and tagged too;
    # each year's artifact a markdown summary linking its outputs (issue 23, item 5)
    from prefect.client.orchestration import get_client

    con = duckdb.connect(str(tmp_path / "work" / "impcredit.duckdb"), read_only=True)
    run_ids = [r[0] for r in con.sql("SELECT run_id FROM runs ORDER BY tax_year").fetchall()]
    con.close()
    with get_client(sync_client=True) as client:
        runs = {r.name: r for r in client.read_flow_runs()}
        artifacts = [a for a in client.read_artifacts() if a.key in ("annual-2022", "annual-2023")]
    for year, run_id in zip((2022, 2023), run_ids, strict=True):
        assert {"impcredit", "annual", f"tax-year-{year}"} <= set(runs[run_id].tags)
        md = next(a.data for a in artifacts if a.key == f"annual-{year}" and run_id in a.data)
        assert f"[index.html]({(tmp_path / 'out' / str(year) / 'index.html').as_uri()})" in md
        assert "[awards.csv](file://" in md and "requested $" in md
    assert {"impcredit", "backfill"} <= set(runs["backfill-2022-2023"].tags)


# ---------------------------------------------------------------------------------------------
# CLI: plain messages and non-zero exits on bad arguments (no flow runs).


@pytest.fixture
def cli():
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


@pytest.mark.parametrize(
    "args, message",
    [
        (["quarterly", "--input", "{tmp}", "--tax-year", "2023", "--quarter", "5"], "--quarter must be"),
        (["quarterly", "--input", "{tmp}/nope", "--tax-year", "2023", "--quarter", "1"], "is not a folder"),
        (["quarterly", "--input", "{tmp}", "--tax-year", "2023", "--quarter", "1", "--as-of", "13/1/2024"], "ISO date"),
        (["whatif", "--input", "{tmp}", "--tax-year", "2023", "--policy", "lottery"], "--policy must be"),
        (["whatif", "--input", "{tmp}", "--tax-year", "2023", "--set", "overtime"], "NAME=VALUE"),
        (["whatif", "--input", "{tmp}", "--tax-year", "2023", "--set", "colour=blue"], "unknown setting"),
        (["whatif", "--input", "{tmp}", "--tax-year", "2023", "--cap", "-1"], "non-negative"),
        (["backfill", "--input", "{tmp}", "--years", "2024-2019"], "--years"),
        (["variance", "--tax-year", "2023", "--workdir", "{tmp}/empty"], "no annual run"),
    ],
)
def test_cli_bad_arguments_exit_nonzero_with_a_plain_message(cli, tmp_path, args, message):
    result = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code != 0
    text = result.output + (result.stderr if hasattr(result, "stderr") else "")
    assert "Traceback" not in text
    assert message in " ".join(text.split()) or message in str(result.exception)


def test_backfill_reads_each_years_folder_and_never_falls_back(tmp_path):
    from flows.backfill import year_input

    one = tmp_path / "one"
    one.mkdir()
    assert year_input(one, 2022) == one  # one submission for every year
    per = tmp_path / "per"
    for y in (2021, 2022):
        (per / str(y)).mkdir(parents=True)
    assert year_input(per, 2022) == per / "2022"
    with pytest.raises(ValueError, match=r"folder per tax year \(2021, 2022\) but none for 2023"):
        year_input(per, 2023)


def test_employer_units_keep_groups_whole_and_only_the_employers_asked():
    """``batches._units``: employers joined through control groups are one unit (a member the
    run does not ask for rides with its group); a group none of whose members is asked is left out."""
    import polars as pl

    from transforms.runs.batches import _units

    groups = pl.DataFrame({"group_id": ["g1", "g1", "g2", "g2", "g3", "g3"],
                           "employer_id": ["E1", "E5", "E7", "E9", "X1", "X2"]})
    units = _units([f"E{i}" for i in range(10)], groups)
    assert ["E1", "E5"] in units and ["E7", "E9"] in units
    assert sorted(e for u in units for e in u) == sorted(f"E{i}" for i in range(10))
    assert all("X1" not in u for u in units)
