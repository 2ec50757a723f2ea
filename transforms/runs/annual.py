"""The steps of an annual run, as plain functions (the Prefect flow in ``flows/`` wires them).

stage the submission -> compute credits -> decide against the ledger -> write outputs aside ->
commit the ledger -> move the outputs into place.

The inputs' steps are in ``runs.inputs`` and the run's record in ``runs.record``; this module
names them too, so that a flow reads as the list of its steps (``steps.stage_inputs``, ...).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms import failpoints
from transforms.award import acts, ledger
from transforms.award import findings as audit
from transforms.award.changes import memberships, since_last_run
from transforms.award.decide import ROW_SCHEMA, Decisions, awards_output
from transforms.award.decide import decide as decide_applications
from transforms.award.held import HELD_CSV
from transforms.options import DocumentOptions
from transforms.outputs import (
    PendingOutputs,
    clean_stale_pending,
    sha256_file,
    write_csv,
    write_json,
)
from transforms.reference.parameters import Parameters
from transforms.rules.engine import CreditInputs, CreditResult, compute_credits, employee_output
from transforms.runs.holding import agency_only, holds, reconciliation_counts
from transforms.runs.inputs import (
    NothingToDecide,
    RunError,
    RunInputs,
    SubmissionIncomplete,
    check_complete,
    check_dated,
    check_files_read,
    check_tax_year,
    first_tax_year,
    input_file_records,
    named_by,
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
    run_manifest,
    run_record,
    workdir_lock,
)
from transforms.settings import Settings
from transforms.stages import Stage, stage


def compute(frames: dict[str, pl.LazyFrame | pl.DataFrame], tax_year: int, as_of: dt.date, params: Parameters,
            settings: Settings, *, quarter: int | None = None) -> CreditResult:
    with stage("credits") as s:
        result = compute_credits(CreditInputs.from_frames(frames), tax_year, as_of, params, settings.rules,
                                 quarter=quarter)
        emp = result.employees
        waits = f"; {result.waiting:,} whose tax period has not ended wait" if result.waiting else ""
        s.say(f"{emp.height:,} employee-years ({int((emp['status'] == 'ELIGIBLE').sum()):,} eligible), "
              f"{result.applications.height:,} applications{waits}")
    if result.reconciliation is not None:  # the employer's declared totals against the reading (spec section 1)
        recon = result.reconciliation.filter(pl.col("declared").is_not_null())
        s = Stage("reconcile", time.monotonic() - result.reconcile_s)
        s.say(f"{recon.height:,} declared figures of {recon.select('application_id', 'employee_id').n_unique():,} "
              f"persons compared with what was read, {int(recon.get_column('differs').sum()):,} differ")
        s.done()
    failpoints.hit("computed")
    return result


@dataclass
class RunContext:
    """What every step of a run works on: who it is, what it read, what it computed, where it
    writes. The flows build it once and hand it to each step."""

    kind: str
    run_id: str
    tax_year: int
    as_of: dt.date
    params: Parameters
    settings: Settings
    workdir: Path
    out_dir: Path
    staged: RunInputs
    result: CreditResult
    started_at: dt.datetime
    quarter: int | None = None
    with_products: bool = True
    held: pl.DataFrame | None = None  # the applications held and why: the lines, figures, gaps (spec 7)
    confirmed: pl.DataFrame | None = None  # what the releases decided by this run take as read (the ledger keeps it)
    findings: list | None = None  # the ledger's audit findings (spec 9a), applied to what the run reports
    computed_years: pl.DataFrame | None = None  # the employee-years as computed, before findings (the ledger keeps them)
    invoked_at: float | None = None  # when the command started (epoch seconds; what the user waited: flows.cli)
    documents: DocumentOptions | None = None  # the PDFs and the helper process (the run's settings)

    @property
    def ledger_path(self) -> Path:
        return self.workdir / "impcredit.duckdb"


def hold_unread(ctx: RunContext, released: list[str], confirmed: pl.DataFrame | None = None) -> None:
    """Spec section 7, no decision on input it cannot prove (``runs.holding.holds``): the held
    applications HELD, but those an analyst released; ``ctx.held`` names why each is held,
    ``ctx.confirmed`` what the releases take as read."""
    ctx.result.applications, ctx.held, ctx.confirmed = holds(ctx.result, ctx.staged, released, confirmed)


def apply_findings(ctx: RunContext, con) -> None:
    """Spec section 9a: the audit findings in force apply to what the run computed (an employee
    found misclassified, an employer found to have reduced wages, is ineligible whatever the
    payroll shows), so that its outputs say what the ledger decided. The employee-years as
    computed are kept for the ledger (a finding's re-decision, and what changed since the last run,
    start from them)."""
    ctx.computed_years = employee_years_of(ctx.result)
    ctx.findings = audit.read_findings(con)
    ctx.result.employees, ctx.result.applications = audit.apply(ctx.result.employees, ctx.result.applications,
                                                                ctx.findings, ctx.settings.rules.finding_reasons)


def decide(ctx: RunContext, con, *, fresh: bool = False) -> Decisions:
    """Decide with the ledger's state. ``fresh`` (what-if): this tax year's earlier decisions
    are ignored and only other tax years' awards of the approval year consume the cap."""
    released = acts.pending_releases(con)
    hold_unread(ctx, released, acts.confirmed_lines(con))
    apply_findings(ctx, con)
    result, as_of, settings = ctx.result, ctx.as_of, ctx.settings
    approval_year = as_of.year
    cap = cap_cents(ctx.params, settings, as_of)
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
        reopened = acts.pending_reopenings(con).get_column("application_id").to_list()
        history = ledger.decision_rows(con, reopened)
    return decide_applications(
        result.applications,
        approval_year=approval_year,
        cap_cents=cap,
        approved_before_cents=before,
        final=final,
        waitlist=waitlist,
        reopened=reopened,
        history=history,
        settings=settings.allocation,
        run_id=ctx.run_id,
    )


