"""A totals line with ``TOTAL`` in the employer id column of a file of several employers (spec
section 7, "No decision on input it could not read"; issue 27): its employer id is unreadable, so
it holds every application of the employers named in that file, whatever file it is in (payroll,
applications, roster) and whether or not its own application id can be read."""

from __future__ import annotations

import calendar
import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
EMPLOYERS = ("100000001", "100000002", "100000003")  # in the file with the totals line
OTHER = "100000004"  # an employer of another payroll file


def _rows(employer: str, k: int) -> list[str]:
    out = []
    for y in (2022, 2023):
        for m in range(1, 13):
            s = dt.date(y, m, 1)
            e = dt.date(y, m, calendar.monthrange(y, m)[1])
            w = round((80 if y == 2022 else 100) * PARAMS.value("minimum_wage.general", s), 2)
            out.append(f"{employer},E1,111-22-33{k:02d},{s},{e},{80 if y == 2022 else 100},{w:.2f},{round(w * 0.1095, 2):.2f}\n")
    return out


def submission(root: Path, where: str) -> Path:
    head = "employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes\n"
    (root / "payroll").mkdir(parents=True)
    many = [r for k, e in enumerate(EMPLOYERS) for r in _rows(e, k)]
    if where == "payroll":
        many.append("TOTAL,,,,,5280,65123.40,7131.01\n")
    (root / "payroll" / "employers_1_3.csv").write_text(head + "".join(many))
    (root / "payroll" / "employer_4.csv").write_text(head + "".join(_rows(OTHER, 9)))
    ids = [*EMPLOYERS, OTHER]
    apps = "".join(f"A{k + 1},{e},Employer {k + 1} LLC,Mercer,CBT,2023,2024-02-0{k + 1}T09:00:00\n" for k, e in enumerate(ids))
    if where == "applications":  # a spreadsheet's totals line: its label in the first columns
        apps += "TOTAL,TOTAL,,,,,\n"
    (root / "applications.csv").write_text("application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
                                           + apps)
    roster = "".join(f"A{k + 1},E1,general,{e}\n" for k, e in enumerate(ids))
    if where == "roster":
        roster += "TOTAL,4,,TOTAL\n"
    (root / "roster.csv").write_text("application_id,employee_id,wage_category,employer_id\n" + roster)
    (root / "certifications.csv").write_text("ssn,certification_id,status,valid_from,valid_to\n" + "".join(
        f"111-22-33{k:02d},C{k},CERTIFIED,2018-01-01,\n" for k in (0, 1, 2, 9)))
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"{e},{y}-07-01,0.0280,0.0050\n" for e in ids for y in (2021, 2022, 2023)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def run(sub: Path, work: Path, out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    held = pl.read_csv(out / "held.csv", infer_schema=False) if (out / "held.csv").exists() else pl.DataFrame()
    return pl.read_csv(out / "awards.csv", infer_schema=False), held


# the applications each totals line holds: those of the employers named in its file (the payroll
# file names employers 1-3; applications.csv and roster.csv name all four)
HELD = {"payroll": ["A1", "A2", "A3"], "applications": ["A1", "A2", "A3", "A4"], "roster": ["A1", "A2", "A3", "A4"]}


@pytest.mark.parametrize("where", list(HELD))
def test_a_totals_line_holds_every_application_of_the_employers_its_file_names(where, tmp_path):
    awards, held = run(submission(tmp_path / "sub", where), tmp_path / "work", tmp_path / "out")
    status = dict(awards.select("application_id", "status").iter_rows())
    assert sorted(a for a, s in status.items() if s == "HELD") == HELD[where]
    assert all(s == "APPROVED" for a, s in status.items() if a not in HELD[where])  # the other employer's
    assert sorted(held["application_id"].unique()) == HELD[where]
    line = {"payroll": "payroll/employers_1_3.csv", "applications": "applications.csv", "roster": "roster.csv"}[where]
    assert set(held["file"]) == {line}  # the totals line, and nothing else, holds them
