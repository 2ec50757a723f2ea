"""A transposed register (one column per employee) whose pay period is printed once above the table
as two cells, ``Pay period | 01/01/2023 - 01/31/2023`` (the value in the first employee's column;
issue 42 part 5): the line is a block line above the table and sets its field for every column, as
it does in the usual orientation. Real annual runs of worked example A: the register as a workbook
(a tab per month) and as a CSV per month give the periods of the canonical payroll and its awards to
the cent."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.fixtures.exports import transposed_months as tr
from tests.test_unread_tables import EMPLOYER, annual, month_rows, submission
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.reports import transpose as tp
from transforms.ingest.store.lake import scan_lake
from transforms.runs import annual as steps

PROFILE = """name: acme_months
product: Acme Payroll (monthly register, a column per employee)
description: The items down the side, a column per employee, the pay period once above the table.
transposed: {label_columns: 1}
report:
  blocks:
    - {label: "pay period", fields: [period_start, period_end], value: '(\\S+)\\s*-\\s*(\\S+)'}
fields:
  employee_id: [Employee ID]
  ssn: [SSN]
  hours: [Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
"""


def awards(out: Path) -> list[tuple]:
    return pl.read_csv(out / "awards.csv", infer_schema=False).select(
        "application_id", "status", "requested", "awarded", "reasons").rows()


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    root = tmp_path_factory.mktemp("canonical")
    _, out = annual(tr.write_canonical(submission(root / "sub")), root / "w")
    got = awards(out)
    assert got[0][1] == "APPROVED" and got[0][3] not in ("0.00", "", None)
    return got


def test_a_two_cell_period_line_above_the_table_is_a_block_line():
    """The table starts at its first line with a label and more than a block's one value."""
    lines = list(enumerate(tr.month_lines(month_rows(2023)[0]), start=1))
    lines = [(n, [None if c is None else str(c) for c in cells]) for n, cells in lines]
    assert tp.table_start(lines, 1) == 1  # without the block's label: the period line is the table's first row
    assert tp.table_start(lines, 1, ("pay period",)) == 2
    turned = tp.transposed(lines, 1, blocks=("pay period",))
    assert turned[1] == (2, ["Pay period", "01/01/2023 - 01/31/2023"])
    assert turned[2] == (1, ["Employee ID", "SSN", "Hours", "Gross Pay", "Employer Taxes"])


@pytest.mark.parametrize("form", ["xlsx", "csv"])
def test_a_transposed_register_with_its_period_above_reads_to_the_canonical_credits(tmp_path, expected, form,
                                                                                   monkeypatch):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "acme.yaml").write_text(PROFILE)
    layouts = load_profiles(tmp_path / "profiles")
    sub = submission(tmp_path / "sub")
    rows = month_rows(2023)
    tr.write(sub / "payroll" / EMPLOYER, form)
    original = steps.stage_inputs  # the run with the analyst's profile
    monkeypatch.setattr(steps, "stage_inputs", lambda *a, **k: original(*a, **{**k, "layouts": layouts}))
    _, out = annual(sub, tmp_path / "w")
    lake = scan_lake(tmp_path / "w", "payroll").collect().sort("period_start")
    assert lake.height == 12 and set(lake["employee_id"]) == {"E1"}
    assert [(str(a), str(b)) for a, b in lake.select("period_start", "period_end").iter_rows()] == [
        (r[3], r[4]) for r in rows]
    assert lake["gross_wages"].round(2).to_list() == [1224.65] * 12
    assert awards(out) == expected
