"""What the impcredit commands share: the consoles, the data folder, the one-line errors, the
stage lines and the checks every run command makes before a flow starts.

The command modules import this one, never ``flows.cli`` (the app imports them)."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import sys
import time
from pathlib import Path

import typer

from flows import _env, api
from flows.cli.consoles import (  # noqa: F401  (re-exported: the commands print through common)
    Whole,
    console,
    err,
    fitted_panel,
    panel,
    print_summary,
)

if os.environ.get("IMPCREDIT_DEBUG") != "1":
    # The CLI reports a failed run in one line; Prefect's own run loggers would print the
    # traceback first. IMPCREDIT_DEBUG=1 keeps them.
    for _logger in ("FLOW_RUNS", "TASK_RUNS"):
        os.environ.setdefault(f"PREFECT_LOGGING_LOGGERS_PREFECT_{_logger}_LEVEL", "CRITICAL")

DATA = _env.REPO_ROOT / "data"
_local = [False]  # a local cluster started for this command (``dask_cluster``; ``said``)
"""The repository's data folder: the commands' default workdir, sample and outputs."""


PROFILES_HELP = ("A folder of the agency's own payroll profiles (*.yaml, and vocabulary.yaml), read beside the "
                 "shipped ones; one with a shipped profile's name replaces it (default: profiles in impcredit.toml, "
                 "else IMPCREDIT_PROFILES).")


def use_profiles(folder: Path | None):
    """The command's settings (``flows.settings.run_settings``) with its ``--profiles`` folder, every
    profile loaded now: one that cannot be used stops the command in one line naming its file and
    key, before anything is read or written. Returns (settings, the profiles in effect)."""
    from flows.settings import run_settings
    from transforms.ingest.read.layouts.profile_files import ProfileError, load_profiles

    if folder is not None and not folder.is_dir():
        fail(f"--profiles {folder}: not a folder")
    try:
        settings = run_settings(profiles=folder.resolve() if folder is not None else None)
        return settings, load_profiles(settings.profiles)
    except (ProfileError, ValueError) as exc:
        fail(str(exc))
        raise  # (fail exits)


def profiles_param(settings) -> str | None:
    """The profiles folder as a flow's parameter (text), or None."""
    return str(settings.profiles) if settings.profiles is not None else None


LAKE_HELP = ("Where the Parquet lake is: a local folder or an object store (s3://bucket/prefix; credentials from "
             "the AWS chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/config; an S3-compatible "
             "store by AWS_ENDPOINT_URL). Default: IMPCREDIT_LAKE, lake in impcredit.toml, the lake the workdir "
             "recorded, else <workdir>/lake.")


def local_dir(path: Path | None, option: str, *, ledger: bool = False) -> None:
    """A folder option that must be local: an object-store URL there (which the option's type
    turned into a path, ``s3:/bucket/...``) stops the command saying where URLs go."""
    if path is not None and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+:/", str(path)):
        where = ("--workdir holds the ledger (DuckDB, one writer): a local folder; put the lake in object storage "
                 "with --lake s3://bucket/prefix") if ledger else (
                 f"{option} of this command is a local folder (the annual run's --out and --lake take "
                 "s3://bucket/prefix)")
        given = re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]+):/+", r"\1://", str(path))  # as typed, before Path folded it
        fail(f"{option} {given}: {where}")


def use_lake(workdir: Path, lake: str | None, *, writes: bool):
    """The workdir's lake for this command: ``--lake``, else ``lake`` in impcredit.toml, else
    ``IMPCREDIT_LAKE``, else what the workdir recorded (``<workdir>/lake``): checked up front (an
    object store answers, the bucket is there, credentials are found) before anything is read,
    written or decided; a new place is recorded in the workdir when the command ``writes`` it, and
    its key is checked (``_env.one_key``). Returns it (a ``Path`` or ``storage.ObjectPath``)."""
    from flows.settings import run_settings
    from transforms import storage
    from transforms.ingest.store.location import use_lake
    from transforms.storage_probe import probe

    local_dir(workdir, "--workdir", ledger=True)
    try:
        given = run_settings(lake=lake).lake
    except ValueError as exc:
        fail(str(exc))
    try:
        loc = use_lake(workdir.resolve(), given, record=False)
        probe(loc, what="lake")
        if writes:
            use_lake(workdir.resolve(), given, record=True)
            _env.one_key(workdir.resolve(), ledger=False)  # the flow checks again, with the ledger, under the lock
    except (storage.StorageError, *known_errors()) as exc:  # LakeLocationError, the key (KeyError_)
        fail(str(exc))
    return loc


def out_location(out: str | None, default: Path):
    """``--out``: a local folder (resolved) or an object-store place, checked up front (as the lake)."""
    from transforms import storage
    from transforms.storage_probe import probe

    try:
        loc = storage.location(out) if out else default
        probe(loc, what="--out")
    except storage.StorageError as exc:
        fail(str(exc))
    return loc if storage.is_remote(loc) else Path(loc).resolve()


def fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def fail_or_nothing(exc: BaseException) -> None:
    """A known error ends the command: exit 0 when the run had nothing to decide, 2 otherwise."""
    from transforms.runs.annual import NothingToDecide

    if isinstance(exc, NothingToDecide):
        nothing(str(exc))
    fail(said(exc))


