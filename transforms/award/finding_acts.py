"""Recording and withdrawing an audit finding (N.J.S.A. 34:11-56a40(e), (f); spec section 9a), each
in one ledger transaction with the re-decision it makes, like ``acts.reopen`` and ``acts.release``:
the finding (or its withdrawal), a run of kind ``finding`` (``withdrawal``) and the amendment rows
of every application it re-decides are committed together or not at all (a SIGKILL before the
commit leaves neither).

A finding re-decides each application it concerns at once: the request is recomputed from the
employee-years of the application's decision (the ledger keeps them per run) with every active
finding applied; the award becomes the lesser of the award and the new request, the difference
returned to the cap of the approval year(s) it came from, the latest first (nothing is re-awarded
to anyone). A withdrawal re-decides them as before the finding, within the cap left in the
approval year(s) the finding returned it to (so partly, when that cap was used since).

A finding recorded twice (the same application, kind, employees, tax years, knowing and reason)
is one finding: the second recording finds the first and writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

import duckdb
import polars as pl

from transforms import failpoints
from transforms.award import findings as fnd
from transforms.award.decide import _status
from transforms.award.ledger import (
    EMPLOYEE_YEAR_DETAIL,
    FINAL_STATUSES,
    ROW_COLUMNS,
    LedgerError,
    current_decisions,
    decision_rows,
    now_utc,
    rollback,
)
from transforms.settings import RuleSettings

ACT_RUNS = ("finding", "withdrawal")  # the runs of kind finding and withdrawal: their rows are not a decision's base
FAILPOINTS = ("finding_decided", "finding_committed")  # before and after the commit (tests/test_findings_crash.py)

# I-16 as the spec chooses it (transforms.settings): an act is no run with settings of its own
FINDING_REASONS = RuleSettings().finding_reasons


class FindingError(LedgerError):
    """A finding or withdrawal that cannot be made as asked; the message says what is wrong."""


@dataclass
class Act:
    finding: fnd.Finding
    created: bool  # False: the same finding was recorded before (nothing written)
    effects: list[dict] = field(default_factory=list)  # per application: before and after (``finding_decisions``)
    run_id: str = ""


def _one(con, sql: str, **params):
    rows = con.sql(sql, params=params or None).fetchall()
    return rows[0] if rows else None


def base(con: duckdb.DuckDBPyConnection, application_id: str, *, detail: bool = False) -> tuple[dict, pl.DataFrame]:
    """(the application's last decision made by a run that computed it, not by a finding; the
    employee-years that run computed for it, with ``detail`` their category, hours and parts). A
    waitlisted application decided by the next approval year's first run (of another tax year,
    maybe) has its employee-years in the run that computed it: the latest run that holds them."""
    row = con.sql(f"""
        SELECT d.run_id, d.reasons FROM decisions d JOIN runs r USING (run_id)
        WHERE d.application_id = $a AND r.kind NOT IN {ACT_RUNS}
        ORDER BY coalesce(d.decided_in, d.approval_year) DESC, d.seq DESC LIMIT 1""", params={"a": application_id}).fetchall()
    if not row:
        raise FindingError(f"application {application_id!r} has no decision made by a run in this ledger")
    cols = ["application_id", "employer_id", "employee_id", "tax_year", "status", "reasons", "credit_cents",
            *(EMPLOYEE_YEAR_DETAIL if detail else [])]
    emp = con.sql(f"""
        WITH computed AS (
            SELECT e.run_id FROM employee_years e JOIN runs r USING (run_id) WHERE e.application_id = $a
            ORDER BY (e.run_id = $r) DESC, r.committed_at DESC, e.run_id DESC LIMIT 1)
        SELECT {', '.join(cols)} FROM employee_years WHERE run_id = (SELECT run_id FROM computed) AND application_id = $a
        ORDER BY employee_id""", params={"r": row[0][0], "a": application_id}).pl()
    return {"run_id": row[0][0], "reasons": row[0][1]}, emp


def _request(con, app: dict, findings: list[fnd.Finding]) -> tuple[int, str, set[str]]:
    """(the application's request with ``findings`` applied, its application-level reasons, the
    codes of the findings that concern it)."""
    decision, emp = base(con, app["application_id"])
    emp = fnd.apply_to_employee_years(emp, findings)
    req = int(emp.filter(pl.col("status") == "ELIGIBLE")["credit_cents"].sum())
    found = fnd.found_codes(app, findings, FINDING_REASONS)
    return req, fnd.application_reasons(decision["reasons"], found), found if FINDING_REASONS == "finding_code" else set()


def _rows(app: dict, history: pl.DataFrame, changes: list[tuple[int, int]], req: int, award: int, own: str,
          run_id: str, found: set[str]) -> list[dict]:
    """The amendment rows of a re-decision: ``changes`` (approval year, cents) or one row of no
    change in the application's approval year. They follow its latest row (its approval year, a
    higher ``seq``): a finding does not move an application into another approval year. The
    reasons carry the codes ``found`` on audit whatever the status (the finding shows at the
    application level: awards.csv, the run page, the notice)."""
    status, reasons = _status(req, award, own)  # own reasons count only when nothing is requested
    reasons = fnd.with_found(reasons, found)
    seq = int(history["seq"].max()) + 1 if history.height else 1
    decided_in = int(history.select(pl.coalesce("decided_in", "approval_year").max()).item())
    keep = {c: app[c] for c in ROW_COLUMNS if c in app and c not in ("approval_year", "awarded_cents", "seq", "kind",
                                                                      "decided_in", "run_id", "requested_cents")}
    out = []
    for i, (year, cents) in enumerate(changes or [(int(app["approval_year"]), 0)]):
        out.append({**keep, "approval_year": year, "awarded_cents": cents, "requested_cents": req, "status": status,
                    "reasons": reasons, "run_id": run_id, "seq": seq + i, "kind": "amendment", "decided_in": decided_in})
    return out


def _by_year(history: pl.DataFrame, run_id: str | None = None) -> list[tuple[int, int]]:
    """(approval year, cents) of the application's rows (of one run), the latest year first."""
    h = history if run_id is None else history.filter(pl.col("run_id") == run_id)
    got = h.group_by("approval_year").agg(pl.col("awarded_cents").sum()).sort("approval_year", descending=True)
    return [(int(y), int(c)) for y, c in got.iter_rows()]


