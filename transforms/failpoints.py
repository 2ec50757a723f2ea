"""Named points where a run can be killed on purpose, to test crash safety (SIGKILL, no cleanup).

The point is armed at the edge (``flows._env`` arms the one ``IMPCREDIT_FAILPOINT`` names, for the
command and what it starts): the process is killed with SIGKILL when it reaches that point. Not
armed (always, outside tests), :func:`hit` does nothing.
"""

from __future__ import annotations

import os
import signal

POINTS = ("staged", "computed", "outputs_written", "committed", "published_partly")
# on a Dask worker, in an ingest on a cluster (``ingest.route``): the worker's process ends (os._exit)
# when it starts the first file's task: the first time only, or every time
WORKER_POINTS = ("ingest_worker", "ingest_worker_always")
_armed: list[str | None] = [None]


def arm(name: str | None) -> None:
    """Arm the point ``name`` for this process (None: none)."""
    _armed[0] = name or None


def armed() -> str | None:
    return _armed[0]


def hit(name: str) -> None:
    if _armed[0] == name:
        os.kill(os.getpid(), signal.SIGKILL)


def exit_worker(name: str, marker_dir) -> None:
    """``ingest_worker``: end this worker's process the first time a task reaches here (a marker
    in ``marker_dir``, the run's scratch area, says it did); ``ingest_worker_always``: every time."""
    if name == "ingest_worker_always":
        os._exit(70)
    if name == "ingest_worker":
        marker = marker_dir / "_failpoint_ingest_worker"
        if not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_bytes(b"killed")
            os._exit(70)