def said(exc: BaseException) -> str:  # a known error's line (a local cluster's lost workers: the way on too)
    from transforms.ingest.executors import ClusterError
    return f"{exc}; or run without --workers" if isinstance(exc, ClusterError) and _local[0] else str(exc)


def known_errors() -> tuple[type[BaseException], ...]:
    from pydantic import ValidationError

    from transforms.award.ledger import LedgerError
    from transforms.ingest.executors import ClusterError
    from transforms.ingest.read.cast.canonical import SubmissionError
    from transforms.ingest.store.lake import LakeDamaged
    from transforms.pii import KeyError_
    from transforms.reference.parameters import ParameterError
    from transforms.runs.annual import RunError

    return (api.ApiError, RunError, ClusterError, LedgerError, LakeDamaged, ParameterError, KeyError_, SubmissionError, ValidationError, ValueError, OSError)


class StageLines(logging.Handler):
    """The run's stage lines (``transforms.stages``): printed above the live status on a
    terminal, plain lines on stderr in a pipe (a scheduler's log)."""

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if console.is_terminal:
            console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {msg}", highlight=False)
        else:
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} impcredit {msg}", file=sys.stderr, flush=True)


def show_stages() -> None:
    log = logging.getLogger("impcredit.stages")
    if not any(isinstance(h, StageLines) for h in log.handlers):
        log.addHandler(StageLines())
    log.setLevel(logging.INFO)
    log.propagate = False  # printed here, not again by the root logger's handlers


def nothing(message: str) -> None:
    """A run with nothing to decide: said, exit 0, no run recorded."""
    console.print(f"[yellow]{message}[/] (no run recorded)")
    raise typer.Exit(0)


def check_year(params, tax_year: int, rules, input: Path, as_of: dt.date, *, estimates: bool = False,
               cluster: str | None = None) -> None:
    """Before any flow starts: a tax year with reference data (else the parameter and the last
    year known), and one the submission holds applications for (``applications.csv`` read
    quickly; the flow checks the staged rows again)."""
    from transforms.reference.parameters import MissingParameterError
    from transforms.rules.year import year_params
    from transforms.runs import annual as steps

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
            fail(f"tax year {tax_year} has no reference data yet: {through} ({exc})")
    try:  # every file there and readable: said at once (the flow checks again, and what it reads)
        steps.check_complete(input, cluster=_env.executor(cluster))  # on a worker of a cluster: no payroll byte read here
    except steps.RunError as exc:
        fail(str(exc))
    quick = None if estimates else steps.quick_applications(input)
    if quick is not None:
        try:
            steps.check_tax_year(quick, tax_year, as_of, first)
        except steps.NothingToDecide:
            pass  # said by the flow after staging, from the validated rows
        except steps.RunError as exc:
            fail(str(exc))


def check_run_args(input: Path, policy: str | None = None, cap: float | None = None) -> None:
    """The argument checks every run command shares; a bad one exits 2 with what to fix."""
    if not input.is_dir():
        fail(f"--input {input} is not a folder (expected the canonical submission layout: payroll/*.csv, applications.csv, ...)")
    if policy is not None and policy not in ("fcfs", "pro-rata"):
        fail(f"--policy must be fcfs or pro-rata, not {policy!r}")
    if cap is not None and cap < 0:
        fail("--cap must be a non-negative amount in dollars")


@contextlib.contextmanager
def dask_cluster(workers: int | None, address: str | None):
    """The Dask scheduler's address a command uses, or None: ``--dask-address`` (or
    ``IMPCREDIT_DASK_ADDRESS``), or a local cluster of ``workers`` processes (a thread each)
    started for the command and stopped after it (``executors.local_cluster``). Its workers inherit
    this process's environment: the ssn hash key, the profiles folder, the AWS chain."""
    address = address or os.environ.get("IMPCREDIT_DASK_ADDRESS") or None
    if workers is None:
        if address and (problem := _env.dask_problem(address)):  # within dask_connect_s, else one line
            fail(problem)
        yield address
        return
    if workers < 1:
        fail("--workers must be at least 1")
    if address:
        fail(f"--workers starts a local Dask cluster and --dask-address (or IMPCREDIT_DASK_ADDRESS) names one ({address}): "
             "give one of them")
    from transforms.ingest.executors import local_cluster
    show_stages()
    _local[0] = True  # a run that loses them says it may run without --workers (``said``)
    try:
        with local_cluster(workers, logging.getLogger("impcredit.stages").info) as address:
            yield address
    finally:
        _local[0] = False


def batch_count(batches: int, dask_address: str | None) -> int:
    """Employer batches: 1 on the thread pool by default, 4 when a Dask cluster is given."""
    if batches < 1:
        fail("--batches must be at least 1")
    if (dask_address or os.environ.get("IMPCREDIT_DASK_ADDRESS")) and batches == 1:
        return 4
    return batches


def common_inputs():
    """The reference parameters, after checking the ssn key (a missing or bad key stops here)."""
    from transforms.reference.parameters import load_parameters
    _env.hash_key()  # a missing or bad key stops here; the flow's task reads it again where it is used
    return load_parameters()
