"""Backfill: the annual flow for each tax year in order, as subflows of one parent flow.

A year that fails is recorded with its message and the next year still runs; the parent's final
state is Completed when every year completed, Failed otherwise, its message naming the years.
``input_dir`` may hold one submission for all years, or one sub-folder per year (``<dir>/2021``);
a year's sub-folder wins when it exists.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.states import Completed, Failed

from flows import _env
from flows.annual import annual_flow
from flows.settings import today
from transforms.reference.parameters import Parameters
from transforms.runs.inputs import check_dated
from transforms.settings import Settings


@dataclass
class YearOutcome:
    tax_year: int
    status: str  # "completed" or "failed"
    message: str = ""
    summary: object | None = None


@dataclass
class BackfillReport:
    years: list[YearOutcome] = field(default_factory=list)

    @property
    def completed(self) -> list[int]:
        return [y.tax_year for y in self.years if y.status == "completed"]

    @property
    def failed(self) -> list[int]:
        return [y.tax_year for y in self.years if y.status != "completed"]

    @property
    def message(self) -> str:
        parts = [f"completed: {', '.join(map(str, self.completed)) or 'none'}"]
        if self.failed:
            parts.append(f"failed: {', '.join(map(str, self.failed))}")
        return "; ".join(parts)


def parse_years(spec: str) -> list[int]:
    """``2019-2024`` or ``2019,2021,2023`` (or a mix) -> sorted distinct years."""
    years: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        a, sep, b = part.partition("-")
        try:
            lo = int(a)
            hi = int(b) if sep else lo
        except ValueError:
            raise ValueError(f"--years expects e.g. 2019-2024 or 2019,2021; got {spec!r}") from None
        if hi < lo or hi - lo > 50:
            raise ValueError(f"--years range {part!r} is empty or too long")
        years.update(range(lo, hi + 1))
    if not years:
        raise ValueError("--years names no year")
    return sorted(years)


def year_input(input_dir: Path, year: int) -> Path:
    """The folder a tax year reads: ``<dir>/<year>`` when the input has one per year, else the
    whole input. A year with no folder of its own where other years have one is an error (it would
    read the other years' files, their employer rates among them), never a silent fallback."""
    sub = input_dir / str(year)
    if sub.is_dir():
        return sub
    others = sorted(p.name for p in input_dir.iterdir() if p.is_dir() and len(p.name) == 4 and p.name.isdigit())
    if others:
        raise ValueError(f"{input_dir} has a folder per tax year ({', '.join(others)}) but none for {year}: "
                         f"add {sub} or leave {year} out of --years")
    return input_dir


def year_as_of(year: int, as_of: dt.date | None) -> dt.date:
    """A tax year's as-of date in a backfill: ``as_of`` when given, else July 1 after the year."""
    return as_of or dt.date(year + 1, 7, 1)


@flow(name="impcredit-backfill", log_prints=False)
def backfill_flow(
    input_dir: Path,
    years: list[int],
    as_of: dt.date | None,
    out_dir: Path,
    workdir: Path,
    params: Parameters,
    settings: Settings,
    wait_seconds: float = 0.0,
    dask_address: str | None = None,
    profiles: str | None = None,
):
    """Run the annual flow per tax year, in order (``dask_address``: each year's ingest on that
    Dask cluster's workers; ``profiles``: the agency's profiles folder). Each year's as-of date is ``as_of`` when given,
    else July 1 of the following year (so each tax year is approved in its own approval year)."""
    logger = get_run_logger()
    report = BackfillReport()
    years = sorted(years)
    _env.name_flow_run(f"backfill-{years[0]}-{years[-1]}" if years else "backfill")  # tagged impcredit, backfill
    for year in years:  # none dated after today (spec section 7): refused before any year runs
        check_dated(year_as_of(year, as_of), today(), option=f"tax year {year}'s as-of date",
                    note="" if as_of else " (July 1 after it: no --as-of given)")
    for year in years:
        day = year_as_of(year, as_of)
        try:
            year_dir = year_input(input_dir, year)
        except ValueError as exc:
            report.years.append(YearOutcome(year, "failed", str(exc)))
            logger.error("tax year %s failed: %s", year, exc)
            continue
        logger.info("tax year %s reads %s", year, year_dir)
        state = annual_flow(
            input_dir=year_dir, tax_year=year, as_of=day, out_dir=out_dir / str(year),
            workdir=workdir, params=params, settings=settings, wait_seconds=wait_seconds,
            dask_address=dask_address, profiles=profiles, return_state=True,
        )
        if state.is_completed():
            report.years.append(YearOutcome(year, "completed", summary=state.result()))
            logger.info("tax year %s completed", year)
        else:
            try:
                state.result()
                msg = state.message or state.name
            except BaseException as exc:  # the subflow's own exception, reported not raised
                msg = f"{exc.__class__.__name__}: {exc}"
            report.years.append(YearOutcome(year, "failed", msg))
            logger.error("tax year %s failed: %s", year, msg)
    if report.failed:
        return Failed(message=report.message, data=report)
    return Completed(message=report.message, data=report)
