"""Every form of the money is the same money (issue 41, item 1): a real annual run with awards, a
PARTIAL under a small cap and an amendment (a corrected file, a reopen, a rerun), every
machine-readable output that carries money read back with pyarrow, Polars and DuckDB (where the
format allows) and compared to ``awards.csv`` and ``employee_credits.csv`` to the cent, as
decimals; the manifests' hashes are those of the files on disk."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import fastexcel
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from transforms.synthetic.generate import generate_submission

CENT = Decimal("0.01")


def cli(*args):
    from flows.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def annual(src: Path, work: Path, out: Path) -> None:
    r = cli("annual", "--input", src, "--tax-year", "2023", "--as-of", "2024-07-01", "--out", out, "--workdir", work,
            "--cap", "3000")
    assert r.exit_code == 0, r.output


def dec(text: str | None) -> Decimal | None:
    """A CSV cell as written: exactly two decimals, read as a decimal."""
    if text is None or text == "":
        return None
    d = Decimal(text)
    assert d == d.quantize(CENT), text
    return d


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def halve_2023(src: Path, employer: str) -> None:
    """A corrected payroll file: the employer's 2023 hours, wages and taxes halved, and the
    totals its roster declares for 2023 with them."""
    apps = pl.read_csv(src / "applications.csv", infer_schema=False).filter(pl.col("employer_id") == employer)
    roster = pl.read_csv(src / "roster.csv", infer_schema=False)
    mine = pl.col("application_id").is_in(apps.get_column("application_id").implode())
    roster.with_columns(
        pl.when(mine & pl.col(c).is_not_null()).then((pl.col(c).cast(pl.Float64) * 0.5).round(2).cast(pl.String))
        .otherwise(pl.col(c)).alias(c)
        for c in ("declared_hours_current", "declared_wages_current", "declared_taxes_current")).write_csv(src / "roster.csv")
    for f in sorted((src / "payroll").glob("*.csv")):
        rows = pl.read_csv(f, infer_schema=False)
        if employer not in set(rows.get_column("employer_id")):
            continue
        hit = (pl.col("employer_id") == employer) & pl.col("period_start").str.starts_with("2023")
        rows.with_columns(
            pl.when(hit).then((pl.col(c).cast(pl.Float64) * 0.5).round(2).cast(pl.String)).otherwise(pl.col(c)).alias(c)
            for c in ("hours", "gross_wages", "employer_taxes")).write_csv(f)
        return
    raise AssertionError(employer)


@pytest.fixture(scope="module")
def runs(prefect_harness, tmp_path_factory) -> dict[str, Path]:
    """The first run (a PARTIAL under a $3,000 cap) and the rerun after a reopen (an amendment)."""
    tmp = tmp_path_factory.mktemp("money")
    src, work = tmp / "sub", tmp / "work"
    generate_submission(src, employers=40, seed=5, tax_year=2023)
    annual(src, work, tmp / "o1")
    awards = pl.read_csv(tmp / "o1" / "awards.csv", infer_schema=False)
    assert "PARTIAL" in set(awards.get_column("status")), awards
    approved = awards.filter(pl.col("status") == "APPROVED").sort("application_id").row(0, named=True)
    halve_2023(src, approved["employer_id"])
    r = cli("reopen", approved["application_id"], "--reason", "hours overstated", "--workdir", work)
    assert r.exit_code == 0, r.output
    annual(src, work, tmp / "o2")
    return {"first": tmp / "o1", "amended": tmp / "o2", "app": approved["application_id"]}


def awards_of(out: Path) -> dict[str, dict]:
    rows = pl.read_csv(out / "awards.csv", infer_schema=False).iter_rows(named=True)
    return {r["application_id"]: {**r, "requested": dec(r["requested"]), "awarded": dec(r["awarded"])} for r in rows}


def credits_of(out: Path) -> dict[tuple[str, str], dict]:
    rows = pl.read_csv(out / "employee_credits.csv", infer_schema=False).iter_rows(named=True)
    return {(r["application_id"], r["employee_id"]): {k: dec(r[k]) for k in ("part1_credit", "part2_credit", "credit")}
            for r in rows}


def award_file_rows(out: Path) -> list[dict]:
    rows = pl.read_csv(out / "taxation" / "award_file.csv", infer_schema=False).iter_rows(named=True)
    return [{**r, "certified_credit": dec(r["certified_credit"]), "change": dec(r["change"])} for r in rows]


def parquet_three_ways(path: Path, columns: list[str]) -> dict[str, list[dict]]:
    """The file read by pyarrow, Polars and DuckDB, each row's money as Python decimals."""
    con = duckdb.connect()
    try:
        by_duckdb = con.execute(f"SELECT {', '.join(columns)} FROM read_parquet(?)", [str(path)]).fetchall()
    finally:
        con.close()
    return {"pyarrow": pq.read_table(path, columns=columns).to_pylist(),
            "polars": pl.read_parquet(path, columns=columns).to_dicts(),
            "duckdb": [dict(zip(columns, row, strict=True)) for row in by_duckdb]}


