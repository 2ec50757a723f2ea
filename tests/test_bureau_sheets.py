"""A payroll bureau's workbook, a tab per client company (issue 42 part 4): ``payroll/files.csv``
routes a sheet to its employer (``file, sheet, employer_id``), the tabs printing no employer column.
Real annual runs of a small submission: the three clients' applications get the credits of the same
payroll sent as three canonical files, to the cent; a tab whose rows print another employer id is the
usual ``context_mismatch``; a files.csv line naming a sheet the workbook does not have is refused in
one line and the run stops before deciding."""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from tests.fixtures.exports.common import write_xlsx
from tests.helpers import twelve_employers_without_agency_gaps
from tests.test_file_employers import AS_OF, COLS, PARAMS
from transforms.award import ledger
from transforms.ingest import ingest_folder
from transforms.pii import demo_key
from transforms.runs import annual as steps
from transforms.runs.inputs import SubmissionIncomplete
from transforms.settings import Settings

KEY = demo_key()
TABS = ("Client A", "Client B", "Client C")


def run(sub: Path, work: Path, out: Path) -> pl.DataFrame:
    """awards.csv of an annual run of tax year 2023 (the steps, no Prefect)."""
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    return pl.read_csv(out / "awards.csv", infer_schema=False).sort("application_id")


def tab(rows: pl.DataFrame) -> list[list]:
    """A client's tab as a bureau prints it: no employer column, dates and amounts typed."""
    head = [c for c in rows.columns if c != "employer_id"]
    body = [[dt.date.fromisoformat(v) if c.startswith("period") else Decimal(v) if c in ("hours", "gross_wages",
             "employer_taxes") else v for c, v in zip(head, r, strict=True)] for r in rows.select(head).iter_rows()]
    return [head, *body]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The submission with three clients' payroll taken out of the shared file, and the awards of
    a run where each client's payroll is its own canonical file."""
    root = tmp_path_factory.mktemp("bureau")
    sub = root / "sub"
    twelve_employers_without_agency_gaps(sub)  # no agency gap holds anything here
    whole = run(sub, root / "w-whole", root / "o-whole")  # three employers awarded money become the clients
    paid = whole.filter(pl.col("awarded") != "0.00")["employer_id"].unique().sort().to_list()
    assert len(paid) >= 3, whole.select(COLS)
    clients = paid[:3]
    shared = sub / "payroll" / "payroll_001.csv"
    pay = pl.read_csv(shared, infer_schema=False)
    pay.filter(~pl.col("employer_id").is_in(clients)).write_csv(shared)
    parts = {c: pay.filter(pl.col("employer_id") == c) for c in clients}
    apart = root / "apart"
    shutil.copytree(sub, apart)
    for i, rows in enumerate(parts.values()):
        rows.write_csv(apart / "payroll" / f"client_{i}.csv")
    awards = run(apart, root / "w0", root / "o0")
    mine = awards.filter(pl.col("employer_id").is_in(clients))
    assert mine.height >= 3 and (mine["awarded"] != "0.00").sum() >= 3, mine.select(COLS)
    assert awards.select(COLS).equals(whole.select(COLS))
    return {"root": root, "sub": sub, "clients": clients, "parts": parts, "awards": awards}


def bureau(base, name: str, manifest: str, *, printed: str | None = None) -> Path:
    """The submission with the clients' payroll in one workbook, a tab per client, and files.csv."""
    sub = base["root"] / name
    shutil.copytree(base["sub"], sub)
    tabs = {t: tab(rows) for t, rows in zip(TABS, base["parts"].values(), strict=True)}
    if printed is not None:  # Client B's tab prints an employer column of another employer
        rows = base["parts"][base["clients"][1]]
        tabs["Client B"] = [["employer_id", *tabs["Client B"][0]], *([printed, *r] for r in tabs["Client B"][1:])]
        assert len(tabs["Client B"]) == rows.height + 1
    write_xlsx(sub / "payroll" / "bureau.xlsx", tabs)
    (sub / "payroll" / "files.csv").write_text(manifest)
    return sub


def routes(base, extra: str = "") -> str:
    return "file,sheet,employer_id\n" + "".join(
        f"bureau.xlsx,{t},{c[:2]}-{c[2:]}\n" for t, c in zip(TABS, base["clients"], strict=True)) + extra


def test_a_bureau_workbook_routed_by_sheet_gets_the_credits_of_three_canonical_files(base):
    sub = bureau(base, "routed", routes(base))
    awards = run(sub, base["root"] / "w1", base["root"] / "o1")
    assert awards.select(COLS).equals(base["awards"].select(COLS))
    mine = awards.filter(pl.col("employer_id").is_in(base["clients"]))
    assert set(mine["status"]) <= {"APPROVED", "REJECTED"} and (mine["awarded"] != "0.00").any()


def test_a_tab_printing_another_employer_is_a_context_mismatch(base):
    sub = bureau(base, "mismatch", routes(base), printed="987654321")
    report = ingest_folder(sub, base["root"] / "w2", KEY)
    (rec,) = [f for f in report.files if f.file == "payroll/bureau.xlsx"]
    n = base["parts"][base["clients"][1]].height
    assert rec.rows_rejected == n and rec.rows_accepted == sum(p.height for p in base["parts"].values()) - n
    bad = report.rejects.filter(pl.col("file").str.starts_with("payroll/bureau.xlsx"))
    c = base["clients"][1]
    assert set(bad["file"]) == {"payroll/bureau.xlsx[Client B]"} and bad.height == n
    assert set(bad["rule"]) == {"context_mismatch"}
    assert set(bad["message"]) == {f"employer_id: '987654321' disagrees with {c} given by payroll/files.csv "
                                   f"line 3 (sheet 'Client B')"}


def test_a_sheet_the_workbook_does_not_have_is_refused_in_one_line(base):
    sub = bureau(base, "nosheet", routes(base, "bureau.xlsx,Client D,123456789\n"))
    report = ingest_folder(sub, base["root"] / "w3", KEY)
    (rec,) = [f for f in report.files if f.file == "payroll/files.csv"]
    assert (rec.status, rec.message) == ("rejected", "payroll/files.csv cannot be used: line 5: sheet: bureau.xlsx has "
                                         "no sheet 'Client D' (its sheets: 'Client A', 'Client B', 'Client C')")
    with pytest.raises(SubmissionIncomplete) as stopped:
        run(sub, base["root"] / "w4", base["root"] / "o4")
    assert str(stopped.value).startswith(f"nothing was decided: payroll/files.csv could not be read ({rec.message}).")
    assert not (base["root"] / "o4" / "awards.csv").exists()
