"""Scheduled deployments of the annual run, the quarterly estimates and the monthly catch-up (docs/scheduling.md).

Needs a Prefect API server (``prefect server start``). The schedules:
- annual: July 1, 06:00 New York time, tax year = previous calendar year, as-of = the run date;
  then every other tax year with an undecided application the run sees (``flows.catchup``);
- quarterly estimates: on the NJ estimated-payment dates April 15, June 15, September 15,
  December 15 (CBT) and January 15 (GIT's fourth), 06:00; the quarter is the latest one that has
  ended by the run date (Apr 15 -> Q1, Jun 15 -> Q1, Sep 15 -> Q2, Dec 15 -> Q3, Jan 15 -> Q4 of
  the year before), so only observed data is projected; each run writes its own dated folder;
- catch-up: the 1st of each month, 08:00: the annual run of every tax year with an application
  not decided yet that a run now sees; its logs and artifact name what still waits, until when.

A run is dated by its scheduled start in New York (``flows.dating``), never the worker's clock.

Two ways to run them, never both (``active_elsewhere``): a worker of the ``impcredit`` work pool
runs the deployments ``prefect.yaml`` registers (``annual``, ``quarterly-estimates``, ``catch-up``;
``python -m flows.worker``), or this module serves its own (``annual-served``,
``quarterly-estimates-served``, ``catch-up-served``; ``python flows/serve.py``). Distinct names: neither overwrites
the other's deployments.

Every run reads its settings when it starts, from the environment of the process that runs it
(the worker, or the serving process), never from the deployment: IMPCREDIT_INPUT (the
submission folder, required), IMPCREDIT_WORKDIR (default data/work: the ledger, local),
IMPCREDIT_LAKE (optional: the lake's place, a local folder or s3://bucket/prefix), IMPCREDIT_OUT
(default data/out; the annual run's may be s3://bucket/prefix), IMPCREDIT_DASK_ADDRESS (optional:
the annual run's ingest on that cluster's workers, the quarterly fan-out), and the ssn hash key
(IMPCREDIT_HMAC_KEY_FILE, IMPCREDIT_HMAC_KEY or IMPCREDIT_HMAC_KEY_BLOCK): a deployment refuses
the built-in demo key. A setting missing or wrong fails the run with one line saying what to set.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flows import _env  # noqa: E402, I001  (before prefect: sets PREFECT_HOME)

_env.for_deployment()  # before prefect: its runs log at INFO and send heartbeats

from prefect import flow, get_run_logger  # noqa: E402
from prefect.schedules import Cron  # noqa: E402
from prefect.states import Failed  # noqa: E402

from flows import catchup  # noqa: E402  (imports prefect)
from flows.dating import scheduled_date  # noqa: E402
from flows.settings import today  # noqa: E402

TIMEZONE = "America/New_York"
ANNUAL_CRON = "0 6 1 7 *"
QUARTERLY_CRON = "0 6 15 1,4,6,9,12 *"
CATCH_UP_CRON = "0 8 1 * *"
# flow name -> the deployment prefect.yaml registers for a worker; this module serves "<name>-served"
DEPLOYMENTS = {"impcredit-scheduled-annual": "annual", "impcredit-scheduled-quarterly": "quarterly-estimates",
               "impcredit-scheduled-catch-up": "catch-up"}
SERVED = "-served"


class SetupError(RuntimeError):
    """The environment of a deployment's run is incomplete or wrong: the run fails with this line."""