@pytest.mark.parametrize("which", ["first", "amended"])
def test_award_file_parquet_is_the_csv_to_the_cent(runs, which):
    out = runs[which]
    csv_rows = award_file_rows(out)
    assert csv_rows and any(r["certified_credit"] % 1 for r in csv_rows)  # cents to lose
    if which == "amended":
        amend = [r for r in csv_rows if r["record_type"] == "AMENDMENT"]
        assert [r["application_id"] for r in amend] == [runs["app"]] and amend[0]["change"] < 0
    path = out / "taxation" / "award_file.parquet"
    cols = ["certificate_no", "application_id", "certified_credit", "change"]
    schema = pq.read_schema(path)
    assert str(schema.field("certified_credit").type) == "decimal128(18, 2)" == str(schema.field("change").type)
    for reader, rows in parquet_three_ways(path, cols).items():
        assert len(rows) == len(csv_rows), reader
        for got, want in zip(rows, csv_rows, strict=True):
            assert got["certificate_no"] == want["certificate_no"], reader
            for c in ("certified_credit", "change"):
                assert isinstance(got[c], Decimal) and got[c] == want[c], (reader, c, got, want)


@pytest.mark.parametrize("which", ["first", "amended"])
def test_award_file_is_awards_csv_to_the_cent(runs, which):
    """Each application's last award-file row certifies what awards.csv awards it, its changes
    add up to it, and only applications awarded money have rows."""
    out = runs[which]
    awards = awards_of(out)
    rows = award_file_rows(out)
    by_app: dict[str, list[dict]] = {}
    for r in rows:
        by_app.setdefault(r["application_id"], []).append(r)
    # every application awarded money has rows; one amended down to nothing keeps its rows (the last certifies $0.00)
    assert {a for a, r in awards.items() if r["awarded"] > 0} <= set(by_app)
    assert {awards[a]["status"] for a in by_app} >= {"APPROVED", "PARTIAL"}
    for app, rs in by_app.items():
        assert rs[-1]["certified_credit"] == awards[app]["awarded"], app
        assert sum(r["change"] for r in rs) == awards[app]["awarded"], app
    partial = [a for a, r in awards.items() if r["status"] == "PARTIAL"]
    assert len(partial) == 1 and Decimal(0) < awards[partial[0]]["awarded"] < awards[partial[0]]["requested"]


