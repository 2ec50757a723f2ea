"""What a run records: its summary, its id, the code version, the cap it allocates against and
its ledger row; and the lock that keeps one run at a time on a workdir."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import polars as pl
from filelock import FileLock, Timeout

from transforms import private, schema
from transforms.award import ledger
from transforms.award.changes import memberships
from transforms.reference.parameters import Parameters
from transforms.runs.inputs import RunError, RunInputs
from transforms.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]


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
    changes: list[str] = field(default_factory=list)  # what changed since the last run (transforms.award.changes)
    changes_counts: dict[str, int] = field(default_factory=dict)
    inputs_changed: bool = False
    held: int = 0  # applications held, not decided: a line they could depend on was rejected (spec 7)
    waiting: int = 0  # applications whose tax period had not ended by the as-of date (they wait)
    # decisions resting on the employer's declared totals (spec section 1; ``annual.reconciliation_counts``)
    reconciliation: dict[str, int] = field(default_factory=dict)
    held_by: dict[str, int] = field(default_factory=dict)  # held applications by why (held.csv's source)
    elapsed_s: float = 0.0
    prefect_flow_run: str | None = None  # the flow run's id in Prefect (set by the flow)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["as_of"] = self.as_of.isoformat()
        return d


SAY_AFTER_S = 3.0  # a wait for the workdir longer than this is said


@contextmanager
def workdir_lock(workdir: Path, *, wait_seconds: float = 0.0):
    """One run at a time per workdir: a second one waits up to ``wait_seconds`` (saying so on the
    stage lines when it waits over ``SAY_AFTER_S``), then refuses."""
    private.make_dir(workdir)  # 0700 when made here: the lake and the ledger are the agency's alone
    lock = FileLock(str(workdir / ".impcredit.lock"), mode=private.FILE_MODE)
    try:
        try:
            lock.acquire(timeout=min(wait_seconds, SAY_AFTER_S))
        except Timeout:
            if wait_seconds <= SAY_AFTER_S:
                raise
            from transforms.stages import LOG

            LOG.info("waiting up to %g s for the run using the workdir %s to finish (--wait)", wait_seconds, workdir)
            lock.acquire(timeout=wait_seconds - SAY_AFTER_S)
    except Timeout:
        raise RunError(
            f"another run is using the workdir {workdir}; wait for it to finish "
            "(or pass --wait SECONDS to queue behind it)"
        ) from None
    try:
        yield
    finally:
        lock.release()


def new_run_id(kind: str, tax_year: int, inputs_sha: str) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{kind}-{tax_year}-{stamp}-{inputs_sha[:8]}"


def short_run_id(run_id: str) -> str:
    """A run's short name in 80 columns: the time of its id to the hundredth of a second
    (``annual-2023-20261203T140335774626Z-9f066d52`` -> ``14033577``): one per run, where the
    id's last part (the inputs' hash) repeats for runs of the same inputs."""
    parts = run_id.split("-")
    stamp = next((p for p in parts if len(p) > 15 and "T" in p), "")
    return stamp[9:17] if stamp else parts[-1][:8]


def waited_seconds(invoked_at: float | None) -> float | None:
    """Seconds since the ``impcredit`` command started (``invoked_at``, the epoch second its process
    began, given by ``flows.cli``): what the user waited for the run, start-up included; None when
    not run from the command."""
    import time

    return None if invoked_at is None else round(time.time() - invoked_at, 2)


def find_run(run_ids: list[str], given: str) -> str:
    """The run id ``given`` names: the full id, its short name (``short_run_id``, what ``runs``
    prints) or a unique start of the full id. A name that fits none or several is an error saying so."""
    given = given.strip()
    if given in run_ids:
        return given
    hits = [r for r in run_ids if short_run_id(r) == given] or [r for r in run_ids if given and r.startswith(given)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise RunError(f"no run {given!r} in this ledger (impcredit runs lists them)")
    raise RunError(f"{given!r} names {len(hits)} runs ({', '.join(hits[:3])}{' ...' if len(hits) > 3 else ''}): give more of the id")


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


def nj_time(utc: dt.datetime) -> str:
    """A UTC instant (naive or aware) as New Jersey local time, e.g. 2024-07-01 09:30 EDT."""
    from zoneinfo import ZoneInfo

    aware = utc if utc.tzinfo else utc.replace(tzinfo=dt.UTC)
    return aware.astimezone(ZoneInfo(schema.NJ_TZ)).strftime("%Y-%m-%d %H:%M %Z")


def run_record(summary: RunSummary, *, started_at: dt.datetime, settings: Settings, params: Parameters,
               staged: RunInputs, quarter: int | None = None, invoked_at: float | None = None,
               agency_held: dict[str, str] | None = None) -> dict:
    """The run's row of the ledger's ``runs``; ``agency_held``: the applications held by the
    agency's gap alone, with the rate years missing (``holding.agency_only``: a release of one is refused)."""
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
        "summary_json": summary_json(summary, staged, invoked_at, agency_held),
    }


def summary_json(summary, staged: RunInputs, invoked_at: float | None = None,
                 agency_held: dict[str, str] | None = None) -> str:
    """A run record's ``summary_json``: the summary (its outputs aside), the lake's digest, the wall
    time the user waited, the control groups' memberships (what the next run compares) and the
    applications held by the agency's gap alone (what a release may not decide)."""
    return json.dumps({**{k: v for k, v in summary.to_dict().items() if k != "outputs"},
                       "lake_sha256": staged.lake_sha256, "wall_seconds": waited_seconds(invoked_at),
                       "control_groups": memberships(staged.frames.get("control_groups")),
                       **({} if agency_held is None else {"agency_held": agency_held})}, sort_keys=True, default=str)


def run_manifest(summary: RunSummary, settings: Settings, params: Parameters, staged: RunInputs, data_docs) -> dict:
    """manifest.json of a deciding run (spec section 8): the run, its settings and parameters, its
    inputs (file hashes), the key's source, the code version, counts, reconciliation and totals."""
    return {
        "run_id": summary.run_id,
        "kind": summary.kind,
        "tax_year": summary.tax_year,
        "as_of": summary.as_of.isoformat(),
        "approval_year": summary.approval_year,
        "policy": settings.allocation.policy,
        "cap": summary.cap,
        "settings": settings.model_dump(),
        "parameters": {"version": params.version, "files": params.files, "overrides": {
            k: str(v) for k, v in params.overrides.items()}},
        "inputs": {"sha256": staged.inputs_sha256, "lake_sha256": staged.lake_sha256, "files": staged.files},
        "ssn_hash_key": {"source": "demo" if staged.key_source == "demo" else "configured", "key_id": staged.key_id},
        "data_docs": data_docs,
        "code_version": code_version(),
        "row_counts": {
            "applications": summary.applications,
            "employee_years": summary.employee_years,
            "eligible_employee_years": summary.eligible_employee_years,
            "rejected_cells": staged.rejects.height,
            "held_applications": summary.held,
            "waiting_applications": summary.waiting,
            **{f"staged_{k}": (staged.collect if k == "payroll" else pl.LazyFrame.collect)(v.lazy().select(pl.len())).item()
               for k, v in staged.frames.items()},
        },
        "reconciliation": summary.reconciliation,
        "totals": {
            "requested": summary.requested,
            "awarded": summary.awarded,
            "approved_before_in_approval_year": summary.approved_before,
            "cap_left": summary.cap_left,
            "statuses": summary.statuses,
        },
    }