def _cap(con, year: int, statutory_cents: int) -> int:
    """The cap of an approval year: the one its annual runs allocated against, else the statute's."""
    got = _one(con, "SELECT max(cap_cents) FROM runs WHERE kind = 'annual' AND approval_year = $y", y=year)
    return int(got[0]) if got and got[0] is not None else statutory_cents


def _insert_run(con, run: dict) -> None:
    cols = list(run)
    con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [run[c] for c in cols])


def _insert(con, table: str, rows: list[dict]) -> None:
    if rows:
        con.register("new_rows", pl.DataFrame(rows).to_arrow())
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM new_rows")
        con.unregister("new_rows")


def _effect(finding_id: str, event: str, run_id: str, app: dict, req: int, award: int) -> dict:
    return {"finding_id": finding_id, "event": event, "run_id": run_id, "application_id": app["application_id"],
            "requested_before_cents": int(app["requested_cents"]), "requested_now_cents": req,
            "certified_before_cents": int(app["awarded_cents"]), "certified_now_cents": award}


def _concerned(con, application: dict, kind: str, tax_years: tuple[int, ...]) -> list[dict]:
    """The decided applications a finding re-decides: the one named, or for an (f) finding every
    application of its employer for the tax years named (each year must have one, all decided)."""
    if kind == "misclassified":
        return [application]
    cur = current_decisions(con).filter((pl.col("employer_id") == application["employer_id"])
                                        & pl.col("tax_year").is_in(list(tax_years)))
    for y in tax_years:
        mine = cur.filter(pl.col("tax_year") == y)
        if mine.height == 0:
            raise FindingError(f"employer {application['employer_id']} has no decided application for tax year {y}: "
                               "an (f) finding re-decides the employer's decided applications of the years it names")
        undecided = mine.filter(~pl.col("status").is_in(FINAL_STATUSES))
        if undecided.height:
            r = undecided.row(0, named=True)
            raise FindingError(f"application {r['application_id']} (tax year {y}) is {r['status']}, not decided: "
                               "a finding is recorded on decided applications")
    return cur.sort("tax_year", "application_id").to_dicts()