def write_outputs(ctx: RunContext, staging: PendingOutputs, decisions: Decisions) -> RunSummary:
    """employee_credits.csv, awards.csv, rejects, employee_years.parquet and manifest.json (spec
    section 8); the run's summary."""
    staged, result, settings = ctx.staged, ctx.result, ctx.settings
    emp = employee_output(result.employees)
    awards = awards_output(decisions.awards)
    write_csv(emp, staging.path("employee_credits.csv"))
    write_csv(awards, staging.path("awards.csv"))
    staged.write_rejects(staging.dir)
    if ctx.held is not None and ctx.held.height:
        write_csv(ctx.held.select(HELD_CSV), staging.path("held.csv"))
    if result.reconciliation is not None and result.reconciliation.height:  # the figures read, beside those declared
        write_csv(result.reconciliation, staging.path("declared_totals.csv"))
    data_docs = staged.write_data_docs(staging.dir)
    # Employee-years with every quantity (for explain and audit), no ssn; in a stable order (a
    # group_by's order is not)
    result.employees.drop([c for c in result.employees.columns if c.startswith("__") or c in ("ssn", "roster_ssn")]).sort(
        "application_id", "roster_employer_id", "employee_id").write_parquet(staging.path("employee_years.parquet"))
    if result.members is not None:
        result.members.drop("__claim").sort("application_id", "roster_employer_id", "employee_id", "member_id").write_parquet(
            staging.path("employee_members.parquet"))
    statuses = dict(sorted(awards.group_by("status").len().iter_rows()))
    summary = RunSummary(
        run_id=ctx.run_id,
        kind=ctx.kind,
        tax_year=ctx.tax_year,
        as_of=ctx.as_of,
        approval_year=ctx.as_of.year,
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
        received_after_as_of=received_after(staged, ctx.tax_year, ctx.as_of),
        held=int(statuses.get("HELD", 0)),
        waiting=result.waiting,
        reconciliation=reconciliation_counts(result.reconciliation, decisions.awards),
        held_by={} if ctx.held is None else dict(ctx.held.group_by("source").agg(
            pl.col("application_id").n_unique()).sort("source").iter_rows()),
    )
    manifest = run_manifest(summary, ctx.settings, ctx.params, staged, data_docs)
    write_json(manifest, staging.path("manifest.json"))
    return summary


