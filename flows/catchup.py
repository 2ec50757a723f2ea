"""The scheduled runs finish the year: the annual run of every tax year that has an undecided application a run now sees, then what still waits and until when (logs and artifact).

Used by the scheduled annual run (July 1: the previous tax year, then every other year with such
an application) and by the monthly catch-up (``flows/serve.py``, ``docs/scheduling.md``). The
applications are the lake's (the submission just staged into it), the decisions the ledger's
(``transforms.runs.catchup``). Each catch-up run of a tax year writes its own folder
(``annual/<year>/catch-up-as-of-<date>``): the July 1 run's outputs stay as they were.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact

from transforms.runs import catchup

ARTIFACT_KEY = "still-waiting"  # one key: each scheduled run adds a version (Prefect's Artifacts page)


def plan_now(workdir: Path, day: dt.date) -> catchup.Plan:
    """The undecided applications of the workdir's lake against its ledger, as of ``day``."""
    from transforms.ingest.store.lake import scan_lake

    return catchup.plan(scan_lake(workdir, "applications"), catchup.decided_ids(workdir), day)


def decide_years(years: list[int], day: dt.date, inp: Path, workdir: Path, out_for: Callable[[int], object],
                 dask_address: str | None = None) -> list[str]:
    """The annual run of each tax year as of ``day`` (a subflow each; a year that fails is said and
    the next one still runs): one line per year."""
    from flows.annual import annual_flow
    from transforms.reference.parameters import load_parameters
    from transforms.settings import Settings

    logger, said = get_run_logger(), []
    for year in years:
        state = annual_flow(input_dir=inp, tax_year=year, as_of=day, out_dir=out_for(year), workdir=workdir,
                            params=load_parameters(), settings=Settings(), wait_seconds=600,
                            dask_address=dask_address, return_state=True)
        if state.is_completed():
            s = state.result()
            line = (f"tax year {year}: run {s.run_id}, {s.applications:,} applications, awarded "
                    f"{s.awarded_now:,.2f} by this run; outputs {s.out_dir}")
            logger.info(line)
        else:
            try:
                state.result()
                msg = state.message or state.name
            except BaseException as exc:  # the subflow's own failure, said, not raised
                msg = f"{exc.__class__.__name__}: {exc}"
            line = f"tax year {year}: failed: {msg}"
            logger.error(line)
        said.append(line)
    return said


def report(title: str, day: dt.date, decided: list[str], workdir: Path) -> catchup.Plan:
    """What still waits after the runs of ``day``: a WARNING line with the count (INFO when
    nothing waits), one line per application, and the artifact ``still-waiting``."""
    logger = get_run_logger()
    after = plan_now(workdir, day)
    summary, lines = catchup.waiting_summary(after), catchup.waiting_lines(after)
    (logger.warning if after.undecided.height else logger.info)(summary)
    for line in lines:
        logger.info("waits: %s", line)
    md = [f"## {title} (as of {day})", "", "### Decided by this run", ""]
    md += [f"- {x}" for x in decided] or ["- no tax year had an application to decide"]
    md += ["", "### Still waiting", "", f"**{summary}**", ""] + [f"- {x}" for x in lines]
    create_markdown_artifact(key=ARTIFACT_KEY, markdown="\n".join(md) + "\n", description=f"{title}: {summary}")
    return after
