"""The DuckDB ledger: runs, input files, decisions and awards per approval year.

One file per workdir (``<workdir>/impcredit.duckdb``). Its invariants (spec section 7):
- an application decided (APPROVED, PARTIAL, REJECTED) keeps its decision and award;
- the awards of an approval year never exceed the cap: checked inside the committing
  transaction, so a crash, a rerun or a concurrent run cannot break it;
- a waitlisted application carries into the next approval year;
- a decided application is decided again only when an analyst reopens it (spec section 7, I-12):
  the re-decision is an *amendment* row (``seq`` > 0, ``kind = 'amendment'``) whose
  ``awarded_cents`` is the change: an increase takes cap left in the approval year of the
  reopening run, a decrease (negative) returns the difference to the cap of the year(s) it came
  from, latest first. An application's award is the sum of its rows; its current decision is
  its latest row (``decided_in``, ``seq``).
A run's rows are written in one transaction, together with the run record; a run killed before
the commit leaves nothing behind. Its tables and their versions: ``ledger_schema``. The
re-decisions of audit findings are amendment rows of runs of kind ``finding`` and ``withdrawal``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import polars as pl

from transforms import private
from transforms.award.ledger_faults import LedgerError, check_whole, fault, is_file_error, rollback
from transforms.award.ledger_schema import SCHEMA_VERSION, migrate

__all__ = ["SCHEMA_VERSION", "LedgerError", "fault", "migrate", "rollback"]  # re-exported

FINAL_STATUSES = ("APPROVED", "PARTIAL", "REJECTED")

# a line a release confirmed (``ledger_schema`` 5), as ``award.held`` gives it
CONFIRMED_COLUMNS = ["application_id", "source", "file", "file_sha256", "source_sheet", "line", "rules", "employee_id",
                     "figure", "declared", "read"]

# runs that act on decisions without inputs of their own (an analyst's acts)
ACT_KINDS = ("reopen", "release", "finding", "withdrawal")


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The ledger, migrated to this code's schema (``read_only``: as it is; a ledger not there
    yet reads as empty). A lock, a full disk or a damaged file is a ``LedgerError`` naming it."""
    private.make_dir(path.parent)
    if read_only and not path.exists():
        con = duckdb.connect()
        migrate(con)
        return con
    con = None
    try:
        con = duckdb.connect(str(path), read_only=read_only)
        if not read_only:
            private.own(path)  # the agency's alone (issue 43), whatever the umask
            migrate(con)
        check_whole(con, path)
    except duckdb.Error as exc:
        if con is not None:
            con.close()
        if is_file_error(exc) or isinstance(exc, duckdb.CatalogException):
            raise fault(exc, path) from None
        raise
    return con


def awarded_in_year(con: duckdb.DuckDBPyConnection, approval_year: int) -> int:
    """Cents already approved in an approval year (any tax year, earlier runs)."""
    return int(
        con.sql(
            "SELECT coalesce(sum(awarded_cents), 0) FROM decisions WHERE approval_year = $y", params={"y": approval_year}
        ).fetchall()[0][0]
    )


DECISION_COLUMNS = [
    "application_id",
    "approval_year",
    "tax_year",
    "employer_id",
    "employer_name",
    "county",
    "tax_type",
    "received_at",
    "requested_cents",
    "awarded_cents",
    "status",
    "reasons",
    "run_id",
    "period_start",
    "period_end",
]


# the ledger rows' own columns beside those of a decision: the amendment number (0: the first
# decision), the kind and the approval year of the run that made the row
ROW_COLUMNS = [*DECISION_COLUMNS, "seq", "kind", "decided_in"]
_LATEST = "row_number() OVER (PARTITION BY application_id ORDER BY coalesce(decided_in, approval_year) DESC, seq DESC)"
_CURRENT = f"""
    WITH r AS (SELECT *, {_LATEST} AS __n, sum(awarded_cents) OVER (PARTITION BY application_id) AS __total
               FROM decisions)
    SELECT * EXCLUDE (awarded_cents, approval_year, __n, __total), __total::BIGINT AS awarded_cents,
           coalesce(decided_in, approval_year) AS approval_year FROM r WHERE __n = 1"""


def caps(con: duckdb.DuckDBPyConnection) -> dict[int, int]:
    """approval year -> the cap (cents) its latest annual run allocated against (``--cap`` or the statute's)."""
    return {int(y): int(c) for y, c in con.sql("""SELECT approval_year, arg_max(cap_cents, committed_at) FROM runs
                                                  WHERE kind = 'annual' GROUP BY 1""").fetchall()}


def current_decisions(con: duckdb.DuckDBPyConnection, application_ids: list[str] | None = None) -> pl.DataFrame:
    """Each application's current decision (``ROW_COLUMNS``): its latest row, with the award
    the sum of all its rows (the first decision and every amendment)."""
    df = con.sql(f"SELECT {', '.join(ROW_COLUMNS)} FROM ({_CURRENT}) ORDER BY application_id").pl()
    if application_ids is not None:
        df = df.filter(pl.col("application_id").is_in(application_ids))
    return df