def _check_employees(con, application_id: str, employees: tuple[str, ...]) -> None:
    claimed = set(base(con, application_id)[1]["employee_id"].to_list())
    missing = [e for e in employees if e not in claimed]
    if missing:
        shown = ", ".join(sorted(claimed)[:10]) or "none"
        raise FindingError(f"employee {missing[0]!r} is not claimed in application {application_id!r} (its employees: "
                           f"{shown})")


def _decided_application(con, application_id: str) -> dict:
    cur = current_decisions(con, [application_id])
    if cur.height == 0:
        raise FindingError(f"application {application_id!r} has no decision in this ledger: a finding is recorded on "
                           "a decided application (a held one is not decided)")
    row = cur.row(0, named=True)
    if row["status"] not in FINAL_STATUSES:
        raise FindingError(f"application {application_id!r} is {row['status']}, not decided: a finding is recorded on "
                           "a decided application")
    return row


def record(con: duckdb.DuckDBPyConnection, *, application_id: str, kind: str, employees: tuple[str, ...],
           tax_years: tuple[int, ...], knowing: bool, reason: str, found_on: dt.date, run: dict) -> Act:
    """Record a finding and re-decide the applications it concerns, in one transaction (see the
    module). ``run``: the finding's run record (``runs`` columns; its summary is filled here)."""
    con.execute("BEGIN TRANSACTION")
    try:
        app = _decided_application(con, application_id)
        years = tuple(sorted(set(tax_years))) or (int(app["tax_year"]),)
        fp = fnd.fingerprint(application_id, kind, employees, years, knowing, reason)
        same = _one(con, """SELECT finding_id FROM findings f WHERE fingerprint = $fp
                            AND NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.finding_id = f.finding_id)""", fp=fp)
        if same:
            con.execute("ROLLBACK")
            return Act(next(f for f in fnd.read_findings(con) if f.finding_id == same[0]), created=False)
        if kind == "misclassified":
            _check_employees(con, application_id, employees)
        concerned = _concerned(con, app, kind, years)
        n = int(_one(con, "SELECT count(*) FROM findings")[0]) + 1
        finding = fnd.Finding(f"F-{n:04d}", application_id, kind, app["employer_id"], tuple(sorted(set(employees))), years,
                              knowing, reason.strip(), found_on, run["run_id"])
        active = [*fnd.read_findings(con, active_only=True), finding]
        rows, effects = [], []
        for a in concerned:
            req, own, found = _request(con, a, active)
            history = decision_rows(con, [a["application_id"]])
            award = min(int(a["awarded_cents"]), req)
            changes = _take(history, int(a["awarded_cents"]) - award)
            rows += _rows(a, history, changes, req, award, own, run["run_id"], found)
            effects.append(_effect(finding.finding_id, "finding", run["run_id"], a, req, award))
        summary = {"finding_id": finding.finding_id, "application_id": application_id, "kind": kind,
                   "employees": list(finding.employees), "tax_years": list(years), "knowing": knowing,
                   "reason": finding.reason, "re_decided": [e["application_id"] for e in effects]}
        _insert_run(con, {**run, "summary_json": json.dumps(summary, sort_keys=True)})
        _insert(con, "findings", [{
            "finding_id": finding.finding_id, "application_id": application_id, "kind": kind,
            "employer_id": finding.employer_id, "employees": json.dumps(list(finding.employees)),
            "tax_years": json.dumps(list(years)), "knowing": knowing, "reason": finding.reason, "found_on": found_on,
            "recorded_at": now_utc(), "record_run": run["run_id"], "fingerprint": fp}])
        _insert(con, "finding_decisions", effects)
        _insert(con, "decisions", rows)
        failpoints.hit("finding_decided")
        con.execute("COMMIT")
    except BaseException as exc:
        err = rollback(con, exc)
        if err is exc:
            raise
        raise err from exc
    return Act(finding, created=True, effects=effects, run_id=run["run_id"])


def _take(history: pl.DataFrame, cents: int) -> list[tuple[int, int]]:
    """A decrease of ``cents``, returned to the approval years the award came from, the latest first."""
    out, left = [], cents
    for year, amount in _by_year(history):
        take = min(left, max(amount, 0))
        if take:
            out.append((year, -take))
            left -= take
        if not left:
            break
    return out