def _paths() -> tuple[Path, Path, object]:
    """The input, the workdir (local: the ledger) and the outputs' root (a local folder or
    s3://bucket/prefix), read from the environment when the run starts; the lake where
    ``IMPCREDIT_LAKE`` (or ``lake`` in impcredit.toml) says, checked (and recorded in the
    workdir) before the flow starts."""
    from flows.settings import run_settings
    from transforms import storage
    from transforms.ingest.store.location import use_lake
    from transforms.storage_probe import probe

    inp = os.environ.get("IMPCREDIT_INPUT")
    if not inp:
        raise SetupError("IMPCREDIT_INPUT is not set: set it to the submission folder in the environment of the worker "
                         "or the serving process (docs/scheduling.md)")
    if not Path(inp).is_dir():
        raise SetupError(f"IMPCREDIT_INPUT={inp} is not a folder: set it to the submission folder")
    workdir = Path(os.environ.get("IMPCREDIT_WORKDIR") or _env.REPO_ROOT / "data" / "work").resolve()
    try:
        lake = run_settings().lake
    except ValueError as exc:  # a bad setting: the run fails with its one line
        raise SetupError(str(exc)) from None
    if lake:
        probe(use_lake(workdir, lake, record=False), what="lake")
        use_lake(workdir, lake, record=True)
    out = storage.location(os.environ.get("IMPCREDIT_OUT") or _env.REPO_ROOT / "data" / "out")
    probe(out, what="IMPCREDIT_OUT")
    return Path(inp).resolve(), workdir, out if storage.is_remote(out) else Path(out).resolve()


def _setup() -> tuple[Path, Path, object]:
    """What a run needs before it reads anything: a real ssn hash key, then ``_paths``, then the
    key the workdir was written with (``_env.one_key``)."""
    _env.require_real_key()
    paths = _paths()
    _env.one_key(paths[1])  # the workdir's lake and ledger were written with this key
    return paths


def _refused(exc: BaseException):
    """The run's end when its environment is wrong: FAILED, with the one line in its logs and as
    the state's message (no traceback: nothing is wrong with the code)."""
    get_run_logger().error(str(exc))
    return Failed(message=str(exc))


def _setup_errors() -> tuple[type[BaseException], ...]:
    from transforms.pii import KeyError_
    from transforms.runs.inputs import RunError
    from transforms.storage import StorageError

    return SetupError, KeyError_, StorageError, RunError


def _out(root, *parts: str):
    """A run's output folder under the outputs' root, as a flow parameter (a URL is text)."""
    from transforms import storage

    loc = root
    for p in parts:
        loc = loc / p
    return str(loc) if storage.is_remote(loc) else loc


def _annual_when(tax_year: int | None, as_of: dt.date | None) -> tuple[int, dt.date]:
    """The tax year and as-of date of an annual run: the previous year, as of the run's day (the
    New Jersey date of its scheduled start, ``flows.dating``)."""
    day = as_of or scheduled_date()
    return tax_year or day.year - 1, day


def _quarter_when(tax_year: int | None, quarter: int | None, as_of: dt.date | None) -> tuple[int, int, dt.date]:
    """The tax year, quarter and as-of date of a quarterly run: the latest quarter ended by the run's
    day (the New Jersey date of its scheduled start)."""
    from transforms.runs.quarterly import latest_completed_quarter

    day = as_of or scheduled_date()
    auto_year, auto_q = latest_completed_quarter(day)
    return tax_year or auto_year, quarter or auto_q, day


def _run_name(kind: str):
    """The name of a parent flow run before its run id is known (``annual-2023-as-of-2024-07-01``,
    ``quarterly-2026-q2-as-of-2026-06-15``): Prefect's ``flow_run_name``, from the run's parameters."""

    def name() -> str:
        from prefect.runtime import flow_run

        p = dict(flow_run.parameters or {})
        try:
            as_of = dt.date.fromisoformat(str(p["as_of"])) if p.get("as_of") else None
            if kind == "annual":
                year, day = _annual_when(p.get("tax_year"), as_of)
                return f"annual-{year}-as-of-{day}"
            if kind == "catch-up":
                return f"catch-up-as-of-{as_of or scheduled_date()}"
            year, q, day = _quarter_when(p.get("tax_year"), p.get("quarter"), as_of)
            return f"quarterly-{year}-q{q}-as-of-{day}"
        except (TypeError, ValueError):  # a bad parameter fails the run itself, with Prefect's message
            return f"{kind}-scheduled"

    return name