def final_decisions(con: duckdb.DuckDBPyConnection, application_ids: list[str] | None = None) -> pl.DataFrame:
    """The current decision of each decided application whose decision is final (not waitlisted)."""
    return current_decisions(con, application_ids).filter(pl.col("status").is_in(FINAL_STATUSES))


def decision_rows(con: duckdb.DuckDBPyConnection, application_ids: list[str]) -> pl.DataFrame:
    """Every ledger row (``ROW_COLUMNS``) of the applications, in the order they were made."""
    return con.sql(
        f"""SELECT {', '.join(ROW_COLUMNS)} FROM decisions WHERE list_contains($ids, application_id)
            ORDER BY application_id, coalesce(decided_in, approval_year), seq""",
        params={"ids": list(application_ids)},
    ).pl()


def carried_waitlist(con: duckdb.DuckDBPyConnection, approval_year: int) -> pl.DataFrame:
    """Applications waitlisted in an earlier approval year and not decided since (spec 7)."""
    return con.sql(
        f"""
        SELECT {', '.join(DECISION_COLUMNS)} FROM ({_CURRENT})
        WHERE status = 'WAITLISTED' AND approval_year < $y
        ORDER BY received_at, application_id
        """,
        params={"y": approval_year},
    ).pl()


def last_inputs(con: duckdb.DuckDBPyConnection) -> tuple[str | None, dict[str, str]]:
    """(run id, {path: sha256}) of the inputs of the last run on this ledger (reopenings aside)."""
    row = con.sql(f"SELECT run_id FROM runs WHERE kind NOT IN {ACT_KINDS} ORDER BY committed_at DESC, run_id DESC LIMIT 1").fetchall()
    if not row:
        return None, {}
    run_id = row[0][0]
    files = con.sql("SELECT path, sha256 FROM input_files WHERE run_id = $r", params={"r": run_id}).fetchall()
    return run_id, dict(files)


def last_employee_years(con: duckdb.DuckDBPyConnection, kind: str, tax_year: int) -> tuple[str | None, pl.DataFrame]:
    """(run id, employee-years) of the last run of that kind and tax year."""
    row = con.sql("""SELECT run_id FROM runs WHERE kind = $k AND tax_year = $t
                     ORDER BY committed_at DESC, run_id DESC LIMIT 1""", params={"k": kind, "t": tax_year}).fetchall()
    if not row:
        return None, pl.DataFrame(schema=EMPLOYEE_YEAR_SCHEMA)
    return row[0][0], con.sql(f"SELECT {', '.join(EMPLOYEE_YEAR_SCHEMA)} FROM employee_years WHERE run_id = $r",
                              params={"r": row[0][0]}).pl().cast(EMPLOYEE_YEAR_SCHEMA)


EMPLOYEE_YEAR_SCHEMA = {"application_id": pl.String, "employer_id": pl.String, "employee_id": pl.String,
                        "tax_year": pl.Int32, "status": pl.String, "reasons": pl.String, "credit_cents": pl.Int64}
# what a notice shows of an employee-year beside it (schema 4; empty in rows of earlier runs)
EMPLOYEE_YEAR_DETAIL = {"wage_category": pl.String, "hours_prior": pl.Float64, "hours_current": pl.Float64,
                        "part1_cents": pl.Int64, "part2_cents": pl.Int64}


