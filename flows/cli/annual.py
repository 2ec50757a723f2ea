"""``impcredit annual``: compute, decide against the cap and write the award files (spec sections 2-8)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from flows import _env, api
from flows.cli import common, dates


def annual(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout, spec section 1).", metavar="DIR")],
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to compute.", metavar="YEAR")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today); its year is the approval year.", metavar="YYYY-MM-DD")] = None,
    out: Annotated[str | None, typer.Option("--out", help="Output folder (default data/out/annual-YEAR), or an object "
                                            "store place (s3://bucket/prefix: uploaded after the ledger commits, "
                                            "manifest.json last).", metavar="DIR|URL")] = None,
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB, local) and, by default, the Parquet lake "
                                          "(<workdir>/lake).", metavar="DIR")] = common.DATA / "work",
    lake: Annotated[str | None, typer.Option("--lake", help=common.LAKE_HELP, metavar="DIR|URL")] = None,
    cap: Annotated[float | None, typer.Option("--cap", help="Override the statutory annual cap (dollars).", metavar="DOLLARS")] = None,
    policy: Annotated[str, typer.Option("--policy", help="Cap rationing: fcfs or pro-rata.", metavar="fcfs|pro-rata")] = "fcfs",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help=_env.WORKERS_HELP, metavar="N")] = None,
    data_docs: Annotated[bool, typer.Option("--data-docs", envvar="IMPCREDIT_DATA_DOCS", help="Validate with Great "
                                            "Expectations itself and write its Data Docs into --out/data_docs (about "
                                            "9 s more per 1M rows).")] = False,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
) -> None:
    """Compute credits, decide applications against the cap and write the award files.

    Example: impcredit annual --input data/sample --tax-year 2023 --as-of 2024-07-01
    (the approval year is the as-of date's year; applications received after it wait for a later run)
    """
    as_of_date = dates.parse_date(as_of, "--as-of")
    dates.dated(as_of_date)  # a decision dated after today: refused before anything is read (spec section 7)
    cfg, _ = common.use_profiles(profiles)
    started = time.monotonic()
    common.show_stages()
    common.check_run_args(input, policy, cap)
    # where it reads and writes, checked before anything is (no credentials, no bucket, no endpoint: one line)
    out_dir = common.out_location(out, common.DATA / "out" / f"annual-{tax_year}")
    common.use_lake(workdir, lake, writes=True)
    with common.dask_cluster(workers, dask_address) as address:
        _run(input, tax_year, as_of_date, out_dir, workdir, cap, policy, wait, common.batch_count(batches, address),
             address, data_docs, started, common.profiles_param(cfg))


def _run(input: Path, tax_year: int, as_of_date, out_dir, workdir: Path, cap, policy: str, wait: float, n: int,
         address: str | None, data_docs: bool, started: float, profiles: str | None = None) -> None:
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.annual import annual_flow
        from transforms.reference.parameters import load_parameters
        from transforms.settings import AllocationSettings, Settings

        settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
        params = load_parameters()
        common.check_year(params, tax_year, settings.rules, input, as_of_date, cluster=address)
        _env.hash_key()  # a missing or bad key stops here; the flow's task reads it again where it is used
        from prefect import tags

        from flows.fanout import with_task_runner

        with common.console.status("running the annual flow..."), api.run_settings(), tags("impcredit", "annual",
                                                                                       f"tax-year-{tax_year}"):
            summary = with_task_runner(annual_flow, address)(
                input_dir=input.resolve(), tax_year=tax_year, as_of=as_of_date, out_dir=out_dir if isinstance(
                    out_dir, Path) else str(out_dir),
                workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                batches=n, data_docs=data_docs, dask_address=address, profiles=profiles,
            )
    except common.known_errors() as exc:
        common.fail_or_nothing(exc)
        return
    common.print_summary(summary, time.monotonic() - started)
