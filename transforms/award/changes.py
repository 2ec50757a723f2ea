"""What changed since the last run on this workdir (spec section 7, corrected submissions).

An analyst corrects a file and runs again: the run says which input files were added, changed or
removed, which employee-years changed status or credit, which decided applications now compute
another request than the one decided (they keep their decision: a corrected submission does
not change a decision by itself; ``impcredit reopen`` decides one again), which reopened
applications this run decided again, and which applications a rerun decided for the first time
(released, no longer held, new) and what it awarded them. ``changes.csv`` lists each change on a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from transforms.award import ledger

CHANGE_COLUMNS = {"change": pl.String, "file": pl.String, "application_id": pl.String, "employee_id": pl.String,
                  "before": pl.String, "after": pl.String}


@dataclass
class Changes:
    since_run: str | None  # the run compared with (None: the first run on this workdir)
    files_added: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)
    employee_years: pl.DataFrame | None = None  # application_id, employee_id, status/credit before and now
    request_differs: pl.DataFrame | None = None  # application_id, requested_cents, requested_now_cents, awarded_cents
    reopened: list[str] = field(default_factory=list)
    # (group id, its members before, its members now) of each control group whose membership changed
    groups_changed: list[tuple[str, str, str]] = field(default_factory=list)
    decided: pl.DataFrame | None = None  # a rerun's first decisions: application_id, status, awarded_cents

    @property
    def inputs_changed(self) -> bool:
        return bool(self.files_added or self.files_changed or self.files_removed)

    def counts(self) -> dict[str, int]:
        return {
            "files_added": len(self.files_added), "files_changed": len(self.files_changed),
            "files_removed": len(self.files_removed),
            "employee_years_changed": 0 if self.employee_years is None else self.employee_years.height,
            "requests_differ_from_decision": 0 if self.request_differs is None else self.request_differs.height,
            "reopened_decided": len(self.reopened),
            "control_groups_changed": len(self.groups_changed),
            "applications_decided": 0 if self.decided is None else self.decided.height,
        }

    def frame(self) -> pl.DataFrame:
        """``changes.csv``: one line per change."""
        rows: list[dict] = []
        for kind, files in (("file added", self.files_added), ("file changed", self.files_changed),
                            ("file removed", self.files_removed)):
            rows += [{"change": kind, "file": f} for f in files]
        if self.employee_years is not None:
            for r in self.employee_years.iter_rows(named=True):
                rows.append({"change": "employee-year changed", "application_id": r["application_id"],
                             "employee_id": r["employee_id"],
                             "before": _ey(r["status_before"], r["credit_before"]), "after": _ey(r["status_now"], r["credit_now"])})
        if self.request_differs is not None:
            for r in self.request_differs.iter_rows(named=True):
                rows.append({"change": "request differs from decision (kept; reopen to decide again)",
                             "application_id": r["application_id"],
                             "before": f"requested {_money(r['requested_cents'])}, awarded {_money(r['awarded_cents'])}",
                             "after": f"requested {_money(r['requested_now_cents'])}"})
        rows += [{"change": "reopened, decided again", "application_id": a} for a in self.reopened]
        if self.decided is not None:
            rows += [{"change": "decided by this run", "application_id": r["application_id"],
                      "after": f"{r['status']} {_money(r['awarded_cents'])}"} for r in self.decided.iter_rows(named=True)]
        rows += [{"change": f"control group {g} changed", "file": "control_groups.csv", "before": b, "after": a}
                 for g, b, a in self.groups_changed]
        return pl.DataFrame(rows, schema=CHANGE_COLUMNS) if rows else pl.DataFrame(schema=CHANGE_COLUMNS)

    def lines(self) -> list[str]:
        """The summary's account, one line per kind of change (empty lists said as none)."""
        c = self.counts()
        if self.since_run is None:
            return ["first run on this workdir"]
        out = [f"since {self.since_run}: input files {c['files_added']} added, {c['files_changed']} changed, "
               f"{c['files_removed']} removed"]
        out.append(f"employee-years whose status or credit changed: {c['employee_years_changed']}")
        if self.decided is not None:
            ids = ", ".join(self.decided.get_column("application_id").head(5).to_list())
            more = " ..." if self.decided.height > 5 else ""
            out.append(f"applications decided by this run: {self.decided.height}"
                       + (f" ({ids}{more}), {_money(int(self.decided['awarded_cents'].sum()))} awarded"
                          if self.decided.height else ""))
        if c["requests_differ_from_decision"]:
            ids = ", ".join(self.request_differs.get_column("application_id").head(5).to_list())
            more = " ..." if c["requests_differ_from_decision"] > 5 else ""
            out.append(f"decided applications whose request now differs (kept; `impcredit reopen` to decide again): "
                       f"{c['requests_differ_from_decision']} ({ids}{more})")
        if self.reopened:
            out.append(f"reopened applications decided again: {', '.join(self.reopened)}")
        if self.groups_changed:
            out.append(f"control groups whose members changed: {', '.join(g for g, _, _ in self.groups_changed)}")
        return out


