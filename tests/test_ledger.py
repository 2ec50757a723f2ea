"""The ledger on real DuckDB files: reruns, the cap across runs, the waitlist, failed commits."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers import employer_case, frames_for

from transforms.award import ledger, ledger_schema
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import AllocationSettings, Settings

PARAMS = load_parameters()


def run(tmp: Path, cases: list[dict], *, tax_year: int = 2023, as_of: str = "2024-07-01", cap: float | None = None,
        policy: str = "fcfs", out: str = "out", waitlist_carry: bool = True) -> steps.RunSummary:
    workdir = tmp / "work"
    frames = frames_for(cases)
    staged = steps.RunInputs(frames, pl.DataFrame(schema={c: pl.String for c in ("file", "line", "column", "value", "rule", "message")}),
                                [{"path": "x.csv", "sha256": "0" * 64, "bytes": 1}], "demo", "test")
    settings = Settings(allocation=AllocationSettings(cap=cap, policy=policy, waitlist_carry=waitlist_carry))
    as_of_d = dt.date.fromisoformat(as_of)
    result = steps.compute(frames, tax_year, as_of_d, PARAMS, settings)
    run_id = steps.new_run_id("annual", tax_year, staged.inputs_sha256)
    return steps.decide_and_commit(steps.RunContext(
        workdir=workdir, out_dir=tmp / out, run_id=run_id, kind="annual", tax_year=tax_year, as_of=as_of_d,
        params=PARAMS, settings=settings, staged=staged, result=result, started_at=ledger.now_utc()))


def decisions(tmp: Path) -> pl.DataFrame:
    con = duckdb.connect(str(tmp / "work" / "impcredit.duckdb"), read_only=True)
    try:
        return con.sql("SELECT * FROM decisions ORDER BY approval_year, application_id").pl()
    finally:
        con.close()


def test_rerun_is_byte_identical_and_approves_nothing_twice(tmp_path):
    cases = [employer_case(i, f"2024-02-0{i}T09:00:00") for i in range(1, 4)]
    first = run(tmp_path, cases)
    awards1 = (tmp_path / "out" / "awards.csv").read_bytes()
    credits1 = (tmp_path / "out" / "employee_credits.csv").read_bytes()
    second = run(tmp_path, cases)
    assert (tmp_path / "out" / "awards.csv").read_bytes() == awards1
    assert (tmp_path / "out" / "employee_credits.csv").read_bytes() == credits1
    d = decisions(tmp_path)
    assert d.height == 3  # nothing decided twice
    assert first.awarded == second.awarded > 0
    assert second.cap_left == first.cap_left  # the rerun approved nothing more


def test_cap_holds_across_runs_and_new_applications_get_what_is_left(tmp_path):
    cases = [employer_case(i, f"2024-02-0{i}T09:00:00") for i in range(1, 4)]
    first = run(tmp_path, cases[:2], cap=700.00)
    d1 = decisions(tmp_path)
    assert d1["awarded_cents"].sum() <= 70000
    # a later run sees a third application; only the cap left can go to it
    second = run(tmp_path, cases, cap=700.00, as_of="2024-08-01")
    d2 = decisions(tmp_path)
    assert d2["awarded_cents"].sum() <= 70000
    assert d2.filter(pl.col("application_id").is_in(d1["application_id"].implode()))["awarded_cents"].to_list() == d1[
        "awarded_cents"
    ].to_list()
    assert second.cap_left >= 0 and first.cap_left >= second.cap_left


def test_partial_and_waitlist_then_carry_into_next_approval_year(tmp_path):
    cases = [employer_case(i, f"2024-02-0{i}T09:00:00") for i in range(1, 4)]
    requested = run(tmp_path, cases, cap=10_000_000).requested
    per_app = requested / 3
    tmp2 = tmp_path / "capped"
    tmp2.mkdir()
    s = run(tmp2, cases, cap=round(per_app * 1.5, 2))
    d = decisions(tmp2).sort("application_id")
    assert d["status"].to_list() == ["APPROVED", "PARTIAL", "WAITLISTED"]
    assert d["reasons"].to_list() == ["", "CAP_EXHAUSTED", "CAP_EXHAUSTED"]
    assert s.cap_left == 0
    # next approval year: a new application for tax year 2024 arrives, the 2023 waitlist goes first
    new = employer_case(9, "2025-02-01T09:00:00", tax_year=2024)
    s2 = run(tmp2, [new], tax_year=2024, as_of="2025-03-01", cap=round(per_app * 1.5, 2), out="out2025")
    d2 = decisions(tmp2).filter(pl.col("approval_year") == 2025).sort("received_at")
    assert d2["application_id"].to_list() == ["APP-2023-003", "APP-2024-009"]
    assert d2["status"][0] == "APPROVED"  # the carried application is served first
    awards = pl.read_csv(tmp2 / "out2025" / "awards.csv")
    assert set(awards["application_id"]) == {"APP-2023-003", "APP-2024-009"}
    assert s2.awarded <= s2.cap


def test_without_waitlist_carry_the_next_approval_year_serves_only_its_own_applications(tmp_path):
    """The alternative of spec 7's carry (setting waitlist_carry=false): last year's waitlist is
    not served by the next approval year; it stays WAITLISTED in its own year."""
    cases = [employer_case(i, f"2024-02-0{i}T09:00:00") for i in range(1, 4)]
    per_app = run(tmp_path, cases, cap=10_000_000).requested / 3
    tmp2 = tmp_path / "capped"
    tmp2.mkdir()
    run(tmp2, cases, cap=round(per_app * 1.5, 2), waitlist_carry=False)
    new = employer_case(9, "2025-02-01T09:00:00", tax_year=2024)
    run(tmp2, [new], tax_year=2024, as_of="2025-03-01", cap=round(per_app * 1.5, 2), out="out2025",
        waitlist_carry=False)
    d = decisions(tmp2)
    d2 = d.filter(pl.col("approval_year") == 2025)
    assert d2["application_id"].to_list() == ["APP-2024-009"]
    assert d2["awarded_cents"].to_list() == [0]  # its own application (no credit due in 2024) only
    still = d.filter(pl.col("application_id") == "APP-2023-003")
    assert still["approval_year"].to_list() == [2024] and still["status"].to_list() == ["WAITLISTED"]
    awards = pl.read_csv(tmp2 / "out2025" / "awards.csv")
    assert set(awards["application_id"]) == {"APP-2024-009"}


def test_failed_commit_leaves_no_outputs_and_no_ledger_rows(tmp_path, monkeypatch):
    cases = [employer_case(1, "2024-02-01T09:00:00")]

    def boom(*a, **k):
        raise RuntimeError("killed before commit")

    monkeypatch.setattr(ledger, "commit_run", boom)
    with pytest.raises(RuntimeError):
        run(tmp_path, cases)
    assert not (tmp_path / "out" / "awards.csv").exists()
    assert list((tmp_path / "out").glob(".pending-*")) == []
    assert decisions(tmp_path).height == 0


def test_ledger_refuses_to_exceed_the_cap(tmp_path):
    con = ledger.connect(tmp_path / "l.duckdb")
    row = {
        "application_id": "A", "approval_year": 2024, "tax_year": 2023, "employer_id": "1", "employer_name": "x",
        "county": "Mercer", "tax_type": "CBT", "received_at": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        "requested_cents": 600, "awarded_cents": 600, "status": "APPROVED", "reasons": "", "run_id": "r1",
    }
    frame = pl.DataFrame([row]).cast({"approval_year": pl.Int32, "tax_year": pl.Int32})
    rec = {"run_id": "r1", "kind": "annual", "tax_year": 2023, "quarter": None, "as_of": dt.date(2024, 7, 1),
           "approval_year": 2024, "policy": "fcfs", "cap_cents": 500, "settings_json": "{}", "params_version": "v",
           "inputs_sha256": "x", "status": "completed", "started_at": ledger.now_utc(),
           "committed_at": ledger.now_utc(), "summary_json": "{}"}
    with pytest.raises(ledger.LedgerError, match="over the cap"):
        ledger.commit_run(con, rec, frame, [], 500)
    assert con.sql("SELECT count(*) FROM decisions").fetchall()[0][0] == 0
    assert con.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 0
    con.close()


def test_a_run_records_every_input_file(tmp_path):
    """The input files of a run are in the ledger, each with its path, sha256 and size (in one
    statement: 20,000 files took 7.7 s a row at a time); a failed commit records none."""
    con = ledger.connect(tmp_path / "l.duckdb")
    rec = {"run_id": "r1", "kind": "annual", "tax_year": 2023, "quarter": None, "as_of": dt.date(2024, 7, 1),
           "approval_year": 2024, "policy": "fcfs", "cap_cents": 500, "settings_json": "{}", "params_version": "v",
           "inputs_sha256": "x", "status": "completed", "started_at": ledger.now_utc(),
           "committed_at": ledger.now_utc(), "summary_json": "{}"}
    files = [{"path": f"payroll/emp_{i:05d}.csv", "sha256": f"{i:064x}", "bytes": 1000 + i} for i in range(3000)]
    empty = pl.DataFrame(schema={c: pl.String for c in ledger.DECISION_COLUMNS})
    ledger.commit_run(con, rec, empty, files, 500)
    got = con.sql("SELECT run_id, path, sha256, bytes FROM input_files ORDER BY path").fetchall()
    assert got == [("r1", f["path"], f["sha256"], f["bytes"]) for f in files]
    with pytest.raises(duckdb.ConstraintException):  # a second run with the same id fails whole
        ledger.commit_run(con, rec, empty, files[:1], 500)
    assert con.sql("SELECT count(*) FROM input_files").fetchall()[0][0] == 3000
    con.close()


def test_a_schema_1_ledger_is_migrated_keeping_every_decision(tmp_path):
    """Ledgers written before amendments (schema 1) gain seq/kind/decided_in, employee_years and
    reopenings in one transaction; every decision and run stays as it was."""
    import datetime as dt

    import duckdb

    path = tmp_path / "impcredit.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")
    for stmt in ledger_schema._MIGRATIONS[1]:
        con.execute(stmt)
    con.execute("INSERT INTO schema_version VALUES (1, now()::TIMESTAMP)")
    con.execute("INSERT INTO decisions VALUES ('A1', 2024, 2023, '100000001', 'One', 'Essex', 'CBT', ?, 5000, 4000, "
                "'PARTIAL', 'CAP_EXHAUSTED', 'r1')", [dt.datetime(2024, 2, 1, tzinfo=dt.UTC)])
    con.close()
    con = ledger.connect(path)
    assert con.sql("SELECT max(version) FROM schema_version").fetchall()[0][0] == ledger.SCHEMA_VERSION
    rows = con.sql("SELECT application_id, approval_year, awarded_cents, seq, kind, decided_in FROM decisions").fetchall()
    assert rows == [("A1", 2024, 4000, 0, "decision", 2024)]
    cur = ledger.current_decisions(con)
    assert cur.select("application_id", "awarded_cents", "status", "approval_year").rows() == [("A1", 4000, "PARTIAL", 2024)]
    assert ledger.awarded_in_year(con, 2024) == 4000
    assert con.sql("SELECT count(*) FROM reopenings").fetchall()[0][0] == 0
    con.close()
