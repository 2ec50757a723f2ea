"""``impcredit quarterly``: quarterly estimates (spec section 9); allocates nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows import _env, api
from flows.cli import common, dates


def _print_quarterly(s) -> None:
    rows = [
        ("Run", common.Whole(s.run_id)),
        ("Tax year / quarter", f"{s.tax_year} Q{s.quarter} (data through {s.quarter_end}, as of {s.as_of})"),
        ("Requests estimated", f"{s.applications:,}  " + ", ".join(f"{k} {v}" for k, v in s.statuses.items())
         if s.applications else f"none: {s.no_request_line}"),
        ("Employee-years (eligible)", f"{s.employee_years:,} ({s.eligible_employee_years:,})"),
        ("Projected credits", f"${s.projected_total:,.2f}"),
        ("Cap pressure", s.cap_line),
        ("Allocated", "nothing (estimates only; run recorded in the ledger)"),
        ("Received after the as-of date", f"{s.received_after_as_of:,}, not seen"),
    ]
    if s.rejected_rows:
        rows.append(("Rejected input rows", f"[yellow]{s.rejected_rows:,}[/] (see rejects.csv)"))
    rows.append(("Variance report", "variance.csv" if s.variance_written else "after the annual run of the tax year"))
    rows.append(("Outputs", common.Whole(s.out_dir)))
    common.panel("impcredit quarterly: completed", rows, s.outputs)


def quarterly(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout).", metavar="DIR")],
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to estimate.", metavar="YEAR")],
    quarter: Annotated[int, typer.Option("--quarter", help="Quarter 1-4: data through Mar 31, Jun 30, Sep 30, Dec 31.", metavar="1-4")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today): applications received by then.", metavar="YYYY-MM-DD")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/quarterly/<year>/q<q>-as-of-<date>, a new one per run).", metavar="DIR")] = None,
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help=_env.WORKERS_HELP, metavar="N")] = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
) -> None:
    """Quarterly estimates (spec 9): projected credits, installment shares, cap pressure; allocates nothing."""
    as_of_date = dates.parse_date(as_of, "--as-of")
    dates.dated(as_of_date, run="a quarterly run (its estimates are recorded)")  # spec section 7
    cfg, _ = common.use_profiles(profiles)
    common.show_stages()
    if quarter not in (1, 2, 3, 4):
        common.fail(f"--quarter must be 1, 2, 3 or 4, not {quarter}")
    common.check_run_args(input)
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    from transforms.runs.quarterly import estimate_folder

    out_dir = out or estimate_folder(common.DATA / "out" / "quarterly", tax_year, quarter, as_of_date)
    with common.dask_cluster(workers, dask_address) as address:
        # the estimates stage into a temporary local lake: ingested on the cluster when it is this
        # machine's (--workers); a cluster elsewhere computes the estimates only
        _run(input, tax_year, quarter, as_of_date, out_dir, workdir, common.batch_count(batches, address), wait, address,
             address if workers else None, common.profiles_param(cfg))


def _run(input: Path, tax_year: int, quarter: int, as_of_date, out_dir: Path, workdir: Path, n: int, wait: float,
         address: str | None, ingest_address: str | None, profiles: str | None = None) -> None:
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.fanout import with_task_runner
        from flows.quarterly import quarterly_flow
        from transforms.settings import Settings

        params = common.common_inputs()
        settings = Settings()
        common.check_year(params, tax_year, settings.rules, input, as_of_date, estimates=True, cluster=ingest_address)
        from prefect import tags

        with common.console.status("running the quarterly estimates..."), api.run_settings(), tags(
                "impcredit", "quarterly", f"tax-year-{tax_year}"):
            summary = with_task_runner(quarterly_flow, address)(
                input_dir=input.resolve(), tax_year=tax_year, quarter=quarter, as_of=as_of_date,
                out_dir=out_dir.resolve(), workdir=workdir.resolve(), params=params, settings=settings,
                batches=n, wait_seconds=wait, ingest_address=ingest_address, profiles=profiles,
            )
    except common.known_errors() as exc:
        common.fail_or_nothing(exc)
        return
    _print_quarterly(summary)