def commit_run(
    con: duckdb.DuckDBPyConnection,
    run: dict,
    decisions: pl.DataFrame,
    input_files: list[dict],
    cap_cents: int,
    employee_years: pl.DataFrame | None = None,
    released: list[str] | None = None,
    confirmed: pl.DataFrame | None = None,
) -> None:
    """Write a run and its decisions in one transaction, checking the cap inside it.

    ``decisions`` holds only new rows (``DECISION_COLUMNS``, and ``seq``/``kind``/``decided_in``
    for amendments); a waitlisted application decided again in the same approval year replaces
    its waitlist row. An amendment needs the application's reopening still open (a concurrent
    run may have decided it): it is closed by this run. ``employee_years`` (``EMPLOYEE_YEAR_SCHEMA``)
    are kept for the next run's account of what changed. ``released``: held applications an
    analyst released that this run decided (their releases are closed by it); ``confirmed``: the
    lines those releases confirmed (``CONFIRMED_COLUMNS``: read but doubtful, declared totals that
    differ), kept so that they hold nothing again.
    """
    approval_year = run["approval_year"]
    con.execute("BEGIN TRANSACTION")
    try:
        if not decisions.is_empty():
            rows = decisions.with_columns(
                *[pl.lit(v, dtype=t).alias(c) for c, v, t in (("seq", 0, pl.Int32), ("kind", "decision", pl.String),
                                                             ("decided_in", approval_year, pl.Int32),
                                                             ("period_start", None, pl.Date), ("period_end", None, pl.Date))
                  if c not in decisions.columns]
            ).select(ROW_COLUMNS)
            con.register("new_decisions", rows.to_arrow())
            # A decided application may not be decided again, but by an amendment of a reopening
            clash = con.sql(
                f"""SELECT n.application_id FROM new_decisions n JOIN decisions d USING (application_id)
                    WHERE d.status IN {FINAL_STATUSES} AND n.kind <> 'amendment'"""
            ).fetchall()
            if clash:
                raise LedgerError(f"application {clash[0][0]} was already decided by another run")
            amended = [r[0] for r in con.sql("SELECT DISTINCT application_id FROM new_decisions WHERE kind = 'amendment'").fetchall()]
            if amended:
                still = {r[0] for r in con.sql(
                    "SELECT application_id FROM reopenings WHERE decided_by_run IS NULL AND list_contains($ids, application_id)",
                    params={"ids": amended}).fetchall()}
                if set(amended) - still:
                    raise LedgerError(f"application {sorted(set(amended) - still)[0]} was decided again by another run")
                con.execute("UPDATE reopenings SET decided_by_run = $r WHERE decided_by_run IS NULL AND list_contains($ids, application_id)",
                            {"r": run["run_id"], "ids": amended})
            con.execute(
                """DELETE FROM decisions WHERE status = 'WAITLISTED' AND seq = 0 AND (application_id, approval_year) IN
                   (SELECT application_id, approval_year FROM new_decisions WHERE kind = 'decision')"""
            )
            con.execute(f"INSERT INTO decisions BY NAME SELECT {', '.join(ROW_COLUMNS)} FROM new_decisions")
            con.unregister("new_decisions")
        # only this run's approval year gains awards (a decrease returns cap to earlier years)
        total = awarded_in_year(con, approval_year)
        if total > cap_cents:
            raise LedgerError(
                f"approval year {approval_year} would approve {total / 100:,.2f} over the cap of {cap_cents / 100:,.2f}"
            )
        _insert_details(con, run["run_id"], employee_years, confirmed)
        if released:
            con.execute("UPDATE releases SET decided_by_run = $r WHERE decided_by_run IS NULL AND list_contains($ids, application_id)",
                        {"r": run["run_id"], "ids": list(released)})
        cols = list(run)
        con.execute(
            f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [run[c] for c in cols]
        )
        _insert_input_files(con, run["run_id"], input_files)
        con.execute("COMMIT")
    except BaseException as exc:
        err = rollback(con, exc)
        if err is exc:
            raise
        raise err from exc


def _insert_details(con: duckdb.DuckDBPyConnection, run_id: str, employee_years: pl.DataFrame | None,
                    confirmed: pl.DataFrame | None) -> None:
    """A run's employee-years and the lines its releases confirmed (inside its transaction)."""
    if employee_years is not None and employee_years.height:
        schema = {**EMPLOYEE_YEAR_SCHEMA, **{c: t for c, t in EMPLOYEE_YEAR_DETAIL.items() if c in employee_years.columns}}
        con.register("new_employee_years", employee_years.select(list(schema)).cast(schema)
                     .with_columns(pl.lit(run_id).alias("run_id")).to_arrow())
        con.execute(f"INSERT INTO employee_years BY NAME SELECT run_id, {', '.join(schema)} FROM new_employee_years")
        con.unregister("new_employee_years")
    if confirmed is not None and confirmed.height:
        con.register("new_confirmed", confirmed.select(CONFIRMED_COLUMNS).with_columns(pl.lit(run_id).alias("run_id")).to_arrow())
        con.execute("INSERT INTO confirmed_lines BY NAME SELECT * FROM new_confirmed")
        con.unregister("new_confirmed")


def _insert_input_files(con: duckdb.DuckDBPyConnection, run_id: str, input_files: list[dict]) -> None:
    """A run's input files, in one statement (a row at a time took 7.7 s for 20,000 files)."""
    if not input_files:
        return
    files = pl.DataFrame(
        {"run_id": [run_id] * len(input_files), "path": [f["path"] for f in input_files],
         "sha256": [f["sha256"] for f in input_files], "bytes": [f["bytes"] for f in input_files]},
        schema={"run_id": pl.String, "path": pl.String, "sha256": pl.String, "bytes": pl.Int64},
    )
    con.register("new_input_files", files.to_arrow())
    con.execute("INSERT INTO input_files SELECT run_id, path, sha256, bytes FROM new_input_files")
    con.unregister("new_input_files")


def runs_history(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return con.sql(
        """SELECT run_id, kind, tax_year, quarter, as_of, approval_year, policy, cap_cents / 100 AS cap,
                  status, started_at, committed_at, summary_json, settings_json, params_version
           FROM runs ORDER BY committed_at, run_id"""
    ).pl()


def last_run(con: duckdb.DuckDBPyConnection, kind: str, tax_year: int) -> dict | None:
    row = con.sql(
        "SELECT run_id, summary_json FROM runs WHERE kind = $k AND tax_year = $t ORDER BY committed_at DESC LIMIT 1",
        params={"k": kind, "t": tax_year},
    ).fetchall()
    row = row[0] if row else None
    return None if row is None else {"run_id": row[0], **json.loads(row[1])}


def run_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict:
    """The summary a run recorded (``{}`` for an unknown run)."""
    row = con.sql("SELECT summary_json FROM runs WHERE run_id = $r", params={"r": run_id}).fetchall()
    return json.loads(row[0][0]) if row else {}


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
