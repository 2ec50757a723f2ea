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
from transforms.runs import quarterly as q
from transforms.settings import Settings

_env.forward_stage_lines()
DASK_ENV = "IMPCREDIT_DASK_ADDRESS"


@task(cache_policy=NO_CACHE)
def credit_batch(frames: dict, tax_year: int, as_of: dt.date, params: Parameters, settings: Settings):
    return steps.compute(frames, tax_year, as_of, params, settings)


def fan_out(task_fn, frames: dict, batches: int, **kwargs):
    """Run ``task_fn`` on each employer batch through the flow's task runner and merge."""
    parts = q.employer_batches(frames, batches)
    if len(parts) == 1:
        return task_fn(parts[0], **kwargs)
    futures = [task_fn.submit(p, **kwargs) for p in parts]
    return q.merge_results([f.result() for f in futures])


def with_task_runner(flow_obj, dask_address: str | None):
    """The flow on a Dask cluster when an address is given (argument or IMPCREDIT_DASK_ADDRESS)."""
    address = dask_address or os.environ.get(DASK_ENV) or None
    if not address:
        return flow_obj
    from prefect_dask import DaskTaskRunner

    return flow_obj.with_options(task_runner=DaskTaskRunner(address=address))


