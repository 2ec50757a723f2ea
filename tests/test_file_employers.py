"""A file none of whose lines could be read holds the employer it was sent for (spec section 7, amended;
issue 41 part 3): a file's employers are those its readable lines name and the one its folder or
``payroll/files.csv`` gives; a line whose employer id disagrees with them (a PEO prints its own EIN)
holds the applications of both. Real annual runs of a small submission: an employer's payroll sent in
its folder with a PEO's EIN on every line, with a column missing from every line, or named by
files.csv; every application of that employer HELD (INPUT_REJECTED, nothing awarded, nothing in the
ledger), the others decided as before; the notice and the run page say the file and why once; a
rerun, and a lake written before the manifest kept the file's employers, still hold them."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.helpers import twelve_employers_without_agency_gaps
from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
PEO = "98-7654321"  # the PEO's own EIN, as its export prints it (no applicant)
COLS = ["application_id", "status", "requested", "awarded", "reasons"]


def run(sub: Path, work: Path, out: Path) -> pl.DataFrame:
    """awards.csv of an annual run of tax year 2023 (the steps, no Prefect)."""
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc()))
    return pl.read_csv(out / "awards.csv", infer_schema=False).sort("application_id")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("file_employers")
    sub = root / "sub"
    twelve_employers_without_agency_gaps(sub)  # no agency gap holds anything here
    roster = pl.read_csv(sub / "roster.csv", infer_schema=False)  # nothing declared: only the lines can hold
    roster.select("application_id", "employee_id", "wage_category").write_csv(sub / "roster.csv")
    awards = run(sub, root / "w0", root / "o0")
    apps = pl.read_csv(sub / "applications.csv", infer_schema=False)
    emp = apps.group_by("employer_id").len().sort("len", "employer_id", descending=[True, False])["employer_id"][0]
    mine = awards.filter(pl.col("employer_id") == emp)
    # decided on its own payroll today: one approved with money, the other rejected
    assert mine.height == 2 and set(mine["status"]) == {"APPROVED", "REJECTED"}
    assert (mine["awarded"] != "0.00").any()
    return {"root": root, "sub": sub, "awards": awards, "emp": emp}


def sent_apart(base, name: str, how: str) -> Path:
    """The submission with the employer's payroll rows taken out of the shared file and sent on
    their own: in the employer's folder with the PEO's EIN on every line (``peo``), in its folder
    with the last column missing from every data row (``field_count``), or at the top of payroll/
    named by files.csv with the PEO's EIN (``files_csv``)."""
    sub = base["root"] / name
    shutil.copytree(base["sub"], sub)
    shared = sub / "payroll" / "payroll_001.csv"
    pay = pl.read_csv(shared, infer_schema=False)
    pay.filter(pl.col("employer_id") != base["emp"]).write_csv(shared)
    mine = pay.filter(pl.col("employer_id") == base["emp"])
    folder = sub / "payroll" / base["emp"]
    if how == "peo":
        folder.mkdir()
        mine.with_columns(pl.lit(PEO).alias("employer_id")).write_csv(folder / "export.csv")
    elif how == "field_count":
        folder.mkdir()
        lines = mine.write_csv().splitlines()
        (folder / "export.csv").write_text("\n".join([lines[0], *(ln.rsplit(",", 1)[0] for ln in lines[1:])]) + "\n")
    else:
        mine.with_columns(pl.lit(PEO).alias("employer_id")).write_csv(sub / "payroll" / "peo_export.csv")
        (sub / "payroll" / "files.csv").write_text(f"file,employer_id\npeo_export.csv,{base['emp']}\n")
    return sub


