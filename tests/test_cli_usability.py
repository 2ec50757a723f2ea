"""A CLI that teaches itself, and quarterly, variance and what-if in every sequence (through the CLI)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.synthetic.generate import generate_submission


def cli(*args, width: int | None = None):
    from flows.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(width)} if width else None)
    r.flat = " ".join(r.output.split())
    return r


@pytest.fixture(scope="module")
def sub(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "sub"
    generate_submission(root, employers=12, seed=3, tax_year=2023)
    return root


def test_every_help_has_an_example_and_no_python_type_names():
    commands = ["annual", "generate", "ingest", "quarterly", "whatif", "backfill", "variance", "explain", "runs",
                "reopen", "settings"]
    for c in commands:
        r = cli(c, "--help")
        assert r.exit_code == 0, c
        assert not re.search(r"<(str|int|float|bool|path)>|\b(INTEGER|FLOAT|TEXT|PATH)\b", r.output), (c, r.output)
    for c in ("annual", "explain", "reopen", "settings"):
        assert "Example" in cli(c, "--help").output, c
    assert "YYYY-MM-DD" in cli("annual", "--help").output
    r = cli("--version")
    assert r.exit_code == 0 and re.fullmatch(r"impcredit \d+\.\d+\.\d+(\+\w+)?", r.output.strip())


def test_settings_lists_every_setting_and_parameter_with_its_citation():
    from transforms.settings import setting_fields

    r = cli("settings", width=250)
    assert r.exit_code == 0
    dense = "".join(r.output.split())
    for name, _, _choices, default in setting_fields():
        assert name in dense and default in dense
    assert "straight|premium" in dense
    dense = "".join(r.output.split())  # columns fold long names at 80 columns
    assert "minimum_wage.general" in dense and "counterfactual.old_law_minimum_wage" in dense
    assert "N.J.S.A. 34:11-56a4" in r.flat


def test_a_bad_setting_value_is_one_line(sub, tmp_path):
    r = cli("whatif", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--set", "overtime=premum",
            "--workdir", tmp_path / "w")
    assert r.exit_code == 2
    assert r.output.strip() == "error: --set overtime must be straight or premium, not 'premum'"


def test_explain_defaults_its_folders_and_says_what_is_unknown(prefect_harness, sub, tmp_path, monkeypatch):
    from flows.cli import common

    monkeypatch.setattr(common, "DATA", tmp_path / "data")
    r = cli("annual", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01",
            "--workdir", tmp_path / "data" / "work")
    assert r.exit_code == 0, r.output
    out = tmp_path / "data" / "out" / "annual-2023"
    assert (out / "awards.csv").is_file()  # annual's default --out: a folder per tax year
    ey = pl.read_parquet(out / "employee_years.parquet").filter(pl.col("status") == "ELIGIBLE").row(0, named=True)
    r = cli("explain", "--tax-year", "2023", "--employer", ey["employer_id"], "--employee", ey["employee_id"])
    assert r.exit_code == 0, r.output
    first = r.output.split("\n\n")[0].replace("\n", " ")
    assert first.startswith(f"Employee {ey['employee_id']} of employer {ey['employer_id']}")
    assert "hours in 2023" in first and "Part 1" in first and f"${ey['credit_cents'] / 100:.2f}" in first
    r = cli("explain", "--tax-year", "2023", "--employer", "999999999", "--employee", "E1")
    assert r.exit_code == 2 and "the employer 999999999 is unknown" in r.flat
    r = cli("explain", "--tax-year", "2023", "--employer", ey["employer_id"], "--employee", "NOBODY")
    assert r.exit_code == 2 and "the employee NOBODY is unknown for employer" in r.flat

    # runs: 80 columns, short ids; --long has the full run ids (the title line holds the ledger's path, whole)
    r = cli("runs", "--workdir", tmp_path / "data" / "work")
    assert r.exit_code == 0 and max(len(line) for line in r.output.splitlines()[1:]) <= 80
    assert f"runs in {tmp_path / 'data' / 'work' / 'impcredit.duckdb'}" in r.output
    assert "annual" in r.output and "annual-2023-" not in r.output
    from transforms.runs.record import short_run_id

    assert short_run_id("annual-2023-20261203T140335774626Z-9f066d52") == "14033577"  # the id's time, one per run
    assert short_run_id("reopen-2023-20261203T140341160022Z-26a4eef1") == "14034116"
    assert "annual-2023-" in cli("runs", "--workdir", tmp_path / "data" / "work", "--long").output


def test_quarterly_and_variance_in_every_sequence(prefect_harness, sub, tmp_path):
    w = tmp_path / "work"
    # variance before any annual run: said, no crash
    r = cli("variance", "--tax-year", "2023", "--workdir", w, "--out", tmp_path / "v0")
    assert r.exit_code == 2 and "no annual run of tax year 2023" in r.output
    # a quarterly run before any request of the tax year is received: a completed run that says so
    r = cli("quarterly", "--input", sub, "--tax-year", "2023", "--quarter", "1", "--as-of", "2023-02-15",
            "--workdir", w, "--out", tmp_path / "q0")
    assert r.exit_code == 0 and "completed" in r.flat
    assert "none: no estimate request or application" in r.flat
    said = r.output.replace("│", " ")  # the panel's cells wrap
    assert "the submission holds applications of tax year 2023" in " ".join(said.split())  # what it does hold
    assert (tmp_path / "q0" / "estimates.csv").read_text().count("\n") == 1  # the header only
    # Q2 with the tax year's applications received: cap pressure against the year they are approved in
    r = cli("quarterly", "--input", sub, "--tax-year", "2023", "--quarter", "2", "--as-of", "2024-07-01",
            "--workdir", w, "--out", tmp_path / "q2")
    assert r.exit_code == 0, r.output
    assert "in 2024)" in r.flat
    r = cli("annual", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", w, "--out", tmp_path / "a")
    assert r.exit_code == 0
    # variance with Q1 (no request then) and Q2 projected, no Q3, Q4: a quarter with no projection of
    # an application leaves it empty, never a 0.00 variance
    r = cli("variance", "--tax-year", "2023", "--workdir", w, "--out", tmp_path / "v")
    assert r.exit_code == 0, r.output
    var = pl.read_csv(tmp_path / "v" / "variance.csv", infer_schema=False)
    assert [c for c in var.columns if c.startswith("projected_q")] == ["projected_q1", "projected_q2"]
    assert var.get_column("projected_q1").null_count() == var.get_column("variance_q1").null_count() == var.height
    missing = var.filter(pl.col("projected_q2").is_null())
    assert missing.get_column("variance_q2").null_count() == missing.height
    # the variance said in words: above or below the projection, no minus sign on a dollar amount
    both = var.filter(pl.col("variance_q2").is_not_null())
    total = both.get_column("variance_q2").cast(pl.Float64).sum()
    words = "above" if total > 0 else "below"
    assert f"Q2 variance (final - projected, {both.height} employers with both) ${abs(total):,.2f} {words} the " \
           "projection" in r.flat
    assert "$-" not in r.output


def test_a_variance_reads_as_words():
    from flows.cli.variance import signed

    assert signed(-499.82) == "$499.82 below the projection"
    assert signed(1234.5) == "$1,234.50 above the projection"
    assert signed(0.001) == "$0.00 (final equals the projection)"


def test_whatif_says_its_settings_and_totals_and_diff_has_employee_rows(prefect_harness, sub, tmp_path):
    w = tmp_path / "work"
    assert cli("annual", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", w,
               "--out", tmp_path / "a").exit_code == 0
    r = cli("whatif", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", w,
            "--set", "overtime=premium", "--set", "counterfactual_path=formula", "--out", tmp_path / "wi")
    assert r.exit_code == 0, r.output
    assert "settings: overtime=premium, counterfactual_path=formula" in r.flat
    assert "before (ledger): requested $" in r.flat and "what-if: requested $" in r.flat
    # its panel says what would be, and that the ledger was only read
    assert "Would be awarded (nothing recorded)" in r.flat and "by this run" not in r.flat
    assert "Ledger (read, not written)" in r.flat and "Cap / cap left if so decided" in r.flat
    diff = pl.read_csv(tmp_path / "wi" / "diff.csv", infer_schema=False)
    assert set(diff.get_column("level")) <= {"application", "employee"}
    emp = diff.filter(pl.col("level") == "employee")
    assert emp.height > 0 and set(emp.get_column("why")) == {"credit"}
    apps = diff.filter(pl.col("level") == "application")
    assert all(set(why.split(";")) <= {"credit", "cap", "policy", "queue"} for why in apps.get_column("why"))


def test_help_imports_none_of_the_stack():
    """``impcredit --help`` and a command's help answer at once: no Polars, DuckDB, Prefect or GX."""
    import subprocess
    import sys

    code = ("import sys\nfrom typer.testing import CliRunner\nfrom flows.cli import app\n"
            "for args in (['--help'], ['annual', '--help'], ['runs', '--help']):\n"
            "    assert CliRunner().invoke(app, args).exit_code == 0\n"
            "heavy = [m for m in ('polars', 'duckdb', 'prefect', 'great_expectations', 'pyarrow') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent.parent, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_ingest_takes_relative_folders_and_runs_takes_the_ids_it_prints(prefect_harness, sub, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("ingest", "--input", sub, "--workdir", "work", "--out", "out")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "data_docs" / "index.html").is_file() and (tmp_path / "out" / "rejects.csv").is_file()
    assert "Data Docs (Great Expectations):" in r.flat
    for name in ("a1", "a2"):
        assert cli("annual", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", "work",
                   "--out", name).exit_code == 0
    r = cli("runs", "--workdir", "work")
    assert r.exit_code == 0 and max(len(x) for x in r.output.splitlines()) <= 80
    short = [line.split()[2] for line in r.output.splitlines() if " annual " in line]
    assert len(short) == 2 and short[0] != short[1]
    import duckdb

    con = duckdb.connect(str(tmp_path / "work" / "impcredit.duckdb"), read_only=True)
    full = [x[0] for x in con.sql("SELECT run_id FROM runs ORDER BY committed_at").fetchall()]
    con.close()
    for given in (short[1], full[1], full[1][:-4]):
        r = cli("runs", "--workdir", "work", "--run", given, width=200)
        assert r.exit_code == 0, r.output
        assert f"run {full[1]}" in r.output and "applications.csv" in r.output and "lake sha256" in r.output
        assert "settings            the defaults" in r.output and "parameters version" in r.output
    r = cli("runs", "--workdir", "work", "--run", "annual-2023")
    assert r.exit_code == 2 and "names 2 runs" in r.flat
    r = cli("runs", "--workdir", "work", "--run", "nope")
    assert r.exit_code == 2 and "no run 'nope'" in r.flat
