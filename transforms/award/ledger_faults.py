"""Faults of the ledger file said as what they are (issue 21): a run holding it, a full disk, a
damaged file; each with what to do. DuckDB ends a transaction whose commit failed (a full disk)
itself, so its 'cannot rollback - no transaction is active' must never hide why."""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb


class LedgerError(RuntimeError):
    pass


def fault(exc: BaseException, path: Path | str) -> LedgerError:
    """What a DuckDB error of the ledger file is, said as one of three faults with what to do: a
    run holding it, a full disk, a damaged file (never 'cannot rollback')."""
    text = str(exc)
    low = text.lower()
    if "could not set lock" in low or "conflicting lock" in low:
        return LedgerError(f"the ledger {path} is in use by another run; wait for it to finish and run again")
    if "no space left" in low or "disk full" in low or "disk quota" in low:
        return LedgerError(
            f"no space left on the disk holding the ledger {path}: nothing of this run was committed (the ledger "
            "holds what it held before it). Free space on that disk and run again")
    first = text.splitlines()[0][:200] if text else type(exc).__name__
    return LedgerError(
        f"the ledger {path} is damaged ({first}): it is the only record of the decisions and awards, so no run "
        "reads or commits to it. Keep the file as it is, restore impcredit.duckdb from the workdir's latest "
        "backup and run again")


def is_file_error(exc: BaseException) -> bool:
    return isinstance(exc, (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException,
                            duckdb.TransactionException)) or type(exc) is duckdb.Error


HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers


def check_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Read the run records (every block they use is checksummed by DuckDB) and compare the file's
    size with the blocks in use its header counts: a truncated file (a full disk, a copy cut short)
    is damaged even where the blocks read first are whole. (DuckDB cuts free blocks off the end of
    the file, so only the blocks in use must be there.)"""
    con.sql("SELECT * FROM runs").fetchall()
    block, used = con.sql("SELECT block_size, used_blocks FROM pragma_database_size() "
                          "WHERE database_name = current_database()").fetchall()[0]
    size = path.stat().st_size
    if used and size < HEADER_BYTES + block * used:
        raise duckdb.IOException(f"the file is {size:,} bytes where its {used} blocks in use need "
                                 f"{HEADER_BYTES + block * used:,}: truncated")


def rollback(con: duckdb.DuckDBPyConnection, exc: BaseException) -> BaseException:
    """Roll the open transaction back after ``exc`` and return the error to raise: a DuckDB error
    as its ``fault``. DuckDB ends a transaction whose commit failed itself (a full disk): its
    'no transaction is active' then must not hide why."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")
    if isinstance(exc, duckdb.Error) and is_file_error(exc):
        try:
            path = con.sql("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0][0]
        except (duckdb.Error, IndexError):
            path = "(the workdir's impcredit.duckdb)"
        return fault(exc, path)
    return exc
