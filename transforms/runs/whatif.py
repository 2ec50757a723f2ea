"""What-if runs (spec section 7): other settings, parameters, policy or cap; outputs beside the
ledger, never into it. Plain functions; the Prefect flow is ``flows/whatif.py``.

Allocation uses ``annual.decide(..., fresh=True)`` on a read-only ledger connection:
this tax year's earlier decisions are ignored and only other tax years' awards of the approval
year consume the cap. ``diff.csv`` compares with the last real (annual) run's awards of the tax
year, taken from the ledger (latest decision per application).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms.award import ledger
from transforms.outputs import PendingOutputs, write_csv, write_json
from transforms.runs import annual as steps

DIFF_COLUMNS = ["level", "application_id", "employee_id", "awarded_before", "awarded_whatif", "change", "status_before",
                "status_whatif", "requested_before", "requested_whatif", "credit_before", "credit_whatif", "why"]


def parse_assignments(items: list[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{what} expects NAME=VALUE, not {item!r}")
        out[name.strip()] = value.strip()
    return out


def parse_param_overrides(items: dict[str, str]) -> dict[str, float | dt.date]:
    """``--param`` values: numbers, or ISO dates for date series."""
    out: dict[str, float | dt.date] = {}
    for k, v in items.items():
        try:
            out[k] = float(v)
        except ValueError:
            try:
                out[k] = dt.date.fromisoformat(v)
            except ValueError:
                raise ValueError(f"--param {k}={v}: expected a number or an ISO date") from None
    return out


def default_out_dir(workdir: Path) -> Path:
    return workdir / "whatif" / dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def awards_before(con, tax_year: int) -> pl.DataFrame:
    """The ledger's awards of a tax year: each application's current decision (amendments summed)."""
    return ledger.current_decisions(con).filter(pl.col("tax_year") == tax_year).select(
        "application_id", "requested_cents", "awarded_cents", "status")


def diff_awards(before: pl.DataFrame, whatif: pl.DataFrame, *, before_policy: str | None, whatif_policy: str,
                before_cap_cents: int | None, whatif_cap_cents: int,
                employees_before: pl.DataFrame | None = None, employees_whatif: pl.DataFrame | None = None) -> pl.DataFrame:
    """``diff.csv``: the applications whose award or status changes (or that one side lacks),
    and beside them the employee-years whose status or credit changes (``level`` application or
    employee). ``why`` names each cause, ``;``-joined: ``credit`` (its request, or the employee's
    credit, changed), ``cap`` (the cap differs), ``policy`` (the rationing policy differs),
    ``queue`` (none of these for it: the awards ahead of it in the queue changed)."""
    b = before.select("application_id", pl.col("requested_cents").alias("rb"), pl.col("awarded_cents").alias("ab"),
                      pl.col("status").alias("status_before"))
    w = whatif.select("application_id", pl.col("requested_cents").alias("rw"), pl.col("awarded_cents").alias("aw"),
                      pl.col("status").alias("status_whatif"))
    j = b.join(w, on="application_id", how="full", coalesce=True)
    # an application held (not decided) by the what-if that the ledger has no decision of: held by the
    # annual run too (the ledger keeps no held application), or unseen by it; nothing is awarded either way
    held_both = pl.col("ab").is_null() & (pl.col("status_whatif") == "HELD")
    changed = j.filter(
        ((pl.col("ab").fill_null(-1) != pl.col("aw").fill_null(-1))
         | (pl.col("status_before").fill_null("") != pl.col("status_whatif").fill_null(""))) & ~held_both
    )
    policy_changed = before_policy is not None and before_policy != whatif_policy
    cap_changed = before_cap_cents is None or before_cap_cents != whatif_cap_cents
    causes = pl.concat_str([
        pl.when(pl.col("rb") != pl.col("rw")).then(pl.lit("credit")),
        pl.when(pl.lit(cap_changed)).then(pl.lit("cap")),
        pl.when(pl.lit(policy_changed)).then(pl.lit("policy")),
    ], separator=";", ignore_nulls=True)
    why = (
        pl.when(pl.col("ab").is_null()).then(pl.lit("not in the annual run"))
        .when(pl.col("aw").is_null()).then(pl.lit("not in the what-if"))
        .when(causes != "").then(causes)
        .otherwise(pl.lit("queue"))
    )
    money = lambda c: (pl.col(c) / 100)  # noqa: E731
    apps = changed.select(
        pl.lit("application").alias("level"), "application_id", pl.lit(None, dtype=pl.String).alias("employee_id"),
        money("ab").alias("awarded_before"), money("aw").alias("awarded_whatif"),
        ((pl.col("aw").fill_null(0) - pl.col("ab").fill_null(0)) / 100).alias("change"),
        "status_before", "status_whatif", money("rb").alias("requested_before"), money("rw").alias("requested_whatif"),
        pl.lit(None, dtype=pl.Float64).alias("credit_before"), pl.lit(None, dtype=pl.Float64).alias("credit_whatif"),
        why.alias("why"),
    )
    if employees_before is None or employees_whatif is None:
        return apps.sort("application_id")
    key = ["application_id", "employee_id"]
    eb = employees_before.select(*key, pl.col("status").alias("status_before"), pl.col("credit_cents").alias("cb"))
    ew = employees_whatif.select(*key, pl.col("status").alias("status_whatif"), pl.col("credit_cents").alias("cw"))
    e = eb.join(ew, on=key, how="full", coalesce=True).filter(
        (pl.col("cb").fill_null(-1) != pl.col("cw").fill_null(-1))
        | (pl.col("status_before").fill_null("") != pl.col("status_whatif").fill_null("")))
    emps = e.select(
        pl.lit("employee").alias("level"), *key, *[pl.lit(None, dtype=pl.Float64).alias(c) for c in ("awarded_before", "awarded_whatif")],
        ((pl.col("cw").fill_null(0) - pl.col("cb").fill_null(0)) / 100).alias("change"), "status_before", "status_whatif",
        *[pl.lit(None, dtype=pl.Float64).alias(c) for c in ("requested_before", "requested_whatif")],
        money("cb").alias("credit_before"), money("cw").alias("credit_whatif"),
        pl.when(pl.col("cb").is_null()).then(pl.lit("not in the annual run"))
        .when(pl.col("cw").is_null()).then(pl.lit("not in the what-if")).otherwise(pl.lit("credit")).alias("why"),
    )
    return pl.concat([apps, emps]).sort("application_id", "level", "employee_id", nulls_last=False)


@dataclass
class WhatIfOutcome:
    summary: steps.RunSummary
    changed: int
    diff_path: str
    baseline_run: str | None
    overrides: dict
    totals: dict | None = None  # requested and awarded, before (the annual run) and in the what-if


def run_whatif(ctx: steps.RunContext, assignments: dict[str, str]) -> WhatIfOutcome:
    """Decide against the ledger (read-only, fresh), write the outputs and diff.csv; no commit."""
    workdir, out_dir, run_id, tax_year, as_of = ctx.workdir, ctx.out_dir, ctx.run_id, ctx.tax_year, ctx.as_of
    params, settings, result = ctx.params, ctx.settings, ctx.result
    con = ledger.connect(workdir / "impcredit.duckdb", read_only=True)
    try:
        with PendingOutputs(out_dir, run_id) as staging:
            cap = steps.cap_cents(params, settings, as_of)
            decisions = steps.decide(ctx, con, fresh=True)
            summary = steps.write_outputs(ctx, staging, decisions)
            base = ledger.last_run(con, "annual", tax_year)
            before = awards_before(con, tax_year)
            _, employees_before = ledger.last_employee_years(con, "annual", tax_year)
            diff = diff_awards(
                before, decisions.awards,
                before_policy=base.get("policy") if base else None, whatif_policy=settings.allocation.policy,
                before_cap_cents=int(round(base["cap"] * 100)) if base and "cap" in base else None, whatif_cap_cents=cap,
                employees_before=employees_before if base else None,
                # as the ledger keeps them (before audit findings), like the annual run's
                employees_whatif=ctx.computed_years if ctx.computed_years is not None else steps.employee_years_of(result),
            )
            diff_path = write_csv(diff, staging.path("diff.csv"))
            write_json(
                {"run_id": run_id, "baseline_run": base["run_id"] if base else None, "assignments": assignments,
                 "parameter_overrides": {k: str(v) for k, v in params.overrides.items()},
                 "changed": int((diff["level"] == "application").sum()), "employee_years_changed": int((diff["level"] == "employee").sum()),
                 "before": {"requested": int(before["requested_cents"].sum()) / 100 if before.height else None,
                            "awarded": int(before["awarded_cents"].sum()) / 100 if before.height else None},
                 "whatif": {"requested": summary.requested, "awarded": summary.awarded},
                 "ledger": "not written (what-if)"},
                staging.path("whatif.json"),
            )
    finally:
        con.close()
    summary.outputs = [str(p) for p in staging.published]
    summary.out_dir = str(out_dir)
    summary.workdir = str(workdir)
    totals = {"before_requested": int(before["requested_cents"].sum()) / 100 if before.height else None,
              "before_awarded": int(before["awarded_cents"].sum()) / 100 if before.height else None,
              "whatif_requested": summary.requested, "whatif_awarded": summary.awarded}
    return WhatIfOutcome(summary, int((diff["level"] == "application").sum()), str(out_dir / Path(diff_path).name),
                         base["run_id"] if base else None, assignments, totals)
