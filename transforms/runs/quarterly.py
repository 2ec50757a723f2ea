"""Quarterly estimates (spec section 9): projected credits, installment shares and cap pressure
(the variance against the annual run: ``runs/variance.py``). Plain functions; the Prefect flow is ``flows/quarterly.py``.

A quarterly run allocates nothing: it records a run of kind ``quarterly`` (with its quarter) in
the ledger's ``runs`` table, no decisions, and keeps its per-application projections in
``<workdir>/estimates/<run_id>.parquet`` for the variance report.

The projection itself (hours, wages and required wages scaled to the full year) is
``compute_credits(..., observe_through=E)``; this module adds the observed hours back.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from transforms.award import ledger
from transforms.award.decide import empty_decisions
from transforms.outputs import PendingOutputs, write_csv, write_json
from transforms.reference.parameters import Parameters
from transforms.rules import engine as cr
from transforms.rules.engine import CreditInputs, CreditResult
from transforms.rules.rounding import round2
from transforms.runs import annual as steps
from transforms.runs.inputs import holdings
from transforms.runs.record import summary_json
from transforms.runs.variance import variance
from transforms.settings import Settings

QUARTER_ENDS = {1: (3, 31), 2: (6, 30), 3: (9, 30), 4: (12, 31)}


def quarter_end(tax_year: int, quarter: int) -> dt.date:
    if quarter not in QUARTER_ENDS:
        raise ValueError(f"quarter must be 1, 2, 3 or 4, not {quarter!r}")
    m, d = QUARTER_ENDS[quarter]
    return dt.date(tax_year, m, d)


def approval_year_for(tax_year: int, as_of: dt.date) -> int:
    """The approval year a tax year's awards fall in: the year after it (applications are made
    after the tax year ends), or the as-of date's year when that is later."""
    return max(tax_year + 1, as_of.year)


def latest_completed_quarter(on: dt.date) -> tuple[int, int]:
    """(tax_year, quarter) of the latest quarter end on or before ``on`` (scheduled runs)."""
    for q in (4, 3, 2, 1):
        if quarter_end(on.year, q) <= on:
            return on.year, q
    return on.year - 1, 4


def estimate_folder(root: Path, tax_year: int, quarter: int, as_of: dt.date) -> Path:
    """A quarterly run's own folder under ``root``: ``<tax year>/q<q>-as-of-<date>``. Never an
    earlier run's: when that folder holds a published run (its ``manifest.json``), the next run of
    the same quarter and date writes ``...-2``, ``...-3``."""
    base = root / str(tax_year) / f"q{quarter}-as-of-{as_of.isoformat()}"
    path, n = base, 1
    while (path / "manifest.json").exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def _split_reasons(s: str) -> list[str]:
    return [r for r in s.split(";") if r]


def estimate_credits(
    frames: dict[str, pl.DataFrame | pl.LazyFrame],
    tax_year: int,
    quarter: int,
    as_of: dt.date,
    params: Parameters,
    settings: Settings,
) -> CreditResult:
    """Projected employee-years of a quarter of each application's own tax period (spec 9),
    with ``H_t_observed`` (hours so far)."""
    result = cr.compute_credits(CreditInputs.from_frames(frames), tax_year, as_of, params, settings.rules,
                                quarter=quarter)
    if "H_t_observed" not in result.employees.columns:  # tax year before the first: nothing computed
        result.employees = result.employees.with_columns(pl.lit(0.0).alias("H_t_observed"))
    return result


def estimates_output(result: CreditResult, quarter: int) -> pl.DataFrame:
    emp = result.employees
    return emp.select(
        "application_id",
        "employer_id",
        "employee_id",
        pl.col("tax_year").cast(pl.Int32),
        pl.lit(quarter, pl.Int8).alias("quarter"),
        round2(pl.col("H_t_observed").fill_null(0.0)).alias("hours_so_far"),
        pl.col("hours_current").fill_null(0.0).alias("projected_hours"),
        (pl.when(pl.col("status") == "ELIGIBLE").then(pl.col("credit_cents")).otherwise(0) / 100).alias(
            "projected_credit"
        ),
        "status",
        "reasons",
    ).sort("application_id", "employee_id")


