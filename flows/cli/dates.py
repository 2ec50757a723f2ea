"""The dates a command takes: an ISO date option, today in New Jersey, and the refusal of a run that decides dated after it (spec section 7)."""

from __future__ import annotations

import datetime as dt

from flows.cli import common


def parse_date(value: str | None, name: str) -> dt.date:
    """An ISO date option; none given: today in New Jersey (``today``)."""
    if value is None:
        return today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        common.fail(f"{name} must be an ISO date like 2026-06-30, not {value!r}")
        raise


def today() -> dt.date:
    """Today in New Jersey (``flows.settings.today``: ``IMPCREDIT_TODAY`` stands in for the clock)."""
    from flows.settings import today as nj_today

    try:
        return nj_today()
    except ValueError as exc:
        common.fail(str(exc))
        raise


def dated(as_of: dt.date, option: str = "--as-of", run: str = "a run that decides", note: str = "") -> None:
    """A run that decides (annual, backfill, quarterly) dated after today stops here, before it
    reads anything: one line naming ``option``, exit 2 (as the other refusals of an option),
    nothing recorded, nothing written. A what-if is not asked: it decides nothing."""
    from transforms.runs.inputs import RunError, check_dated

    try:
        check_dated(as_of, today(), option=option, run=run, note=note)
    except RunError as exc:
        common.fail(str(exc))