@flow(name="impcredit-scheduled-annual", flow_run_name=_run_name("annual"))
def scheduled_annual(tax_year: int | None = None, as_of: dt.date | None = None):
    """The annual run of a deployment; its flow run is named by the run id once the inputs are
    hashed, tagged ``impcredit``, ``annual``, ``tax-year-<Y>``."""
    from flows.annual import annual_flow
    from transforms.reference.parameters import load_parameters
    from transforms.runs.inputs import check_dated
    from transforms.settings import Settings

    year, day = _annual_when(tax_year, as_of)
    _env.name_flow_run(f"annual-{year}-as-of-{day}")  # the tags, at once
    try:
        check_dated(day, today())  # an as_of after today decides nothing (spec section 7)
        inp, workdir, out = _setup()
    except _setup_errors() as exc:
        return _refused(exc)
    summary = annual_flow(input_dir=inp, tax_year=year, as_of=day, out_dir=_out(out, "annual", str(year)),
                          workdir=workdir, params=load_parameters(), settings=Settings(), wait_seconds=600,
                          dask_address=os.environ.get("IMPCREDIT_DASK_ADDRESS") or None)
    _env.name_flow_run(summary.run_id)
    line = (f"tax year {year}: run {summary.run_id}, {summary.applications:,} applications, awarded "
            f"{summary.awarded_now:,.2f} by this run; outputs {summary.out_dir}")
    get_run_logger().info(line)
    # then every other tax year with an undecided application this run sees, and what still waits
    others = [y for y in catchup.plan_now(workdir, day).due_years if y != year]
    decided = catchup.decide_years(others, day, inp, workdir, _catch_up_out(out, day),
                                   os.environ.get("IMPCREDIT_DASK_ADDRESS") or None)
    catchup.report("Annual run", day, [line, *decided], workdir)
    return summary


def _catch_up_out(out, day: dt.date):
    """A catch-up run's folder: ``annual/<year>/catch-up-as-of-<date>`` (the July 1 run's stay)."""
    return lambda year: _out(out, "annual", str(year), f"catch-up-as-of-{day}")


@flow(name="impcredit-scheduled-catch-up", flow_run_name=_run_name("catch-up"))
def scheduled_catch_up(as_of: dt.date | None = None):
    """The monthly catch-up: the submission staged into the lake, then the annual run (as of the
    run's day) of every tax year with an application not decided yet that a run now sees
    (received late, a fiscal period ended since, a hold resolved); its logs and artifact name what
    still waits and until when (``flows.catchup``)."""
    from flows.annual import stage
    from flows.settings import run_settings
    from transforms.runs.record import workdir_lock

    day = as_of or scheduled_date()
    try:
        inp, workdir, out = _setup()
    except _setup_errors() as exc:
        return _refused(exc)
    address = os.environ.get("IMPCREDIT_DASK_ADDRESS") or None
    with workdir_lock(workdir, wait_seconds=600):
        stage(inp, workdir, run_settings(), dask_address=address)  # what arrived since: into the lake
    years = catchup.plan_now(workdir, day).due_years
    get_run_logger().info("catch-up as of %s: tax years with an application to decide: %s", day,
                          ", ".join(map(str, years)) or "none")
    decided = catchup.decide_years(years, day, inp, workdir, _catch_up_out(out, day), address)
    after = catchup.report("Monthly catch-up", day, decided, workdir)
    return {"as_of": day.isoformat(), "decided": decided, "still_waiting": after.undecided.get_column("application_id")
            .to_list()}


