"""CLI commands of the orchestration layer: quarterly, whatif, backfill, variance.

``flows/cli.py`` calls :func:`register` with its typer app. Helpers of ``flows.cli`` are imported
inside the commands (no import cycle). ``python -m flows.cli_orchestration`` runs these commands alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.table import Table

from flows import _env

DATA = _env.REPO_ROOT / "data"


def _cli():
    from flows import cli

    return cli


def _panel(title: str, rows: list[tuple[str, str]], files: list[str] | None = None) -> None:
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k, v in rows:
        t.add_row(k, v)
    for p in files or []:
        t.add_row("", Path(p).name)
    _cli().console.print(Panel(t, title=title, expand=False))


def print_quarterly(s) -> None:
    rows = [
        ("Run", s.run_id),
        ("Tax year / quarter", f"{s.tax_year} Q{s.quarter} (data through {s.quarter_end}, as of {s.as_of})"),
        ("Applications", f"{s.applications:,}  " + ", ".join(f"{k} {v}" for k, v in s.statuses.items())),
        ("Employee-years (eligible)", f"{s.employee_years:,} ({s.eligible_employee_years:,})"),
        ("Projected credits", f"${s.projected_total:,.2f}"),
        ("Cap pressure", s.cap_line),
        ("Allocated", "nothing (estimates only; run recorded in the ledger)"),
        ("Received after the as-of date", f"{s.received_after_as_of:,}, not seen"),
    ]
    if s.rejected_rows:
        rows.append(("Rejected input rows", f"[yellow]{s.rejected_rows:,}[/] (see rejects.csv)"))
    rows.append(("Variance report", "variance.csv" if s.variance_written else "after the annual run of the tax year"))
    rows.append(("Outputs", s.out_dir))
    _panel("impcredit quarterly: completed", rows, s.outputs)


def _common_inputs():
    from transforms.params import load_parameters
    _env.hash_key()  # a missing or bad key stops here; the flow's task reads it again where it is used
    return load_parameters()


def register(app: typer.Typer) -> None:
    """Add the orchestration commands to ``app``."""

    @app.command()
    def quarterly(
        input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout).", metavar="DIR")],
        tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to estimate.", metavar="YEAR")],
        quarter: Annotated[int, typer.Option("--quarter", help="Quarter 1-4: data through Mar 31, Jun 30, Sep 30, Dec 31.", metavar="1-4")],
        as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today): applications received by then.", metavar="YYYY-MM-DD")] = None,
        out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/quarterly/<year>-Q<q>).", metavar="DIR")] = None,
        workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
        batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
        dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
        wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    ) -> None:
        """Quarterly estimates (spec 9): projected credits, installment shares, cap pressure; allocates nothing."""
        c = _cli()
        c._show_stages()
        as_of_date = c._parse_date(as_of, "--as-of")
        if quarter not in (1, 2, 3, 4):
            c._fail(f"--quarter must be 1, 2, 3 or 4, not {quarter}")
        _cli()._check_run_args(input)
        n = _cli()._batches(batches, dask_address)
        out_dir = out or DATA / "out" / "quarterly" / f"{tax_year}-Q{quarter}"
        try:
            c.api.ensure_api()  # before Prefect is imported
            from flows.fanout import with_task_runner
            from flows.quarterly import quarterly_flow
            from transforms.settings import Settings

            params = _common_inputs()
            settings = Settings()
            c._check_year(params, tax_year, settings.rules, input, as_of_date, estimates=True)
            from prefect import tags

            with c.console.status("running the quarterly estimates..."), c.api.run_settings(), tags(
                    "impcredit", "quarterly", f"tax-year-{tax_year}"):
                summary = with_task_runner(quarterly_flow, dask_address)(
                    input_dir=input.resolve(), tax_year=tax_year, quarter=quarter, as_of=as_of_date,
                    out_dir=out_dir.resolve(), workdir=workdir.resolve(), params=params, settings=settings,
                    batches=n, wait_seconds=wait,
                )
        except c._known_errors() as exc:
            c._fail_or_nothing(exc)
            return
        print_quarterly(summary)

    @app.command()
    def whatif(
        input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout).", metavar="DIR")],
        tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to compute.", metavar="YEAR")],
        as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today); its year is the approval year.", metavar="YYYY-MM-DD")] = None,
        set_: Annotated[list[str] | None, typer.Option("--set", help="Setting NAME=VALUE (interpretation register, allocation).", metavar="NAME=VALUE")] = None,
        param: Annotated[list[str] | None, typer.Option("--param", help="Parameter overlay NAME[@DATE]=VALUE.", metavar="NAME[@DATE]=VALUE")] = None,
        cap: Annotated[float | None, typer.Option("--cap", help="Cap in dollars for the what-if.", metavar="DOLLARS")] = None,
        policy: Annotated[str | None, typer.Option("--policy", help="fcfs or pro-rata.", metavar="fcfs|pro-rata")] = None,
        workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (read only here).", metavar="DIR")] = DATA / "work",
        out: Annotated[Path | None, typer.Option("--out", help="Output folder (default <workdir>/whatif/<timestamp>).", metavar="DIR")] = None,
        batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
        dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
        wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    ) -> None:
        """Run with other settings, parameters, cap or policy; writes outputs and diff.csv, never the ledger."""
        c = _cli()
        c._show_stages()
        as_of_date = c._parse_date(as_of, "--as-of")
        _cli()._check_run_args(input, policy, cap)
        n = _cli()._batches(batches, dask_address)
        try:
            c.api.ensure_api()  # before Prefect is imported
            from flows.fanout import with_task_runner
            from flows.whatif import whatif_flow
            from transforms import whatif as w
            from transforms.settings import Settings

            assignments = w.parse_assignments(set_, "--set")
            if cap is not None:
                assignments["cap"] = str(cap)
            if policy is not None:
                assignments["policy"] = policy
            try:
                settings = Settings().with_assignments(assignments)
            except ValueError as exc:
                c._fail(f"--set {exc}")
            params = _common_inputs()
            params = params.with_overrides(w.parse_param_overrides(w.parse_assignments(param, "--param")))
            c._check_year(params, tax_year, settings.rules, input, as_of_date)
            out_dir = (out or w.default_out_dir(workdir)).resolve()
            from prefect import tags

            with c.console.status("running the what-if..."), c.api.run_settings(), tags(
                    "impcredit", "whatif", f"tax-year-{tax_year}"):
                outcome = with_task_runner(whatif_flow, dask_address)(
                    input_dir=input.resolve(), tax_year=tax_year, as_of=as_of_date, out_dir=out_dir,
                    workdir=workdir.resolve(), params=params, settings=settings, assignments=assignments,
                    batches=n, wait_seconds=wait,
                )
        except c._known_errors() as exc:
            c._fail_or_nothing(exc)
            return
        c._print_summary(outcome.summary)
        shown = {k: v for k, v in assignments.items()} or {"(none)": "the defaults"}
        c.console.print("settings: " + ", ".join(f"{k}={v}" for k, v in shown.items())
                        + (f"; parameters: {', '.join(f'{k}={v}' for k, v in params.overrides.items())}" if params.overrides else ""))
        t = outcome.totals or {}
        if t.get("before_awarded") is not None:
            c.console.print(f"before (ledger): requested ${t['before_requested']:,.2f}, awarded ${t['before_awarded']:,.2f}; "
                            f"what-if: requested ${t['whatif_requested']:,.2f}, awarded ${t['whatif_awarded']:,.2f}")
        c.console.print(
            f"what-if against {outcome.baseline_run or 'no annual run (everything is new)'}: "
            f"[bold]{outcome.changed}[/] award(s) change; see {outcome.diff_path}. The ledger was not written."
        )

    @app.command()
    def backfill(
        input: Annotated[Path, typer.Option("--input", help="Submission folder, or one sub-folder per year (<dir>/2021).", metavar="DIR")],
        years: Annotated[str, typer.Option("--years", help="Tax years, e.g. 2019-2024 or 2019,2021.", metavar="YEARS")],
        as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date for every year (default July 1 after each tax year).", metavar="YYYY-MM-DD")] = None,
        out: Annotated[Path, typer.Option("--out", help="Output folder (one sub-folder per year).", metavar="DIR")] = DATA / "out" / "backfill",
        workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
        cap: Annotated[float | None, typer.Option("--cap", help="Override the statutory annual cap (dollars).", metavar="DOLLARS")] = None,
        policy: Annotated[str, typer.Option("--policy", help="Cap rationing: fcfs or pro-rata.", metavar="fcfs|pro-rata")] = "fcfs",
        wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    ) -> None:
        """Run the annual flow for each tax year in order (subflows of one parent flow)."""
        c = _cli()
        as_of_date = c._parse_date(as_of, "--as-of") if as_of else None
        _cli()._check_run_args(input, policy, cap)
        try:
            c.api.ensure_api()  # before Prefect is imported
            from flows.backfill import backfill_flow, parse_years
            from transforms.settings import AllocationSettings, Settings

            year_list = parse_years(years)
            params = _common_inputs()
            settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
            with c.console.status(f"backfilling {len(year_list)} tax years..."), c.api.run_settings():
                state = backfill_flow(
                    input_dir=input.resolve(), years=year_list, as_of=as_of_date, out_dir=out.resolve(),
                    workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                    return_state=True,
                )
            report = state.result(raise_on_failure=False)
        except c._known_errors() as exc:
            c._fail(str(exc))
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
        c.console.print(t)
        for y in report.years:
            if y.status != "completed":
                c.err.print(f"[bold red]tax year {y.tax_year} failed:[/] {y.message}")
        c.console.print(report.message)
        if report.failed:
            raise typer.Exit(1)

    @app.command()
    def variance(
        tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year.", metavar="YEAR")],
        workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
        out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/quarterly/<year>).", metavar="DIR")] = None,
    ) -> None:
        """variance.csv: each application's final credit (annual run) against its quarterly projections."""
        c = _cli()
        try:
            import polars as pl

            from transforms.quarterly import variance_report

            path = variance_report(workdir.resolve(), (out or DATA / "out" / "quarterly" / str(tax_year)).resolve(), tax_year)
        except c._known_errors() as exc:
            c._fail(str(exc))
            return
        if path is None:
            c._fail(f"no annual run of tax year {tax_year} in {workdir}; run `impcredit annual` first")
            return
        frame = pl.read_csv(path, infer_schema=False)
        money = [col for col in frame.columns if col.startswith(("projected_q", "variance_q")) or col in ("final_credit", "awarded")]
        frame = frame.with_columns(pl.col(money).cast(pl.Float64))  # an empty column is still money, not text
        qcols = [col for col in frame.columns if col.startswith("projected_q")]
        rows = [("Tax year", str(tax_year)), ("Applications", f"{frame.height:,}"),
                ("Final credits", f"${frame['final_credit'].fill_null(0).sum():,.2f}")]
        for col in qcols:
            qn = col.removeprefix("projected_q")
            projected = frame.filter(pl.col(col).is_not_null())
            if projected.height == 0:
                rows.append((f"Q{qn} projected / variance", "no projection"))
                continue
            rows.append((f"Q{qn} projected / variance ({projected.height} projected)",
                         f"${projected[col].sum():,.2f} / ${projected['variance_q' + qn].fill_null(0).sum():,.2f}"))
        rows.append(("Report", str(path)))
        _panel("impcredit variance", rows)


def _standalone() -> typer.Typer:
    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)
    register(app)
    return app


if __name__ == "__main__":
    _standalone()()
