"""The New Jersey date of a flow run's scheduled start: what a scheduled run is dated by, whatever the worker's clock zone and however late it starts.

A deployment's run is dated by the time it was scheduled for (Prefect's ``expected_start_time``,
the schedule's instant), converted to America/New_York, never by the worker's clock in its own
zone: a June 15 run that starts late, or on a machine in UTC at 23:30 New York time, is still a
June 15 run. Outside a flow run (or a run without a scheduled time) it is today in New Jersey.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

NJ = ZoneInfo("America/New_York")


def nj_date(instant: dt.datetime | None) -> dt.date:
    """The New Jersey calendar date of an instant (naive: UTC); None: now."""
    if instant is None:
        instant = dt.datetime.now(dt.UTC)
    aware = instant if instant.tzinfo else instant.replace(tzinfo=dt.UTC)
    day = aware.astimezone(NJ)
    return dt.date(day.year, day.month, day.day)  # a plain date (Prefect's own date type is a subclass)


def scheduled_date() -> dt.date:
    """The New Jersey date of the current flow run's scheduled start (``expected_start_time``)."""
    from prefect.runtime import flow_run

    try:
        expected = flow_run.scheduled_start_time if flow_run.id else None
    except Exception:  # no API to ask: the run is dated today in New Jersey
        expected = None
    if expected is None:
        from flows.settings import today

        return today()  # today in New Jersey (or IMPCREDIT_TODAY's rehearsal date)
    return nj_date(expected)
