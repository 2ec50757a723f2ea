"""Faults say what they are (issue 21): a damaged ledger, a full disk and a held lock are three
different errors, each with what to do, and the ledger stays as it was (real DuckDB files; the
full disk a real tmpfs where this machine lets a test mount one)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import polars as pl
import pytest

from transforms.award import ledger


def record(run_id: str) -> dict:
    return {"run_id": run_id, "kind": "annual", "tax_year": 2023, "quarter": None, "as_of": dt.date(2024, 7, 1),
            "approval_year": 2024, "policy": "fcfs", "cap_cents": 10**9, "settings_json": "{}", "params_version": "v",
            "inputs_sha256": "x", "status": "completed", "started_at": ledger.now_utc(),
            "committed_at": ledger.now_utc(), "summary_json": "{}"}


def files(n: int) -> list[dict]:
    return [{"path": f"payroll/emp_{i:06d}_{'x' * 60}.csv", "sha256": uuid.uuid4().hex * 2, "bytes": i} for i in range(n)]


EMPTY = pl.DataFrame(schema={c: pl.String for c in ledger.DECISION_COLUMNS})


def a_ledger(path: Path) -> None:
    con = ledger.connect(path)
    ledger.commit_run(con, record("r1"), EMPTY, files(10), 0)
    con.close()


@pytest.mark.parametrize("damage", ["truncated", "empty", "flipped"])
def test_a_damaged_ledger_is_named_damaged_not_in_use(tmp_path, damage):
    path = tmp_path / "impcredit.duckdb"
    a_ledger(path)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":  # a disk that filled while the ledger was created
        path.write_bytes(b"")
    else:
        path.write_bytes(data[:4096] + bytes([data[4096] ^ 1]) + data[4097:])
    for read_only in (False, True):
        with pytest.raises(ledger.LedgerError) as caught:
            ledger.connect(path, read_only=read_only)
        msg = str(caught.value)
        assert "damaged" in msg and str(path) in msg and "backup" in msg and "in use" not in msg


def test_a_held_ledger_is_in_use(tmp_path):
    path = tmp_path / "impcredit.duckdb"
    a_ledger(path)
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(path)!r}); "
                               "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ledger.LedgerError) as caught:
            ledger.connect(path)
        assert "in use by another run" in str(caught.value) and "damaged" not in str(caught.value)
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs (skipped where this machine does not let a test mount one)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_at_commit_says_no_space_and_the_ledger_holds_what_it_held(small_disk):
    path = small_disk / "impcredit.duckdb"
    a_ledger(path)
    con = ledger.connect(path)
    con.execute("CHECKPOINT")
    st = os.statvfs(small_disk)
    filler = small_disk / "filler"
    filler.write_bytes(b"x" * (st.f_bavail * st.f_frsize - 64 * 1024))
    with pytest.raises(ledger.LedgerError) as caught:
        ledger.commit_run(con, record("r2"), EMPTY, files(40_000), 0)
    msg = str(caught.value)
    assert "no space left" in msg and str(path) in msg and "rollback" not in msg
    con.close()
    filler.unlink()
    con = ledger.connect(path)
    assert con.sql("SELECT run_id FROM runs").fetchall() == [("r1",)]
    assert con.sql("SELECT count(*) FROM input_files").fetchall()[0][0] == 10
    ledger.commit_run(con, record("r2"), EMPTY, files(10), 0)  # with space again, a run commits
    assert con.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 2
    con.close()


def test_each_fault_has_its_own_message():
    said = {kind: str(ledger.fault(exc, "/w/impcredit.duckdb")) for kind, exc in {
        "lock": duckdb.IOException('IO Error: Could not set lock on file "/w/impcredit.duckdb": Conflicting lock is held'),
        "full": duckdb.TransactionException("TransactionContext Error: Failed to commit: Could not write file: No space left on device"),
        "damaged": duckdb.Error("Corrupt database file: computed checksum 1 does not match stored checksum 2"),
    }.items()}
    assert "in use by another run" in said["lock"]
    assert "no space left" in said["full"] and "Free space" in said["full"]
    assert "damaged" in said["damaged"] and "backup" in said["damaged"]
    assert len(set(said.values())) == 3
