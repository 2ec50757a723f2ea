"""Files that pass as they are go through staging and validation in batches
(``batches.validate_batch``); everything else goes file by file. The result must be exactly
the file-by-file one: same lake rows, file records, rejects and quarantine."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from transforms.ingest import ingest_folder
from transforms.ingest import pipeline as pp
from transforms.ingest.read import tables
from transforms.ingest.store.lake import lake_dir, scan_lake
from transforms.ingest.validate import files as fl
from transforms.pii import demo_key

CANON = Path(__file__).parent / "fixtures" / "canonical_small"
KEY = demo_key()
NOW = datetime(2026, 1, 1, 12, 0)
HEADER = "employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes"


def build(root: Path) -> dict[str, str]:
    """A submission of clean files and of files that each fail in a different way; returns
    {file: how it must be routed} ("batch" or "one by one")."""
    for name in ("applications", "roster", "certifications", "employer_rates"):
        shutil.copy(CANON / f"{name}.csv", root / f"{name}.csv")
    pay = root / "payroll"
    pay.mkdir()
    lines = (CANON / "payroll" / "payroll.csv").read_text().splitlines()[1:]
    by_emp: dict[str, list[str]] = {}
    for ln in lines:
        by_emp.setdefault(ln.split(",")[0], []).append(ln)
    emps = sorted(by_emp)
    route: dict[str, str] = {}

    def write(name: str, rows: list[str], how: str, header: str = HEADER) -> None:
        (pay / name).write_text("\n".join([header, *rows]) + "\n")
        route[f"payroll/{name}"] = how

    for i, e in enumerate(emps[:6]):  # clean: one employer each
        write(f"p{i}_clean.csv", by_emp[e], "batch")
    other_ssn = by_emp[emps[0]][0].split(",")[2].replace("-", "")  # an ssn of p0, as digits

    def retag(rows: list[str], employer: str) -> list[str]:
        return [",".join([employer, *r.split(",")[1:]]) for r in rows]

    bad = retag(by_emp[emps[6]], "100000091")
    bad[3] = ",".join(bad[3].split(",")[:5] + ["", *bad[3].split(",")[6:]])
    write("q1_missing_hours.csv", bad, "one by one")
    # an employer id equal to an ssn of *another* file, and in q9 to an ssn of another row of
    # the same file: a coincidence (both are 9 digits), accepted by both routes
    write("q2_other_files_ssn.csv", retag(by_emp[emps[7]], other_ssn), "batch")
    own = by_emp[emps[8]]
    own_ssn = own[0].split(",")[2].replace("-", "")
    write("q3_own_ssn_as_employer.csv", [",".join([own_ssn, *own[0].split(",")[1:]]), *retag(own[1:], "100000093")], "one by one")
    quoted = retag(by_emp[emps[9]], "100000094")
    quoted[0] = '"' + quoted[0].replace(",", '","') + '"'  # every field quoted: Polars' reader
    quoted[1] = ",".join(['"' + c.replace("E", 'E,""') + '"' if c.startswith("E") else c for c in quoted[1].split(",")])
    write("q4_quoted.csv", quoted[:1] + quoted[2:], "batch")
    write("q4b_quote_inside.csv", retag(quoted[1:2], "100000099"), "one by one")  # a delimiter and a quote inside quotes
    sneaky = retag(by_emp[emps[9]], "100000095")
    sneaky[1] = ",".join([sneaky[1].split(",")[0], "ID 123-45-6789", *sneaky[1].split(",")[2:]])
    write("q5_dashed_ssn_in_id.csv", sneaky, "one by one")
    write("q6_header_only.csv", [], "batch")
    ragged = retag(by_emp[emps[5]], "100000096")
    ragged[2] += ",extra"
    write("q7_ragged.csv", ragged, "one by one")
    reordered = "employee_id,employer_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes"
    rows = [",".join([r.split(",")[1], r.split(",")[0], *r.split(",")[2:]]) for r in retag(by_emp[emps[4]], "100000097")]
    write("q8_columns_reordered.csv", rows, "batch", header=reordered)
    mine = retag(by_emp[emps[3]], "100000098")
    ssn_here = mine[-1].split(",")[2].replace("-", "")
    write("q9_employer_id_is_another_rows_ssn.csv", mine + retag(by_emp[emps[2]], ssn_here), "batch")
    return route


def run(src: Path, wd: Path, batch_bytes: int, monkeypatch) -> tuple:
    monkeypatch.setattr(pp, "BATCH_BYTES", batch_bytes)
    one_by_one: list[str] = []
    real = fl.read_and_validate

    def spy(work, *a, **k):
        one_by_one.append(work.rel)
        return real(work, *a, **k)

    monkeypatch.setattr(fl, "read_and_validate", spy)
    report = ingest_folder(src, wd, KEY, now=NOW)
    lake = scan_lake(wd, "payroll").collect().sort("source_file", "source_line")
    qdir = lake_dir(wd) / "quarantine"
    quarantine = (pl.read_parquet(sorted(qdir.rglob("*.parquet"))).sort("source_file", "source_line")
                  if qdir.exists() else pl.DataFrame())
    files = [(f.file, f.dataset, f.profile, f.status, f.rows_read, f.rows_accepted, f.rows_rejected, f.message)
             for f in report.files]
    return files, report.rejects, lake, quarantine, sorted(one_by_one)


@pytest.mark.parametrize("batch_bytes", [3_000, 1 << 20])
def test_batches_give_exactly_the_file_by_file_result(tmp_path, monkeypatch, batch_bytes):
    src = tmp_path / "in"
    src.mkdir()
    route = build(src)
    files0, rejects0, lake0, q0, one0 = run(src, tmp_path / "wd0", 0, monkeypatch)
    files1, rejects1, lake1, q1, one1 = run(src, tmp_path / "wd1", batch_bytes, monkeypatch)

    assert files1 == files0
    assert_frame_equal(rejects1, rejects0)
    assert_frame_equal(lake1, lake0)
    assert_frame_equal(q1, q0)
    # every file goes one by one without batches; with them, only those that do not pass as they are
    assert len(one0) == len(files0)
    expected = sorted(f for f, how in route.items() if how == "one by one")
    assert [f for f in one1 if f.startswith("payroll/")] == expected
    # and the submission really has both kinds of file
    status = {f[0]: f[3] for f in files0}
    assert status["payroll/q1_missing_hours.csv"] == "partial"
    assert status["payroll/q2_other_files_ssn.csv"] == "accepted"
    assert status["payroll/q3_own_ssn_as_employer.csv"] == "partial"
    assert rejects0.filter(pl.col("file") == "payroll/q3_own_ssn_as_employer.csv").get_column("rule").to_list() == ["employer_id_is_ssn"]
    assert status["payroll/q9_employer_id_is_another_rows_ssn.csv"] == "accepted"
    assert status["payroll/q5_dashed_ssn_in_id.csv"] == "accepted"
    assert status["payroll/q7_ragged.csv"] == "partial"
    assert all(status[f] == "accepted" for f, how in route.items() if how == "batch" and "header_only" not in f)
    assert lake0.height > 1000


def test_read_simple_many_is_read_simple_file_by_file(tmp_path):
    """One joint read per layout (and the layout sniffed once per header line) gives each file
    what reading it alone gives: every fixture file, and the files ``build`` writes."""
    build(tmp_path)
    fixtures = Path(__file__).parent / "fixtures"
    for dataset, paths, least in [
        ("payroll", sorted((tmp_path / "payroll").glob("*.csv")) + sorted(fixtures.rglob("*.csv")) + sorted(fixtures.rglob("*.txt")), 12),
        ("applications", sorted(fixtures.rglob("applications*.csv")), 1),
    ]:
        many = tables.read_simple_many(dataset, paths)
        read = 0
        for path, got in zip(paths, many, strict=True):
            one = tables.read_simple(dataset, path)
            assert (got is None) == (one is None), path
            if one is not None:
                read += 1
                (t, m, notes), (u, n, notes1) = got, one
                assert (t.headers, t.header_line, t.delimiter, t.encoding, notes) == (u.headers, u.header_line, u.delimiter, u.encoding, notes1)
                assert t.frame.equals(u.frame) and m == n, path
        assert read >= least
