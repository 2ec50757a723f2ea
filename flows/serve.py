"""Scheduled deployments of the annual run and the quarterly estimates (``python flows/serve.py``).

Needs a Prefect API server (``prefect server start``; see docs/scheduling.md). The schedules:
- annual: July 1, 06:00 New York time, tax year = previous calendar year, as-of = the run date;
- quarterly estimates: on the NJ estimated-payment dates April 15, June 15, September 15 and
  December 15, 06:00; the quarter is the latest one that has ended by the run date (Apr 15 -> Q1,
  Jun 15 -> Q1, Sep 15 -> Q2, Dec 15 -> Q3), so only observed data is projected.
Input and workdir come from the environment of the serving process:
IMPCREDIT_INPUT (submission folder), IMPCREDIT_WORKDIR (default data/work: the ledger, local),
IMPCREDIT_LAKE (optional: the lake's place, a local folder or s3://bucket/prefix), IMPCREDIT_OUT
(default data/out; the annual run's may be s3://bucket/prefix), IMPCREDIT_DASK_ADDRESS (optional:
the annual run's ingest on that cluster's workers, the quarterly fan-out).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flows import _env  # noqa: E402, I001  (before prefect: sets PREFECT_HOME)

from prefect import flow  # noqa: E402
from prefect.schedules import Cron  # noqa: E402

TIMEZONE = "America/New_York"
ANNUAL_CRON = "0 6 1 7 *"
QUARTERLY_CRON = "0 6 15 4,6,9,12 *"


def _paths() -> tuple[Path, Path, object]:
    """The input, the workdir (local: the ledger) and the outputs' root (a local folder or
    s3://bucket/prefix); the lake where ``IMPCREDIT_LAKE`` (or ``lake`` in impcredit.toml) says,
    checked (and recorded in the workdir) before the flow starts."""
    from transforms import storage
    from transforms.deployment import deployment
    from transforms.ingest.store.location import use_lake
    from transforms.storage_probe import probe

    inp = os.environ.get("IMPCREDIT_INPUT")
    if not inp:
        raise ValueError("set IMPCREDIT_INPUT to the submission folder for scheduled runs")
    workdir = Path(os.environ.get("IMPCREDIT_WORKDIR", _env.REPO_ROOT / "data" / "work")).resolve()
    lake = deployment().lake
    if lake:
        probe(use_lake(workdir, lake, record=False), what="lake")
        use_lake(workdir, lake, record=True)
    out = storage.location(os.environ.get("IMPCREDIT_OUT") or _env.REPO_ROOT / "data" / "out")
    probe(out, what="IMPCREDIT_OUT")
    return Path(inp).resolve(), workdir, out if storage.is_remote(out) else Path(out).resolve()


def _out(root, *parts: str):
    """A run's output folder under the outputs' root, as a flow parameter (a URL is text)."""
    from transforms import storage

    loc = root
    for p in parts:
        loc = loc / p
    return str(loc) if storage.is_remote(loc) else loc


@flow(name="impcredit-scheduled-annual")
def scheduled_annual(tax_year: int | None = None, as_of: str | None = None):
    from flows.annual import annual_flow
    from transforms.reference.parameters import load_parameters
    from transforms.settings import Settings

    inp, workdir, out = _paths()
    day = dt.date.fromisoformat(as_of) if as_of else dt.date.today()
    year = tax_year or day.year - 1
    return annual_flow(input_dir=inp, tax_year=year, as_of=day, out_dir=_out(out, "annual", str(year)), workdir=workdir,
                       params=load_parameters(), settings=Settings(), wait_seconds=600,
                       dask_address=os.environ.get("IMPCREDIT_DASK_ADDRESS") or None)


@flow(name="impcredit-scheduled-quarterly")
def scheduled_quarterly(tax_year: int | None = None, quarter: int | None = None, as_of: str | None = None,
                        batches: int = 1):
    from flows.fanout import with_task_runner
    from flows.quarterly import quarterly_flow
    from transforms.reference.parameters import load_parameters
    from transforms.runs.quarterly import latest_completed_quarter
    from transforms.settings import Settings

    inp, workdir, out = _paths()
    if not isinstance(out, Path):
        raise ValueError(f"IMPCREDIT_OUT is {out}: the quarterly estimates are written to a local folder (only the "
                         "annual run publishes to an object store); serve them with a local IMPCREDIT_OUT")
    day = dt.date.fromisoformat(as_of) if as_of else dt.date.today()
    auto_year, auto_q = latest_completed_quarter(day)
    year, q = tax_year or auto_year, quarter or auto_q
    return with_task_runner(quarterly_flow, None)(
        input_dir=inp, tax_year=year, quarter=q, as_of=day, out_dir=out / "quarterly" / f"{year}-Q{q}",
        workdir=workdir, params=load_parameters(), settings=Settings(), batches=batches,
        wait_seconds=600,
    )


def deployments():
    return [
        scheduled_annual.to_deployment(
            name="annual", schedules=[Cron(ANNUAL_CRON, timezone=TIMEZONE)], tags=["impcredit"],
            description="Annual run: previous tax year, as of July 1.",
        ),
        scheduled_quarterly.to_deployment(
            name="quarterly-estimates", schedules=[Cron(QUARTERLY_CRON, timezone=TIMEZONE)], tags=["impcredit"],
            description="Quarterly estimates on the NJ installment dates (Apr 15, Jun 15, Sep 15, Dec 15).",
        ),
    ]


if __name__ == "__main__":
    from prefect import serve

    serve(*deployments())
