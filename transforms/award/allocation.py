"""Rationing approvals under the annual cap (56a40(g); spec section 7), in DuckDB SQL.

Amounts are integer cents (BIGINT, HUGEINT for products) so that the invariants hold exactly:
every award <= its request, the awards of an approval year <= the cap, and pro-rata awards add
up to the cap to the cent when oversubscribed.
"""

from __future__ import annotations

import duckdb
import polars as pl

from transforms.rules.reasons import CAP_EXHAUSTED

CANDIDATE_SCHEMA = pl.Schema(
    {
        "application_id": pl.String(),
        "received_at": pl.Datetime("us", "UTC"),
        "requested_cents": pl.Int64(),
        # 0 = carried waitlist of an earlier approval year (considered first), 1 = new
        "priority_group": pl.Int8(),
    }
)

_FCFS = """
WITH ordered AS (
    SELECT *,
           coalesce(sum(requested_cents) OVER (
               ORDER BY received_at, application_id
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before_cents
    FROM cand
)
SELECT application_id,
       CASE
           WHEN $partial THEN greatest(0, least(requested_cents, $cap - before_cents))
           WHEN before_cents + requested_cents <= $cap THEN requested_cents
           ELSE 0
       END::BIGINT AS awarded_cents
FROM ordered
"""

_PRO_RATA = """
WITH total AS (SELECT sum(requested_cents)::HUGEINT AS total_cents FROM cand),
shares AS (
    SELECT c.*, t.total_cents,
           CASE WHEN t.total_cents <= $cap THEN c.requested_cents::HUGEINT
                ELSE (c.requested_cents::HUGEINT * $cap) // t.total_cents END AS base_cents,
           CASE WHEN t.total_cents <= $cap THEN 0::HUGEINT
                ELSE (c.requested_cents::HUGEINT * $cap) % t.total_cents END AS remainder
    FROM cand c CROSS JOIN total t
),
leftover AS (
    SELECT CASE WHEN max(total_cents) <= $cap THEN 0 ELSE $cap - sum(base_cents) END AS cents FROM shares
),
ranked AS (
    SELECT s.*, row_number() OVER (ORDER BY remainder DESC, received_at, application_id) AS rk
    FROM shares s
)
SELECT application_id,
       (base_cents + CASE WHEN rk <= (SELECT cents FROM leftover) THEN 1 ELSE 0 END)::BIGINT AS awarded_cents
FROM ranked
"""


def _allocate_group(con: duckdb.DuckDBPyConnection, cand: pl.DataFrame, cap_cents: int, policy: str, partial: bool):
    if cand.is_empty():
        return pl.DataFrame(schema={"application_id": pl.String, "awarded_cents": pl.Int64})
    con.register("cand", cand.to_arrow())
    try:
        sql = _FCFS if policy == "fcfs" else _PRO_RATA
        params = {"cap": cap_cents} | ({"partial": partial} if policy == "fcfs" else {})
        return con.sql(sql, params=params).pl()
    finally:
        con.unregister("cand")


def allocate(
    candidates: pl.DataFrame,
    cap_left_cents: int,
    *,
    policy: str = "fcfs",
    partial_awards: bool = True,
    con: duckdb.DuckDBPyConnection | None = None,
) -> pl.DataFrame:
    """Award each candidate application against the cap left (spec section 7).

    ``candidates`` has CANDIDATE_SCHEMA (only applications with requested > 0). The carried
    waitlist (priority_group 0) is served first, in its original order, then the new ones.
    Returns application_id, requested_cents, awarded_cents, status, reasons, in priority order.
    """
    if policy not in ("fcfs", "pro-rata"):
        raise ValueError(f"unknown allocation policy {policy!r} (fcfs or pro-rata)")
    if cap_left_cents < 0:
        raise ValueError("cap left cannot be negative")
    own = con is None
    con = con or duckdb.connect()
    try:
        cand = candidates.select(CANDIDATE_SCHEMA.names()).cast(CANDIDATE_SCHEMA)
        if (cand["requested_cents"] <= 0).any():
            raise ValueError("candidates must have requested > 0")
        left = cap_left_cents
        parts = []
        for group in sorted(cand["priority_group"].unique().to_list()):
            g = cand.filter(pl.col("priority_group") == group)
            awarded = _allocate_group(con, g, left, policy, partial_awards)
            left -= int(awarded["awarded_cents"].sum())
            parts.append(g.join(awarded, on="application_id", how="left"))
    finally:
        if own:
            con.close()
    if not parts:
        out = cand.with_columns(pl.lit(0, pl.Int64).alias("awarded_cents"))
    else:
        out = pl.concat(parts)
    return out.sort("priority_group", "received_at", "application_id").select(
        "application_id",
        "requested_cents",
        "awarded_cents",
        pl.when(pl.col("awarded_cents") == pl.col("requested_cents"))
        .then(pl.lit("APPROVED"))
        .when(pl.col("awarded_cents") > 0)
        .then(pl.lit("PARTIAL"))
        .otherwise(pl.lit("WAITLISTED"))
        .alias("status"),
        pl.when(pl.col("awarded_cents") == pl.col("requested_cents"))
        .then(pl.lit(""))
        .otherwise(pl.lit(CAP_EXHAUSTED))
        .alias("reasons"),
    )
