"""From credits to decisions: the application totals meet the ledger and the cap (spec section 7).

Pure: the ledger state (decisions already final, the carried waitlist, what the approval year
has already approved) comes in as frames and numbers; what to write back goes out.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from transforms.allocation import allocate
from transforms.ledger import DECISION_COLUMNS
from transforms.settings import AllocationSettings

AWARD_COLUMNS = [
    "application_id",
    "employer_id",
    "tax_year",
    "tax_type",
    "approval_year",
    "requested",
    "awarded",
    "status",
    "reasons",
]


@dataclass
class Decisions:
    awards: pl.DataFrame  # every application this run reports (DECISION_COLUMNS)
    new: pl.DataFrame  # decisions to write to the ledger (DECISION_COLUMNS)
    cap_cents: int
    approved_before_cents: int  # approved in the approval year by earlier runs

    @property
    def cap_left_cents(self) -> int:
        return self.cap_cents - self.approved_before_cents - int(self.new["awarded_cents"].sum())


def empty_decisions() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "application_id": pl.String,
            "approval_year": pl.Int32,
            "tax_year": pl.Int32,
            "employer_id": pl.String,
            "employer_name": pl.String,
            "county": pl.String,
            "tax_type": pl.String,
            "received_at": pl.Datetime("us", "UTC"),
            "requested_cents": pl.Int64,
            "awarded_cents": pl.Int64,
            "status": pl.String,
            "reasons": pl.String,
            "run_id": pl.String,
        }
    )


def decide(
    applications: pl.DataFrame,
    *,
    approval_year: int,
    cap_cents: int,
    approved_before_cents: int,
    final: pl.DataFrame | None = None,
    waitlist: pl.DataFrame | None = None,
    settings: AllocationSettings | None = None,
    run_id: str = "",
) -> Decisions:
    """Decide this run's applications.

    ``applications``: the application totals of ``compute_credits`` (requested_cents, status
    PENDING or REJECTED, reasons). ``final``: decisions already final in the ledger (kept as they
    are). ``waitlist``: applications waitlisted in an earlier approval year, considered first.
    """
    settings = settings or AllocationSettings()
    schema = empty_decisions().schema
    final = empty_decisions() if final is None else final.select(DECISION_COLUMNS).cast(schema)
    waitlist = (
        empty_decisions() if waitlist is None or not settings.waitlist_carry else waitlist.select(DECISION_COLUMNS).cast(schema)
    )
    cols = ["application_id", "employer_id", "employer_name", "county", "tax_type", "tax_year", "received_at"]
    current = applications.select(*cols, "requested_cents", "status", "reasons").with_columns(
        pl.col("tax_year").cast(pl.Int32), pl.col("received_at").cast(schema["received_at"])
    )
    kept = final.filter(pl.col("application_id").is_in(current["application_id"].implode()))
    carried_ids = waitlist["application_id"]
    fresh = current.filter(
        ~pl.col("application_id").is_in(kept["application_id"].implode())
        & ~pl.col("application_id").is_in(carried_ids.implode())
    )
    rejected = fresh.filter(pl.col("status") == "REJECTED").with_columns(pl.lit(0, pl.Int64).alias("awarded_cents"))
    pending = fresh.filter(pl.col("status") != "REJECTED")
    candidates = pl.concat(
        [
            waitlist.select("application_id", "received_at", "requested_cents", pl.lit(0, pl.Int8).alias("priority_group")),
            pending.select("application_id", "received_at", "requested_cents", pl.lit(1, pl.Int8).alias("priority_group")),
        ]
    )
    cap_left = max(cap_cents - approved_before_cents, 0)
    allocated = allocate(
        candidates, cap_left, policy=settings.policy, partial_awards=settings.partial_awards
    ).select("application_id", "awarded_cents", "status", "reasons")
    details = pl.concat([waitlist.select(*cols, "requested_cents"), pending.select(*cols, "requested_cents")])
    decided = details.join(allocated, on="application_id", how="inner")
    new = pl.concat(
        [
            decided.select(*cols, "requested_cents", "awarded_cents", "status", "reasons"),
            rejected.select(*cols, "requested_cents", "awarded_cents", "status", "reasons"),
        ]
    ).with_columns(
        pl.lit(approval_year, pl.Int32).alias("approval_year"), pl.lit(run_id).alias("run_id")
    ).select(DECISION_COLUMNS).cast(empty_decisions().schema)
    awards = pl.concat([kept.select(DECISION_COLUMNS).cast(new.schema), new]).sort("application_id")
    return Decisions(awards=awards, new=new, cap_cents=cap_cents, approved_before_cents=approved_before_cents)


def awards_output(awards: pl.DataFrame) -> pl.DataFrame:
    """The contract columns of awards.csv (spec section 8)."""
    return awards.select(
        "application_id",
        "employer_id",
        "tax_year",
        "tax_type",
        "approval_year",
        (pl.col("requested_cents") / 100).alias("requested"),
        (pl.col("awarded_cents") / 100).alias("awarded"),
        "status",
        "reasons",
    ).sort("application_id")
