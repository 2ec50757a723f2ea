"""What the agency's year still has to decide (spec section 7): every application not decided yet, of any tax year, the day a run can first see it, and the tax years a catch-up run decides now.

A run as of D sees an application when it was received on or before D and its tax period T ended
on or before D; until then it waits. An application the ledger holds no decision of is undecided:
received late, a fiscal period that ended since, or held (a rejected or doubtful line, the
agency's missing rates) and decided once the hold is resolved. ``plan`` says which tax years have
an undecided application a run as of D sees (``due_years``: the annual run of each decides them),
and which wait, until when. Plain functions over the lake's applications and the ledger.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms.award import ledger
from transforms.rules.tax_year import tax_period

COLUMNS = ["application_id", "employer_id", "tax_year", "received_date", "T_end", "seen_from"]


@dataclass
class Plan:
    as_of: dt.date
    undecided: pl.DataFrame  # COLUMNS, one row per application not decided yet (``seen_from``: the first day a run sees it)

    @property
    def due(self) -> pl.DataFrame:
        """The undecided applications a run as of ``as_of`` sees (held ones among them)."""
        return self.undecided.filter(pl.col("seen_from") <= self.as_of)

    @property
    def waiting(self) -> pl.DataFrame:
        """The undecided applications no run as of ``as_of`` sees yet."""
        return self.undecided.filter(pl.col("seen_from") > self.as_of)

    @property
    def due_years(self) -> list[int]:
        return sorted(set(self.due.get_column("tax_year").to_list()))


def decided_ids(workdir: Path) -> list[str]:
    """The applications the ledger of ``workdir`` holds a decision of (any status: waitlisted ones
    are considered again by the next approval year's first run); none without a ledger."""
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        return []
    con = ledger.connect(path, read_only=True)
    try:
        return ledger.current_decisions(con).get_column("application_id").to_list()
    finally:
        con.close()


def plan(applications: pl.LazyFrame | pl.DataFrame, decided: list[str], as_of: dt.date) -> Plan:
    """The undecided applications (not in ``decided``) and the day a run first sees each:
    the later of its receipt (New Jersey date) and the end of its tax period."""
    known = pl.LazyFrame({"application_id": list(decided)}, schema={"application_id": pl.String})
    apps = applications.lazy().join(known, on="application_id", how="anti")
    undecided = apps.with_columns(tax_period(apps)).select(
        "application_id", "employer_id", pl.col("tax_year").cast(pl.Int32), "received_date", "T_end",
        pl.max_horizontal("received_date", "T_end").alias("seen_from"),
    ).unique("application_id").sort("seen_from", "tax_year", "application_id").collect()
    return Plan(as_of, undecided)


def next_first_of_month(day: dt.date) -> dt.date:
    """The catch-up run (the 1st of each month) that first sees what is seen from ``day``."""
    if day.day == 1:
        return day
    return dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)


def waiting_lines(p: Plan, *, limit: int = 50) -> list[str]:
    """What still waits after the runs of ``p.as_of``, in words, each with until when: the held
    (seen, still undecided) first, then those no run sees yet. At most ``limit`` lines, then a count."""
    lines = []
    for r in p.due.iter_rows(named=True):
        lines.append(f"{r['application_id']} (employer {r['employer_id']}, tax year {r['tax_year']}): held, not "
                     f"decided: the monthly catch-up of {next_first_of_month(p.as_of + dt.timedelta(days=1))} decides "
                     "it once what holds it is resolved (a corrected file, the agency's rates), or an analyst's "
                     "`impcredit release`")
    for r in p.waiting.iter_rows(named=True):
        why = (f"received {r['received_date']}" if r["received_date"] > r["T_end"]
               else f"its tax period ends {r['T_end']}")
        lines.append(f"{r['application_id']} (employer {r['employer_id']}, tax year {r['tax_year']}): {why}: waits "
                     f"until {r['seen_from']}, decided by the monthly catch-up of {next_first_of_month(r['seen_from'])}")
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit:,} more"]
    return lines


def waiting_summary(p: Plan) -> str:
    """One line: how many still wait after the runs of ``p.as_of``, and until when."""
    held, later = p.due.height, p.waiting.height
    if not held and not later:
        return f"nothing waits: every application received by {p.as_of} is decided"
    parts = []
    if held:
        parts.append(f"{held:,} held (seen, not decided: {', '.join(map(str, p.due_years))})")
    if later:
        first = p.waiting.get_column("seen_from").min()
        parts.append(f"{later:,} not seen yet (the first seen from {first}, decided by the monthly catch-up of "
                     f"{next_first_of_month(first)})")
    n = held + later
    return (f"{n:,} application{'s' if n != 1 else ''} still wait{'' if n != 1 else 's'} after the runs as of "
            f"{p.as_of}: " + "; ".join(parts))