def _money(cents: int | None) -> str:
    return "" if cents is None else f"${cents / 100:,.2f}"


def _ey(status: str | None, credit: int | None) -> str:
    return "" if status is None else f"{status} {_money(credit)}"


def memberships(groups: pl.LazyFrame | pl.DataFrame | None) -> dict[str, str]:
    """group id -> its members as one line (``employer_id from..to``, sorted; an open end as ``..``),
    what a run records to notice a changed group (spec section 1, control_groups.csv)."""
    if groups is None:
        return {}
    g = groups.lazy().select("group_id", "employer_id", "member_from", "member_to").collect()
    out: dict[str, list[str]] = {}
    for gid, emp, start, end in g.sort("group_id", "employer_id", "member_from").iter_rows():
        out.setdefault(gid, []).append(f"{emp} {start or ''}..{end or ''}")
    return {gid: "; ".join(members) for gid, members in out.items()}


def _groups_changed(before: dict[str, str], now: dict[str, str]) -> list[tuple[str, str, str]]:
    return [(g, before.get(g, "(none)"), now.get(g, "(none)")) for g in sorted(set(before) | set(now))
            if before.get(g) != now.get(g)]


def since_last_run(con, *, kind: str, tax_year: int, files: list[dict], employee_years: pl.DataFrame,
                   request_differs: pl.DataFrame | None = None, reopened: list[str] | None = None,
                   groups: dict[str, str] | None = None, decided: pl.DataFrame | None = None) -> Changes:
    """The changes of a run about to commit, against the ledger's last run (files, control groups)
    and the last run of the same kind and tax year (employee-years: ``ledger.EMPLOYEE_YEAR_SCHEMA``).
    ``groups``: this run's ``memberships``; a run recorded before they were kept compares none.
    ``decided``: the ledger rows of this run's new decisions (a rerun counts them: a release or a
    corrected file decides an application without any employee-year changing)."""
    since, before = ledger.last_inputs(con)
    now = {f["path"]: f["sha256"] for f in files}
    out = Changes(since_run=since, request_differs=request_differs, reopened=list(reopened or []))
    if since is not None:
        out.files_added = sorted(set(now) - set(before))
        out.files_removed = sorted(set(before) - set(now))
        out.files_changed = sorted(p for p in set(now) & set(before) if now[p] != before[p])
        recorded = ledger.run_summary(con, since).get("control_groups")
        if recorded is not None and groups is not None:
            out.groups_changed = _groups_changed(recorded, groups)
        if decided is not None:
            out.decided = decided.group_by("application_id", maintain_order=True).agg(
                pl.col("status").last(), pl.col("awarded_cents").sum()).sort("application_id")
    last, prev = ledger.last_employee_years(con, kind, tax_year)
    if last is not None:
        key = ["application_id", "employee_id"]
        cur = employee_years.select(*key, pl.col("status").alias("status_now"), pl.col("credit_cents").alias("credit_now"))
        old = prev.select(*key, pl.col("status").alias("status_before"), pl.col("credit_cents").alias("credit_before"))
        j = old.join(cur, on=key, how="full", coalesce=True)
        out.employee_years = j.filter(
            (pl.col("status_before").fill_null("") != pl.col("status_now").fill_null(""))
            | (pl.col("credit_before").fill_null(-1) != pl.col("credit_now").fill_null(-1))
        ).sort(key)
    return out
