"""The ``impcredit`` command line (typer + rich)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from flows import _env, api

if os.environ.get("IMPCREDIT_DEBUG") != "1":
    # The CLI reports a failed run in one line; Prefect's own run loggers would print the
    # traceback first. IMPCREDIT_DEBUG=1 keeps them.
    for _logger in ("FLOW_RUNS", "TASK_RUNS"):
        os.environ.setdefault(f"PREFECT_LOGGING_LOGGERS_PREFECT_{_logger}_LEVEL", "CRITICAL")

def _flags_without_type() -> None:
    """Typer 0.29 writes each option's Python type in --help (``<bool>`` beside a flag, ``<str>``
    beside an argument); a flag takes no value and an argument is named by its metavar, so they
    show none (every other option has a metavar: DIR, YEAR, YYYY-MM-DD)."""
    from typer.core import TyperArgument, TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich
    TyperArgument.display_type_rich = lambda self, ctx: None


_flags_without_type()

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


class _StageLines(logging.Handler):
    """The run's stage lines (``transforms.stages``): printed above the live status on a
    terminal, plain lines on stderr in a pipe (a scheduler's log)."""

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if console.is_terminal:
            console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {msg}", highlight=False)
        else:
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} impcredit {msg}", file=sys.stderr, flush=True)


def _show_stages() -> None:
    log = logging.getLogger("impcredit.stages")
    if not any(isinstance(h, _StageLines) for h in log.handlers):
        log.addHandler(_StageLines())
    log.setLevel(logging.INFO)
    log.propagate = False  # printed here, not again by the root logger's handlers


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


def _print_summary(summary, elapsed: float | None = None) -> None:
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
    t.add_row("Awarded (these applications)", f"${summary.awarded:,.2f}")
    t.add_row("  by this run", f"${summary.awarded_now:,.2f}")
    t.add_row("  by earlier runs (kept)", f"${summary.awarded_earlier:,.2f}")
    t.add_row("Approved earlier this approval year", f"${summary.approved_before:,.2f}")
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
    link = _env.flow_run_link(getattr(summary, "prefect_flow_run", None))
    if link:
        t.add_row("Prefect flow run", link)
    if elapsed is not None:
        t.add_row("Total time", f"{elapsed:.1f} s")
    status = "completed with rejections" if summary.rejected_rows else "completed"
    console.print(Panel(t, title=f"impcredit {summary.kind}: {status}", expand=False))
    changes = getattr(summary, "changes", None) or []
    if changes:
        console.print("[bold]What changed[/] (changes.csv): " + changes[0])
        for line in changes[1:]:
            console.print(f"  {line}")
    if summary.key_source == "demo":
        console.print("[yellow]note:[/] ssn hashes use the built-in demo key; set IMPCREDIT_HMAC_KEY_FILE for real data.")


@app.command()
def annual(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical layout, spec section 1).", metavar="DIR")],
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year to compute.", metavar="YEAR")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="As-of date (default today); its year is the approval year.", metavar="YYYY-MM-DD")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/annual-YEAR).", metavar="DIR")] = None,
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
    cap: Annotated[float | None, typer.Option("--cap", help="Override the statutory annual cap (dollars).", metavar="DOLLARS")] = None,
    policy: Annotated[str, typer.Option("--policy", help="Cap rationing: fcfs or pro-rata.", metavar="fcfs|pro-rata")] = "fcfs",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
    batches: Annotated[int, typer.Option("--batches", help="Employer batches to compute in parallel.", metavar="N")] = 1,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
) -> None:
    """Compute credits, decide applications against the cap and write the award files.

    Example: impcredit annual --input data/sample --tax-year 2023 --as-of 2024-07-01
    (the approval year is the as-of date's year; applications received after it wait for a later run)
    """
    started = time.monotonic()
    _show_stages()
    as_of_date = _parse_date(as_of, "--as-of")
    out = out or DATA / "out" / f"annual-{tax_year}"
    _check_run_args(input, policy, cap)
    n = _batches(batches, dask_address)
    try:
        api.ensure_api()  # before Prefect is imported
        from flows.annual import annual_flow
        from transforms.params import load_parameters
        from transforms.settings import AllocationSettings, Settings

        settings = Settings(allocation=AllocationSettings(policy=policy, cap=cap))
        params = load_parameters()
        _check_year(params, tax_year, settings.rules, input, as_of_date)
        _env.hash_key()  # a missing or bad key stops here; the flow's task reads it again where it is used
        from prefect import tags

        from flows.fanout import with_task_runner

        with console.status("running the annual flow..."), api.run_settings(), tags("impcredit", "annual",
                                                                                       f"tax-year-{tax_year}"):
            summary = with_task_runner(annual_flow, dask_address)(
                input_dir=input.resolve(), tax_year=tax_year, as_of=as_of_date, out_dir=out.resolve(),
                workdir=workdir.resolve(), params=params, settings=settings, wait_seconds=wait,
                batches=n,
            )
    except _known_errors() as exc:
        _fail_or_nothing(exc)
        return
    _print_summary(summary, time.monotonic() - started)


