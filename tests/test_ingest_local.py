"""One route for the ingest, whatever its executor: the tasks on this process's threads with the
scratch area in memory (the default for a submission up to ``SCRATCH_IN_MEMORY_BYTES``) or on disk
(``ingest_folder(..., cluster="local:N")``, and any submission above it), one task at a time or
several: the lake's parts, byte for byte, and the ingest report (files, counts, rejects,
replacements, the lake's digest) are the same, for a vendor mix with rejects and a bigger payroll
file read in pieces, then for a second run with a corrected file and a copy under another name.
(The Dask executor: tests/test_ingest_dask.py.)"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.fixtures.compare import corrected, lake_files, same
from transforms import failpoints
from transforms.ingest import ingest_folder
from transforms.ingest import pipeline as pp
from transforms.ingest.store import ordered
from transforms.pii import HashKey
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

KEY = HashKey(b"local-ingest-test-key-0123456789abcdef", "env")
NOW = datetime(2024, 7, 1, 12, 0)
PIECE = 12_000  # bytes: the bigger payroll files go in pieces


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("localsub")
    generate_submission(root / "canonical", employers=10, seed=11, tax_year=2023)
    write_vendor_mix(root / "canonical", root / "mix", seed=11)
    canon = root / "mix" / "payroll" / "canonical.csv"
    row = canon.read_text().splitlines()[1].split(",")
    with canon.open("a") as fh:  # an exact copy of a row and a bad number
        fh.write(",".join(row) + "\n" + ",".join([*row[:5], "many", *row[6:]]) + "\n")
    return root / "mix"


def same_report(a, b) -> None:
    assert a.files == b.files
    assert a.rejects.equals(b.rejects)
    assert a.replaced == b.replaced
    assert a.lake_sha256 == b.lake_sha256


@pytest.mark.parametrize(("route", "chunk"), [("local:1", None), ("local:2", None), ("local:1", 50)])
def test_every_executor_of_this_process_writes_the_same_lake_and_report(submission, tmp_path, monkeypatch, route,
                                                                      chunk):
    """``chunk``: a year's rows read back from the staged parts in slices of about that many rows
    (``store.ordered``: many slices, each key's rows in one) instead of one."""
    monkeypatch.setattr(pp, "PIECE_BYTES", PIECE)
    if chunk:
        monkeypatch.setattr(ordered, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(failpoints, "_armed", ["ingest_worker_always"])  # a worker's fail point: not armed here
    assert (submission / "payroll" / "canonical.csv").stat().st_size > PIECE
    again = corrected(submission, tmp_path / "corrected")
    for src in (submission, again):
        plain = ingest_folder(src, tmp_path / "plain", KEY, now=NOW)
        local = ingest_folder(src, tmp_path / "local", KEY, now=NOW, cluster=route)
        same_report(plain, local)
        same(lake_files(tmp_path / "plain" / "lake"), lake_files(tmp_path / "local" / "lake"))
        assert not any((tmp_path / "local" / "lake" / "_scratch").glob("*"))
    assert sum(r.rows_rejected for r in local.files) > 0 and local.replaced
    rules = set(local.rejects.get_column("rule").to_list())
    assert {"duplicate_row", "not_a_number"} <= {r.strip("'") for r in rules}


def test_a_submission_over_the_threshold_keeps_its_scratch_area_on_disk(submission, tmp_path, monkeypatch):
    """A submission over ``memory_up_to_bytes`` (the run's setting ``scratch_in_memory_mb``) keeps the tasks'
    scratch area on disk (made, then removed) instead of in memory, and writes the same lake."""
    calls = []
    real = pp.ingest_with
    monkeypatch.setattr(pp, "ingest_with", lambda *a, **k: calls.append((str(a[0]), k["in_memory"])) or real(*a, **k))
    memory = ingest_folder(submission, tmp_path / "memory", KEY, now=NOW)
    assert calls == [("local:2", True)]  # two tasks at once by default
    disk = ingest_folder(submission, tmp_path / "disk", KEY, now=NOW, memory_up_to_bytes=0)
    assert calls[-1] == ("local:2", False)
    same_report(memory, disk)
    same(lake_files(tmp_path / "memory" / "lake"), lake_files(tmp_path / "disk" / "lake"))
    ingest_folder(submission, tmp_path / "one", KEY, now=NOW, memory_up_to_bytes=0, tasks=1)
    assert calls[-1] == ("local:1", False)
    same(lake_files(tmp_path / "memory" / "lake"), lake_files(tmp_path / "one" / "lake"))
    with pytest.raises(ValueError, match="tasks at once must be 1 or more, not 0"):
        ingest_folder(submission, tmp_path / "bad", KEY, now=NOW, tasks=0)
    # the settings at the edge: a bad value in one line naming it
    from flows.settings import run_settings

    for name, bad in (("IMPCREDIT_INGEST_TASKS", "two"), ("IMPCREDIT_SCRATCH_IN_MEMORY_MB", "lots")):
        monkeypatch.setenv(name, bad)
        with pytest.raises(ValueError, match=f"setting {name.removeprefix('IMPCREDIT_').lower()} "):
            run_settings()
        monkeypatch.delenv(name)
    # a setting by its old name is an error naming the new one, never ignored
    monkeypatch.setenv("IMPCREDIT_STAGED_TASKS", "1")
    with pytest.raises(ValueError, match="IMPCREDIT_STAGED_TASKS is now IMPCREDIT_INGEST_TASKS"):
        run_settings()
    monkeypatch.delenv("IMPCREDIT_STAGED_TASKS")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "impcredit.toml").write_text("staged_above_mb = 10\n")
    with pytest.raises(ValueError, match="staged_above_mb is now scratch_in_memory_mb"):
        run_settings()


def test_the_submissions_size_counts_its_files_not_the_workdir_inside_it(tmp_path):
    (tmp_path / "payroll").mkdir()
    (tmp_path / "payroll" / "a.csv").write_bytes(b"x" * 1000)
    (tmp_path / "applications.csv").write_bytes(b"y" * 24)
    (tmp_path / "work" / "lake").mkdir(parents=True)
    (tmp_path / "work" / "lake" / "part.parquet").write_bytes(b"z" * 5000)
    assert pp._submission_bytes(tmp_path, tmp_path / "work") == 1024


def test_a_reduce_reads_its_partition_by_file_then_place_when_two_tasks_parts_interleave():
    """A batch's part holds its files' rows (``tasks._stage_works``); a batch may pass over a file
    another task reads (a workbook between two CSV files): its part, named by its first file,
    holds files 1 and 3, the other task's file 2. The reduce reads them as the files' order."""
    import polars as pl

    from transforms.ingest import tasks
    from transforms.ingest.store.scratch import Memory
    from transforms.ingest.validate.cross_rows import ORDER_BASE

    def rows(file: int, lines: list[int]) -> pl.DataFrame:
        return pl.DataFrame({"__order": [file * ORDER_BASE + ln for ln in lines], "__seq": list(range(len(lines))),
                             "employer_id": [f"{file}" * 9] * len(lines)})

    area = Memory()
    (area / "map/payroll/b0/f1.arrow").put(pl.concat([rows(1, [2, 3]), rows(3, [2, 3, 4])]))
    (area / "map/payroll/b0/f2.arrow").put(rows(2, [2, 5]))
    got = tasks._read_staged(area, ["map/payroll/b0/f2.arrow", "map/payroll/b0/f1.arrow"])
    assert got.get_column("__order").to_list() == [
        1 * ORDER_BASE + 2, 1 * ORDER_BASE + 3, 2 * ORDER_BASE + 2, 2 * ORDER_BASE + 5,
        3 * ORDER_BASE + 2, 3 * ORDER_BASE + 3, 3 * ORDER_BASE + 4]
    assert got.get_column("__kf").to_list() == [1, 1, 2, 2, 3, 3, 3]
    assert got.get_column("__kp").to_list() == [0, 1, 0, 1, 0, 1, 2]