def write_changes(ctx: RunContext, con, staging: PendingOutputs, decisions: Decisions, summary: RunSummary) -> pl.DataFrame:
    """changes.csv: what changed since the last run; the employee-years the ledger keeps."""
    employee_years = ctx.computed_years if ctx.computed_years is not None else employee_years_of(ctx.result)
    changed = since_last_run(con, kind=ctx.kind, tax_year=ctx.tax_year, files=ctx.staged.files,
                             employee_years=employee_years, request_differs=decisions.request_differs,
                             reopened=decisions.reopened, groups=memberships(ctx.staged.frames.get("control_groups")),
                             decided=decisions.new.filter(pl.col("kind") == "decision"))
    write_csv(changed.frame(), staging.path("changes.csv"))
    summary.changes, summary.changes_counts = changed.lines(), changed.counts()
    summary.inputs_changed = changed.inputs_changed
    return employee_years


def addresses(applications, ids: list[str]) -> dict[str, str]:
    """application id -> the employer's mailing address, for the applications of ``ids`` that give one."""
    frame = applications.lazy() if isinstance(applications, pl.DataFrame) else applications
    if "employer_address" not in frame.collect_schema().names():
        return {}
    got = frame.filter(pl.col("application_id").is_in(ids) & pl.col("employer_address").is_not_null()).select(
        "application_id", "employer_address").collect()
    return dict(got.iter_rows())


def write_run_products(ctx: RunContext, con, staging: PendingOutputs, decisions: Decisions, summary: RunSummary) -> None:
    """The award file, certificates, notices, reports, awards.xlsx and index.html."""
    from transforms.products import write_index, write_products
    from transforms.products.finding_documents import audit_notes, freed_cap
    from transforms.products.good_faith import write_good_faith
    from transforms.products.workbook import write_workbook

    result, staged = ctx.result, ctx.staged
    ids = decisions.awards.get_column("application_id").to_list()
    history = pl.concat([ledger.decision_rows(con, ids).cast(ROW_SCHEMA), decisions.new.cast(ROW_SCHEMA)])
    freed = freed_cap(con, decisions.awards, ctx.as_of.year) if ctx.findings else None
    with stage("products") as s:
        made = write_products(
            staging.dir, con=con, awards=decisions.awards, employee_years=result.employees,
            rejects=staged.rejects, run_id=ctx.run_id, tax_year=ctx.tax_year, approval_year=ctx.as_of.year,
            cap_cents=decisions.cap_cents, history=history, held=ctx.held, members=result.members,
            addresses=addresses(staged.frames["applications"], ids), named_by=named_by(ctx.workdir, staged.frames["payroll"], staged.collect, staged.layouts),
            findings=ctx.findings, params=ctx.params, freed=freed, options=ctx.documents, confirmed=ctx.confirmed,
        )
        made += write_good_faith(staging.dir, con, ctx.workdir, ctx.tax_year, decisions.awards, ctx.findings or [],
                                 ctx.params)
        write_workbook(staging.path("awards.xlsx"), {
            "awards": awards_output(decisions.awards), "employee credits": employee_output(result.employees),
            "rejects": staged.rejects.drop("employer_id") if "employer_id" in staged.rejects.columns else staged.rejects,
        })
        documents = {p.relative_to(staging.dir).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                     for p in made if p.suffix == ".pdf"}
        manifest = json.loads(staging.path("manifest.json").read_text())
        write_json({**manifest, "documents": documents}, staging.path("manifest.json"))
        write_index(staging.dir, summary, decided_at=nj_time(ledger.now_utc()), awards=decisions.awards, history=history,
                    held=ctx.held, rejects=staged.rejects, freed=freed,
                    input_files=getattr(staged.report, "files", None),
                    audit=audit_notes(con, ctx.findings, decisions.awards, ctx.params) if ctx.findings else None)
        s.say(f"{len(made) + 2:,} files (award file, certificates, notices, reports, awards.xlsx, index.html)")