@app.command()
def generate(
    employers: Annotated[int, typer.Option("--employers", min=1, help="Number of employers.", metavar="N")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same files).", metavar="N")] = 1,
    out: Annotated[Path, typer.Option("--out", help="Folder to write the submission into.", metavar="DIR")] = DATA / "sample",
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year the applications claim.", metavar="YEAR")] = 2023,
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
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical or vendor layouts).", metavar="DIR")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Workdir holding the Parquet lake.", metavar="DIR")] = DATA / "work",
    out: Annotated[Path | None, typer.Option("--out", help="Where to write rejects.csv (default: the workdir).", metavar="DIR")] = None,
    engine: Annotated[str, typer.Option(
        "--validation-engine", metavar="gx|polars",
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
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
    long: Annotated[bool, typer.Option("--long", help="Every column, full run ids (wider than 80 columns).")] = False,
) -> None:
    """The run history of a workdir's ledger: when, what, new awards, duration, and whether the
    inputs changed since the run before (reopenings are listed as runs of kind reopen).

    Example: impcredit runs --workdir data/work
    """
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
    t = Table(title=f"runs in {path}", box=None, pad_edge=False, title_justify="left")
    cols = (["run id", "kind", "tax year", "as of", "policy", "status", "applications", "requested", "new awards",
             "awarded", "seconds", "inputs changed"] if long else
            ["when (UTC)", "run", "kind", "year", "as of", "apps", "new awards", "secs", "inputs"])
    for col in cols:
        t.add_column(col, justify="right" if col in ("applications", "requested", "new awards", "awarded", "seconds",
                                                     "apps", "secs") else "left", no_wrap=True)
    for r in hist.iter_rows(named=True):
        s = json.loads(r["summary_json"])
        kind = r["kind"] + (f" Q{r['quarter']}" if r["quarter"] else "")
        if r["kind"] == "reopen":
            kind = f"reopen {s.get('application_id', '')}"
        secs = f"{(r['committed_at'] - r['started_at']).total_seconds():.1f}"
        new = f"{s['awarded_now']:,.2f}" if "awarded_now" in s else ""
        changed = "yes" if s.get("inputs_changed") else "" if r["kind"] == "reopen" else "no"
        if long:
            t.add_row(r["run_id"], kind, str(r["tax_year"]), str(r["as_of"]), r["policy"], r["status"],
                      str(s.get("applications", "")), f"{s.get('requested', 0):,.2f}", new, f"{s.get('awarded', 0):,.2f}",
                      secs, changed)
        else:
            t.add_row(r["committed_at"].strftime("%m-%d %H:%M"), r["run_id"].rsplit("-", 1)[-1][:8], kind[:18],
                      str(r["tax_year"]), str(r["as_of"]), str(s.get("applications", "")), new, secs, changed)
    console.print(t)


@app.command()
def reopen(
    application: Annotated[str, typer.Argument(help="The application to decide again, e.g. APP-2023-000042.",
                                               metavar="APPLICATION")],
    reason: Annotated[str, typer.Option("--reason", help="Why (recorded in the ledger), e.g. 'corrected payroll of March'.", metavar="REASON")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = DATA / "work",
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for another run on the same workdir.", metavar="SECONDS")] = 0.0,
) -> None:
    """Reopen a decided application: the next annual run of its tax year decides it again.

    Spec section 7, I-12: it is decided in that run's approval year. An increase takes cap left
    in that year; a decrease returns the difference to the cap of the year it came from; the award
    file carries the change as an amendment row.

    Example: impcredit reopen APP-2023-000042 --reason "corrected payroll file" --workdir data/work
    """
    import datetime as _dt
    import hashlib
    import json

    from transforms import annual as steps
    from transforms import ledger

    if not reason.strip():
        _fail("--reason must say why the application is reopened")
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        _fail(f"no ledger at {path}: nothing was decided on this workdir")
    try:
        with steps.workdir_lock(workdir, wait_seconds=wait):
            con = ledger.connect(path)
            try:
                cur = ledger.current_decisions(con, [application])
                if cur.height == 0:
                    raise ledger.LedgerError(f"application {application!r} has no decision in {path}: nothing to reopen")
                row = cur.row(0, named=True)
                now = ledger.now_utc()
                today = _dt.date.today()
                run_id = (f"reopen-{row['tax_year']}-{now.strftime('%Y%m%dT%H%M%S%fZ')}-"
                          f"{hashlib.sha256(application.encode()).hexdigest()[:8]}")
                record = {
                    "run_id": run_id, "kind": "reopen", "tax_year": row["tax_year"], "quarter": None, "as_of": today,
                    "approval_year": today.year, "policy": "", "cap_cents": 0, "settings_json": "{}", "params_version": "",
                    "inputs_sha256": "", "status": "reopened", "started_at": now, "committed_at": now,
                    "summary_json": json.dumps({"application_id": application, "reason": reason.strip(),
                                                "status_before": row["status"], "awarded_before": row["awarded_cents"] / 100},
                                               sort_keys=True),
                }
                ledger.reopen(con, application, reason.strip(), record)
            finally:
                con.close()
    except _known_errors() as exc:
        _fail(str(exc))
        return
    console.print(f"reopened {application} ({row['status']}, awarded ${row['awarded_cents'] / 100:,.2f} in "
                  f"{row['approval_year']}): the next annual run of tax year {row['tax_year']} that holds it decides it "
                  f"again. Recorded as {run_id}.")


@app.command()
def settings(
    parameters: Annotated[bool, typer.Option("--parameters/--no-parameters", help="List the legal parameters too.")] = True,
) -> None:
    """Every setting and legal parameter: values, defaults, dated values and citations.

    What `whatif --set NAME=VALUE` and `whatif --param NAME[@YYYY-MM-DD]=VALUE` accept.

    Examples: impcredit settings; impcredit whatif --input data/sample --tax-year 2023 --set overtime=premium
    """
    from transforms.params import load_parameters
    from transforms.settings import SETTING_HELP, setting_fields

    t = Table(title="Settings (whatif --set NAME=VALUE; annual --policy, --cap)", box=None, pad_edge=False,
              title_justify="left")
    for col in ("setting", "values", "default", "meaning"):
        t.add_column(col, overflow="fold")
    for name, _, choices, default in setting_fields():
        t.add_row(name, " | ".join(choices), default, SETTING_HELP.get(name, ""))
    console.print(t)
    if not parameters:
        return
    params = load_parameters()
    p = Table(title="Parameters (whatif --param NAME=VALUE, or NAME@YYYY-MM-DD=VALUE for one dated value)", box=None,
              pad_edge=False, title_justify="left")
    for col in ("parameter", "effective", "value", "citation"):
        p.add_column(col, overflow="fold")
    for name in params.series_names():
        s = params.series(name)
        for i, v in enumerate(s.values):
            value = v.value.isoformat() if hasattr(v.value, "isoformat") else f"{v.value:g}"
            p.add_row(name if i == 0 else "", v.effective.isoformat(), f"{value} {s.unit if s.unit != 'date' else ''}".strip(),
                      v.citation.title)
    console.print(p)


def _version(value: bool) -> None:
    if value:
        from transforms.annual import code_version

        console.print(f"impcredit {code_version()}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version (and the code's commit) and exit.")] = False,
) -> None:
    """New Jersey impairment tax credit (N.J.S.A. 34:11-56a40).

    Dates are ISO (2024-07-01). Typical session: impcredit generate --out data/sample;
    impcredit annual --input data/sample --tax-year 2023 --as-of 2024-07-01; impcredit runs.
    """