@flow(name="impcredit-scheduled-quarterly", flow_run_name=_run_name("quarterly"))
def scheduled_quarterly(tax_year: int | None = None, quarter: int | None = None, as_of: dt.date | None = None,
                        batches: int = 1):
    """The quarterly estimates of a deployment (named and tagged as the annual run)."""
    from flows.fanout import with_task_runner
    from flows.quarterly import quarterly_flow
    from transforms.reference.parameters import load_parameters
    from transforms.runs.inputs import check_dated
    from transforms.settings import Settings

    year, q, day = _quarter_when(tax_year, quarter, as_of)
    _env.name_flow_run(f"quarterly-{year}-q{q}-as-of-{day}")
    try:
        check_dated(day, today(), run="a quarterly run (its estimates are recorded)")
        inp, workdir, out = _setup()
        if not isinstance(out, Path):
            raise SetupError(f"IMPCREDIT_OUT is {out}: the quarterly estimates are written to a local folder (only "
                             "the annual run publishes to an object store); run them with a local IMPCREDIT_OUT")
    except _setup_errors() as exc:
        return _refused(exc)
    from transforms.runs.quarterly import estimate_folder

    summary = with_task_runner(quarterly_flow, None)(
        input_dir=inp, tax_year=year, quarter=q, as_of=day, out_dir=estimate_folder(out / "quarterly", year, q, day),
        workdir=workdir, params=load_parameters(), settings=Settings(), batches=batches,
        wait_seconds=600,
    )
    _env.name_flow_run(summary.run_id)
    if summary.no_request_line:  # completed, and says so (spec section 9)
        get_run_logger().warning("run %s: %s", summary.run_id, summary.no_request_line)
    else:
        get_run_logger().info("run %s: %s", summary.run_id, summary.cap_line)
    return summary


def deployments():
    """The deployments this module serves: ``prefect.yaml``'s names with ``-served`` (never theirs)."""
    return [
        scheduled_annual.to_deployment(
            name=DEPLOYMENTS[scheduled_annual.name] + SERVED, schedules=[Cron(ANNUAL_CRON, timezone=TIMEZONE)],
            tags=["impcredit"], description="Annual run: previous tax year, as of July 1, then every other tax year "
                                            "with an undecided application it sees (served by flows/serve.py).",
        ),
        scheduled_quarterly.to_deployment(
            name=DEPLOYMENTS[scheduled_quarterly.name] + SERVED, schedules=[Cron(QUARTERLY_CRON, timezone=TIMEZONE)],
            tags=["impcredit"],
            description="Quarterly estimates on the NJ installment dates (Apr 15, Jun 15, Sep 15, Dec 15; GIT's Jan 15; "
                        "served by flows/serve.py).",
        ),
        scheduled_catch_up.to_deployment(
            name=DEPLOYMENTS[scheduled_catch_up.name] + SERVED, schedules=[Cron(CATCH_UP_CRON, timezone=TIMEZONE)],
            tags=["impcredit", "catch-up"],
            description="Monthly catch-up: every tax year with an application a run now sees and none decided "
                        "(served by flows/serve.py).",
        ),
    ]


def active_elsewhere(starting: str) -> str | None:
    """Why ``starting`` (``serve`` or ``worker``) must not start: the other way's deployments of
    these flows exist and are not paused, so their schedules would run twice. None when clear.
    (Serving pauses its deployments when it stops; delete the others with ``prefect deployment
    delete``.)"""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    suffix = "" if starting == "serve" else SERVED
    active = []
    with get_client(sync_client=True) as client:
        for flow_name, name in DEPLOYMENTS.items():
            try:
                dep = client.read_deployment_by_name(f"{flow_name}/{name}{suffix}")
            except ObjectNotFound:
                continue
            if not dep.paused:
                active.append(f"{flow_name}/{name}{suffix}")
    if not active:
        return None
    names = ", ".join(active)
    if starting == "serve":
        return (f"not started: the deployments {names} of prefect.yaml are active (a worker of the work pool runs "
                f"them) and their schedules would run twice; run the worker instead, or delete them first: "
                + "; ".join(f".venv/bin/prefect deployment delete {n}" for n in active))
    return (f"not started: the deployments {names} served by flows/serve.py are active and their schedules would "
            "run twice; stop the serving process first (it pauses them), or delete them: "
            + "; ".join(f".venv/bin/prefect deployment delete {n}" for n in active))


if __name__ == "__main__":
    clash = active_elsewhere("serve")
    if clash:
        print(clash, file=sys.stderr)
        sys.exit(2)
    from prefect import serve

    from flows import zombies

    print(zombies.ensure(), file=sys.stderr)  # a run whose process dies is marked Crashed, not left Running
    serve(*deployments())