def commit(ctx: RunContext, con, decisions: Decisions, summary: RunSummary, employee_years: pl.DataFrame) -> None:
    """The run's ledger rows in one transaction (the cap checked inside it)."""
    record = run_record(summary, started_at=ctx.started_at, settings=ctx.settings, params=ctx.params,
                        staged=ctx.staged, quarter=ctx.quarter, invoked_at=ctx.invoked_at, agency_held=agency_only(ctx.held))
    failpoints.hit("outputs_written")
    released = [a for a in acts.pending_releases(con) if a in set(decisions.new.get_column("application_id").to_list())]
    confirmed = None
    if ctx.confirmed is not None:
        confirmed = ctx.confirmed.filter(pl.col("application_id").is_in(released))
    ledger.commit_run(con, record, decisions.new, ctx.staged.files, decisions.cap_cents, employee_years=employee_years,
                      released=released, confirmed=confirmed)
    failpoints.hit("committed")


def decide_and_commit(ctx: RunContext) -> RunSummary:
    """The steps of a deciding run: decide against the ledger, write the outputs aside, say what
    changed, write the products, commit the ledger, then move the outputs into place. A failure
    before the commit leaves neither ledger rows nor outputs."""
    con = ledger.connect(ctx.ledger_path)
    try:
        with PendingOutputs(ctx.out_dir, ctx.run_id) as staging:
            with stage("allocate") as s:
                decisions = decide(ctx, con)
                st = dict(sorted(decisions.awards.group_by("status").len().iter_rows()))
                s.say(f"{decisions.awards.height:,} applications ({', '.join(f'{k} {v}' for k, v in st.items())}), "
                      f"${decisions.awarded_now_cents / 100:,.2f} awarded by this run")
            summary = write_outputs(ctx, staging, decisions)
            summary.out_dir = str(ctx.out_dir)  # recorded with the run: a finding's documents go beside them
            employee_years = write_changes(ctx, con, staging, decisions, summary)
            if ctx.with_products:
                write_run_products(ctx, con, staging, decisions, summary)
            commit(ctx, con, decisions, summary, employee_years)
    finally:
        con.close()
    summary.outputs = [str(p) for p in staging.published]
    summary.out_dir = str(ctx.out_dir)
    summary.workdir = str(ctx.workdir)
    return summary


def employee_years_of(result: CreditResult) -> pl.DataFrame:
    """The run's employee-years as the ledger keeps them (``ledger.EMPLOYEE_YEAR_SCHEMA``)."""
    emp = result.employees
    return emp.select(
        "application_id", "employer_id", "employee_id", pl.col("tax_year").cast(pl.Int32), "status", "reasons",
        pl.when(pl.col("status") == "ELIGIBLE").then(pl.col("credit_cents")).otherwise(0).cast(pl.Int64).alias("credit_cents"),
        *[pl.col(c).cast(t) for c, t in ledger.EMPLOYEE_YEAR_DETAIL.items() if c in emp.columns],
    )


__all__ = [
    "NothingToDecide",
    "RunError",
    "SubmissionIncomplete",
    "check_complete",
    "check_dated",
    "check_files_read",
    "check_tax_year",
    "code_version",
    "employee_years_of",
    "first_tax_year",
    "nj_time",
    "quick_applications",
    "received_after",
    "RunSummary",
    "RunInputs",
    "PendingOutputs",
    "cap_cents",
    "clean_stale_pending",
    "compute",
    "RunContext",
    "commit",
    "decide",
    "decide_and_commit",
    "apply_findings",
    "hold_unread",
    "write_changes",
    "write_run_products",
    "input_file_records",
    "new_run_id",
    "run_record",
    "stage_inputs",
    "workdir_lock",
    "write_outputs",
]
