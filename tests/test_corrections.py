"""The analyst's loop (spec section 7, corrected submissions, I-12): run, correct a file, rerun and
see what changed, reopen, rerun: the award amended in the ledger and the award file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.synthetic.generate import generate_submission


def cli(*args):
    from flows.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def annual(src: Path, work: Path, out: Path, as_of: str = "2024-07-01"):
    r = cli("annual", "--input", src, "--tax-year", "2023", "--as-of", as_of, "--out", out, "--workdir", work)
    assert r.exit_code == 0, r.output
    r.flat = " ".join(r.output.split())  # the terminal wraps at 80 columns
    return r


def scale_2023(src: Path, employer: str, factor: float) -> Path:
    """Scale the 2023 hours and wages of one employer's payroll rows (a corrected file), and the
    2023 totals its roster declares with them (its payroll system's year-to-date figures)."""
    apps = pl.read_csv(src / "applications.csv", infer_schema=False).filter(pl.col("employer_id") == employer)
    roster = pl.read_csv(src / "roster.csv", infer_schema=False)
    mine = pl.col("application_id").is_in(apps.get_column("application_id").implode())
    roster.with_columns(
        pl.when(mine & pl.col(c).is_not_null()).then((pl.col(c).cast(pl.Float64) * factor).round(2).cast(pl.String))
        .otherwise(pl.col(c)).alias(c)
        for c in ("declared_hours_current", "declared_wages_current", "declared_taxes_current")).write_csv(src / "roster.csv")
    for f in sorted((src / "payroll").glob("*.csv")):
        rows = pl.read_csv(f, infer_schema=False)
        if employer not in set(rows.get_column("employer_id")):
            continue
        hit = (pl.col("employer_id") == employer) & pl.col("period_start").str.starts_with("2023")
        rows = rows.with_columns(
            pl.when(hit).then((pl.col(c).cast(pl.Float64) * factor).round(2).cast(pl.String)).otherwise(pl.col(c)).alias(c)
            for c in ("hours", "gross_wages", "employer_taxes"))
        rows.write_csv(f)
        return f
    raise AssertionError(employer)


def ledger_rows(work: Path) -> pl.DataFrame:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return con.sql("SELECT application_id, approval_year, seq, kind, decided_in, requested_cents, awarded_cents, status "
                       "FROM decisions ORDER BY application_id, approval_year, seq").pl()
    finally:
        con.close()


@pytest.fixture(scope="module")
def sub(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("loop") / "sub"
    generate_submission(root, employers=40, seed=5, tax_year=2023)
    return root


def test_run_correct_rerun_reopen_rerun(prefect_harness, sub, tmp_path):
    src, work = tmp_path / "sub", tmp_path / "work"
    shutil.copytree(sub, src)
    annual(src, work, tmp_path / "o1")
    awards1 = pl.read_csv(tmp_path / "o1" / "awards.csv", infer_schema=False)
    approved = awards1.filter(pl.col("status") == "APPROVED").sort("application_id")
    app, employer = approved.row(0)[0], approved.row(0)[1]

    # a corrected payroll file: more hours in 2023 for that employer
    changed_file = scale_2023(src, employer, 1.25)
    # and a member joins a group after the years measured: the group's change is noticed
    with (src / "control_groups.csv").open("a") as fh:
        fh.write("G001,999999901,2026-01-01,\n")
    r = annual(src, work, tmp_path / "o2")
    assert "3 changed" in r.flat and "request now differs" in r.flat and app in r.flat
    assert "Requested (as decided)" in r.flat and "computed now, differs" in r.flat  # the panel says so too
    changes = pl.read_csv(tmp_path / "o2" / "changes.csv", infer_schema=False)
    assert changes.filter(pl.col("change") == "file changed").get_column("file").to_list() == sorted([
        "control_groups.csv", changed_file.relative_to(src).as_posix(), "roster.csv"])
    group = changes.filter(pl.col("change") == "control group G001 changed")
    assert group.rows() == [("control group G001 changed", "control_groups.csv", None, None,
                             "240487869 2015-01-01..; 307310631 2015-01-01..",
                             "240487869 2015-01-01..; 307310631 2015-01-01..; 999999901 2026-01-01..")]
    assert "control groups whose members changed: G001" in r.flat
    assert changes.filter(pl.col("change") == "employee-year changed").height >= 1
    differs = changes.filter(pl.col("change").str.starts_with("request differs"))
    assert app in differs.get_column("application_id").to_list()
    awards2 = pl.read_csv(tmp_path / "o2" / "awards.csv", infer_schema=False)
    assert awards2.equals(awards1)  # decisions kept: a corrected submission decides nothing by itself

    # reopen: recorded, shown in runs; the next run decides it again in its approval year
    r = cli("reopen", app, "--reason", "corrected payroll", "--workdir", work)
    assert r.exit_code == 0 and f"reopened {app}" in r.output, r.output
    r = cli("reopen", app, "--reason", "again", "--workdir", work)
    assert r.exit_code == 2 and "already reopened" in r.output
    r = cli("runs", "--workdir", work, "--long")
    assert "reopen" in r.output
    before = ledger_rows(work).filter(pl.col("application_id") == app)
    r = annual(src, work, tmp_path / "o3")
    rows = ledger_rows(work).filter(pl.col("application_id") == app)
    amend = rows.filter(pl.col("kind") == "amendment")
    assert amend.height == 1 and amend.row(0, named=True)["approval_year"] == 2024
    new_request = amend.get_column("requested_cents").item()
    old_award = before.get_column("awarded_cents").sum()
    assert new_request > old_award and amend.get_column("awarded_cents").item() == new_request - old_award
    awards3 = pl.read_csv(tmp_path / "o3" / "awards.csv", infer_schema=False).filter(pl.col("application_id") == app)
    assert round(float(awards3.get_column("awarded").item()) * 100) == new_request
    af = pl.read_csv(tmp_path / "o3" / "taxation" / "award_file.csv", infer_schema=False).filter(pl.col("application_id") == app)
    assert af.get_column("record_type").to_list() == ["AWARD", "AMENDMENT"]
    first, amendment = af.row(0, named=True), af.row(1, named=True)
    assert amendment["amends_certificate_no"] == first["certificate_no"]
    assert amendment["certificate_no"] == first["certificate_no"] + "-A1"
    assert round(float(amendment["change"]) * 100) == new_request - old_award
    assert round(float(amendment["certified_credit"]) * 100) == new_request
    assert (tmp_path / "o3" / "certificates" / f"{amendment['certificate_no']}.html").is_file()
    # the employer's documents say the decision was amended: the certificate it replaces, the
    # amounts before and after, and no program-rule reference (issue 23)
    from pypdf import PdfReader

    def money_(c: int) -> str:
        return f"${c // 100:,}.{c % 100:02d}"

    notice = " ".join("".join(pg.extract_text() for pg in PdfReader(tmp_path / "o3" / "notices" / f"{app}.pdf").pages).split())
    cert = " ".join("".join(pg.extract_text() for pg in PdfReader(
        tmp_path / "o3" / "certificates" / f"{amendment['certificate_no']}.pdf").pages).split())
    for text_ in (notice, cert):
        assert first["certificate_no"] in text_ and amendment["certificate_no"] in text_
        assert money_(old_award) in text_ and money_(new_request) in text_
        assert "spec section" not in text_ and "I-12" not in text_ and "annual-2023" not in text_
    assert "amends the earlier decision" in notice and "replaces certificate" in cert
    assert "reopened applications decided again: " + app in r.flat
    # the cap of 2024 holds the increase: the ledger's 2024 sum is the awards' sum
    total_2024 = ledger_rows(work).filter(pl.col("approval_year") == 2024).get_column("awarded_cents").sum()
    assert total_2024 == sum(round(float(a) * 100) for a in pl.read_csv(tmp_path / "o3" / "awards.csv",
                                                                      infer_schema=False).get_column("awarded"))

    # a rerun with nothing changed: the same files, no new amendment
    annual(src, work, tmp_path / "o4")
    for name in ("awards.csv", "employee_credits.csv", "taxation/award_file.csv"):
        assert (tmp_path / "o4" / name).read_bytes() == (tmp_path / "o3" / name).read_bytes(), name
    assert ledger_rows(work).filter(pl.col("application_id") == app).height == rows.height

    # a decrease decided in a later approval year returns the difference to 2024's cap
    scale_2023(src, employer, 0.5)
    annual(src, work, tmp_path / "o5", as_of="2025-07-01")
    assert cli("reopen", app, "--reason", "hours overstated", "--workdir", work).exit_code == 0
    annual(src, work, tmp_path / "o6", as_of="2025-07-01")
    rows6 = ledger_rows(work).filter(pl.col("application_id") == app)
    dec = rows6.filter((pl.col("kind") == "amendment") & (pl.col("decided_in") == 2025))
    now = rows6.get_column("awarded_cents").sum()
    assert dec.get_column("awarded_cents").sum() < 0 and set(dec.get_column("approval_year")) == {2024}
    af6 = pl.read_csv(tmp_path / "o6" / "taxation" / "award_file.csv", infer_schema=False).filter(
        pl.col("application_id") == app)
    assert af6.get_column("record_type").to_list() == ["AWARD", "AMENDMENT", "AMENDMENT"]
    assert round(float(af6.get_column("certified_credit")[-1]) * 100) == now
    assert float(af6.get_column("change")[-1]) < 0 and af6.get_column("approval_year")[-1] == "2025"
    m = json.loads((tmp_path / "o6" / "taxation" / "award_manifest.json").read_text())
    assert m["amendment_rows"] == 2
