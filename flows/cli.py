"""The ``impcredit`` command line (typer + rich)."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from flows import _env

if os.environ.get("IMPCREDIT_DEBUG") != "1":
    # The CLI reports a failed run in one line; Prefect's own run loggers would print the
    # traceback first. IMPCREDIT_DEBUG=1 keeps them.
    for _logger in ("FLOW_RUNS", "TASK_RUNS"):
        os.environ.setdefault(f"PREFECT_LOGGING_LOGGERS_PREFECT_{_logger}_LEVEL", "CRITICAL")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="New Jersey impairment tax credit (N.J.S.A. 34:11-56a40).")
console = Console()
err = Console(stderr=True, soft_wrap=True)

DATA = _env.REPO_ROOT / "data"


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def _fail_or_nothing(exc: BaseException) -> None:
    """A known error ends the command: exit 0 when the run had nothing to decide, 2 otherwise."""
    from transforms.annual import NothingToDecide

    if isinstance(exc, NothingToDecide):
        _nothing(str(exc))
    _fail(str(exc))


def _known_errors() -> tuple[type[BaseException], ...]:
    from pydantic import ValidationError

    from transforms.annual import RunError
    from transforms.ledger import LedgerError
    from transforms.params import ParameterError
    from transforms.pii import KeyError_
    from transforms.staging import SubmissionError

    return (RunError, LedgerError, ParameterError, KeyError_, SubmissionError, ValidationError, ValueError, OSError)


def _nothing(message: str) -> None:
    """A run with nothing to decide: said, exit 0, no run recorded."""
    console.print(f"[yellow]{message}[/] (no run recorded)")
    raise typer.Exit(0)


def _check_year(params, tax_year: int, rules, input: Path, as_of: dt.date, *, estimates: bool = False) -> None:
    """Before any flow starts: a tax year with reference data (else the parameter and the last
    year known), and one the submission holds applications for (``applications.csv`` read
    quickly; the flow checks the staged rows again)."""
    from transforms import annual as steps
    from transforms.credits import year_params
    from transforms.params import MissingParameterError

    first = steps.first_tax_year(params)
    if tax_year >= first:
        try:
            year_params(params, tax_year, rules)
        except MissingParameterError as exc:
            known = tax_year - 1
            while known >= first:
                try:
                    year_params(params, known, rules)
                    break
                except MissingParameterError:
                    known -= 1
            through = f"parameters known through {known}" if known >= first else "no tax year has all its parameters"
            _fail(f"tax year {tax_year} has no reference data yet: {through} ({exc})")
    try:  # every file there and readable: said at once (the flow checks again, and what it reads)
        steps.check_complete(input)
    except steps.RunError as exc:
        _fail(str(exc))
    quick = None if estimates else steps.quick_applications(input)
    if quick is not None:
        try:
            steps.check_tax_year(quick, tax_year, as_of, first)
        except steps.NothingToDecide:
            pass  # said by the flow after staging, from the validated rows
        except steps.RunError as exc:
            _fail(str(exc))


def _check_run_args(input: Path, policy: str | None = None, cap: float | None = None) -> None:
    """The argument checks every run command shares; a bad one exits 2 with what to fix."""
    if not input.is_dir():
        _fail(f"--input {input} is not a folder (expected the canonical submission layout: payroll/*.csv, applications.csv, ...)")
    if policy is not None and policy not in ("fcfs", "pro-rata"):
        _fail(f"--policy must be fcfs or pro-rata, not {policy!r}")
    if cap is not None and cap < 0:
        _fail("--cap must be a non-negative amount in dollars")


def _batches(batches: int, dask_address: str | None) -> int:
    """Employer batches: 1 on the thread pool by default, 4 when a Dask cluster is given."""
    if batches < 1:
        _fail("--batches must be at least 1")
    if (dask_address or os.environ.get("IMPCREDIT_DASK_ADDRESS")) and batches == 1:
        return 4
    return batches


def _parse_date(value: str | None, name: str) -> dt.date:
    if value is None:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        _fail(f"{name} must be an ISO date like 2026-06-30, not {value!r}")
        raise


def _print_summary(summary) -> None:
    from rich.panel import Panel

    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("Run", summary.run_id)
    t.add_row("Tax year / approval year", f"{summary.tax_year} / {summary.approval_year} (as of {summary.as_of})")
    t.add_row("Policy", summary.policy)
    t.add_row("Applications", f"{summary.applications:,}  " + ", ".join(f"{k} {v}" for k, v in summary.statuses.items()))
    t.add_row("Employee-years (eligible)", f"{summary.employee_years:,} ({summary.eligible_employee_years:,})")
    t.add_row("Requested", f"${summary.requested:,.2f}")
    t.add_row("Awarded", f"${summary.awarded:,.2f}")
    t.add_row("Approved earlier this year", f"${summary.approved_before:,.2f}")
    t.add_row("Cap / cap left", f"${summary.cap:,.2f} / ${summary.cap_left:,.2f}")
    if summary.rejected_rows:
        t.add_row("Rejected input rows", f"[yellow]{summary.rejected_rows:,}[/] (see rejects.csv)")
    t.add_row("Received after the as-of date", f"{summary.received_after_as_of:,}, not seen")
    t.add_row("Outputs", summary.out_dir)
    groups: dict[str, int] = {}
    for p in summary.outputs:
        rel = Path(p).relative_to(summary.out_dir)
        name = rel.parts[0] + ("/" if len(rel.parts) > 1 else "")
        groups[name] = groups.get(name, 0) + 1
    for name, n in sorted(groups.items()):
        t.add_row("", f"{name} ({n} files)" if name.endswith("/") else name)
    t.add_row("Ledger", str(Path(summary.workdir) / "impcredit.duckdb"))
    status = "completed with rejections" if summary.rejected_rows else "completed"
    console.print(Panel(t, title=f"impcredit {summary.kind}: {status}", expand=False))
    if summary.key_source == "demo":
        console.print("[yellow]note:[/] ssn hashes use the built-in demo key; set IMPCREDIT_HMAC_KEY_FILE for real data.")


@app.command()
def annual(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout, spec section 1).")],
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to compute.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today); its year is the approval year.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = DATA / "out",
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.")] = DATA / "work",
    cap: Annotated[float | None, typer.Option("--cap", help="Override the statutory annual cap (dollars).")] = None,
    policy: Annotated[str, typer.Option("--policy", help="Cap rationing: fcfs or pro-rata.")] = "fcfs",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.")] = 0.0,
    batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.")] = 1,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP)] = None,
) -> None:
    """Compute credits, decide applications against the cap and write the award files."""
    as_of_date = _parse_date(as_of, "--as-of")
    _check_run_args(input, policy, cap)
    n = _batches(batches, dask_address)
    try:
        from flows.annual import annual_flow
        from transforms.params import load_parameters
        from transforms.settings import AllocationSettings, Settings

        settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
        params = load_parameters()
        _check_year(params, tax_year, settings.rules, input, as_of_date)
        _env.hash_key()  # a missing or bad key stops here; the flow's task reads it again where it is used
        from flows.fanout import with_task_runner

        with console.status("running the annual flow..."):
            summary = with_task_runner(annual_flow, dask_address)(
                input_dir=input.resolve(), tax_year=tax_year, as_of=as_of_date, out_dir=out.resolve(),
                workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                batches=n,
            )
    except _known_errors() as exc:
        _fail_or_nothing(exc)
        return
    _print_summary(summary)


@app.command()
def generate(
    employers: Annotated[int, typer.Option("--employers", min=1, help="Number of employers.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same files).")] = 1,
    out: Annotated[Path, typer.Option("--out", help="Folder to write the submission into.")] = DATA / "sample",
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year the applications claim.")] = 2023,
    vendor_mix: Annotated[bool, typer.Option("--vendor-mix", help="Write payroll in several vendor layouts.")] = False,
) -> None:
    """Write a realistic synthetic submission folder."""
    try:
        from transforms.generate import generate_submission

        summary = generate_submission(out, employers=employers, seed=seed, tax_year=tax_year)
        if vendor_mix:
            import shutil
            import tempfile

            from transforms.vendor_writer import write_vendor_mix

            with tempfile.TemporaryDirectory() as tmp:
                canon = Path(tmp) / "canonical"
                shutil.move(str(out), canon)
                write_vendor_mix(canon, out, seed=seed)
    except _known_errors() as exc:
        _fail(str(exc))
        return
    console.print(
        f"wrote {out}: {summary.employers:,} employers, {summary.payroll_rows:,} payroll rows in "
        f"{summary.files} files, {summary.applications:,} applications, {summary.rostered:,} rostered employees"
    )


@app.command()
def ingest(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical or vendor layouts).")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Workdir holding the Parquet lake.")] = DATA / "work",
    out: Annotated[Path | None, typer.Option("--out", help="Where to write rejects.csv (default: the workdir).")] = None,
    engine: Annotated[str, typer.Option(
        "--validation-engine",
        help="gx: Great Expectations Core, file by file, and its Data Docs under <out>/data_docs; "
        "polars: the same suites compiled to Polars (no Data Docs; what annual runs use).",
    )] = "gx",
) -> None:
    """Ingest a submission into the Parquet lake alone: profiles, validation, quarantine."""
    if engine not in ("gx", "polars"):
        _fail(f"--validation-engine must be gx or polars, not {engine!r}")
    if not input.is_dir():
        _fail(f"--input {input} is not a folder")
    try:
        from transforms.ingest import ingest_folder
        key = _env.hash_key()
        with console.status("ingesting..."):
            docs = (out or workdir) / "data_docs" if engine == "gx" else None
            report = ingest_folder(input.resolve(), workdir.resolve(), key, docs_dir=docs, engine=engine)
        paths = report.write_rejects((out or workdir).resolve())
    except _known_errors() as exc:
        _fail(str(exc))
        return
    console.print(report.summary())
    console.print(f"rejects: {paths[0] if paths else 'none'}")
    if key.is_demo:
        console.print("[yellow]note:[/] ssn hashes use the built-in demo key.")


@app.command()
def runs(
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.")] = DATA / "work",
) -> None:
    """The run history of a workdir's ledger."""
    import json

    from transforms import ledger

    path = workdir / "impcredit.duckdb"
    if not path.exists():
        _fail(f"no ledger at {path}")
    try:
        con = ledger.connect(path, read_only=True)
        hist = ledger.runs_history(con)
        con.close()
    except _known_errors() as exc:
        _fail(str(exc))
        return
    t = Table(title=f"runs in {path}")
    for col in ("run", "kind", "tax year", "as of", "policy", "status", "applications", "requested", "awarded"):
        t.add_column(col)
    for r in hist.iter_rows(named=True):
        s = json.loads(r["summary_json"])
        t.add_row(
            r["run_id"], r["kind"], str(r["tax_year"]) + (f" Q{r['quarter']}" if r["quarter"] else ""), str(r["as_of"]),
            r["policy"], r["status"], str(s.get("applications", "")), f"{s.get('requested', 0):,.2f}", f"{s.get('awarded', 0):,.2f}",
        )
    console.print(t)


def _register_extensions() -> None:
    from flows import cli_products

    cli_products.register(app)
    try:
        from flows import cli_orchestration
    except ImportError:  # pragma: no cover - while the orchestration commands are absent
        return
    cli_orchestration.register(app)


_register_extensions()


def main() -> None:
    try:
        app(standalone_mode=True)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException as exc:  # an unexpected failure: one line, no traceback (IMPCREDIT_DEBUG=1 shows it)
        if os.environ.get("IMPCREDIT_DEBUG") == "1":
            raise
        err.print(f"[bold red]internal error:[/] {exc.__class__.__name__}: {exc}")
        err.print("rerun with IMPCREDIT_DEBUG=1 for the full traceback")
        sys.exit(1)


if __name__ == "__main__":
    main()