@pytest.mark.parametrize("which", ["first", "amended"])
def test_manifests_total_and_hash_what_is_on_disk(runs, which):
    out = runs[which]
    awards = awards_of(out)
    rows = award_file_rows(out)
    am = json.loads((out / "taxation" / "award_manifest.json").read_text())
    for name, f in am["files"].items():
        p = out / "taxation" / name
        assert f == {"sha256": sha256(p), "bytes": p.stat().st_size}, name
    awarded = sum(r["awarded"] for r in awards.values())
    assert Decimal(am["total_certified_credit"]) == awarded
    assert am["total_certified_cents"] == int(awarded * 100)
    assert am["row_count"] == len(rows)
    assert am["amendment_rows"] == sum(r["record_type"] == "AMENDMENT" for r in rows)
    by_type: dict[str, Decimal] = {}
    for r in awards.values():
        if r["awarded"] > 0:
            by_type[r["tax_type"]] = by_type.get(r["tax_type"], Decimal(0)) + r["awarded"]
    assert {k: v["total_certified_cents"] for k, v in am["by_tax_type"].items()} == {
        k: int(v * 100) for k, v in by_type.items()}
    m = json.loads((out / "manifest.json").read_text())
    totals = m["totals"]
    assert Decimal(repr(totals["awarded"])) == awarded
    assert Decimal(repr(totals["requested"])) == sum(r["requested"] for r in awards.values())
    for name, f in m["documents"].items():
        assert f == {"sha256": sha256(out / name), "bytes": (out / name).stat().st_size}, name


@pytest.mark.parametrize("which", ["first", "amended"])
def test_workbook_is_the_csv_files_to_the_cent(runs, which):
    out = runs[which]
    awards, credits = awards_of(out), credits_of(out)
    book = fastexcel.read_excel(out / "awards.xlsx")
    sheet = book.load_sheet_by_name("awards").to_polars()
    assert sheet.height == len(awards)
    for r in sheet.iter_rows(named=True):
        for c in ("requested", "awarded"):
            assert Decimal(repr(r[c])) == awards[r["application_id"]][c], (r, c)
    sheet = book.load_sheet_by_name("employee credits").to_polars()
    assert sheet.height == len(credits)
    for r in sheet.iter_rows(named=True):
        for c in ("part1_credit", "part2_credit", "credit"):
            assert Decimal(repr(r[c])) == credits[(r["application_id"], r["employee_id"])][c], (r, c)


@pytest.mark.parametrize("which", ["first", "amended"])
def test_employee_years_are_employee_credits_to_the_cent(runs, which):
    """employee_years.parquet's cents are employee_credits.csv's dollars, row for row, read three
    ways; each application's eligible credits add up to what awards.csv requests for it."""
    out = runs[which]
    credits = credits_of(out)
    cols = ["application_id", "employee_id", "part1_cents", "part2_cents", "credit_cents"]
    for reader, rows in parquet_three_ways(out / "employee_years.parquet", cols).items():
        assert len(rows) == len(credits), reader
        for r in rows:
            want = credits[(r["application_id"], r["employee_id"])]
            for c in ("part1", "part2"):
                assert Decimal(r[f"{c}_cents"]) / 100 == want[f"{c}_credit"], (reader, r)
            assert Decimal(r["credit_cents"]) / 100 == want["credit"], (reader, r)
    awards = awards_of(out)
    eligible = pl.read_csv(out / "employee_credits.csv", infer_schema=False).filter(pl.col("status") == "ELIGIBLE")
    per_app: dict[str, Decimal] = {}
    for r in eligible.iter_rows(named=True):
        per_app[r["application_id"]] = per_app.get(r["application_id"], Decimal(0)) + dec(r["credit"])
    for app, r in awards.items():
        if r["status"] in ("APPROVED", "PARTIAL"):
            assert r["requested"] == per_app[app], app


def test_the_first_run_and_the_amended_run_differ_by_the_amendment(runs):
    """The rerun changes only the reopened application's award (and what its freed cap gives)."""
    first, amended = awards_of(runs["first"]), awards_of(runs["amended"])
    app = runs["app"]
    assert amended[app]["awarded"] < first[app]["awarded"]
    rows = [r for r in award_file_rows(runs["amended"]) if r["application_id"] == app]
    assert rows[-1]["change"] == amended[app]["awarded"] - first[app]["awarded"]
