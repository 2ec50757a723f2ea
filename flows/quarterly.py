"""Quarterly estimates (spec section 9) as a Prefect flow: thin over ``transforms.runs.quarterly``.

The credit computation can fan out per employer batch (``batches`` > 1) through the flow's task
runner; with ``dask_address`` the flow runs on ``prefect_dask.DaskTaskRunner(address=...)``.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows import _env
from flows.fanout import fan_out
from flows.settings import RunSettings, run_settings, today
from transforms.award import ledger
from transforms.reference.parameters import Parameters
from transforms.runs import annual as steps
from transforms.runs import quarterly as q
from transforms.settings import Settings


@task(cache_policy=NO_CACHE)
def inputs_in_a_temporary_lake(input_dir: Path, cfg: RunSettings, dask_address: str | None = None) -> steps.RunInputs:
    """Stage into a temporary lake: estimates and what-ifs never touch the workdir's lake. The
    key is read here, where it is used (never a flow or task parameter). ``dask_address``: a
    cluster of workers on this machine (the temporary lake is a local folder) ingests."""
    tmp = Path(tempfile.mkdtemp(prefix=f"impcredit-stage-{os.getpid()}-"))
    try:
        staged = _env.stage(input_dir, tmp, cfg, dask_address=dask_address)
        staged.frames = {k: v.lazy().collect() for k, v in staged.frames.items()}  # before the lake goes
        return staged
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@task(cache_policy=NO_CACHE)
def estimate_batch(frames: dict, tax_year: int, quarter: int, as_of: dt.date, params: Parameters, settings: Settings):
    return q.estimate_credits(frames, tax_year, quarter, as_of, params, settings)


@task(cache_policy=NO_CACHE)
def write_and_record(ctx: steps.RunContext) -> q.QuarterlySummary:
    return q.run_quarterly(ctx)


@flow(name="impcredit-quarterly", flow_run_name="quarterly-{tax_year}-q{quarter}-as-of-{as_of}", log_prints=False)
def quarterly_flow(
    input_dir: Path,
    tax_year: int,
    quarter: int,
    as_of: dt.date,
    out_dir: Path,
    workdir: Path,
    params: Parameters,
    settings: Settings,
    batches: int = 1,
    wait_seconds: float = 0.0,
    ingest_address: str | None = None,
    profiles: str | None = None,
) -> q.QuarterlySummary:
    """``ingest_address``: a Dask cluster on this machine (``--workers``) ingests into the
    temporary lake; a cluster elsewhere would not see it. ``profiles``: the agency's profiles folder
    (the run's settings, ``flows.settings``, read when the run starts)."""
    logger = get_run_logger()
    q.quarter_end(tax_year, quarter)  # validates the quarter
    steps.check_dated(as_of, today(), run="a quarterly run (its estimates are recorded)")  # spec section 7
    started_at = ledger.now_utc()
    cfg = run_settings(profiles=profiles)
    with steps.workdir_lock(workdir, wait_seconds=wait_seconds):
        _env.one_key(workdir, ("ledger",))  # its own lake is temporary; the workdir's ledger has one key
        steps.clean_stale_pending(out_dir)
        staged = inputs_in_a_temporary_lake(input_dir, cfg, ingest_address)
        # no request received yet is a completed run that says so (spec section 9), not a failure
        run_id = steps.new_run_id(f"quarterly-q{quarter}", tax_year, staged.inputs_sha256)
        _env.name_flow_run(run_id)
        result = fan_out(estimate_batch, staged.frames, batches, tax_year=tax_year, quarter=quarter, as_of=as_of,
                         params=params, settings=settings)
        summary = write_and_record(steps.RunContext(
            kind="quarterly", run_id=run_id, tax_year=tax_year, quarter=quarter, as_of=as_of, params=params,
            settings=settings, workdir=workdir, out_dir=out_dir, staged=staged, result=result, started_at=started_at,
            invoked_at=_env.invoked_at(), documents=cfg.documents()))
    if summary.no_request_line:  # completed, and says so (spec section 9): in the logs and the artifact
        logger.warning("quarterly run %s: %s", run_id, summary.no_request_line)
    logger.info("quarterly run %s: %s", run_id, summary.cap_line)
    lines = [f"cap pressure: {summary.cap_line}"]
    create_markdown_artifact(
        key=f"quarterly-{tax_year}-q{quarter}",
        markdown=_env.outputs_markdown(f"Quarterly estimate, tax year {tax_year} Q{quarter} (as of {as_of})", summary,
                                       [f"**{summary.no_request_line}**", *lines] if summary.no_request_line else lines),
        description=f"Quarterly estimate {tax_year} Q{quarter}" + (
            f": no request of tax year {tax_year}" if summary.no_request_line else ""),
    )
    return summary