def assert_held(base, awards: pl.DataFrame, work: Path, out: Path, file: str, why: str) -> None:
    """Every application of the employer HELD for the file (nothing awarded, nothing in the ledger),
    every other decided as before; held.csv, the notice and the run page say the file and why once."""
    emp = base["emp"]
    mine = awards.filter(pl.col("employer_id") == emp)
    assert mine.select("status", "reasons", "awarded").rows() == [("HELD", "INPUT_REJECTED", "0.00")] * 2
    others = awards.filter(pl.col("employer_id") != emp).select(COLS)
    assert others.equals(base["awards"].filter(pl.col("employer_id") != emp).select(COLS))
    con = ledger.connect(work / "impcredit.duckdb", read_only=True)
    ids = mine["application_id"].to_list()
    assert con.sql("SELECT count(*) FROM decisions WHERE application_id IN ?", params=[ids]).fetchall()[0][0] == 0
    assert con.sql("SELECT count(DISTINCT application_id) FROM decisions").fetchall()[0][0] == others.height
    con.close()
    held = pl.read_csv(out / "held.csv", infer_schema=False)
    assert held.select("application_id", "file", "line").rows() == [(a, file, None) for a in ids]
    assert (held["messages"] == why).all()
    page = (out / "index.html").read_text()
    for app in ids:
        notice = (out / "notices" / f"{app}.html").read_text()
        table = notice.split('<table id="held_lines">')[1].split("</table>")[0]
        assert table.count("<tr><td>") == 1 and file in table and "every line" in table
        assert notice.count(why.replace("'", "&#39;")) == 1 and "Nothing is decided yet" in notice
    assert page.count(why.replace("'", "&#39;")) == len(ids)  # once in each held application's row


PEO_WHY = "every line's EIN 98-7654321 disagrees with the folder's {emp} (a PEO prints its own EIN); no line was read"


@pytest.mark.parametrize("how, file, why", [
    ("peo", "payroll/{emp}/export.csv", PEO_WHY),
    ("field_count", "payroll/{emp}/export.csv",
     "a column missing from every line: every line has 7 fields where the header has 8; no line was read"),
    ("files_csv", "payroll/peo_export.csv", "every line's EIN 98-7654321 disagrees with the {emp} payroll/files.csv "
     "line 2 gives (a PEO prints its own EIN); no line was read"),
])
def test_a_file_none_of_whose_lines_was_read_holds_its_employer_and_a_rerun_still_does(base, how, file, why):
    sub = sent_apart(base, how, how)
    file, why = file.format(emp=base["emp"]), why.format(emp=base["emp"])
    work = base["root"] / f"w_{how}"
    awards = run(sub, work, base["root"] / f"o_{how}")
    assert_held(base, awards, work, base["root"] / f"o_{how}", file, why)
    # a second run on the same workdir, nothing changed: the lake's standing rejects still hold them
    awards = run(sub, work, base["root"] / f"o_{how}_again")
    assert_held(base, awards, work, base["root"] / f"o_{how}_again", file, why)


def test_a_lake_written_before_the_manifest_kept_the_files_employers_still_holds_by_the_folder(base):
    sub = sent_apart(base, "old_lake", "peo")
    work = base["root"] / "w_old"
    run(sub, work, base["root"] / "o_old0")
    manifest_path = work / "lake" / "_manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for f in manifest["files"].values():  # as the code before wrote it: no employer named, no reason said
        if f.get("quarantine"):
            assert f.pop("employers") == sorted([base["emp"], PEO.replace("-", "")]) and f.pop("unread")
    manifest_path.write_text(json.dumps(manifest))
    awards = run(sub, work, base["root"] / "o_old")
    mine = awards.filter(pl.col("employer_id") == base["emp"])
    assert mine.select("status", "reasons", "awarded").rows() == [("HELD", "INPUT_REJECTED", "0.00")] * 2
    held = pl.read_csv(base["root"] / "o_old" / "held.csv", infer_schema=False)
    assert held.height == 2 * 292 and set(held["line"].cast(pl.Int64)) == set(range(2, 294))  # each line, as before


def test_a_line_printing_another_applicants_ein_holds_the_applications_of_both(base):
    """The EIN a disputed line prints is one of the file's employers: an applicant's (the PEO applies
    for its own staff) holds its applications too, whether or not it claims the line's person."""
    other = base["awards"].filter((pl.col("employer_id") != base["emp"]) & (pl.col("status") == "APPROVED"))[
        "employer_id"][0]
    sub = sent_apart(base, "applicant_ein", "peo")
    f = sub / "payroll" / base["emp"] / "export.csv"
    f.write_text(f.read_text().replace(PEO, other))
    awards = run(sub, base["root"] / "w_both", base["root"] / "o_both")
    both = awards.filter(pl.col("employer_id").is_in([base["emp"], other]))
    assert both.height >= 3 and (both["status"] == "HELD").all() and (both["reasons"] == "INPUT_REJECTED").all()
    rest = awards.filter(~pl.col("employer_id").is_in([base["emp"], other])).select(COLS)
    assert rest.equals(base["awards"].filter(~pl.col("employer_id").is_in([base["emp"], other])).select(COLS))
