"""A big delimited file is read and validated in pieces (``pieces.validate_in_pieces``), so
memory holds one piece, not the file. The result must be exactly the whole-file one: same lake
rows, file records, rejects and quarantine, including what is decided for the whole file (the
ssns masked, the sole employer, the "most values are empty" file checks)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from transforms.ingest import ingest_folder
from transforms.ingest import pipeline as pp
from transforms.ingest.read import tables
from transforms.ingest.store.lake import lake_dir, scan_lake
from transforms.ingest.validate import files as fl
from transforms.ingest.validate import masking
from transforms.ingest.validate import pieces as pc
from transforms.pii import demo_key

CANON = Path(__file__).parent / "fixtures" / "canonical_small"
KEY = demo_key()
NOW = datetime(2026, 1, 1, 12, 0)
PIECE = 6_000  # bytes: about 90 rows a piece, a dozen pieces for the whole fixture payroll


def rows_of() -> tuple[str, list[list[str]]]:
    text = (CANON / "payroll" / "payroll.csv").read_text().splitlines()
    return text[0], [ln.split(",") for ln in text[1:]]


def write(path: Path, header: str, rows: list[list[str]]) -> None:
    path.write_text("\n".join([header, *(",".join(r) for r in rows)]) + "\n")


def retag(rows: list[list[str]], prefix: str) -> list[list[str]]:
    """The same rows under other employer ids (no duplicate across files)."""
    return [[prefix + r[0][1:], *r[1:]] for r in rows]


def build(root: Path) -> None:
    for name in ("applications", "roster", "certifications", "employer_rates"):
        shutil.copy(CANON / f"{name}.csv", root / f"{name}.csv")
    pay = root / "payroll"
    pay.mkdir()
    header, rows = rows_of()
    n = len(rows)
    write(pay / "a_clean.csv", header, rows)

    dirty = retag(rows, "2")
    dirty[n // 2][5] = "-5"  # negative hours in a middle piece: a correction, netted and accepted
    dirty[n // 3][3] = "2023-02-30"  # no such date
    late_ssn = dirty[-1][2].replace("-", "")  # an ssn seen only in the last piece...
    assert all(r[2].replace("-", "") != late_ssn for r in dirty[: n // 2])
    dirty[5][1] = late_ssn  # ...as the employee id of a row of the first piece,
    dirty[5][6] = "n/a"  # which is rejected (not a number): its quarantined cells must mask it
    dirty[n // 4][0] = dirty[n // 4][2].replace("-", "")  # an employer id that is its own row's ssn
    write(pay / "b_dirty.csv", header, dirty)

    mostly = retag(rows, "3")
    for r in mostly[: int(n * 0.6)]:  # hours empty in 60% of the rows: whole pieces, not all
        r[5] = ""
    mostly[-2][1] = mostly[-2][2]  # an employee id that is its own row's ssn (rejected before validation)
    write(pay / "c_most_hours_empty.csv", header, mostly)

    some = retag(rows, "4")
    for r in some[: int(n * 0.3)]:  # 30% overall, most of the first pieces
        r[5] = ""
    write(pay / "d_some_hours_empty.csv", header, some)

    one = [r for r in rows if r[0] == rows[0][0]]
    one = [["500000001", *r[1:]] for r in one]
    one[len(one) // 2][0] = ""  # no employer id: the reject is the file's sole employer's
    write(pay / "e_sole_employer.csv", header, one)

    quoted = retag(rows, "6")
    quoted[-4] = ['"' + c + '"' for c in quoted[-4]]  # quoted fields are fine, but
    quoted[-5][1] = '"' + quoted[-5][1] + ', jr"'  # a delimiter inside quotes: read whole
    write(pay / "f_quoted.csv", header, quoted)


def run(src: Path, wd: Path, piece_bytes: int, monkeypatch) -> tuple:
    monkeypatch.setattr(pp, "PIECE_BYTES", piece_bytes)
    whole: list[str] = []
    pieces: list[str] = []
    real_whole, real_pieces = fl.read_and_validate, pc.validate_in_pieces

    def spy_whole(work, *a, **k):
        whole.append(work.rel)
        return real_whole(work, *a, **k)

    def spy_pieces(work, *a, **k):
        done = real_pieces(work, *a, **k)
        if done:
            pieces.append(work.rel)
        return done

    monkeypatch.setattr(fl, "read_and_validate", spy_whole)
    monkeypatch.setattr(pc, "validate_in_pieces", spy_pieces)
    report = ingest_folder(src, wd, KEY, now=NOW)
    lake = scan_lake(wd, "payroll").collect().sort("source_file", "source_line")
    qdir = lake_dir(wd) / "quarantine"
    quarantine = pl.read_parquet(sorted(qdir.rglob("*.parquet"))).sort("source_file", "source_line")
    files = [(f.file, f.dataset, f.profile, f.status, f.rows_read, f.rows_accepted, f.rows_rejected, f.message)
             for f in report.files]
    return files, report.rejects, lake, quarantine, sorted(whole), sorted(pieces)


def test_pieces_give_exactly_the_whole_file_result(tmp_path, monkeypatch):
    src = tmp_path / "in"
    src.mkdir()
    build(src)
    files0, rejects0, lake0, q0, whole0, pieces0 = run(src, tmp_path / "wd0", 0, monkeypatch)
    files1, rejects1, lake1, q1, whole1, pieces1 = run(src, tmp_path / "wd1", PIECE, monkeypatch)

    assert files1 == files0
    assert_frame_equal(rejects1, rejects0)
    assert_frame_equal(lake1, lake0)
    assert_frame_equal(q1, q0)
    # routes: without pieces, the failing files and the quoted one are read whole; with them,
    # only the quoted one
    assert pieces0 == []
    assert whole0 == ["payroll/b_dirty.csv", "payroll/c_most_hours_empty.csv", "payroll/d_some_hours_empty.csv",
                      "payroll/e_sole_employer.csv", "payroll/f_quoted.csv"]
    assert pieces1 == ["payroll/a_clean.csv", "payroll/b_dirty.csv", "payroll/c_most_hours_empty.csv",
                       "payroll/d_some_hours_empty.csv", "payroll/e_sole_employer.csv"]
    assert whole1 == ["payroll/f_quoted.csv"]
    assert len(tables.pieces(src / "payroll" / "a_clean.csv", (src / "payroll" / "a_clean.csv").stat().st_size, PIECE)) >= 10

    # and the result is what each file is built to give
    status = {f[0]: (f[3], f[4], f[5], f[6]) for f in files0}
    n = lake0.filter(pl.col("source_file") == "payroll/a_clean.csv").height
    assert n > 1000
    assert status["payroll/a_clean.csv"] == ("accepted", n, n, 0)
    assert status["payroll/b_dirty.csv"] == ("partial", n, n - 3, 3)
    assert status["payroll/c_most_hours_empty.csv"][:3] == ("rejected", n, 0)
    assert status["payroll/d_some_hours_empty.csv"] == ("partial", n, n - int(n * 0.3), int(n * 0.3))
    assert status["payroll/f_quoted.csv"] == ("accepted", n, n, 0)

    def rules(file: str) -> list[tuple]:
        sel = rejects0.filter(pl.col("file") == file)
        return sorted(zip(sel.get_column("rule").to_list(), sel.get_column("employer_id").to_list(), strict=True),
                      key=str)

    assert [r for r, _ in rules("payroll/b_dirty.csv")] == sorted(
        ["invalid_date", "not_a_number", "employer_id_is_ssn"], key=str)
    assert [r for r, _ in rules("payroll/c_most_hours_empty.csv")] == ["employee_id_is_ssn", "wrong_types"]
    assert ("missing_value", "500000001") in rules("payroll/e_sole_employer.csv")
    # the rows of a file rejected as a whole are all quarantined, those rejected before validation too
    qc = q0.filter(pl.col("source_file") == "payroll/c_most_hours_empty.csv")
    assert qc.height == n
    assert "employee_id_is_ssn" in qc.get_column("rules").to_list()
    # the ssn used as an employee id in the first piece is masked in the quarantine
    late_ssn = rows_of()[1][-1][2].replace("-", "")
    qb = q0.filter(pl.col("source_file") == "payroll/b_dirty.csv")
    assert qb.height == 3
    assert all(late_ssn not in c for c in qb.get_column("cells").to_list())
    assert any(json.loads(c).get("employee_id") == masking.MASK for c in qb.get_column("cells").to_list())
