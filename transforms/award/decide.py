"""From credits to decisions: the application totals meet the ledger and the cap (spec section 7).

Pure: the ledger state (decisions already final, the carried waitlist, what the approval year
has already approved) comes in as frames and numbers; what to write back goes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from transforms.award.allocation import allocate
from transforms.award.ledger import DECISION_COLUMNS
from transforms.rules.reasons import CAP_EXHAUSTED, NO_CREDIT_DUE
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
    "period_start",
    "period_end",
]


@dataclass
class Decisions:
    awards: pl.DataFrame  # every application this run reports, as decided now (DECISION_COLUMNS)
    new: pl.DataFrame  # rows to write to the ledger (ROW_COLUMNS: decisions and amendments)
    cap_cents: int
    approved_before_cents: int  # approved in the approval year by earlier runs
    approval_year: int = 0
    # decided applications kept as they are whose recomputed request differs from the one decided
    # (application_id, requested_cents (decided), requested_now_cents, awarded_cents): a
    # corrected submission does not change a decision by itself (spec section 7)
    request_differs: pl.DataFrame | None = None
    reopened: list[str] = field(default_factory=list)  # reopened applications decided again by this run

    @property
    def cap_left_cents(self) -> int:
        """Cap left in the approval year after this run (a decrease returned to it counts)."""
        return self.cap_cents - self.approved_before_cents - int(
            self.new.filter(pl.col("approval_year") == self.approval_year)["awarded_cents"].sum())

    @property
    def awarded_now_cents(self) -> int:
        """The change this run makes to the awards: new decisions and amendments."""
        return int(self.new["awarded_cents"].sum()) if self.new.height else 0


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
            "period_start": pl.Date,
            "period_end": pl.Date,
        }
    )


ROW_SCHEMA = {**empty_decisions().schema, "seq": pl.Int32, "kind": pl.String, "decided_in": pl.Int32}


def _status(requested: int, total: int, reasons: str) -> tuple[str, str]:
    """The decision of an application whose award is now ``total`` of ``requested``."""
    if requested == 0:
        return "REJECTED", reasons or NO_CREDIT_DUE
    if total == requested:
        return "APPROVED", ""
    return ("PARTIAL" if total > 0 else "WAITLISTED"), CAP_EXHAUSTED


def _queue(waitlist: pl.DataFrame, pending: pl.DataFrame, rise: pl.DataFrame) -> pl.DataFrame:
    """The allocation queue (spec section 7): the waitlist carried from an earlier approval year
    first (priority group 0), then this run's pending applications and the increases of
    reopened ones (group 1); ``allocate`` orders each group by receipt."""
    return pl.concat(
        [
            waitlist.select("application_id", "received_at", "requested_cents", pl.lit(0, pl.Int8).alias("priority_group")),
            pl.concat([
                pending.select("application_id", "received_at", "requested_cents"),
                rise.select("application_id", "received_at", pl.col("__rise").alias("requested_cents")),
            ]).with_columns(pl.lit(1, pl.Int8).alias("priority_group")),
        ]
    )


def decide(
    applications: pl.DataFrame,
    *,
    approval_year: int,
    cap_cents: int,
    approved_before_cents: int,
    final: pl.DataFrame | None = None,
    waitlist: pl.DataFrame | None = None,
    reopened: list[str] | None = None,
    history: pl.DataFrame | None = None,
    settings: AllocationSettings | None = None,
    run_id: str = "",
) -> Decisions:
    """Decide this run's applications.

    ``applications``: the application totals of ``compute_credits`` (requested_cents, status
    PENDING, REJECTED or HELD, reasons). A held application (spec section 7) is reported, never
    decided: no ledger row, no cap. ``final``: the current decisions already final in the ledger
    (kept as they are). ``waitlist``: applications waitlisted in an earlier approval year,
    considered first. ``reopened``: applications an analyst reopened (spec section 7, I-12),
    decided again here: an increase over the award takes cap left in this approval year in the
    order of receipt; a decrease returns the difference to the cap of the year(s) it came from,
    the latest first (``history``: their ledger rows, ``ledger.ROW_COLUMNS``).
    """
    settings = settings or AllocationSettings()
    schema = empty_decisions().schema
    final = empty_decisions() if final is None else final.select(DECISION_COLUMNS).cast(schema)
    waitlist = (
        empty_decisions() if waitlist is None or not settings.waitlist_carry else waitlist.select(DECISION_COLUMNS).cast(schema)
    )
    cols = ["application_id", "employer_id", "employer_name", "county", "tax_type", "tax_year", "received_at",
            "period_start", "period_end"]
    current = applications.select(*cols, "requested_cents", "status", "reasons").with_columns(
        pl.col("tax_year").cast(pl.Int32), pl.col("received_at").cast(schema["received_at"])
    )
    in_run = set(current.filter(pl.col("status") != "HELD")["application_id"].to_list())
    reopen = sorted(set(reopened or []) & in_run & set(final["application_id"].to_list()))
    kept = final.filter(pl.col("application_id").is_in(current["application_id"].implode())
                        & ~pl.col("application_id").is_in(reopen))
    carried_ids = waitlist["application_id"]
    fresh = current.filter(
        ~pl.col("application_id").is_in(kept["application_id"].implode())
        & ~pl.col("application_id").is_in(carried_ids.implode())
        & ~pl.col("application_id").is_in(reopen)
    )
    rejected = fresh.filter(pl.col("status") == "REJECTED").with_columns(pl.lit(0, pl.Int64).alias("awarded_cents"))
    held = _held(fresh, approval_year, run_id)
    pending = fresh.filter(~pl.col("status").is_in(["REJECTED", "HELD"]))
    # reopened: the increase over the award is a candidate of this year's queue, in order of receipt
    again = current.filter(pl.col("application_id").is_in(reopen)).join(
        final.select("application_id", pl.col("awarded_cents").alias("__before")), on="application_id", how="left")
    rise = again.filter(pl.col("requested_cents") > pl.col("__before")).with_columns(
        (pl.col("requested_cents") - pl.col("__before")).alias("__rise"))
    candidates = _queue(waitlist, pending, rise)
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
    ).select(DECISION_COLUMNS).cast(schema)
    amendments, amended_now = _amendments(again, allocated, history, approval_year, run_id, cols)
    awards = pl.concat([kept.select(DECISION_COLUMNS).cast(schema), new, amended_now, held]).sort("application_id")
    rows = pl.concat([
        new.with_columns(pl.lit(0, pl.Int32).alias("seq"), pl.lit("decision").alias("kind"),
                         pl.lit(approval_year, pl.Int32).alias("decided_in")).cast(ROW_SCHEMA),
        amendments,
    ])
    return Decisions(awards=awards, new=rows, cap_cents=cap_cents, approved_before_cents=approved_before_cents,
                     approval_year=approval_year, request_differs=_differs(kept, current), reopened=reopen)


def _held(fresh: pl.DataFrame, approval_year: int, run_id: str) -> pl.DataFrame:
    """The held applications as reported (spec section 7): not decided, no cap used, nothing
    written to the ledger."""
    return fresh.filter(pl.col("status") == "HELD").with_columns(
        pl.lit(0, pl.Int64).alias("awarded_cents"), pl.lit(approval_year, pl.Int32).alias("approval_year"),
        pl.lit(run_id).alias("run_id")).select(DECISION_COLUMNS).cast(empty_decisions().schema)


def _differs(kept: pl.DataFrame, current: pl.DataFrame) -> pl.DataFrame:
    """The decisions kept whose recomputed request differs from the one decided."""
    differs = kept.join(current.select("application_id", pl.col("requested_cents").alias("requested_now_cents")),
                        on="application_id", how="inner").filter(pl.col("requested_now_cents") != pl.col("requested_cents"))
    return differs.select("application_id", "requested_cents", "requested_now_cents", "awarded_cents").sort("application_id")


def _amendments(again: pl.DataFrame, allocated: pl.DataFrame, history: pl.DataFrame | None, approval_year: int,
                run_id: str, cols: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(ledger rows, decisions as they now stand) of the reopened applications ``again``
    (their recomputed request and ``__before``, the award so far)."""
    if again.height == 0:
        return pl.DataFrame(schema=ROW_SCHEMA), empty_decisions()
    got = dict(allocated.select("application_id", "awarded_cents").iter_rows())
    hist = history if history is not None else pl.DataFrame(schema=ROW_SCHEMA)
    rows, now = [], []
    for a in again.iter_rows(named=True):
        app, req, before = a["application_id"], int(a["requested_cents"]), int(a["__before"])
        mine = hist.filter(pl.col("application_id") == app)
        seq = int(mine["seq"].max()) + 1 if mine.height else 1
        base = {c: a[c] for c in cols} | {"requested_cents": req, "run_id": run_id, "kind": "amendment",
                                          "decided_in": approval_year}
        if req >= before:  # an increase (or none): this year's cap, as allocated
            change = got.get(app, 0) if req > before else 0
            status, reasons = _status(req, before + change, a["reasons"] if req == 0 else "")
            rows.append({**base, "approval_year": approval_year, "awarded_cents": change, "status": status,
                         "reasons": reasons, "seq": seq})
        else:  # a decrease: returned to the years the award came from, latest first
            status, reasons = _status(req, req, a["reasons"] if req == 0 else "")
            left = before - req
            by_year = mine.group_by("approval_year").agg(pl.col("awarded_cents").sum()).sort("approval_year", descending=True)
            for year, amount in by_year.iter_rows():
                take = min(left, max(int(amount), 0))
                if take:
                    rows.append({**base, "approval_year": int(year), "awarded_cents": -take, "status": status,
                                 "reasons": reasons, "seq": seq})
                    seq, left = seq + 1, left - take
                if not left:
                    break
            change = req - before
        now.append({**{c: a[c] for c in cols}, "approval_year": approval_year, "requested_cents": req,
                    "awarded_cents": before + change, "status": status, "reasons": reasons, "run_id": run_id})
    schema = empty_decisions().schema
    return (pl.DataFrame(rows, schema=ROW_SCHEMA) if rows else pl.DataFrame(schema=ROW_SCHEMA),
            pl.DataFrame(now, schema=schema).select(DECISION_COLUMNS))


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
        "period_start",
        "period_end",
    ).sort("application_id")