@app.command()
def documents(
    out: Annotated[Path, typer.Option("--out", help="Output folder of an annual run.", metavar="DIR")],
) -> None:
    """Render the PDFs a big annual run left as data (certificates.pdf, notices.pdf).

    A run of more than IMPCREDIT_PDF_MAX documents (default 1,000) writes their data instead of
    the PDFs, so that a state-wide run is not held up; this renders them (about 1.5 ms a page).

    Example: impcredit documents --out data/out/annual-2023
    """
    import json

    from transforms.outputs import sha256_file, write_json
    from transforms.products.pdf import render_pending

    if not out.is_dir():
        _fail(f"--out {out} is not a folder")
    made = render_pending(out)
    if not made:
        console.print(f"nothing to render in {out}: its PDFs are there already, or the run wrote none")
        return
    manifest_path = out / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        manifest.setdefault("documents", {}).update(
            {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size} for p in made})
        write_json(manifest, manifest_path)
    for p in made:
        console.print(f"wrote {p} ({p.stat().st_size / 2**20:,.1f} MB)")


api_app = typer.Typer(help="The shared local Prefect API of CLI runs (started on first use, stops when idle).",
                      no_args_is_help=True)
app.add_typer(api_app, name="api")


@api_app.command("status")
def api_status() -> None:
    """Whether the shared local Prefect API is running: its address, process and idle timeout."""
    st = api.status()
    if st is None:
        console.print("no shared Prefect API is running (the next run starts one)")
        return
    console.print(f"running at {st['url']} (process {st['pid']}, Prefect {st['version']}; stops after "
                  f"{st['idle_seconds']:g} s without runs). Browse its runs with PREFECT_API_URL={st['url']} "
                  ".venv/bin/prefect flow-run ls")


@api_app.command("stop")
def api_stop() -> None:
    """Stop the shared local Prefect API now (the next run starts it again)."""
    console.print("stopped" if api.stop() else "no shared Prefect API was running")


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
