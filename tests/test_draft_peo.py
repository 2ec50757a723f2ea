"""A PEO's export drafted unedited (issue 42 part 4; ``impcredit layouts draft``): Justworks'
custom payroll report prints the PEO's own EIN and its member number beside the employer's Work
ID (``tests/fixtures/exports/justworks_payroll_report.py``). The draft never maps the FEIN column
that disagrees with the folder's employer, and says so; it takes the Work ID (the roster's ids) for
the employee, not the member number nor the printed name; saved as it is, it decides the payroll
as the canonical submission does."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import common
from tests.fixtures.exports import justworks_payroll_report as jw
from tests.fixtures.exports.run import by_person, canonical_outputs, decide
from transforms.ingest.read.draft import draft_ids as di
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return canonical_outputs(tmp_path_factory.mktemp("canonical"))


def _drafted(sub: Path, fmt: str, profiles: Path, submission: di.Submission | None = None) -> dict:
    (path,) = sorted((sub / "payroll" / common.EMPLOYER).iterdir())
    text = draft_yaml(draft_profile(path, "justworks_draft", submission=submission))
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / "justworks_draft.yaml").write_text(text, encoding="utf-8")
    return {"text": text, "profile": yaml.safe_load(text)}


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_peo_report_drafted_unedited_decides_as_canonical(fmt, tmp_path, canonical):
    sub = jw.write_submission(tmp_path / "sub", fmt)
    got = _drafted(sub, fmt, tmp_path / "profiles")
    fields = got["profile"]["fields"]
    assert "employer_id" not in fields and fields["employee_id"] == ["Work ID"], fields
    assert "employee_id_from" not in got["profile"] and "employee_name" not in fields
    assert ("# GUESSED: 'Company FEIN' prints 990000099, not the employer 100000001 of folder payroll/100000001 "
            "(a PEO's or a bureau's own EIN): not read as employer_id") in got["text"]
    assert "# GUESSED: the employee id is 'Work ID': its values are the roster's employee ids" in got["text"]
    assert "DOES NOT LOAD" not in got["text"]
    assert f"#   impcredit layouts check --profiles DIR 'Justworks payroll report.{fmt}'\n" in got["text"]
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_read, rec.rows_accepted) == ("justworks_draft", "accepted", 159, 159)
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, jw.EMPLOYEE_IDS) == canonical


def test_without_a_roster_the_employers_own_id_beats_the_member_number_and_the_name(tmp_path):
    sub = jw.write_submission(tmp_path / "sub")
    got = _drafted(sub, "csv", tmp_path / "profiles", di.Submission(employer="100000001", employer_from="--employer"))
    assert got["profile"]["fields"]["employee_id"] == ["Work ID"]
    assert "the employer's own id of each employee (not a PEO's member number, nor a name)" in got["text"]


def test_a_roster_of_member_numbers_takes_the_member_number(tmp_path):
    """The roster decides: an agency that lists the PEO's member numbers gets that column."""
    sub = jw.write_submission(tmp_path / "sub")
    ids = frozenset(m.lower() for m in jw.MEMBER_IDS.values())
    got = _drafted(sub, "csv", tmp_path / "profiles", di.Submission("100000001", "folder", ids, "roster.csv"))
    assert got["profile"]["fields"]["employee_id"] == ["Member ID"]


def test_the_submission_a_file_sits_in(tmp_path):
    sub = jw.write_submission(tmp_path / "sub")
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    got = di.submission_of(path)
    assert (got.employer, got.employer_from) == ("100000001", "folder payroll/100000001")
    assert got.roster_ids == {"1001", "1002", "1003"}
    (sub / "payroll" / "files.csv").write_text("file,employer_id\n100000001/,22-2222222\n")
    assert di.submission_of(path).employer == "222222222"
    assert di.submission_of(path, employer="33-3333333").employer == "333333333"
    assert di.submission_of(tmp_path / "elsewhere.csv") == di.Submission()


def test_the_cli_takes_the_employer_and_roster_and_quotes_its_hint(tmp_path):
    """A file outside any submission: ``--employer`` and ``--roster`` say what the folder would; the
    hint to check the draft quotes names with spaces (it pastes into a shell as it is)."""
    from typer.testing import CliRunner

    from flows.cli import app

    sub = jw.write_submission(tmp_path / "sub")
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    loose = tmp_path / "Downloads" / path.name
    loose.parent.mkdir()
    loose.write_bytes(path.read_bytes())
    out = tmp_path / "my profiles" / "jw.yaml"
    r = CliRunner().invoke(app, ["layouts", "draft", str(loose), "--out", str(out), "--employer", "10-0000001",
                                 "--roster", str(sub / "roster.csv")])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "employer_id" not in yaml.safe_load(text)["fields"] and "of --employer (a PEO's" in text
    assert yaml.safe_load(text)["fields"]["employee_id"] == ["Work ID"]
    said = " ".join(r.output.split())
    assert f"impcredit layouts check --profiles '{out.parent}' '{loose}'" in said, said


def test_only_a_column_headed_as_an_id_is_matched_with_the_roster():
    """A department's number holding the roster's ids (1, 2, 3) is not the employee; ``Emp No`` is."""
    from transforms.ingest.read.draft.draft import Draft

    d = Draft("x", "x.csv", 0, 1)
    header = ["Dept", "Emp No", "Gross Pay"]
    values = [["1", "2", "3"], ["E1", "E2", "E3"], ["100.00", "200.00", "300.00"]]
    di.employee_column(d, header, values, di.Submission(roster_ids=frozenset({"1", "2", "3", "e1"}), roster_from="r"))
    assert "employee_id" not in d.fields
    di.employee_column(d, header, values, di.Submission(roster_ids=frozenset({"e1", "e2", "e3"}), roster_from="r"))
    assert d.fields["employee_id"] == "Emp No"


def test_the_cli_says_when_a_profile_already_reads_the_file_whole(tmp_path):
    """A draft is for an export no profile reads: of a file a shipped profile reads whole, the draft is
    still written (for comparison) and stderr names the profile and the check to run; of a file no
    profile reads, nothing is said."""
    from typer.testing import CliRunner

    from flows.cli import app
    from tests.fixtures.exports import code_lines_register

    sub = code_lines_register.write_submission(tmp_path / "sub", "csv")
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    r = CliRunner().invoke(app, ["layouts", "draft", str(path), "--out", str(tmp_path / "p" / "jw.yaml")])
    said = " ".join(r.output.split())
    assert r.exit_code == 0 and (tmp_path / "p" / "jw.yaml").is_file(), r.output
    assert (f"note: {path.name} is already read whole by profile 'dynamics_pay_statement_lines' (shipped): `impcredit layouts check "
            f"'{path}'` shows how (the draft is for comparison)") in said, said
    unread = tmp_path / "other" / "export.csv"
    unread.parent.mkdir()
    unread.write_text("Worker,Paid Hours,Pay,Period\nA1,80,1200.00,2023-01-06\n")
    r = CliRunner().invoke(app, ["layouts", "draft", str(unread), "--out", str(tmp_path / "p" / "x.yaml")])
    assert "already read whole" not in r.output, r.output
