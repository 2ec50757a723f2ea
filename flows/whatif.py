"""What-if runs as a Prefect flow: credits with overlaid settings/parameters, allocation against
the ledger read-only (``fresh=True``), outputs beside the ledger, ``diff.csv``. Never commits."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows import _env
from flows.fanout import credit_batch, fan_out
from flows.quarterly import inputs_in_a_temporary_lake
from flows.settings import run_settings
from transforms.award import ledger
from transforms.reference.parameters import Parameters
from transforms.runs import annual as steps
from transforms.runs import whatif as w
from transforms.settings import Settings


@task(cache_policy=NO_CACHE)
def decide_and_write(ctx: steps.RunContext, assignments: dict) -> w.WhatIfOutcome:
    return w.run_whatif(ctx, assignments)


@flow(name="impcredit-whatif", flow_run_name="whatif-{tax_year}-as-of-{as_of}", log_prints=False)
def whatif_flow(
    input_dir: Path,
    tax_year: int,
    as_of: dt.date,
    out_dir: Path,
    workdir: Path,
    params: Parameters,
    settings: Settings,
    assignments: dict | None = None,
    batches: int = 1,
    wait_seconds: float = 0.0,
    profiles: str | None = None,
) -> w.WhatIfOutcome:
    """``profiles``: the agency's profiles folder (the run's settings, read when the run starts)."""
    logger = get_run_logger()
    cfg = run_settings(profiles=profiles)
    # The lock keeps an annual run from committing while the what-if reads the ledger.
    with steps.workdir_lock(workdir, wait_seconds=wait_seconds):
        _env.one_key(workdir)  # the ledger it compares with was written under this key
        staged = inputs_in_a_temporary_lake(input_dir, cfg)
        steps.check_tax_year(staged.frames["applications"], tax_year, as_of, steps.first_tax_year(params))
        run_id = steps.new_run_id("whatif", tax_year, staged.inputs_sha256)
        _env.name_flow_run(run_id)
        result = fan_out(credit_batch, staged.frames, batches, tax_year=tax_year, as_of=as_of, params=params,
                         settings=settings)
        outcome = decide_and_write(steps.RunContext(
            kind="whatif", run_id=run_id, tax_year=tax_year, as_of=as_of, params=params, settings=settings,
            workdir=workdir, out_dir=out_dir, staged=staged, result=result, started_at=ledger.now_utc(),
            invoked_at=_env.invoked_at(), documents=cfg.documents()), dict(assignments or {}))
    logger.info("what-if %s: %d awards change against %s", run_id, outcome.changed, outcome.baseline_run)
    return outcome
