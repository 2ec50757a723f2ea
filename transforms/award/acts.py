"""An analyst's acts on decisions, kept in the ledger (spec section 7): ``reopen`` a decided
application (a corrected submission, I-12: the next annual run decides it again as an amendment)
and ``release`` a held one (the next run decides it as it stands, whatever rejected lines it
could depend on). Each is recorded with its reason and a run of its own kind in one transaction.
"""

from __future__ import annotations

import duckdb
import polars as pl

from transforms.award.ledger import (
    FINAL_STATUSES,
    LedgerError,
    current_decisions,
    last_run,
    rollback,
)


def pending_reopenings(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Applications reopened by an analyst and not decided again yet: application_id, reason,
    reopened_at, reopen_run."""
    return con.sql("""SELECT application_id, reason, reopened_at, reopen_run FROM reopenings
                      WHERE decided_by_run IS NULL ORDER BY reopened_at, application_id""").pl()


def reopen(con: duckdb.DuckDBPyConnection, application_id: str, reason: str, run: dict) -> dict:
    """Reopen a decided application (spec section 7, I-12): record it with its reason and a run
    of kind ``reopen`` in one transaction. The next annual run of its tax year that holds it
    decides it again. Returns its current decision."""
    con.execute("BEGIN TRANSACTION")
    try:
        cur = current_decisions(con, [application_id])
        if cur.height == 0:
            raise LedgerError(f"application {application_id!r} has no decision in this ledger: nothing to reopen")
        row = cur.row(0, named=True)
        if row["status"] not in FINAL_STATUSES:
            raise LedgerError(f"application {application_id!r} is {row['status']}, not decided: it is decided by the "
                              "next run anyway")
        if con.sql("SELECT count(*) FROM reopenings WHERE application_id = $a AND decided_by_run IS NULL",
                   params={"a": application_id}).fetchall()[0][0]:
            raise LedgerError(f"application {application_id!r} is already reopened; the next annual run decides it")
        cols = list(run)
        con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [run[c] for c in cols])
        con.execute("INSERT INTO reopenings VALUES (?, ?, ?, ?, NULL)",
                    [application_id, reason, run["committed_at"], run["run_id"]])
        con.execute("COMMIT")
    except BaseException as exc:
        err = rollback(con, exc)
        if err is exc:
            raise
        raise err from exc
    return row


def pending_releases(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Held applications an analyst released (``impcredit release``) and no run decided yet."""
    return [r[0] for r in con.sql(
        "SELECT DISTINCT application_id FROM releases WHERE decided_by_run IS NULL ORDER BY application_id").fetchall()]


def release(con: duckdb.DuckDBPyConnection, application_id: str, reason: str, run: dict) -> None:
    """Release a held application (spec section 7): the next run that holds it decides it as it
    stands, whatever rejected lines it could depend on. Recorded with its reason and a run of
    kind ``release`` in one transaction. One the last annual run of its tax year held by the
    agency's gap alone (``agency_held`` of its summary) is refused, naming the rate years missing:
    a release cannot decide the Department's own gap."""
    con.execute("BEGIN TRANSACTION")
    try:
        gap = ((last_run(con, "annual", run["tax_year"]) or {}).get("agency_held") or {}).get(application_id)
        if gap is not None:
            raise LedgerError(
                f"application {application_id!r} is held only by the Department's own gap: employer_rates.csv has no "
                f"UI/DI rates for {gap}. A release cannot decide it (spec section 7): add the rates to "
                "employer_rates.csv, and the first annual run that has them decides it")
        cur = current_decisions(con, [application_id])
        if cur.height and cur.row(0, named=True)["status"] in FINAL_STATUSES:
            raise LedgerError(f"application {application_id!r} is already decided "
                              f"({cur.row(0, named=True)['status']}): nothing to release (`impcredit reopen` decides it again)")
        if con.sql("SELECT count(*) FROM releases WHERE application_id = $a AND decided_by_run IS NULL",
                   params={"a": application_id}).fetchall()[0][0]:
            raise LedgerError(f"application {application_id!r} is already released; the next annual run decides it")
        cols = list(run)
        con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [run[c] for c in cols])
        con.execute("INSERT INTO releases VALUES (?, ?, ?, ?, NULL)",
                    [application_id, reason, run["committed_at"], run["run_id"]])
        con.execute("COMMIT")
    except BaseException as exc:
        err = rollback(con, exc)
        if err is exc:
            raise
        raise err from exc


def confirmed_lines(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The payroll lines a release confirmed (``file_sha256``, ``source_sheet``, ``line``): read
    but doubtful lines taken as read (spec section 7); they hold no application again."""
    return con.sql("""SELECT DISTINCT file_sha256, source_sheet, line FROM confirmed_lines
                      WHERE source = 'doubtful' AND file_sha256 IS NOT NULL""").pl()
