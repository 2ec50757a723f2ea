"""``impcredit backfill``: the annual run of each tax year in order."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from flows import _env, api
from flows.cli import common, dates, listing

YEAR_KEYS = ["tax_year", "status", "run_id", "applications", "requested", "awarded", "message"]


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
    format: listing.Format = "table",
) -> None:
    """Run the annual flow for each tax year in order (subflows of one parent flow).

    Example: impcredit backfill --input data/history --years 2021-2023 --format csv > backfill.csv
    """
    cfg, _ = common.use_profiles(profiles)
    as_of_date = dates.parse_date(as_of, "--as-of") if as_of else None
    if as_of_date is not None:
        dates.dated(as_of_date)
    common.check_run_args(input, policy, cap)
    common.local_dir(out, "--out")
    common.use_lake(workdir, lake, writes=True)
    with common.dask_cluster(workers, dask_address) as address:
        _run(input, years, as_of_date, out, workdir, cap, policy, wait, address, format, common.profiles_param(cfg))


def _run(input: Path, years: str, as_of_date, out: Path, workdir: Path, cap, policy: str, wait: float,
         address: str | None, format: str, profiles: str | None = None) -> None:
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.backfill import backfill_flow, parse_years, year_as_of
        from transforms.settings import AllocationSettings, Settings

        year_list = parse_years(years)
        for y in year_list:  # each year's date (July 1 after it when no --as-of), before anything is read
            dates.dated(year_as_of(y, as_of_date), f"tax year {y}'s as-of date",
                        note="" if as_of_date else " (July 1 after it: no --as-of given)")
        params = common.common_inputs()
        settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
        with common.console.status(f"backfilling {len(year_list)} tax years..."), api.run_settings():
            state = backfill_flow(
                input_dir=input.resolve(), years=year_list, as_of=as_of_date, out_dir=out.resolve(),
                workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                dask_address=address, profiles=profiles, return_state=True,
            )
        report = state.result(raise_on_failure=False)
    except common.known_errors() as exc:
        common.fail(common.said(exc))
        return
    records = [{"tax_year": y.tax_year, "status": y.status, "run_id": y.summary.run_id if y.summary else None,
                "applications": y.summary.applications if y.summary else None,
                "requested": listing.money(y.summary.requested) if y.summary else None,
                "awarded": listing.money(y.summary.awarded) if y.summary else None,
                "message": None if y.status == "completed" else y.message} for y in report.years]

    def amount(key: str):
        return lambda r: "" if r[key] is None else f"{r[key]:,.2f}"

    Col = listing.Col
    listing.show(format, YEAR_KEYS, records, [
        Col("tax year", "tax_year"),
        Col("status", text=lambda r: Text(r["status"], style="green" if r["status"] == "completed" else "red")),
        Col("run", "run_id"), Col("applications", text=lambda r: "" if r["applications"] is None else f"{r['applications']:,}"),
        Col("requested", text=amount("requested")), Col("awarded", text=amount("awarded"))], title="impcredit backfill")
    for y in report.years:
        if y.status != "completed":
            common.err.print(f"[bold red]tax year {y.tax_year} failed:[/] {y.message}")
    if format == "table":
        common.console.print(report.message)
    if report.failed:
        raise typer.Exit(1)
