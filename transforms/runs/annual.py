"""The steps of an annual run, as plain functions (the Prefect flow in ``flows/`` wires them).

stage the submission -> compute credits -> decide against the ledger -> write outputs aside ->
commit the ledger -> move the outputs into place.

The inputs' steps are in ``runs.inputs`` and the run's record in ``runs.record``; this module
names them too, so that a flow reads as the list of its steps (``steps.stage_inputs``, ...).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl

from transforms import failpoints
from transforms.award import ledger
from transforms.award.changes import since_last_run
from transforms.award.decide import ROW_SCHEMA, Decisions, awards_output, decide
from transforms.outputs import (
    StagedOutputs,
    clean_stale_staging,
    sha256_file,
    write_csv,
    write_json,
)
from transforms.reference.parameters import Parameters
from transforms.rules.engine import CreditInputs, CreditResult, compute_credits, employee_output
from transforms.runs.inputs import (
    NothingToDecide,
    RunError,
    StagedInputs,
    SubmissionIncomplete,
    check_complete,
    check_files_read,
    check_tax_year,
    first_tax_year,
    input_file_records,
    quick_applications,
    received_after,
    stage_inputs,
)
from transforms.runs.record import (
    RunSummary,
    cap_cents,
    code_version,
    new_run_id,
    nj_time,
    run_record,
    workdir_lock,
)
from transforms.settings import Settings
from transforms.stages import stage


def compute(frames: dict[str, pl.LazyFrame | pl.DataFrame], tax_year: int, as_of: dt.date, params: Parameters,
            settings: Settings) -> CreditResult:
    with stage("credits") as s:
        result = compute_credits(CreditInputs.from_frames(frames), tax_year, as_of, params, settings.rules)
        emp = result.employees
        s.say(f"{emp.height:,} employee-years ({int((emp['status'] == 'ELIGIBLE').sum()):,} eligible), "
              f"{result.applications.height:,} applications")
    failpoints.hit("computed")
    return result


def decide_against_ledger(
    con, result: CreditResult, *, as_of: dt.date, cap: int, settings: Settings, run_id: str, fresh: bool = False
) -> Decisions:
    """Decide with the ledger's state. ``fresh`` (what-if): this tax year's earlier decisions
    are ignored and only other tax years' awards of the approval year consume the cap."""
    approval_year = as_of.year
    app_ids = result.applications["application_id"].to_list()
    if fresh:
        before = int(
            con.sql(
                "SELECT coalesce(sum(awarded_cents), 0) FROM decisions WHERE approval_year = $y AND NOT list_contains($ids, application_id)",
                params={"y": approval_year, "ids": app_ids},
            ).fetchall()[0][0]
        )
        final, reopened, history = None, [], None
        waitlist = ledger.carried_waitlist(con, approval_year).filter(~pl.col("application_id").is_in(app_ids))
    else:
        before = ledger.awarded_in_year(con, approval_year)
        final = ledger.final_decisions(con, app_ids)
        waitlist = ledger.carried_waitlist(con, approval_year)
        reopened = ledger.pending_reopenings(con).get_column("application_id").to_list()
        history = ledger.decision_rows(con, reopened)
    return decide(
        result.applications,
        approval_year=approval_year,
        cap_cents=cap,
        approved_before_cents=before,
        final=final,
        waitlist=waitlist,
        reopened=reopened,
        history=history,
        settings=settings.allocation,
        run_id=run_id,
    )


def write_outputs(
    staging: StagedOutputs,
    *,
    run_id: str,
    kind: str,
    tax_year: int,
    as_of: dt.date,
    params: Parameters,
    settings: Settings,
    staged: StagedInputs,
    result: CreditResult,
    decisions: Decisions,
) -> RunSummary:
    emp = employee_output(result.employees)
    awards = awards_output(decisions.awards)
    write_csv(emp, staging.path("employee_credits.csv"))
    write_csv(awards, staging.path("awards.csv"))
    staged.write_rejects(staging.dir)
    data_docs = staged.write_data_docs(staging.dir)
    # Employee-years with every quantity (for explain and audit), no ssn; in a stable order (a
    # group_by's order is not)
    result.employees.drop([c for c in result.employees.columns if c.startswith("__")]).sort(
        "application_id", "employee_id").write_parquet(staging.path("employee_years.parquet"))
    statuses = dict(sorted(awards.group_by("status").len().iter_rows()))
    summary = RunSummary(
        run_id=run_id,
        kind=kind,
        tax_year=tax_year,
        as_of=as_of,
        approval_year=as_of.year,
        policy=settings.allocation.policy,
        cap=decisions.cap_cents / 100,
        applications=awards.height,
        employee_years=emp.height,
        eligible_employee_years=int((emp["status"] == "ELIGIBLE").sum()),
        requested=round(float(decisions.awards["requested_cents"].sum()) / 100, 2),
        awarded=round(float(decisions.awards["awarded_cents"].sum()) / 100, 2),
        awarded_now=decisions.awarded_now_cents / 100,
        awarded_earlier=round((int(decisions.awards["awarded_cents"].sum()) - decisions.awarded_now_cents) / 100, 2),
        approved_before=decisions.approved_before_cents / 100,
        cap_left=decisions.cap_left_cents / 100,
        rejected_rows=staged.rejected_rows,
        statuses=statuses,
        key_source=staged.key_source,
        received_after_as_of=received_after(staged, tax_year, as_of),
    )
    manifest = {
        "run_id": run_id,
        "kind": kind,
        "tax_year": tax_year,
        "as_of": as_of.isoformat(),
        "approval_year": as_of.year,
        "policy": settings.allocation.policy,
        "cap": decisions.cap_cents / 100,
        "settings": settings.model_dump(),
        "parameters": {"version": params.version, "files": params.files, "overrides": {
            k: str(v) for k, v in params.overrides.items()}},
        "inputs": {"sha256": staged.inputs_sha256, "files": staged.files},
        "ssn_hash_key": {"source": "demo" if staged.key_source == "demo" else "configured", "key_id": staged.key_id},
        "data_docs": data_docs,
        "code_version": code_version(),
        "row_counts": {
            "applications": awards.height,
            "employee_years": emp.height,
            "eligible_employee_years": summary.eligible_employee_years,
            "rejected_cells": staged.rejects.height,
            **{f"staged_{k}": v.lazy().select(pl.len()).collect().item() for k, v in staged.frames.items()},
        },
        "totals": {
            "requested": summary.requested,
            "awarded": summary.awarded,
            "approved_before_in_approval_year": summary.approved_before,
            "cap_left": summary.cap_left,
            "statuses": statuses,
        },
    }
    write_json(manifest, staging.path("manifest.json"))
    return summary