def employer_estimates_output(result: CreditResult, tax_year: int, quarter: int) -> pl.DataFrame:
    """One row per application. ``installment_k`` is the cumulative part of the projected credit
    usable by the k-th NJ estimated payment (April 15, June 15, September 15, December 15): k
    quarters of it, rounded down to the cent, so installment_4 is the whole projected credit."""
    apps = result.applications
    cents = pl.col("requested_cents")
    return apps.select(
        "application_id",
        "employer_id",
        pl.lit(tax_year, pl.Int32).alias("tax_year"),
        pl.lit(quarter, pl.Int8).alias("quarter"),
        (cents / 100).alias("projected_credit"),
        *[((cents * k) // 4 / 100).alias(f"installment_{k}") for k in (1, 2, 3, 4)],
        pl.when(cents > 0).then(pl.lit("PROJECTED")).otherwise(pl.lit("NO_CREDIT")).alias("status"),
        "reasons",
    ).sort("application_id")


@dataclass
class QuarterlySummary:
    run_id: str
    kind: str
    tax_year: int
    quarter: int
    quarter_end: dt.date
    as_of: dt.date
    approval_year: int
    applications: int
    employee_years: int
    eligible_employee_years: int
    projected_total: float
    cap: float
    approved_in_approval_year: float
    cap_left: float
    cap_pressure: float  # projected_total / cap_left (inf when no cap is left)
    rejected_rows: int
    statuses: dict[str, int]
    variance_written: bool = False
    received_after_as_of: int = 0  # requests of the tax year received after the as-of date: not seen
    requests: int = 0  # estimate requests and applications of the tax year estimated (0: none received yet)
    outputs: list[str] = field(default_factory=list)
    out_dir: str = ""
    workdir: str = ""
    key_source: str = ""
    holds: str = ""  # what the submission holds (``inputs.holdings``): said when no request was estimated

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["as_of"] = self.as_of.isoformat()
        d["quarter_end"] = self.quarter_end.isoformat()
        return d

    @property
    def no_request_line(self) -> str | None:
        """Spec section 9, "a quarterly run with no request completes and says so": the line, or None."""
        return None if self.applications else (
            f"no estimate request or application of tax year {self.tax_year} received by {self.as_of}: nothing to "
            f"estimate (the submission holds {self.holds or 'nothing'})")

    @property
    def cap_line(self) -> str:
        return (
            f"projected {self.projected_total:,.2f} against cap left {self.cap_left:,.2f} "
            f"(cap {self.cap:,.2f}, approved {self.approved_in_approval_year:,.2f} in {self.approval_year}): "
            f"{self.cap_pressure:.1%} of the cap left"
        )


def _manifest(s: QuarterlySummary, params: Parameters, settings: Settings, staged: steps.RunInputs) -> dict:
    """manifest.json of a quarterly run: what it projected, from what, and the cap pressure."""
    return {
        "run_id": s.run_id, "kind": "quarterly", "tax_year": s.tax_year, "quarter": s.quarter,
        "quarter_end": s.quarter_end.isoformat(), "as_of": s.as_of.isoformat(), "approval_year": s.approval_year,
        "projection": "hours so far x days in year / days to quarter end; remaining hours spread evenly "
        "over the remaining days at each day's minimum wage (spec 9)",
        "settings": settings.model_dump(),
        "parameters": {"version": params.version, "files": params.files,
                       "overrides": {k: str(v) for k, v in params.overrides.items()}},
        "inputs": {"sha256": staged.inputs_sha256, "lake_sha256": staged.lake_sha256, "files": staged.files},
        "code_version": steps.code_version(),
        "row_counts": {"applications": s.applications, "employee_years": s.employee_years,
                       "eligible_employee_years": s.eligible_employee_years,
                       "rejected_cells": staged.rejects.height},
        "cap_pressure": {
            "projected_total": s.projected_total, "cap": s.cap,
            "approved_in_approval_year": s.approved_in_approval_year, "cap_left": s.cap_left,
            "ratio_to_cap_left": None if s.cap_pressure == float("inf") else round(s.cap_pressure, 6),
            "line": s.cap_line,
        },
        "installments": "installment_k = floor(projected_credit x k/4) to the cent, cumulative "
        "(April 15, June 15, September 15, December 15)",
    }


def run_quarterly(ctx: steps.RunContext) -> QuarterlySummary:
    """Write the estimate files aside, record the run (no decisions), then publish."""
    workdir, out_dir, run_id, tax_year, quarter = ctx.workdir, ctx.out_dir, ctx.run_id, ctx.tax_year, ctx.quarter
    as_of, params, settings, staged, result, started_at = (ctx.as_of, ctx.params, ctx.settings, ctx.staged, ctx.result,
                                                           ctx.started_at)
    end = quarter_end(tax_year, quarter)
    con = ledger.connect(workdir / "impcredit.duckdb")
    est_dir = workdir / "estimates"
    est_dir.mkdir(parents=True, exist_ok=True)
    est_path = est_dir / f"{run_id}.parquet"
    try:
        with PendingOutputs(out_dir, run_id) as staging:
            est = estimates_output(result, quarter)
            emp_est = employer_estimates_output(result, tax_year, quarter)
            write_csv(est, staging.path("estimates.csv"))
            write_csv(emp_est, staging.path("employer_estimates.csv"))
            staged.write_rejects(staging.dir)
            approval_year = approval_year_for(tax_year, as_of)
            cap = steps.cap_cents(params, settings, dt.date(approval_year, 12, 31))
            approved = ledger.awarded_in_year(con, approval_year)
            cap_left = max(cap - approved, 0)
            projected = int(result.applications["requested_cents"].sum())
            statuses = dict(sorted(emp_est.group_by("status").len().iter_rows()))
            summary = QuarterlySummary(
                run_id=run_id, kind="quarterly", tax_year=tax_year, quarter=quarter, quarter_end=end, as_of=as_of,
                approval_year=approval_year, applications=emp_est.height, employee_years=est.height,
                eligible_employee_years=int((est["status"] == "ELIGIBLE").sum()), projected_total=projected / 100,
                cap=cap / 100, approved_in_approval_year=approved / 100, cap_left=cap_left / 100,
                cap_pressure=(projected / cap_left) if cap_left else (0.0 if projected == 0 else float("inf")),
                rejected_rows=staged.rejected_rows,
                statuses=statuses, key_source=staged.key_source,
                received_after_as_of=steps.received_after(staged, tax_year, as_of),
                requests=emp_est.height, holds="" if emp_est.height else holdings(staged, as_of),
            )
            manifest = _manifest(summary, params, settings, staged)
            write_json(manifest, staging.path("manifest.json"))
            emp_est.select("application_id", "employer_id", (pl.col("projected_credit") * 100).round().cast(pl.Int64).alias(
                "projected_cents")).write_parquet(est_path)
            record = {
                "run_id": run_id, "kind": "quarterly", "tax_year": tax_year, "quarter": quarter, "as_of": as_of,
                "approval_year": approval_year, "policy": settings.allocation.policy, "cap_cents": cap,
                "settings_json": json.dumps(settings.model_dump(), sort_keys=True), "params_version": params.version,
                "inputs_sha256": staged.inputs_sha256,
                "status": "completed with rejections" if summary.rejected_rows else "completed",
                "started_at": started_at, "committed_at": ledger.now_utc(),
                "summary_json": summary_json(summary, staged, ctx.invoked_at),
            }
            ledger.commit_run(con, record, empty_decisions(), staged.files, max(cap, approved))
            var = variance(con, workdir, tax_year)
            if var is not None:
                write_csv(var, staging.path("variance.csv"))
                summary.variance_written = True
    except BaseException:
        est_path.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    summary.outputs = [str(p) for p in staging.published]
    summary.out_dir = str(out_dir)
    summary.workdir = str(workdir)
    return summary
