"""Schedules that finish the year (issue 44, part 1), with the real scheduled flows of
``flows/serve.py`` on the session's Prefect test server (``prefect_harness``):

- a run is dated by its scheduled start in New York (``expected_start_time``), never the worker's
  clock or zone: scheduled for 2025-06-15 23:30 New York, started a year and a half late on a
  machine at UTC+14, it is a June 15 run, Q1 of 2025;
- each quarterly run writes its own dated estimate folder: April's and June's (Q1 both) stay;
- the July 1 annual run names the application received after it and when it will be decided;
  the monthly catch-up of that date decides it, its own folder beside the July 1 run's;
- the zombie-detection automation is created on the server, three heartbeats wide.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from pathlib import Path

import polars as pl
import pytest

from flows.dating import nj_date
from transforms.synthetic.generate import generate_submission

KEY = "k" * 40 + "-a-test-key-of-test-schedules"


def test_the_new_jersey_date_of_an_instant():
    assert nj_date(dt.datetime(2025, 6, 16, 3, 30, tzinfo=dt.UTC)) == dt.date(2025, 6, 15)  # 23:30 EDT
    assert nj_date(dt.datetime(2025, 1, 1, 4, 59)) == dt.date(2024, 12, 31)  # naive: UTC; 23:59 EST
    assert nj_date(dt.datetime(2025, 1, 1, 5, 0, tzinfo=dt.UTC)) == dt.date(2025, 1, 1)
    assert type(nj_date(dt.datetime(2025, 1, 1, tzinfo=dt.UTC))) is dt.date


@pytest.fixture
def far_east(monkeypatch):
    """This process's clock zone at UTC+14 (Kiribati): its date is a day ahead of New York's."""
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _scheduled(flow, at: dt.datetime, **parameters):
    """A flow run of ``flow`` scheduled for ``at`` (as a deployment's schedule creates it), run here
    now: its final state and the flow run as the server has it."""
    from prefect.client.orchestration import get_client
    from prefect.flow_engine import run_flow
    from prefect.states import Scheduled

    with get_client(sync_client=True) as client:
        run = client.create_flow_run(flow, parameters=parameters, state=Scheduled(scheduled_time=at))
    state = run_flow(flow, flow_run=run, parameters=parameters, return_type="state")
    with get_client(sync_client=True) as client:
        return state, client.read_flow_run(run.id)


def test_a_run_scheduled_for_june_15_in_new_york_is_dated_june_15(prefect_harness, far_east, monkeypatch):
    from flows.serve import scheduled_annual, scheduled_quarterly

    monkeypatch.delenv("IMPCREDIT_INPUT", raising=False)  # the run stops at its settings, named and dated
    monkeypatch.setenv("IMPCREDIT_HMAC_KEY", KEY)
    at = dt.datetime(2025, 6, 15, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-4)))  # New York, EDT
    assert dt.date.today() > dt.date(2025, 6, 16)  # started late, on a clock a day ahead of New York
    state, run = _scheduled(scheduled_quarterly, at)
    assert run.expected_start_time == at
    assert run.name == "quarterly-2025-q1-as-of-2025-06-15"  # Q1: the latest quarter ended by June 15
    assert state.is_failed() and "IMPCREDIT_INPUT is not set" in state.message
    state, run = _scheduled(scheduled_annual, at)
    assert run.name == "annual-2024-as-of-2025-06-15"


@pytest.fixture(scope="module")
def submission(tmp_path_factory):
    """12 employers of tax year 2023 (seed 4): APP-2023-000013 is received on 2025-01-13."""
    root = tmp_path_factory.mktemp("schedules")
    generate_submission(root / "sub", employers=12, seed=4, tax_year=2023)
    return root


@pytest.fixture
def deployment_env(submission, tmp_path, monkeypatch):
    """What a worker's environment gives its runs (docs/scheduling.md)."""
    for k, v in {"IMPCREDIT_INPUT": submission / "sub", "IMPCREDIT_WORKDIR": tmp_path / "work",
                 "IMPCREDIT_OUT": tmp_path / "out", "IMPCREDIT_HMAC_KEY": KEY}.items():
        monkeypatch.setenv(k, str(v))
    return tmp_path


def test_two_quarterly_runs_of_a_year_keep_both_estimate_folders(prefect_harness, deployment_env):
    from flows.serve import scheduled_quarterly

    est = deployment_env / "out" / "quarterly" / "2023"
    ny = dt.timezone(dt.timedelta(hours=-4))
    for day in (15, 15):  # April 15, then the same date again: a second folder, never the first one
        state, _ = _scheduled(scheduled_quarterly, dt.datetime(2023, 4, day, 6, 0, tzinfo=ny))
        assert state.is_completed(), state.message
    state, _ = _scheduled(scheduled_quarterly, dt.datetime(2023, 6, 15, 6, 0, tzinfo=ny))  # Q1 again
    assert state.is_completed(), state.message
    assert sorted(p.name for p in est.iterdir()) == ["q1-as-of-2023-04-15", "q1-as-of-2023-04-15-2",
                                                     "q1-as-of-2023-06-15"]
    seen = {}
    for folder in est.iterdir():
        manifest = json.loads((folder / "manifest.json").read_text())
        assert (manifest["tax_year"], manifest["quarter"]) == (2023, 1)
        seen[folder.name] = (manifest["as_of"], manifest["run_id"],
                             hashlib.sha256((folder / "employer_estimates.csv").read_bytes()).hexdigest())
    assert [v[0] for _, v in sorted(seen.items())] == ["2023-04-15", "2023-04-15", "2023-06-15"]
    assert len({v[1] for v in seen.values()}) == 3  # three runs, three folders, none overwritten


def _artifact(key: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
                                      sort=ArtifactSort.CREATED_DESC, limit=1)
    return found[0].data


def _decided(workdir: Path) -> set[str]:
    from transforms.runs.catchup import decided_ids

    return set(decided_ids(workdir))


def test_the_catch_up_decides_a_late_application_named_by_the_annual_run(prefect_harness, deployment_env):
    from flows.serve import scheduled_annual, scheduled_catch_up

    late = "APP-2023-000013"  # received 2025-01-13
    scheduled_annual(as_of=dt.date(2024, 7, 1))
    work = deployment_env / "work"
    assert late not in _decided(work)
    said = _artifact("still-waiting")
    line = (f"{late} (employer 130144592, tax year 2023): received 2025-01-13: waits until 2025-01-13, decided by "
            "the monthly catch-up of 2025-02-01")
    assert line in said, said
    assert "tax year 2023: run annual-2023-" in said
    assert ("**1 application still waits after the runs as of 2024-07-01: 1 not seen yet (the first seen from "
            "2025-01-13, decided by the monthly catch-up of 2025-02-01)**") in said
    # August 1: the catch-up sees nothing new, and says what still waits
    before = _decided(work)
    result = scheduled_catch_up(as_of=dt.date(2024, 8, 1))
    assert late in result["still_waiting"] and _decided(work) == before
    assert line in _artifact("still-waiting")
    # February 1: the catch-up decides it, in a folder of its own (the July 1 run's outputs stay)
    result = scheduled_catch_up(as_of=dt.date(2025, 2, 1))
    assert late in _decided(work) and late not in result["still_waiting"]
    assert any(x.startswith("tax year 2023: run annual-2023-") for x in result["decided"]), result
    out = deployment_env / "out" / "annual" / "2023"
    awards = pl.read_csv(out / "catch-up-as-of-2025-02-01" / "awards.csv", infer_schema=False)
    row = awards.filter(pl.col("application_id") == late).row(0, named=True)
    assert row["approval_year"] == "2025" and row["status"] in ("APPROVED", "REJECTED", "PARTIAL")
    july = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert late not in july["application_id"].to_list()
    assert "**nothing waits: every application received by 2025-02-01 is decided**" in _artifact("still-waiting")


def test_the_zombie_detection_automation_is_created_three_heartbeats_wide(prefect_harness):
    from prefect.client.orchestration import get_client

    from flows import zombies

    assert "created" in zombies.ensure(45)
    assert "in place" in zombies.ensure(45)  # once
    assert "created" in zombies.ensure(60)  # again when the interval changed, never two
    with get_client(sync_client=True) as client:
        (auto,) = client.read_automations_by_name(zombies.NAME)
    assert auto.enabled and auto.trigger.posture == "Proactive" and auto.trigger.within == dt.timedelta(seconds=180)
    assert auto.trigger.after == {"prefect.flow-run.heartbeat"}
    assert auto.trigger.expect == {"prefect.flow-run.heartbeat", "prefect.flow-run.Completed", "prefect.flow-run.Failed",
                                   "prefect.flow-run.Cancelled", "prefect.flow-run.Crashed"}
    assert auto.trigger.for_each == {"prefect.resource.id"}
    (action,) = auto.actions
    assert action.type == "change-flow-run-state" and action.state == "CRASHED"


def test_a_deployments_flow_runs_send_heartbeats(monkeypatch):
    from flows import _env

    monkeypatch.delenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", raising=False)
    monkeypatch.delenv("PREFECT_RUNNER_HEARTBEAT_FREQUENCY", raising=False)
    _env.for_deployment()
    import os

    assert os.environ["PREFECT_FLOWS_HEARTBEAT_FREQUENCY"] == "60"
    monkeypatch.setenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "30")  # an operator's interval stands
    _env.for_deployment()
    assert os.environ["PREFECT_FLOWS_HEARTBEAT_FREQUENCY"] == "30"


def test_the_serving_process_beats_and_logs_at_info_from_its_first_prefect_import():
    """``flows.serve`` sets the deployment's Prefect environment before anything imports Prefect
    (an import of ``flows.catchup`` first would freeze Prefect's settings at WARNING and 180 s)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_LOGGING_LEVEL", "PREFECT_FLOWS_HEARTBEAT_FREQUENCY",
                                                            "PREFECT_RUNNER_HEARTBEAT_FREQUENCY")}
    code = ("import flows.serve\nfrom prefect.settings import get_current_settings\n"
            "s = get_current_settings()\nprint(s.logging.level, s.flows.heartbeat_frequency)")
    r = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["INFO", "60"], r.stdout + r.stderr
