"""The annual run (spec sections 7 and 8) as a Prefect flow: thin over ``transforms.runs.annual``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows import _env
from flows.fanout import credit_batch, fan_out
from flows.settings import RunSettings, run_settings, today
from transforms.award import ledger
from transforms.reference.parameters import Parameters
from transforms.runs import annual as steps
from transforms.settings import Settings


@task(cache_policy=NO_CACHE)
def stage(input_dir: Path, workdir: Path, cfg: RunSettings, data_docs: bool = False,
          dask_address: str | None = None, out_dir: Path | str | None = None) -> steps.RunInputs:
    """The key is read here, where it is used: never a flow or task parameter (those are stored
    in Prefect's database). ``dask_address``: the ingest runs on that cluster's workers, each
    reading the key itself (``hash_key``, from its own environment, key file or Secret block)."""
    return _env.stage(input_dir, workdir, cfg, data_docs=data_docs, dask_address=dask_address, out_dir=out_dir)


@task(cache_policy=NO_CACHE)
def decide_write_commit(ctx: steps.RunContext) -> steps.RunSummary:
    """Decide against the ledger (held applications aside), write outputs aside, say what
    changed, write the products, commit the ledger, move the outputs."""
    return steps.decide_and_commit(ctx)


@flow(name="impcredit-annual", flow_run_name="annual-{tax_year}-as-of-{as_of}", log_prints=False)
def annual_flow(
    input_dir: Path,
    tax_year: int,
    as_of: dt.date,
    out_dir: Path | str,
    workdir: Path,
    params: Parameters,
    settings: Settings,
    wait_seconds: float = 0.0,
    batches: int = 1,
    data_docs: bool = False,
    dask_address: str | None = None,
    profiles: str | None = None,
) -> steps.RunSummary:
    """``data_docs``: validate with Great Expectations itself and write its Data Docs into
    ``out_dir/data_docs`` (GX is slower than the suites compiled to Polars: off by default).
    ``out_dir``: a local folder, or an object store's URL (``s3://bucket/prefix``: the outputs are
    staged locally and uploaded, ``manifest.json`` last). The lake is the workdir's
    (``transforms.ingest.store.location``). ``dask_address``: a Dask scheduler whose workers
    ingest the submission (``transforms.ingest.route``). ``profiles``: the agency's profiles folder
    (the run's settings, ``flows.settings``, read when the run starts: the command line, impcredit.toml,
    the environment)."""
    logger = get_run_logger()
    steps.check_dated(as_of, today())  # a decision dated after today: refused before anything is read (spec section 7)
    started_at = ledger.now_utc()
    cfg = run_settings(profiles=profiles)
    with steps.workdir_lock(workdir, wait_seconds=wait_seconds):
        _env.one_key(workdir, ("ledger", "lake"))  # before anything is read: one key for a lake and its ledger
        steps.clean_stale_pending(out_dir)
        staged = stage(input_dir, workdir, cfg, data_docs, dask_address, out_dir)
        steps.check_tax_year(staged.frames["applications"], tax_year, as_of, steps.first_tax_year(params))
        run_id = steps.new_run_id("annual", tax_year, staged.inputs_sha256)
        flow_run_id = _env.name_flow_run(run_id)
        result = fan_out(credit_batch, staged.frames, batches, tax_year=tax_year, as_of=as_of, params=params,
                         settings=settings)
        summary = decide_write_commit(steps.RunContext(
            kind="annual", run_id=run_id, tax_year=tax_year, as_of=as_of, params=params, settings=settings,
            workdir=workdir, out_dir=out_dir, staged=staged, result=result, started_at=started_at,
            invoked_at=_env.invoked_at(), documents=cfg.documents()))
    summary.prefect_flow_run = flow_run_id
    logger.info("run %s committed: %d applications, awarded %.2f", run_id, summary.applications, summary.awarded)
    create_markdown_artifact(
        key=f"annual-{tax_year}",
        markdown=_env.outputs_markdown(f"Annual run, tax year {tax_year} (as of {as_of})", summary, [
            f"applications: {summary.applications:,} ("
            + ", ".join(f"{k} {v}" for k, v in summary.statuses.items()) + ")",
            f"requested ${summary.requested:,.2f}, awarded ${summary.awarded:,.2f} (${summary.awarded_now:,.2f} by this run)",
            f"cap ${summary.cap:,.2f}, left ${summary.cap_left:,.2f}",
            f"held, not decided: {getattr(summary, 'held', 0):,}; rejected input rows: {summary.rejected_rows:,}"]),
        description=f"Annual run {run_id}: requested {summary.requested:,.2f}, awarded {summary.awarded:,.2f}",
    )
    return summary
