"""Faults on any executor (issue 37 part 4): a Dask cluster that cannot keep its workers ends the
run by itself within the set time (``IMPCREDIT_WORKER_WAIT_S``), exit 2, one line saying what
happened and what to do, nothing committed; never an internal error, never a wait for ever."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from flows.cli import app
from transforms.synthetic.generate import generate_submission

pytestmark = pytest.mark.slow


def _kill_workers_as_they_start(stop: threading.Event, started_after: float) -> None:
    """SIGKILL every worker process of this process's local cluster, again each time one starts."""
    me = psutil.Process()
    while not stop.is_set():
        for child in me.children(recursive=True):
            try:
                if child.create_time() >= started_after and "spawn_main" in " ".join(child.cmdline()):
                    os.kill(child.pid, signal.SIGKILL)
            except (psutil.Error, OSError):
                pass
        time.sleep(0.1)


def test_a_cluster_whose_workers_are_killed_as_they_start_ends_the_run_in_time(tmp_path: Path, monkeypatch):
    from distributed import LocalCluster

    sub = tmp_path / "sub"
    generate_submission(sub, employers=6, seed=4, tax_year=2023)
    monkeypatch.setenv("IMPCREDIT_WORKER_WAIT_S", "5")
    started = time.time() - 1
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        stop = threading.Event()
        killer = threading.Thread(target=_kill_workers_as_they_start, args=(stop, started), daemon=True)
        killer.start()
        try:
            t0 = time.monotonic()
            r = CliRunner().invoke(app, ["ingest", "--input", str(sub), "--workdir", str(tmp_path / "w"),
                                         "--dask-address", cluster.scheduler_address], env={"COLUMNS": "300"})
            elapsed = time.monotonic() - t0
        finally:
            stop.set()
            killer.join()
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and "Dask cluster" in errors[0] and "nothing was committed" in errors[0], r.output
    # (Prefect's own handlers may log "--- Logging error ---" for a stream the test runner closed: not the command's)
    ours = "\n".join(b for b in r.output.split("--- Logging error ---") if "logging/handlers.py" not in b)
    assert "Traceback" not in ours and "internal error" not in r.output and "KilledWorker" not in r.output
    assert elapsed < 90, elapsed  # the set wait (5 s) and the cluster's own retries, never for ever
    assert not (tmp_path / "w" / "lake" / "_manifest.json").exists()
