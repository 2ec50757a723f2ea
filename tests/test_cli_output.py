"""Output for people and for pipes (issue 36, part 2): every list command's ``--format csv`` and
``--format json`` parse (the csv and json modules) with ids and paths whole; ``table`` piped at 80
columns (COLUMNS=80, output captured: not a terminal) never wraps or cuts an id, a path, a date or
a year; the summary panel of a run keeps its run id and paths on one line each, piped and on a
terminal of 80 columns. Real commands through typer's CliRunner, on a small generated sample."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tempfile
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.synthetic.generate import generate_submission

PIPE = {"COLUMNS": "80"}  # CliRunner captures stdout: not a terminal
TERMINAL = {"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}  # rich takes stdout for a terminal
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def cli(*args, env: dict | None = None):
    from flows.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args], env=PIPE if env is None else env)
    r.text = ANSI.sub("", r.stdout)
    return r


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def run_ids(work: Path) -> list[str]:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return [r[0] for r in con.sql("SELECT run_id FROM runs ORDER BY committed_at, run_id").fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def made(prefect_harness, tmp_path_factory) -> dict:
    """A workdir with an annual run (its --out a long path: the summary cannot hold it in a panel
    of 80 columns) and an audit finding, both through the commands, piped at 80 columns."""
    root = tmp_path_factory.mktemp("cliout")
    sub = root / "sub"
    generate_submission(sub, employers=12, seed=3, tax_year=2023)
    work = root / "work"
    out = root / ("annual-2023-outputs-of-the-audit-copy-kept-by-the-division-" + "x" * 30)
    annual = cli("annual", "--input", sub, "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", work, "--out", out)
    assert annual.exit_code == 0, annual.output
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema=False).filter(pl.col("status") == "ELIGIBLE")
    who = credits.row(0, named=True)
    found = cli("finding", "record", who["application_id"], "--kind", "misclassified", "--employee", who["employee_id"],
                "--knowing", "no", "--reason", "no determination of impairment on file for this employee", "--workdir",
                work, "--out", root / "finding")
    assert found.exit_code == 0, found.output
    return {"root": root, "sub": sub, "work": work, "out": out, "annual": annual, "found": found, "who": who,
            "runs": run_ids(work)}


def test_the_run_summary_piped_at_80_columns_keeps_the_run_id_and_paths_whole(made):
    text = made["annual"].text
    annual_id = made["runs"][0]
    assert annual_id.startswith("annual-2023-")
    for whole in (annual_id, str(made["out"]), str(made["work"] / "impcredit.duckdb"), "employee_credits.csv"):
        assert whole in text, (whole, text)
    assert len(str(made["out"])) > 80 - 6 - len("Outputs")  # too long for a panel: plain lines, one a row
    assert re.search(rf"^\s*Run\s+{re.escape(annual_id)}$", text, re.M), text
    # the finding's sentence names its run and its folder whole
    assert made["runs"][1] in made["found"].text and str(made["root"] / "finding") in made["found"].text


def test_the_run_summary_on_a_terminal_of_80_columns(made):
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:  # short paths: the panel holds them
        work, out = Path(tmp) / "work", Path(tmp) / "o"
        shutil.copytree(made["work"], work)
        r = cli("annual", "--input", made["sub"], "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", work,
                "--out", out, env=TERMINAL)
        assert r.exit_code == 0, r.output
        run_id = run_ids(work)[-1]
    boxed = [re.sub(r"^[^╭│╰]*", "", line) for line in r.text.splitlines() if re.search("[╭│╰]", line)]
    assert boxed and max(len(line) for line in boxed) <= 80, r.text
    for whole in (run_id, str(out), str(work / "impcredit.duckdb")):  # each whole on its line of the panel
        assert any(whole in line for line in boxed), (whole, r.text)


def test_finding_list(made):
    who = made["who"]
    got = rows_of(cli("finding", "list", "--workdir", made["work"], "--format", "csv").stdout)
    assert [(r["finding_id"], r["application_id"], r["employees"], r["knowing"]) for r in got] == [
        ("F-0001", who["application_id"], who["employee_id"], "no")]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", got[0]["finding_date"]) and re.fullmatch(r"\d+\.\d\d", got[0]["taken_back"])
    assert got[0]["record_run"] == made["runs"][1]
    doc = json.loads(cli("finding", "list", "--workdir", made["work"], "--format", "json").stdout)
    assert doc[0]["finding_id"] == "F-0001" and doc[0]["employees"] == [who["employee_id"]] and doc[0]["knowing"] is False
    assert list(doc[0]) == list(got[0])  # the same keys, in the same order
    table = cli("finding", "list", "--workdir", made["work"]).text
    for whole in ("F-0001", got[0]["finding_date"], who["application_id"], who["employee_id"],
                  "no determination of impairment on file for this employee"):
        assert whole in table, (whole, table)


def test_runs_in_every_format(made):
    ids = made["runs"]
    got = rows_of(cli("runs", "--workdir", made["work"], "--format", "csv").stdout)
    assert [r["run_id"] for r in got] == ids
    assert got[0]["tax_year"] == "2023" and got[0]["as_of"] == "2024-07-01" and got[0]["committed_at"].endswith("Z")
    assert got[1]["kind"] == "finding" and got[1]["finding_id"] == "F-0001" and got[1]["inputs_changed"] == ""
    assert [r["run_id"] for r in json.loads(cli("runs", "--workdir", made["work"], "--format", "json").stdout)] == ids
    # the short table piped: as wide as it needs (84 here), every id, year and date whole (no 20…)
    short = cli("runs", "--workdir", made["work"]).text
    lines = short.splitlines()[2:]
    assert len(lines) == 2 and "…" not in short
    assert " 2023 2024-07-01 " in lines[0] and " finding F-0001 2023 " in lines[1], short
    # on a terminal of 80 columns it fits them: the kind wraps (finding / F-0001), nothing is cut
    term = cli("runs", "--workdir", made["work"], env=TERMINAL).text
    assert max(len(line) for line in term.splitlines()) <= 80 and "…" not in term, term
    assert " 2023 2024-07-01 " in term and re.search(r"^\s+F-0001\s*$", term, re.M), term
    long = cli("runs", "--workdir", made["work"], "--long").text
    assert all(i in long for i in ids) and "…" not in long


def test_one_run_in_every_format(made):
    annual_id = made["runs"][0]
    one = json.loads(cli("runs", "--workdir", made["work"], "--run", annual_id[:-4], "--format", "json").stdout)
    assert one["run_id"] == annual_id and re.fullmatch(r"[0-9a-f]{64}", one["lake_sha256"])
    assert {f["path"] for f in one["input_files"]} >= {"applications.csv", "roster.csv"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) for f in one["input_files"])
    (row,) = rows_of(cli("runs", "--workdir", made["work"], "--run", annual_id, "--format", "csv").stdout)
    assert row["run_id"] == annual_id and row["lake_sha256"] == one["lake_sha256"]
    assert json.loads(row["input_files"]) == one["input_files"]  # nested: its JSON text
    table = cli("runs", "--workdir", made["work"], "--run", annual_id).text
    assert f"run {annual_id}" in table and one["lake_sha256"] in table and "payroll/payroll_001.csv" in table


def test_layouts_and_layouts_check(made):
    names = [r["name"] for r in rows_of(cli("layouts", "--format", "csv").stdout)]
    assert "canonical" in names and len(names) == len(set(names)) > 5
    doc = json.loads(cli("layouts", "--format", "json").stdout)
    assert [d["name"] for d in doc] == names and all(Path(d["file"]).is_file() for d in doc)
    table = cli("layouts").text
    assert all(re.search(rf"^{n}\s", table, re.M) for n in names)
    file = made["sub"] / "payroll" / "payroll_001.csv"
    r = cli("layouts", "check", file, "--format", "csv")
    assert r.exit_code == 0, r.output
    (row,) = rows_of(r.stdout)
    assert row["file"] == "payroll/payroll_001.csv" and row["read_whole"] == "yes" and row["layouts"] == "canonical"
    (one,) = json.loads(cli("layouts", "check", file, "--format", "json").stdout)
    assert one["tables"][0]["layout"] == "canonical" and one["rows"] == int(row["rows"])
    table = cli("layouts", "check", file).text
    assert "payroll/payroll_001.csv" in table and "employer_taxes  employer_taxes" in table


def test_settings_in_every_format():
    from transforms.settings import setting_fields

    got = rows_of(cli("settings", "--format", "csv").stdout)
    assert {r["name"] for r in got if r["section"] == "setting"} == {f[0] for f in setting_fields()}
    params = [r for r in got if r["section"] == "parameter"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", r["effective"]) and r["citation"] for r in params)
    doc = json.loads(cli("settings", "--format", "json").stdout)
    assert len(doc) == len(got) and all(list(d) == list(got[0]) for d in doc)
    table = cli("settings").text
    for name in {r["name"] for r in params}:  # names whole at 80 columns, piped
        assert re.search(rf"^{re.escape(name)}\s", table, re.M), name
    assert "Run settings (a command's option, then impcredit.toml, then IMPCREDIT_<NAME>)" in table


def test_lake_verify_and_api_status(made):
    lake = str(made["work"] / "lake")
    r = cli("lake", "verify", "--workdir", made["work"], "--format", "csv")
    assert r.exit_code == 0, r.output
    (row,) = rows_of(r.stdout)
    assert row["lake"] == lake and row["intact"] == "yes" and re.fullmatch(r"[0-9a-f]{64}", row["lake_sha256"])
    doc = json.loads(cli("lake", "verify", "--workdir", made["work"], "--format", "json").stdout)
    assert doc["intact"] is True and doc["damaged"] == [] and doc["lake_sha256"] == row["lake_sha256"]
    assert lake in cli("lake", "verify", "--workdir", made["work"]).text
    st = json.loads(cli("api", "status", "--format", "json").stdout)
    assert list(st) == ["running", "url", "pid", "version", "idle_seconds"]
    (row,) = rows_of(cli("api", "status", "--format", "csv").stdout)
    assert row["running"] == ("yes" if st["running"] else "no")


def test_explain_piped_keeps_its_ids_and_files_whole(made):
    who = made["who"]
    args = ["explain", "--tax-year", "2023", "--employer", who["employer_id"], "--employee", who["employee_id"],
            "--workdir", made["work"], "--out", made["out"]]
    r = cli(*args, "--format", "table")
    assert r.exit_code == 0, r.output
    assert who["application_id"] in r.text and "payroll/payroll_001.csv" in r.text
    assert r.text.splitlines()[0].startswith(f"Employee {who['employee_id']} of employer {who['employer_id']}")
    assert json.loads(cli(*args, "--format", "json").stdout)["employee_year"]["employee_id"] == who["employee_id"]


def test_backfill_in_csv(made, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(made["work"], work)
    r = cli("backfill", "--input", made["sub"], "--years", "2023", "--as-of", "2024-07-01", "--workdir", work,
            "--out", tmp_path / "b", "--format", "csv")
    assert r.exit_code == 0, r.output
    (row,) = rows_of(r.stdout)
    assert row["tax_year"] == "2023" and row["status"] == "completed" and row["run_id"] == run_ids(work)[-1]


def test_a_format_not_known_is_one_line(made):
    r = cli("finding", "list", "--workdir", made["work"], "--format", "xml")
    assert r.exit_code == 2 and r.output.strip() == "error: --format must be table, csv or json, not 'xml'"


def test_tables_on_a_terminal_of_80_columns_never_split_a_token(made):
    """Issue 44, part 4: on a terminal of 80 columns, ``finding list`` and ``runs --long`` wrap
    between words and between cells (their columns in parts, the first repeated), never inside an
    id, a date, a year or an amount, and never cut one."""
    who = made["who"]
    (row,) = rows_of(cli("finding", "list", "--workdir", made["work"], "--format", "csv").stdout)
    term = cli("finding", "list", "--workdir", made["work"], env=TERMINAL).text
    assert max(len(line) for line in term.splitlines()) <= 80, term
    for whole in ("F-0001", row["finding_date"], who["application_id"], who["employee_id"],
                  f"{float(row['taken_back']):,.2f}"):
        assert any(whole in line for line in term.splitlines()), (whole, term)
    assert "…" not in term
    words = ["no", "determination", "of", "impairment", "on", "file", "for", "this", "employee"]
    assert all(re.search(rf"(^|\s){w}(\s|$)", term, re.M) for w in words), term  # the reason wraps between words
    (annual,) = [r for r in rows_of(cli("runs", "--workdir", made["work"], "--format", "csv").stdout)
                 if r["kind"] == "annual"]
    long = cli("runs", "--workdir", made["work"], "--long", env=TERMINAL).text
    assert "…" not in long, long
    assert max(len(line) for line in long.splitlines()) <= 80, long
    lines = [ln for ln in long.splitlines() if annual["run_id"] in ln]  # the run's row, its id in each part
    for whole in ("2023", "2024-07-01", f"{float(annual['requested']):,.2f}", f"{float(annual['awarded']):,.2f}"):
        assert any(whole in line for line in lines), (whole, long)
