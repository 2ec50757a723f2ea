"""The steps of an annual run, as plain functions (the Prefect flow in ``flows/`` wires them).

stage the submission -> compute credits -> decide against the ledger -> write outputs aside ->
commit the ledger -> move the outputs into place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import polars as pl
from filelock import FileLock, Timeout

from transforms import failpoints, ledger, schema
from transforms.changes import since_last_run
from transforms.credits import CreditInputs, CreditResult, compute_credits, employee_output
from transforms.decide import ROW_SCHEMA, Decisions, awards_output, decide
from transforms.outputs import (
    StagedOutputs,
    clean_stale_staging,
    sha256_file,
    write_csv,
    write_json,
)
from transforms.params import Parameters
from transforms.pii import HashKey
from transforms.schema import STAGED
from transforms.settings import Settings
from transforms.stages import stage

REPO_ROOT = Path(__file__).resolve().parents[1]


class RunError(RuntimeError):
    """A run cannot proceed; the message says what to fix."""


class SubmissionIncomplete(RunError):
    """A file of the submission is missing or cannot be read: nothing may be decided on it."""


# whole-file rejects of a dataset file that stop a run before it decides: its rows are unknown,
# so deciding would turn a fault of the file into a final decision
STOPPING_RULES = frozenset({"unknown_layout", "wrong_types", "encoding", "unreadable", "empty_file", "compressed_file",
                            "binary_file", "utf16_without_bom", "symbolic_link", "not_a_file"})


def check_complete(input_dir: Path, workdir: Path | None = None) -> None:
    """Every file the spec requires is there, a regular file, readable, text with a header
    (spec section 1); else ``SubmissionIncomplete`` naming each problem, before anything is
    read into the lake or decided."""
    from transforms.ingest.submission import discover, incomplete

    if not any(e.dataset is not None for e in discover(input_dir, exclude=[workdir] if workdir else None)):
        raise SubmissionIncomplete(
            f"{input_dir}: no submission files found (expected payroll/*.csv, applications.csv, roster.csv, "
            "certifications.csv, employer_rates.csv, or a vendor payroll export)")
    problems = incomplete(input_dir, exclude=[workdir] if workdir else None)
    if problems:
        raise SubmissionIncomplete(f"{input_dir}: the submission is incomplete, nothing was decided: "
                                   + "; ".join(problems) + ". Fix the submission and run again.")


def check_files_read(report) -> None:
    """No file of the layout was rejected whole (unknown layout, mostly wrong types, not text):
    else ``SubmissionIncomplete`` naming them (the lake keeps what was read; nothing is decided)."""
    bad = [f for f in report.files if f.dataset is not None and f.status == "rejected" and f.rows_accepted == 0
           and any(r["rule"] in STOPPING_RULES for r in report.rejects.filter(
               (pl.col("file").str.starts_with(f.file)) & pl.col("line").is_null()).iter_rows(named=True))]
    if bad:
        raise SubmissionIncomplete(
            "nothing was decided: " + "; ".join(f"{f.file} could not be read ({f.message})" for f in bad)
            + ". Correct or re-export these files (rejects.csv of `impcredit ingest` has the details), then run again.")


@dataclass
class StagedInputs:
    frames: dict[str, pl.LazyFrame | pl.DataFrame]  # the staged datasets (lazy scans of the lake)
    rejects: pl.DataFrame
    files: list[dict]
    key_source: str
    key_id: str
    report: object | None = None  # the ingest report (transforms.ingest.IngestReport)

    @property
    def rejected_rows(self) -> int:
        """Input rows with at least one rejected cell (a whole-file reject counts once)."""
        return self.rejects.select(pl.struct("file", "line")).n_unique() if self.rejects.height else 0

    def write_rejects(self, out_dir: Path) -> None:
        """rejects.csv (and one file per employer when the ingest report has them)."""
        if self.report is not None:
            self.report.write_rejects(out_dir)
        else:
            write_csv(self.rejects, out_dir / "rejects.csv")

    @property
    def inputs_sha256(self) -> str:
        h = hashlib.sha256()
        for f in sorted(self.files, key=lambda f: f["path"]):
            h.update(f"{f['path']}\0{f['sha256']}\n".encode())
        return h.hexdigest()


@dataclass
class RunSummary:
    run_id: str
    kind: str
    tax_year: int
    as_of: dt.date
    approval_year: int
    policy: str
    cap: float
    applications: int
    employee_years: int
    eligible_employee_years: int
    requested: float
    awarded: float
    approved_before: float
    cap_left: float
    rejected_rows: int
    statuses: dict[str, int]
    outputs: list[str] = field(default_factory=list)
    out_dir: str = ""
    workdir: str = ""
    key_source: str = ""
    received_after_as_of: int = 0  # applications of the tax year received after the as-of date: not seen
    awarded_now: float = 0.0  # awards made (or changed, by amendments) by this run
    awarded_earlier: float = 0.0  # awards of earlier runs this run reports as they were
    changes: list[str] = field(default_factory=list)  # what changed since the last run (transforms.changes)
    changes_counts: dict[str, int] = field(default_factory=dict)
    inputs_changed: bool = False
    elapsed_s: float = 0.0
    prefect_flow_run: str | None = None  # the flow run's id in Prefect (set by the flow)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["as_of"] = self.as_of.isoformat()
        return d


@contextmanager
def workdir_lock(workdir: Path, *, wait_seconds: float = 0.0):
    """One run at a time per workdir: a second one waits up to ``wait_seconds``, then refuses."""
    workdir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(workdir / ".impcredit.lock"))
    try:
        lock.acquire(timeout=wait_seconds)
    except Timeout:
        raise RunError(
            f"another run is using the workdir {workdir}; wait for it to finish "
            "(or pass --wait SECONDS to queue behind it)"
        ) from None
    try:
        yield
    finally:
        lock.release()


def input_file_records(input_dir: Path, known: dict[str, str] | None = None) -> list[dict]:
    """Every regular input file with its sha256 (``known``: hashes ingest already computed, by
    path); a symbolic link is never followed (``submission.discover``)."""
    from transforms.ingest.submission import discover

    known = known or {}

    def sha(e) -> str:
        try:
            return known.get(e.rel) or sha256_file(e.path)
        except OSError:
            return "unreadable"

    return [{"path": e.rel, "sha256": sha(e), "bytes": e.path.stat().st_size}
            for e in discover(input_dir) if e.kind == "file"]


def stage_inputs(input_dir: Path, workdir: Path, key: HashKey, *, docs_dir: Path | None = None) -> StagedInputs:
    """Ingest the submission into the lake (vendor layouts, validation suites, quarantine; the
    ssn is hashed on first read), then read every dataset back from the lake."""
    from transforms.ingest import ingest_folder
    from transforms.ingest.lake import scan_lake

    check_complete(input_dir, workdir)
    report = ingest_folder(input_dir, workdir, key, docs_dir=docs_dir)
    check_files_read(report)
    if not report.files:
        raise RunError(
            f"{input_dir}: no submission files found (expected payroll/*.csv, applications.csv, roster.csv, "
            "certifications.csv, employer_rates.csv, or a vendor payroll export)"
        )
    frames = {name: scan_lake(workdir, name) for name in STAGED}
    failpoints.hit("staged")
    hashed = {f.file: f.sha256 for f in report.files}
    return StagedInputs(frames, report.rejects, input_file_records(input_dir, hashed), key.source, key.key_id, report)


class NothingToDecide(RunError):
    """The submission holds nothing this run could decide; no run is recorded."""


def quick_applications(input_dir: Path) -> pl.DataFrame | None:
    """``tax_year, received_date`` of a canonical ``applications.csv``, read without staging
    (for the CLI to refuse a mistyped year at once); None when it cannot be read that way."""
    from transforms.staging import received_at_expr

    path = Path(input_dir) / "applications.csv"
    try:
        raw = pl.read_csv(path, infer_schema=False, columns=["tax_year", "received_at"], encoding="utf8-lossy")
    except (OSError, pl.exceptions.PolarsError, ValueError):
        return None
    return raw.select(
        pl.col("tax_year").str.strip_chars().cast(pl.Int32, strict=False),
        received_at_expr(pl.col("received_at")).dt.convert_time_zone(schema.NJ_TZ).dt.date().alias("received_date"),
    ).drop_nulls()


def received_after(staged: StagedInputs, tax_year: int, as_of: dt.date) -> int:
    """Applications of the tax year received after the as-of date (a later run sees them)."""
    return staged.frames["applications"].lazy().filter(
        (pl.col("tax_year") == tax_year) & (pl.col("received_date") > as_of)).select(pl.len()).collect().item()


def first_tax_year(params: Parameters) -> int:
    """The first tax year of the credit (program.first_tax_year, an open-ended constant)."""
    return int(params.value("program.first_tax_year", dt.date(9999, 12, 31)))


def check_tax_year(applications: pl.LazyFrame | pl.DataFrame, tax_year: int, as_of: dt.date, first_year: int, *,
                   estimates: bool = False) -> int:
    """A mistyped year is not a run: the staged applications must hold some for ``tax_year``,
    received by ``as_of``. Returns how many were received after it (not seen by this run).

    ``NothingToDecide`` when the submission holds no application at all, or only ones received
    after the as-of date; ``RunError`` naming the years it holds when none is for ``tax_year``
    (naming ``first_year`` too when ``tax_year`` is before it)."""
    apps = applications.lazy().select("tax_year", "received_date").collect()
    if apps.height == 0:
        raise NothingToDecide("nothing to decide: the submission holds no application")
    years = dict(sorted(apps.group_by("tax_year").len().iter_rows()))
    if tax_year not in years and estimates:
        raise NothingToDecide(f"nothing received yet for tax year {tax_year}: the submission holds no estimate request "
                              f"(application) for it")
    if tax_year not in years:
        held = ", ".join(f"{y} ({n} application{'s' if n != 1 else ''})" for y, n in years.items())
        before = (f"tax year {tax_year} is before {first_year}, the first tax year of the credit "
                  f"(N.J.S.A. 34:11-56a40(e)); " if tax_year < first_year else "")
        raise RunError(f"{before}the submission holds no application for tax year {tax_year}; it holds {held}. "
                       "Check --tax-year")
    mine = apps.filter(pl.col("tax_year") == tax_year)
    late = mine.filter(pl.col("received_date") > as_of)
    if late.height == mine.height:
        if estimates:
            raise NothingToDecide(f"nothing received yet for tax year {tax_year} as of {as_of}: its {mine.height} "
                                  f"request(s) were received later (the first on {late.get_column('received_date').min()})")
        raise NothingToDecide(
            f"nothing to decide for tax year {tax_year} as of {as_of}: its {mine.height} application(s) were "
            f"received after that date (the first on {late.get_column('received_date').min()}); run with a later --as-of")
    return late.height


def new_run_id(kind: str, tax_year: int, inputs_sha: str) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{kind}-{tax_year}-{stamp}-{inputs_sha[:8]}"


def code_version() -> str:
    version = metadata.version("impcredit")
    try:
        sha = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{version}+{sha}" if sha else version


def cap_cents(params: Parameters, settings: Settings, as_of: dt.date) -> int:
    cap = settings.allocation.cap
    if cap is None:
        cap = params.value("program.annual_cap", as_of)
    return int(round(cap * 100))


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
    # Employee-years with every quantity (for explain and audit), no ssn.
    result.employees.drop([c for c in result.employees.columns if c.startswith("__")]).write_parquet(
        staging.path("employee_years.parquet")
    )
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


def nj_time(utc: dt.datetime) -> str:
    """A UTC instant (naive or aware) as New Jersey local time, e.g. 2024-07-01 09:30 EDT."""
    from zoneinfo import ZoneInfo

    aware = utc if utc.tzinfo else utc.replace(tzinfo=dt.UTC)
    return aware.astimezone(ZoneInfo(schema.NJ_TZ)).strftime("%Y-%m-%d %H:%M %Z")


def employee_years_of(result: CreditResult) -> pl.DataFrame:
    """The run's employee-years as the ledger keeps them (``ledger.EMPLOYEE_YEAR_SCHEMA``)."""
    return result.employees.select(
        "application_id", "employer_id", "employee_id", pl.col("tax_year").cast(pl.Int32), "status", "reasons",
        pl.when(pl.col("status") == "ELIGIBLE").then(pl.col("credit_cents")).otherwise(0).cast(pl.Int64).alias("credit_cents"),
    )


def run_record(summary: RunSummary, *, started_at: dt.datetime, settings: Settings, params: Parameters,
               staged: StagedInputs, quarter: int | None = None) -> dict:
    return {
        "run_id": summary.run_id,
        "kind": summary.kind,
        "tax_year": summary.tax_year,
        "quarter": quarter,
        "as_of": summary.as_of,
        "approval_year": summary.approval_year,
        "policy": summary.policy,
        "cap_cents": int(round(summary.cap * 100)),
        "settings_json": json.dumps(settings.model_dump(), sort_keys=True),
        "params_version": params.version,
        "inputs_sha256": staged.inputs_sha256,
        "status": "completed with rejections" if summary.rejected_rows else "completed",
        "started_at": started_at,
        "committed_at": ledger.now_utc(),
        "summary_json": json.dumps({k: v for k, v in summary.to_dict().items() if k != "outputs"}, sort_keys=True),
    }


__all__ = [
    "RunError",
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
