"""A register headed by codes drafted unedited (issue 42 part 6): the employer's taxes only as tax
codes (``ER FICA``, ``ER MEDCR``, ``FUTA``, ``SUTA``, ``ER SDI``) proposed as the parts of
``employer_taxes``; gross wages only as kinds of earnings, an amount column beside each hours column
(``Reg Hrs`` / ``Regular``, ``OT Hrs`` / ``Overtime``), proposed as their sum, the parts past the
first optional; hours from the hours columns (``tests/fixtures/exports/code_register.py``). Saved as
it is, the draft decides the payroll as the canonical submission does."""

from __future__ import annotations

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import code_register as cr
from tests.fixtures.exports import common
from tests.fixtures.exports.run import by_person, canonical_outputs, decide
from transforms.ingest.read.draft import draft_guess as dg
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml
from transforms.ingest.read.layouts.profile_files import vocabulary


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return canonical_outputs(tmp_path_factory.mktemp("canonical"))


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_register_of_codes_drafted_unedited_decides_as_canonical(fmt, tmp_path, canonical):
    sub = cr.write_submission(tmp_path / "sub", fmt)
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    text = draft_yaml(draft_profile(path, "code_register_draft"))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "code_register_draft.yaml").write_text(text, encoding="utf-8")
    profile = yaml.safe_load(text)
    assert profile["derived"] == {"hours": ["regular_hours", "overtime_hours"],
                                  "gross_wages": ["earn_regular", "earn_overtime", "earn_bonus"],
                                  "employer_taxes": ["er_fica", "er_medicare", "er_futa", "er_sui", "er_sdi"]}, text
    assert profile["fields"]["er_fica"] == ["ER FICA"] and profile["fields"]["er_medicare"] == ["ER MEDCR"]
    assert profile["fields"]["earn_overtime"] == ["Overtime"] and profile["fields"]["employee_id"] == ["Emp #"]
    assert profile["optional"] == ["overtime_hours", "earn_overtime", "earn_bonus"]
    assert "DOES NOT LOAD" not in text and "Net Pay" not in str(profile["fields"])
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_read, rec.rows_accepted) == ("code_register_draft", "accepted", 159, 159)
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, cr.EMPLOYEE_IDS) == canonical


@pytest.mark.parametrize(("header", "field"), [
    ("ER FICA", "er_fica"), ("FICA ER", "er_fica"), ("ER MEDCR", "er_medicare"), ("MEDCR-ER", "er_medicare"),
    ("Co SOCSEC", "er_social_security"), ("FUTA", "er_futa"), ("SUTA", "er_sui"), ("NJ SUTA", "er_sui"),
    ("SUTA Tax", "er_sui"), ("Employer Taxes MEDI", "er_medicare"),
    # the employee's withholding or no tax at all: not the employer's
    ("FICA", None), ("MEDCR", None), ("SUI", None), ("NJ SUI", None), ("Co Code", None), ("ER Medical", None),
    ("ER 401k", None), ("Company FEIN", "employer_id")])
def test_employer_tax_codes(header, field):
    assert dg.reach(vocabulary(None).reader(), header) == field


def test_an_earnings_amount_is_taken_beside_its_hours_column_only():
    """``Overtime`` with small amounts says no unit; beside ``OT Hrs`` it is the amount, alone it is
    not taken for money (it could be the hours)."""
    words = vocabulary(None).reader()
    values = [["4.00", "0.00"], ["84.78", "0.00"]]
    assert dg.hours_twin(words, ["OT Hrs", "Overtime"], values, 1)
    assert not dg.hours_twin(words, ["Reg Hrs", "Overtime"], values, 1)
