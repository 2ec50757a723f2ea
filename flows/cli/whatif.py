"""``impcredit whatif``: a run with other settings, parameters, cap or policy; never writes the ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows import _env, api
from flows.cli import common, dates


def whatif(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout).", metavar="DIR")],
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to compute.", metavar="YEAR")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today); its year is the approval year.", metavar="YYYY-MM-DD")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Setting NAME=VALUE (interpretation register, allocation).", metavar="NAME=VALUE")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="Parameter overlay NAME[@DATE]=VALUE.", metavar="NAME[@DATE]=VALUE")] = None,
    cap: Annotated[float | None, typer.Option("--cap", help="Cap in dollars for the what-if.", metavar="DOLLARS")] = None,
    policy: Annotated[str | None, typer.Option("--policy", help="fcfs or pro-rata.", metavar="fcfs|pro-rata")] = None,
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (read only here).", metavar="DIR")] = common.DATA / "work",
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default <workdir>/whatif/<timestamp>).", metavar="DIR")] = None,
    batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
) -> None:
    """Run with other settings, parameters, cap or policy; writes outputs and diff.csv, never the ledger."""
    cfg, _ = common.use_profiles(profiles)
    common.show_stages()
    as_of_date = dates.parse_date(as_of, "--as-of")  # may be after today: a what-if decides nothing
    common.check_run_args(input, policy, cap)
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    n = common.batch_count(batches, dask_address)
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.fanout import with_task_runner
        from flows.whatif import whatif_flow
        from transforms.runs import whatif as w
        from transforms.settings import Settings

        assignments = w.parse_assignments(set_, "--set")
        if cap is not None:
            assignments["cap"] = str(cap)
        if policy is not None:
            assignments["policy"] = policy
        try:
            settings = Settings().with_assignments(assignments)
        except ValueError as exc:
            common.fail(f"--set {exc}")
        params = common.common_inputs()
        params = params.with_overrides(w.parse_param_overrides(w.parse_assignments(param, "--param")))
        common.check_year(params, tax_year, settings.rules, input, as_of_date)
        out_dir = (out or w.default_out_dir(workdir)).resolve()
        from prefect import tags

        with common.console.status("running the what-if..."), api.run_settings(), tags(
                "impcredit", "whatif", f"tax-year-{tax_year}"):
            outcome = with_task_runner(whatif_flow, dask_address)(
                input_dir=input.resolve(), tax_year=tax_year, as_of=as_of_date, out_dir=out_dir,
                workdir=workdir.resolve(), params=params, settings=settings, assignments=assignments,
                batches=n, wait_seconds=wait, profiles=common.profiles_param(cfg),
            )
    except common.known_errors() as exc:
        common.fail_or_nothing(exc)
        return
    common.print_summary(outcome.summary)
    shown = {k: v for k, v in assignments.items()} or {"(none)": "the defaults"}
    common.console.print("settings: " + ", ".join(f"{k}={v}" for k, v in shown.items())
                    + (f"; parameters: {', '.join(f'{k}={v}' for k, v in params.overrides.items())}" if params.overrides else ""))
    t = outcome.totals or {}
    if t.get("before_awarded") is not None:
        common.console.print(f"before (ledger): requested ${t['before_requested']:,.2f}, awarded ${t['before_awarded']:,.2f}; "
                        f"what-if: requested ${t['whatif_requested']:,.2f}, awarded ${t['whatif_awarded']:,.2f}")
    common.console.print(
        f"what-if against {outcome.baseline_run or 'no annual run (everything is new)'}: "
        f"[bold]{outcome.changed}[/] award(s) change; see {outcome.diff_path}. The ledger was not written."
    )
