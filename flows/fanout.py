"""Per-employer-batch fan-out of the credit computation through the flow's task runner (the
thread pool by default; a Dask cluster when an address is given). Credits are per application and
duplicates are per employer, so a batch of whole employers computes exactly its own rows."""

from __future__ import annotations

import datetime as dt
import os

from prefect import task
from prefect.cache_policies import NO_CACHE

from flows import _env
from transforms.reference.parameters import Parameters
from transforms.runs import annual as steps
from transforms.runs import batches
from transforms.settings import Settings

_env.forward_stage_lines()
DASK_ENV = "IMPCREDIT_DASK_ADDRESS"


@task(cache_policy=NO_CACHE)
def credit_batch(frames: dict, tax_year: int, as_of: dt.date, params: Parameters, settings: Settings):
    return steps.compute(frames, tax_year, as_of, params, settings)


def fan_out(task_fn, frames: dict, n_batches: int, **kwargs):
    """Run ``task_fn`` on each employer batch through the flow's task runner and merge. On a Dask
    cluster a batch lost with its workers (or a cluster that cannot keep them for
    ``IMPCREDIT_WORKER_WAIT_S`` seconds) ends the run in one line (``executors.ClusterError``)."""
    parts = batches.employer_batches(frames, n_batches)
    if len(parts) == 1:
        return task_fn(parts[0], **kwargs)
    futures = [task_fn.submit(p, **kwargs) for p in parts]
    return batches.merge_results(results(futures, "the credits were computed"))


def results(futures: list, what: str) -> list:
    """The futures' results; on a Dask cluster, watched (``executors.watch``) and its failures the
    project's own error."""
    from transforms.ingest import executors

    dask = [getattr(f, "wrapped_future", None) for f in futures]
    try:
        if dask and all(hasattr(d, "client") for d in dask):
            from flows.settings import run_settings

            executors.watch(dask[0].client, dask, what, run_settings().worker_wait_s)
        return [f.result() for f in futures]
    except executors.ClusterError:
        raise
    except Exception as exc:
        if not executors.lost_workers(exc):
            raise
        raise executors.ClusterError(
            f"the run on the Dask cluster stopped while {what}: {executors.cluster_failure(exc)}; nothing was committed: "
            "check the workers' memory and logs, then run again") from None


def with_task_runner(flow_obj, dask_address: str | None):
    """The flow on a Dask cluster when an address is given (argument or IMPCREDIT_DASK_ADDRESS)."""
    address = dask_address or os.environ.get(DASK_ENV) or None
    if not address:
        return flow_obj
    from prefect_dask import DaskTaskRunner

    return flow_obj.with_options(task_runner=DaskTaskRunner(address=address))


