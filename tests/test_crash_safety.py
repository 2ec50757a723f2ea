"""Crash safety and concurrency of the annual run, with real processes: SIGKILL at each stage
then a rerun ends with the same ledger and outputs as an uninterrupted run; two runs started at
once on one workdir never approve more than the cap."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from transforms.failpoints import POINTS
from transforms.synthetic.generate import generate_submission

REPO = Path(__file__).resolve().parents[1]
CAP = "2500"


class Run:
    """A CLI process in its own process group; output goes to a file so that a helper process
    left behind by a killed run (Prefect's temporary server) cannot hold a pipe open."""

    def __init__(self, args: list[str], tmp: Path, *, failpoint: str | None, home: str):
        env = dict(os.environ, PREFECT_HOME=str(tmp / home), IMPCREDIT_FAILPOINT=failpoint or "")
        env.pop("PREFECT_API_URL", None)
        tmp.mkdir(parents=True, exist_ok=True)
        self.log = tmp / f"{home}-{failpoint or 'run'}-{os.getpid()}-{id(self)}.log"
        with open(self.log, "w") as fh:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=env,
                                         stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self, timeout: float = 600) -> Run:
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # whatever the run left behind
        self.stdout = self.log.read_text()
        return self


def impcredit(args: list[str], tmp: Path, *, failpoint: str | None = None, home: str = "prefect",
              background: bool = False):
    run = Run(args, tmp, failpoint=failpoint, home=home)
    return run if background else run.wait()


def annual_args(sub: Path, work: Path, out: Path, *extra: str) -> list[str]:
    return ["annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", str(work),
            "--out", str(out), "--cap", CAP, *extra]


def ledger_decisions(work: Path) -> pl.DataFrame:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return con.sql(
            "SELECT * EXCLUDE (run_id) FROM decisions ORDER BY approval_year, application_id"
        ).pl()
    finally:
        con.close()


def published(out: Path) -> dict[str, bytes]:
    names = ["awards.csv", "employee_credits.csv", "taxation/award_file.csv"]
    return {n: (out / n).read_bytes() for n in names}


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    sub = tmp_path_factory.mktemp("crash") / "submission"
    generate_submission(sub, employers=30, seed=5, tax_year=2023)
    return sub


@pytest.fixture(scope="module")
def reference(submission, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    r = impcredit(annual_args(submission, tmp / "work", tmp / "out"), tmp)
    assert r.returncode == 0, r.stdout
    decisions = ledger_decisions(tmp / "work")
    assert set(decisions["status"]) >= {"APPROVED", "WAITLISTED"}  # the cap binds: the test means something
    return decisions, published(tmp / "out")


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_sigkill_then_rerun_matches_an_uninterrupted_run(point, submission, reference, tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    killed = impcredit(annual_args(submission, work, out), tmp_path, failpoint=point)
    assert killed.returncode == -signal.SIGKILL, killed.stdout
    if point in ("staged", "computed", "outputs_written"):
        # killed before the commit: no decisions and no published outputs
        assert not (out / "awards.csv").exists()
        if (work / "impcredit.duckdb").exists():
            assert ledger_decisions(work).height == 0
    rerun = impcredit(annual_args(submission, work, out), tmp_path)
    assert rerun.returncode == 0, rerun.stdout
    want_decisions, want_files = reference
    assert ledger_decisions(work).equals(want_decisions)
    assert published(out) == want_files
    assert list(out.glob(".pending-*")) == []


@pytest.mark.slow
def test_two_runs_started_at_once_never_exceed_the_cap(submission, tmp_path):
    work = tmp_path / "work"
    procs = [
        impcredit(annual_args(submission, work, tmp_path / f"out{i}", "--wait", "300"), tmp_path,
                  home=f"prefect{i}", background=True)
        for i in range(2)
    ]
    outputs = [p.wait().stdout for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    d = ledger_decisions(work)
    assert d["application_id"].is_unique().all()  # nothing decided twice
    assert d["awarded_cents"].sum() <= int(CAP) * 100
    # both runs report the same awards: the second kept the first one's decisions
    assert (tmp_path / "out0" / "awards.csv").read_bytes() == (tmp_path / "out1" / "awards.csv").read_bytes()


@pytest.mark.slow
def test_a_second_run_without_wait_refuses_clearly(submission, tmp_path):
    work = tmp_path / "work"
    procs = [
        impcredit(annual_args(submission, work, tmp_path / f"out{i}"), tmp_path, home=f"prefect{i}", background=True)
        for i in range(2)
    ]
    outputs = [p.wait().stdout for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] == 0, outputs
    if codes[1] != 0:  # the runs overlapped: the later one refused with a clear message
        assert codes[1] == 2
        assert any("another run is using the workdir" in o for o in outputs)
        assert not any("Traceback" in o for o in outputs)
    assert ledger_decisions(work)["awarded_cents"].sum() <= int(CAP) * 100
