"""Safe for an analyst's everyday work (issue: incomplete uploads, odd ids, mistyped years, files
as they arrive), through the CLI: exit code, message, and what the ledger and --out hold."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from transforms.synthetic.generate import generate_submission

AS_OF = "2024-07-01"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("safety") / "sub"
    generate_submission(root, employers=8, seed=13, tax_year=2023)
    return root


def cli(*args: str):
    from flows.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def annual(src: Path, tmp: Path, *extra: str, year: str = "2023"):
    return cli("annual", "--input", src, "--tax-year", year, "--as-of", AS_OF, "--out", tmp / "out",
               "--workdir", tmp / "work", *extra)


def one_line(output: str) -> str:
    """The message of a failed run: one line (the stage lines before it aside)."""
    import re

    lines = [ln for ln in output.splitlines() if ln.strip() and not re.match(r"\d{4}-\d\d-\d\dT\S+ impcredit ", ln)]
    assert len(lines) == 1, output
    return lines[0]


def nothing_written(tmp: Path) -> None:
    assert not (tmp / "out").exists() or not any((tmp / "out").iterdir())
    ledger = tmp / "work" / "impcredit.duckdb"
    if ledger.exists():
        con = duckdb.connect(str(ledger), read_only=True)
        assert con.sql("SELECT count(*) FROM runs").fetchall()[0][0] == 0
        assert con.sql("SELECT count(*) FROM decisions").fetchall()[0][0] == 0
        con.close()


# --- 1. an incomplete submission stops first -----------------------------------------------------

def _without_roster(s: Path) -> None:
    (s / "roster.csv").unlink()


def _roster_folder(s: Path) -> None:
    (s / "roster.csv").unlink()
    (s / "roster.csv").mkdir()


def _roster_unreadable(s: Path) -> None:
    os.chmod(s / "roster.csv", 0)


def _roster_no_header(s: Path) -> None:
    (s / "roster.csv").write_text("\n\n")


def _payroll_gzip(s: Path) -> None:
    p = next((s / "payroll").glob("*.csv"))
    p.write_bytes(gzip.compress(p.read_bytes()))


def _payroll_symlink(s: Path) -> None:
    os.symlink("/etc/passwd", s / "payroll" / "zz_link.csv")


def _payroll_folder(s: Path) -> None:
    (s / "payroll" / "payroll_006.csv").mkdir()


def _payroll_utf16(s: Path) -> None:
    p = next((s / "payroll").glob("*.csv"))
    p.write_bytes(p.read_text().encode("utf-16-le"))


@pytest.mark.parametrize("break_it, named", [
    (_without_roster, "roster.csv is missing"),
    (_roster_folder, "roster.csv: a folder named like a data file"),
    (_roster_unreadable, "roster.csv: cannot be read"),
    (_roster_no_header, "roster.csv: is empty (no header line)"),
    (_payroll_gzip, "a gzip-compressed file"),
    (_payroll_symlink, "payroll/zz_link.csv: a symbolic link, not read"),
    (_payroll_folder, "payroll/payroll_006.csv: a folder named like a data file"),
    (_payroll_utf16, "UTF-16 text without a byte-order mark"),
])
def test_an_incomplete_submission_stops_before_deciding(base, tmp_path, break_it, named):
    if break_it is _roster_unreadable and os.geteuid() == 0:
        pytest.skip("root reads any file")
    src = tmp_path / "sub"
    shutil.copytree(base, src)
    break_it(src)
    r = annual(src, tmp_path)
    assert r.exit_code == 2, r.output
    line = one_line(r.output)
    assert named in line and "nothing was decided" in line and "Traceback" not in r.output
    nothing_written(tmp_path)
    # the complete submission on the same workdir then decides as a fresh one would
    if break_it in (_without_roster, _roster_folder):
        r = annual(base, tmp_path)
        assert r.exit_code == 0, r.output
        r2 = annual(base, tmp_path / "fresh")
        assert r2.exit_code == 0
        assert (tmp_path / "out" / "awards.csv").read_bytes() == (tmp_path / "fresh" / "out" / "awards.csv").read_bytes()


def test_a_payroll_file_in_an_unknown_layout_stops_the_run_too(base, tmp_path):
    src = tmp_path / "sub"
    shutil.copytree(base, src)
    (src / "payroll" / "zz_vendor.csv").write_text("fein,person,social\n100000001,E9,123\n")
    r = annual(src, tmp_path)
    assert r.exit_code == 2 and "payroll/zz_vendor.csv could not be read" in one_line(r.output)
    nothing_written(tmp_path)


def test_nothing_outside_the_input_is_read_by_ingest(base, tmp_path):
    src = tmp_path / "sub"
    shutil.copytree(base, src)
    outside = tmp_path / "outside.csv"
    shutil.copy(next((base / "payroll").glob("*.csv")), outside)
    os.symlink(outside, src / "payroll" / "linked.csv")
    os.symlink("/etc", src / "payroll" / "etc")
    (src / "payroll" / "blob.csv").write_bytes(b"employer_id\x00\x01\x02\xff" * 50)
    r = cli("ingest", "--input", src, "--workdir", tmp_path / "w", "--out", tmp_path / "o", "--validation-engine", "polars")
    assert r.exit_code == 0, r.output
    rejects = pl.read_csv(tmp_path / "o" / "rejects.csv", infer_schema=False)
    got = {f: rule for f, rule in rejects.select("file", "rule").iter_rows()}
    assert got["payroll/linked.csv"] == "symbolic_link" and got["payroll/etc"] == "symbolic_link"
    assert got["payroll/blob.csv"] == "binary_file"
    raw = (tmp_path / "o" / "rejects.csv").read_bytes()
    assert b"root:" not in raw and b"\x00" not in raw and b"\xff" not in raw
    lake = b"".join(p.read_bytes() for p in (tmp_path / "w").rglob("*") if p.is_file())
    assert b"root:x:0" not in lake


# --- 2. ids are text ----------------------------------------------------------------------------

def test_odd_ids_get_their_own_files_and_an_over_long_id_is_a_row_reject(base, tmp_path):
    src = tmp_path / "sub"
    shutil.copytree(base, src)
    apps = pl.read_csv(src / "applications.csv", infer_schema=False)
    roster = pl.read_csv(src / "roster.csv", infer_schema=False)
    ids = apps.get_column("application_id").to_list()
    new = dict(zip(ids, ["X/1", "X_1", "Y 1", "Y?1", "L" * 300, *ids[5:]], strict=True))
    apps.with_columns(pl.col("application_id").replace_strict(new)).write_csv(src / "applications.csv")
    roster.with_columns(pl.col("application_id").replace_strict(new, default=pl.col("application_id"))).write_csv(
        src / "roster.csv")
    r = annual(src, tmp_path)
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    rejects = pl.read_csv(out / "rejects.csv", infer_schema=False)
    long = rejects.filter(pl.col("rule") == "id_too_long")
    assert long.height == 2 and set(long.get_column("file")) == {"applications.csv", "roster.csv"}
    assert set(long.get_column("column")) == {"application_id"} and long.get_column("line").null_count() == 0
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert {"X/1", "X_1", "Y 1", "Y?1"} <= set(awards.get_column("application_id")) and "L" * 300 not in set(awards.get_column("application_id"))
    assert len(list((out / "notices").glob("*.html"))) == awards.height
    award_file = pl.read_csv(out / "taxation" / "award_file.csv", infer_schema=False)
    for no in award_file.get_column("certificate_no"):
        assert (out / "certificates" / f"{no}.html").is_file(), no
    assert len(list((out / "certificates").glob("*.html"))) == award_file.height


printable_id = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
                                     blacklist_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"),
                       min_size=1, max_size=64).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(printable_id, min_size=1, max_size=12, unique=True))
def test_any_printable_ids_get_a_certificate_and_a_notice_each(tmp_path_factory, ids):
    import datetime as dt

    from transforms.award.decide import empty_decisions
    from transforms.products import write_certificates, write_notices
    from transforms.products.award_file import award_rows

    n = len(ids)
    awards = pl.DataFrame({
        "application_id": ids, "approval_year": [2024] * n, "tax_year": [2023] * n, "employer_id": ["100000001"] * n,
        "employer_name": ids, "county": ["Essex"] * n, "tax_type": ["CBT"] * n,
        "received_at": [dt.datetime(2024, 2, 1, tzinfo=dt.UTC)] * n, "requested_cents": [100] * n,
        "awarded_cents": [100] * n, "status": ["APPROVED"] * n, "reasons": [""] * n, "run_id": ["r"] * n,
    }).with_columns(pl.lit(None, dtype=pl.Date).alias("period_start"), pl.lit(None, dtype=pl.Date).alias("period_end")).cast(
        empty_decisions().schema)
    emp = pl.DataFrame({"application_id": ids, "employee_id": ["E1"] * n, "wage_category": ["general"] * n,
                        "hours_prior": [1.0] * n, "hours_current": [1.0] * n, "part1_cents": [100] * n,
                        "part2_cents": [0] * n, "credit_cents": [100] * n, "status": ["ELIGIBLE"] * n, "reasons": [""] * n})
    out = tmp_path_factory.mktemp("ids")
    certs = write_certificates(out, awards)
    notices = write_notices(out, awards, emp)
    assert len(set(certs)) == len(set(notices)) == n
    assert all(len(p.name.encode()) <= 110 for p in certs + notices)
    for no in award_rows(awards).get_column("certificate_no"):
        assert (out / "certificates" / f"{no}.html").is_file()


# --- 3. a mistyped year is not a run -----------------------------------------------------------

@pytest.mark.parametrize("year, words", [
    ("1999", ["before 2019", "holds 2023 (8 applications)"]),
    ("2022", ["no application for tax year 2022", "holds 2023 (8 applications)"]),
    ("2027", ["parameters known through 2026"]),
])
def test_a_mistyped_year_is_not_a_run(base, tmp_path, year, words):
    r = annual(base, tmp_path, year=year)
    assert r.exit_code == 2, r.output
    line = one_line(r.output)
    assert all(w in line for w in words), line
    nothing_written(tmp_path)


def test_no_application_at_all_is_nothing_to_decide(base, tmp_path):
    src = tmp_path / "sub"
    shutil.copytree(base, src)
    head = (src / "applications.csv").read_text().splitlines()[0]
    (src / "applications.csv").write_text(head + "\n")
    r = annual(src, tmp_path)
    assert r.exit_code == 0 and "nothing to decide" in r.output and "no run recorded" in r.output
    nothing_written(tmp_path)
    r = annual(base, tmp_path, "--as-of", "2024-01-02")  # before any application was received
    assert r.exit_code == 0 and "nothing to decide for tax year 2023 as of 2024-01-02" in r.output


# --- 10. everything findable: Data Docs of an annual run ------------------------------------------

def test_an_annual_run_writes_gx_data_docs_when_asked_and_links_them(base, tmp_path):
    import json

    r = annual(base, tmp_path, "--data-docs")
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    docs = out / "data_docs" / "index.html"
    assert docs.is_file()
    pages = [p for p in (out / "data_docs").rglob("*.html") if p.name != "index.html"]
    assert len(pages) >= 5  # a validation result page per file validated (payroll files and the others)
    assert json.loads((out / "manifest.json").read_text())["data_docs"] == "data_docs/index.html"
    assert 'href="data_docs/index.html"' in (out / "index.html").read_text()
    assert "Data Docs (Great Expectations)" in r.output  # the summary names them
    assert not (tmp_path / "work" / ".data_docs").exists()
    # without the flag: no Data Docs (the suites run compiled to Polars)
    r = annual(base, tmp_path / "plain")
    assert r.exit_code == 0 and not (tmp_path / "plain" / "out" / "data_docs").exists()
    assert json.loads((tmp_path / "plain" / "out" / "manifest.json").read_text())["data_docs"] is None