def withdraw(con: duckdb.DuckDBPyConnection, finding_id: str, reason: str, withdrawn_on: dt.date, run: dict, *,
             statutory_cap_cents: int) -> Act:
    """Withdraw a finding (an appeal upheld): recorded, never deleted; every application it
    re-decided is decided again as before it, within the cap left in the approval year(s) it
    returned cap to. One transaction, with a run of kind ``withdrawal``."""
    con.execute("BEGIN TRANSACTION")
    try:
        finding = next((f for f in fnd.read_findings(con) if f.finding_id == finding_id), None)
        if finding is None:
            raise FindingError(f"no finding {finding_id!r} in this ledger (impcredit finding list shows them)")
        if not finding.active:
            raise FindingError(f"finding {finding_id} was already withdrawn on {finding.withdrawn_on}: nothing to withdraw")
        remaining = [f for f in fnd.read_findings(con, active_only=True) if f.finding_id != finding_id]
        apps = [r[0] for r in con.sql("""SELECT application_id FROM finding_decisions WHERE finding_id = $f
                                         AND event = 'finding' ORDER BY application_id""", params={"f": finding_id}).fetchall()]
        rows, effects = [], []
        for app_id in apps:  # each application's rows written before the next one reads the cap left
            a = current_decisions(con, [app_id]).row(0, named=True)
            history = decision_rows(con, [app_id])
            req, own, found = _request(con, a, remaining)
            award = int(a["awarded_cents"])
            changes = _restore(con, history, finding.record_run, min(award + _taken(history, finding.record_run), req) - award,
                               statutory_cap_cents)
            award += sum(c for _, c in changes)
            mine = _rows(a, history, changes, req, award, own, run["run_id"], found)
            _insert(con, "decisions", mine)
            rows += mine
            effects.append(_effect(finding_id, "withdrawal", run["run_id"], a, req, award))
        summary = {"finding_id": finding_id, "reason": reason.strip(), "re_decided": apps}
        _insert_run(con, {**run, "summary_json": json.dumps(summary, sort_keys=True)})
        _insert(con, "withdrawals", [{"finding_id": finding_id, "reason": reason.strip(), "withdrawn_on": withdrawn_on,
                                      "withdrawn_at": now_utc(), "withdraw_run": run["run_id"]}])
        _insert(con, "finding_decisions", effects)
        for year in {y for y, c in changes_of(rows) if c > 0}:
            used = int(_one(con, "SELECT coalesce(sum(awarded_cents), 0) FROM decisions WHERE approval_year = $y", y=year)[0])
            if used > _cap(con, year, statutory_cap_cents):
                raise FindingError(f"approval year {year} would approve more than its cap: another run used it meanwhile")
        failpoints.hit("finding_decided")
        con.execute("COMMIT")
    except BaseException as exc:
        err = rollback(con, exc)
        if err is exc:
            raise
        raise err from exc
    done = fnd.Finding(**{**finding.__dict__, "withdrawn_on": withdrawn_on, "withdraw_reason": reason.strip(),
                          "withdraw_run": run["run_id"]})
    return Act(done, created=True, effects=effects, run_id=run["run_id"])


def changes_of(rows: list[dict]) -> list[tuple[int, int]]:
    return [(int(r["approval_year"]), int(r["awarded_cents"])) for r in rows]


def _taken(history: pl.DataFrame, run_id: str) -> int:
    """What the finding's run took back from the application (cents, >= 0)."""
    return -sum(c for _, c in _by_year(history, run_id))


def _restore(con, history: pl.DataFrame, finding_run: str, cents: int, statutory_cap_cents: int) -> list[tuple[int, int]]:
    """An increase of up to ``cents``, into the approval years the finding's run took it from (the
    latest first), each within the cap it has left; a decrease (``cents`` < 0) as ``_take``."""
    if cents < 0:
        return _take(history, -cents)
    out, left = [], cents
    for year, amount in _by_year(history, finding_run):
        used = int(_one(con, "SELECT coalesce(sum(awarded_cents), 0) FROM decisions WHERE approval_year = $y", y=year)[0])
        add = min(left, -amount, max(_cap(con, year, statutory_cap_cents) - used, 0))
        if add > 0:
            out.append((year, add))
            left -= add
        if not left:
            break
    return out
