"""An audit finding as a command makes it (spec section 9a; ``impcredit finding``): check what was
asked, take the workdir's lock, record the finding (or its withdrawal) and its re-decision in one
ledger transaction (``award.finding_acts``), then write its documents aside and move them into
``--out`` (by default ``findings/<FINDING>`` beside the outputs of the workdir's latest annual
run: ``default_folder``): the amended certificate(s) and those they supersede, marked so, the notice
of the finding with its reasons, penalty and hearing rights (HTML and PDF),
``taxation/recapture.csv`` and ``finding.json``.

The documents are written from the ledger as it stood at the finding (or withdrawal), so the same
command given again (a finding recorded twice is one finding) writes them again, the same: a run
killed after the commit and before its documents loses nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms import failpoints, schema
from transforms.award import finding_acts as acts
from transforms.award import findings as fnd
from transforms.award import ledger
from transforms.outputs import PendingOutputs, write_json
from transforms.reference.parameters import Parameters
from transforms.runs.record import new_run_id, workdir_lock


@dataclass
class Outcome:
    finding: fnd.Finding
    created: bool  # False: recorded before (the same finding), nothing new in the ledger
    event: str  # finding | withdrawal
    run_id: str
    effects: list[dict] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)
    folder: Path | None = None  # where its documents were written


def nj_today() -> dt.date:
    return dt.datetime.now(ZoneInfo(schema.NJ_TZ)).date()


def check_args(kind: str, employees: list[str], tax_years: list[int], knowing: str, reason: str) -> bool:
    """What ``finding record`` was asked, checked before anything is read: returns ``knowing``."""
    if kind not in fnd.KINDS:
        raise acts.FindingError(f"--kind must be {' or '.join(fnd.KINDS)}, not {kind!r}")
    if knowing not in ("yes", "no"):
        raise acts.FindingError(f"--knowing must be yes or no, not {knowing!r}")
    if not reason.strip():
        raise acts.FindingError("--reason must say what was found")
    if kind == "misclassified" and not employees:
        raise acts.FindingError("a misclassification names the employees found misclassified: --employee ID (one or more)")
    if kind == "misclassified" and tax_years:
        raise acts.FindingError("--tax-year is for a wage-reduction finding (56a40(f)); a misclassification concerns "
                                "the tax year of its application")
    if kind == "wage-reduction" and employees:
        raise acts.FindingError("a wage-reduction finding (56a40(f)) concerns the employer, not employees: leave out "
                                "--employee")
    return knowing == "yes"


def _run(kind: str, app: dict, key: str, on: dt.date) -> dict:
    now = ledger.now_utc()
    return {"run_id": new_run_id(kind, int(app["tax_year"]), hashlib.sha256(key.encode()).hexdigest()), "kind": kind,
            "tax_year": int(app["tax_year"]), "quarter": None, "as_of": on, "approval_year": int(app["approval_year"]),
            "policy": "", "cap_cents": 0, "settings_json": "{}", "params_version": "", "inputs_sha256": "",
            "status": "recorded" if kind == "finding" else "withdrawn", "started_at": now, "committed_at": now,
            "summary_json": "{}"}


def _ledger(workdir: Path):
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        raise acts.FindingError(f"no ledger at {path}: nothing was decided on this workdir")
    return ledger.connect(path)


def _unknown(workdir: Path, application_id: str) -> acts.FindingError:
    """Why an application without a decision cannot have a finding: held (or not decided yet), or unknown."""
    from transforms.ingest.store.lake import lake_dir, scan_lake

    known = lake_dir(workdir).is_dir() and scan_lake(workdir, "applications").filter(
        pl.col("application_id") == application_id).select(pl.len()).collect().item() > 0
    if known:
        return acts.FindingError(f"application {application_id!r} is not decided (held, or not decided by a run yet): "
                                 "a finding is recorded on a decided application")
    return acts.FindingError(f"unknown application {application_id!r}: no decision of it in this ledger")


def record_finding(workdir: Path, out_dir, *, application_id: str, kind: str, employees: list[str],
                   tax_years: list[int], knowing: str, reason: str, params: Parameters, on: dt.date | None = None,
                   wait: float = 0.0) -> Outcome:
    """``impcredit finding record``: the finding and its re-decision, then its documents in ``out_dir``."""
    known = check_args(kind, employees, tax_years, knowing, reason)
    on = on or nj_today()
    with workdir_lock(workdir, wait_seconds=wait):
        con = _ledger(workdir)
        try:
            cur = ledger.current_decisions(con, [application_id])
            if cur.height == 0:
                raise _unknown(workdir, application_id)
            key = fnd.fingerprint(application_id, kind, employees, tax_years, known, reason)
            act = acts.record(con, application_id=application_id, kind=kind, employees=tuple(employees),
                              tax_years=tuple(tax_years), knowing=known, reason=reason, found_on=on,
                              run=_run("finding", cur.row(0, named=True), key, on))
            failpoints.hit("finding_committed")
            out = Outcome(act.finding, act.created, "finding", act.finding.record_run)
            _documents(con, out, out_dir, workdir, params)
        finally:
            con.close()
    return out


def withdraw_finding(workdir: Path, out_dir, finding_id: str, reason: str, params: Parameters,
                     on: dt.date | None = None, wait: float = 0.0) -> Outcome:
    """``impcredit finding withdraw``: the withdrawal and the re-decision, then its documents."""
    if not reason.strip():
        raise acts.FindingError("--reason must say why the finding is withdrawn")
    on = on or nj_today()
    with workdir_lock(workdir, wait_seconds=wait):
        con = _ledger(workdir)
        try:
            f = next((f for f in fnd.read_findings(con) if f.finding_id == finding_id), None)
            app = ledger.current_decisions(con, [f.application_id]).row(0, named=True) if f else {"tax_year": 0,
                                                                                                 "approval_year": 0}
            cap = int(round(params.value("program.annual_cap", dt.date(int(app["approval_year"]) or on.year, 12, 31)) * 100))
            act = acts.withdraw(con, finding_id, reason, on, _run("withdrawal", app, finding_id, on),
                                statutory_cap_cents=cap)
            failpoints.hit("finding_committed")
            out = Outcome(act.finding, True, "withdrawal", act.run_id)
            _documents(con, out, out_dir, workdir, params)
        finally:
            con.close()
    return out


def default_folder(con, workdir: Path, name: str) -> Path:
    """Where a finding's documents go unless ``--out`` says: ``findings/<name>`` in the output
    folder of the workdir's latest annual run (the run records it), beside that run's outputs; in the
    workdir when no run recorded a local one."""
    import json

    from transforms import storage

    rows = con.sql("SELECT summary_json FROM runs WHERE kind = 'annual' ORDER BY committed_at DESC LIMIT 1").fetchall()
    out = json.loads(rows[0][0] or "{}").get("out_dir") if rows else None
    if out and not storage.is_remote(out):
        return Path(out) / "findings" / name
    return Path(workdir) / "findings" / name


def _documents(con, out: Outcome, out_dir, workdir: Path, params: Parameters) -> None:
    """Write the documents of ``out``'s event from the ledger (aside, then into ``out_dir``, or the
    folder ``out_dir(finding id)`` names; None: ``default_folder``)."""
    from transforms.products.finding_outputs import write_event

    name = out.finding.finding_id + ("-withdrawal" if out.event == "withdrawal" else "")
    if out_dir is None:
        out_dir = default_folder(con, workdir, name)
    out_dir = out_dir(out.finding.finding_id) if callable(out_dir) else Path(out_dir)
    out.folder = out_dir
    with PendingOutputs(out_dir, out.run_id) as staging:
        out.effects = write_event(staging.dir, con, out.finding.finding_id, out.event, out.run_id, params,
                                  workdir=workdir)
        write_json({"finding": finding_json(out.finding), "event": out.event, "run_id": out.run_id,
                    "applications": out.effects, "recorded_now": out.created}, staging.path("finding.json"))
    out.outputs = staging.published


def finding_json(f: fnd.Finding) -> dict:
    return {"finding_id": f.finding_id, "application_id": f.application_id, "kind": f.kind, "employer_id": f.employer_id,
            "employees": list(f.employees), "tax_years": list(f.tax_years), "knowing": f.knowing, "reason": f.reason,
            "finding_date": f.found_on.isoformat(), "record_run": f.record_run,
            "withdrawn_on": f.withdrawn_on.isoformat() if f.withdrawn_on else None, "withdraw_reason": f.withdraw_reason}


def list_findings(workdir: Path) -> list[dict]:
    """Every finding of the workdir's ledger with what it took back (``impcredit finding list``)."""
    path = workdir / "impcredit.duckdb"
    if not path.exists():
        return []
    con = ledger.connect(path, read_only=True)
    try:
        taken = dict(con.sql("""SELECT finding_id, sum(certified_before_cents - certified_now_cents) FROM finding_decisions
                                WHERE event = 'finding' GROUP BY 1""").fetchall())
        return [{**finding_json(f), "taken_back": int(taken.get(f.finding_id) or 0) / 100}
                for f in fnd.read_findings(con)]
    finally:
        con.close()


__all__ = ["Outcome", "check_args", "default_folder", "finding_json", "list_findings", "record_finding",
           "withdraw_finding"]
