"""An in-process stand-in for the Dask client of ``ingest.cluster``: the staged route (every
file's passed rows to the lake's staging area, payroll's run-level rules per employer bucket,
one part per year) run on a pool of threads of this process, with no Dask at all.

``ingest.cluster`` talks to Dask only through ``submit(fn, *args, pure=False)``, ``gather``,
``scheduler_info()["workers"]`` and ``close``: this is those four over a
``ThreadPoolExecutor``. A task's exception is raised by ``gather`` as it is (no worker to lose,
nothing retried)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

LOCAL = "local"  # ``ingest_folder(..., cluster=LOCAL)``: the staged route in this process


class LocalClient:
    """``submit``/``gather``/``scheduler_info``/``close`` of ``distributed.Client`` over ``workers`` threads."""

    def __init__(self, workers: int = 2) -> None:
        self.workers = max(1, int(workers))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ingest-local")

    def submit(self, fn, *args, pure: bool = False, **kwargs) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def gather(self, futures: list[Future]) -> list:
        return [f.result() for f in futures]

    def scheduler_info(self) -> dict:
        return {"workers": {f"local-{i}": {"nthreads": 1} for i in range(self.workers)}}

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
