"""``impcredit backfill``: the annual run of each tax year in order."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows import _env, api
from flows.cli import common


def backfill(
    input: Annotated[Path, typer.Option("--input", help="Submission folder, or one sub-folder per year (<dir>/2021).", metavar="DIR")],
    years: Annotated[str, typer.Option("--years", help="Tax years, e.g. 2019-2024 or 2019,2021.", metavar="YEARS")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date for every year (default July 1 after each tax year).", metavar="YYYY-MM-DD")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output folder (one sub-folder per year).", metavar="DIR")] = common.DATA / "out" / "backfill",
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    lake: Annotated[str | None, typer.Option("--lake", help=common.LAKE_HELP, metavar="DIR|URL")] = None,
    cap: Annotated[float | None, typer.Option("--cap", help="Override the statutory annual cap (dollars).", metavar="DOLLARS")] = None,
    policy: Annotated[str, typer.Option("--policy", help="Cap rationing: fcfs or pro-rata.", metavar="fcfs|pro-rata")] = "fcfs",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help=_env.WORKERS_HELP, metavar="N")] = None,
) -> None:
    """Run the annual flow for each tax year in order (subflows of one parent flow)."""
    common.use_profiles(profiles)
    as_of_date = common.parse_date(as_of, "--as-of") if as_of else None
    common.check_run_args(input, policy, cap)
    common.local_dir(out, "--out")
    common.use_lake(workdir, lake, writes=True)
    with common.dask_cluster(workers, dask_address) as address:
        _run(input, years, as_of_date, out, workdir, cap, policy, wait, address)


def _run(input: Path, years: str, as_of_date, out: Path, workdir: Path, cap, policy: str, wait: float,
         address: str | None) -> None:
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.backfill import backfill_flow, parse_years
        from transforms.settings import AllocationSettings, Settings

        year_list = parse_years(years)
        params = common.common_inputs()
        settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
        with common.console.status(f"backfilling {len(year_list)} tax years..."), api.run_settings():
            state = backfill_flow(
                input_dir=input.resolve(), years=year_list, as_of=as_of_date, out_dir=out.resolve(),
                workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                dask_address=address, return_state=True,
            )
        report = state.result(raise_on_failure=False)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    t = Table(title="impcredit backfill")
    for col in ("tax year", "status", "run", "applications", "requested", "awarded"):
        t.add_column(col)
    for y in report.years:
        s = y.summary
        t.add_row(
            str(y.tax_year), "[green]completed[/]" if y.status == "completed" else "[red]failed[/]",
            s.run_id if s else "", f"{s.applications:,}" if s else "", f"{s.requested:,.2f}" if s else "",
            f"{s.awarded:,.2f}" if s else "",
        )
    common.console.print(t)
    for y in report.years:
        if y.status != "completed":
            common.err.print(f"[bold red]tax year {y.tax_year} failed:[/] {y.message}")
    common.console.print(report.message)
    if report.failed:
        raise typer.Exit(1)
