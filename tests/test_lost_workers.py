"""Lost workers of the command's own local cluster (``--workers``, issue 43 part 6): a worker that
dies while the cluster starts: started again (else the threads), said in one stage line, the run
writes the plain run's files; workers killed as they appear during the run: exit 2, one line,
nothing committed, and the next run writes the plain run's files."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import psutil
import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.compare import files, same
from transforms.runs import annual as steps
from transforms.synthetic.generate import generate_submission

pytestmark = pytest.mark.slow
RUN_ID = "annual-2023-20240701T000000000000Z-lost"


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lost") / "sub"
    generate_submission(root, employers=6, seed=4, tax_year=2023)
    return root


@pytest.fixture(scope="module")
def annual(prefect_harness, submission, tmp_path_factory):  # noqa: F811
    """``impcredit annual`` on the submission into ``<root>/<name>`` (its workdir ``w-<name>``), the
    decision's instant and run id held equal between runs; ``plain`` run once, first."""
    import datetime as dt

    from transforms.award import ledger

    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IMPCREDIT_HMAC_KEY", "lost-workers-test-key-0123456789abcdef")
        mp.setenv("IMPCREDIT_WORKER_WAIT_S", "5")
        mp.setattr(steps, "new_run_id", lambda *a: RUN_ID)
        mp.setattr(ledger, "now_utc", lambda: dt.datetime(2024, 7, 1, 12, tzinfo=dt.UTC))

        def invoke(name: str, *more: str, work: str | None = None):
            return CliRunner().invoke(app, ["annual", "--input", str(submission), "--tax-year", "2023", "--as-of",
                                            "2024-07-01", "--workdir", str(root / f"w-{work or name}"), "--out",
                                            str(root / name), *more], env={"COLUMNS": "300"})
        invoke.root = root
        plain = invoke("plain")
        assert plain.exit_code == 0, plain.output
        assert (root / "plain" / "awards.csv").stat().st_size > 0
        yield invoke


def ours(output: str) -> str:
    """The command's output without Prefect's and Dask's "--- Logging error ---" blocks (their
    handlers writing to a stream an earlier run's test runner closed: not the command's)."""
    return "\n".join(b for b in output.split("--- Logging error ---") if "logging/" not in b)


def committed_runs(work: Path) -> int:
    if not (work / "impcredit.duckdb").exists():
        return 0
    with duckdb.connect(str(work / "impcredit.duckdb"), read_only=True) as con:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def test_a_worker_killed_while_the_cluster_starts_is_started_again(annual, monkeypatch):
    """The first worker process the cluster spawns is SIGKILLed at once (Dask: "Nanny failed to
    start"): the cluster starts again, one stage line says so, the run's files are the plain run's."""
    from distributed.process import AsyncProcess

    root = annual.root
    start, killed = AsyncProcess.start, []

    async def start_then_kill_once(self):
        await start(self)
        if not killed:
            killed.append(self.pid)
            os.kill(self.pid, signal.SIGKILL)

    monkeypatch.setattr(AsyncProcess, "start", start_then_kill_once)
    r = annual("once", "--workers", "2")
    assert r.exit_code == 0, r.output
    assert len(killed) == 1
    said = [ln for ln in r.output.splitlines() if "workers died while starting" in ln]
    assert len(said) == 1 and "(1 of 2 tries; Nanny failed to start): started again" in said[0], r.output
    assert "the run goes on with its 2 workers" in said[0]
    assert (root / "once" / "awards.csv").read_bytes() == (root / "plain" / "awards.csv").read_bytes()
    same(files(root / "plain"), files(root / "once"))
    assert "Traceback" not in ours(r.output) and "internal error" not in r.output


def test_workers_that_die_at_every_start_leave_the_run_to_the_threads(annual, monkeypatch):
    from distributed.process import AsyncProcess

    start = AsyncProcess.start

    async def start_then_kill(self):
        await start(self)
        os.kill(self.pid, signal.SIGKILL)

    monkeypatch.setattr(AsyncProcess, "start", start_then_kill)
    r = annual("threads", "--workers", "2")
    assert r.exit_code == 0, r.output
    said = [ln for ln in r.output.splitlines() if "workers died while starting" in ln]
    assert len(said) == 1 and "(3 tries; Nanny failed to start): the run" in said[0], r.output
    assert "the run goes on with this process's threads" in said[0]
    assert "Traceback" not in ours(r.output)
    same(files(annual.root / "plain"), files(annual.root / "threads"))


def _kill_workers(stop: threading.Event, until: float, killed: list[int]) -> None:
    """SIGKILL every worker process of this process's clusters as it appears, until ``until``."""
    me = psutil.Process()
    while not stop.is_set() and time.monotonic() < until:
        for child in me.children(recursive=True):
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    os.kill(child.pid, signal.SIGKILL)
                    killed.append(child.pid)
            except (psutil.Error, OSError):
                pass
        time.sleep(0.1)


def test_workers_killed_as_they_appear_end_the_run_in_one_line(annual, monkeypatch):
    """Once the cluster has started, its workers are killed as they appear (for up to 30 s): exit
    2, one line, no run in the ledger, no lake committed; the next plain run on the same workdir
    writes the plain run's files."""
    import distributed

    stop, killed = threading.Event(), []
    init = distributed.LocalCluster.__init__

    def init_then_kill(self, *a, **k):
        init(self, *a, **k)
        threading.Thread(target=_kill_workers, args=(stop, time.monotonic() + 30, killed), daemon=True).start()

    monkeypatch.setattr(distributed.LocalCluster, "__init__", init_then_kill)
    t0 = time.monotonic()
    try:
        r = annual("lost", "--workers", "2")
    finally:
        stop.set()
    elapsed = time.monotonic() - t0
    assert r.exit_code == 2, r.output
    assert len(killed) >= 2
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, r.output
    assert "Dask cluster could not keep its workers" in errors[0] and "nothing was committed" in errors[0]
    assert errors[0].endswith("then run again (the wait is the setting worker_wait_s); or run without --workers"), errors[0]
    assert "Traceback" not in ours(r.output) and "internal error" not in r.output and "KilledWorker" not in r.output
    assert elapsed < 90, elapsed
    root = annual.root
    work = root / "w-lost"
    assert committed_runs(work) == 0 and not (work / "lake" / "_manifest.json").exists()
    assert not (root / "lost" / "awards.csv").exists()
    monkeypatch.setattr(distributed.LocalCluster, "__init__", init)
    again = annual("again", work="lost")
    assert again.exit_code == 0, again.output
    assert committed_runs(work) == 1
    assert (root / "again" / "awards.csv").read_bytes() == (root / "plain" / "awards.csv").read_bytes()
    same(files(root / "plain"), files(root / "again"))