def decide_and_commit(
    *,
    workdir: Path,
    out_dir: Path,
    run_id: str,
    kind: str,
    tax_year: int,
    as_of: dt.date,
    params: Parameters,
    settings: Settings,
    staged: StagedInputs,
    result: CreditResult,
    started_at: dt.datetime,
    quarter: int | None = None,
    with_products: bool = True,
) -> RunSummary:
    """Decide against the ledger, write the outputs aside, commit the ledger, then move the
    outputs into place. A failure before the commit leaves neither ledger rows nor outputs."""
    con = ledger.connect(workdir / "impcredit.duckdb")
    try:
        with StagedOutputs(out_dir, run_id) as staging:
            with stage("allocate") as s:
                decisions = decide_against_ledger(
                    con, result, as_of=as_of, cap=cap_cents(params, settings, as_of), settings=settings, run_id=run_id
                )
                st = dict(sorted(decisions.awards.group_by("status").len().iter_rows()))
                s.say(f"{decisions.awards.height:,} applications ({', '.join(f'{k} {v}' for k, v in st.items())}), "
                      f"${decisions.awarded_now_cents / 100:,.2f} awarded by this run")
            summary = write_outputs(
                staging, run_id=run_id, kind=kind, tax_year=tax_year, as_of=as_of, params=params,
                settings=settings, staged=staged, result=result, decisions=decisions,
            )
            employee_years = employee_years_of(result)
            changed = since_last_run(con, kind=kind, tax_year=tax_year, files=staged.files, employee_years=employee_years,
                                     request_differs=decisions.request_differs, reopened=decisions.reopened)
            write_csv(changed.frame(), staging.path("changes.csv"))
            summary.changes, summary.changes_counts = changed.lines(), changed.counts()
            summary.inputs_changed = changed.inputs_changed
            if with_products:
                from transforms.products import write_index, write_products
                from transforms.products.workbook import write_workbook

                ids = decisions.awards.get_column("application_id").to_list()
                history = pl.concat([ledger.decision_rows(con, ids).cast(ROW_SCHEMA), decisions.new.cast(ROW_SCHEMA)])
                with stage("products") as s:
                    made = write_products(
                        staging.dir, con=con, awards=decisions.awards, employee_years=result.employees,
                        rejects=staged.rejects, run_id=run_id, tax_year=tax_year, approval_year=as_of.year,
                        cap_cents=decisions.cap_cents, history=history,
                    )
                    write_workbook(staging.path("awards.xlsx"), {
                        "awards": awards_output(decisions.awards), "employee credits": employee_output(result.employees),
                        "rejects": staged.rejects.drop("employer_id") if "employer_id" in staged.rejects.columns else staged.rejects,
                    })
                    documents = {p.relative_to(staging.dir).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                                 for p in made if p.suffix == ".pdf"}
                    manifest = json.loads(staging.path("manifest.json").read_text())
                    write_json({**manifest, "documents": documents}, staging.path("manifest.json"))
                    write_index(staging.dir, summary, decided_at=nj_time(ledger.now_utc()))
                    s.say(f"{len(made) + 2:,} files (award file, certificates, notices, reports, awards.xlsx, index.html)")
            record = run_record(summary, started_at=started_at, settings=settings, params=params, staged=staged,
                                quarter=quarter)
            failpoints.hit("outputs_written")
            ledger.commit_run(con, record, decisions.new, staged.files, decisions.cap_cents, employee_years=employee_years)
            failpoints.hit("committed")
    finally:
        con.close()
    summary.outputs = [str(p) for p in staging.published]
    summary.out_dir = str(out_dir)
    summary.workdir = str(workdir)
    return summary


def employee_years_of(result: CreditResult) -> pl.DataFrame:
    """The run's employee-years as the ledger keeps them (``ledger.EMPLOYEE_YEAR_SCHEMA``)."""
    return result.employees.select(
        "application_id", "employer_id", "employee_id", pl.col("tax_year").cast(pl.Int32), "status", "reasons",
        pl.when(pl.col("status") == "ELIGIBLE").then(pl.col("credit_cents")).otherwise(0).cast(pl.Int64).alias("credit_cents"),
    )


__all__ = [
    "NothingToDecide",
    "RunError",
    "SubmissionIncomplete",
    "check_complete",
    "check_files_read",
    "check_tax_year",
    "code_version",
    "employee_years_of",
    "first_tax_year",
    "nj_time",
    "quick_applications",
    "received_after",
    "RunSummary",
    "StagedInputs",
    "StagedOutputs",
    "cap_cents",
    "clean_stale_staging",
    "compute",
    "decide_against_ledger",
    "decide_and_commit",
    "input_file_records",
    "new_run_id",
    "run_record",
    "stage_inputs",
    "workdir_lock",
    "write_outputs",
]
