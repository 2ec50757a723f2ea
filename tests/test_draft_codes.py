"""A register printed as a line per code drafted unedited (issue 42 part 6): each check's earnings,
taxes and deductions on lines of their own (``Code | Description | Hours | Amount``); the employer's
taxes as codes (``FICA``, ``MEDCR``, ``FUTA``, ``SUTA``, ``ER SDI``) proposed as the tax codes of
``layout: long``, told apart from the employee's own (``SS``, ``MED``, ``FIT``, ``EE SUI``) and the
deductions, ignored; earnings codes as wage codes, those carrying hours as hours codes. Saved as it
is, the draft decides the payroll as the canonical submission does (``common.PAYROLL``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import common
from tests.fixtures.exports.common import Cell
from tests.fixtures.exports.run import by_person, canonical_outputs, decide
from transforms.ingest.read.draft import draft_codes as dc
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml
from transforms.ingest.read.layouts.profile_files import vocabulary

EMPLOYEE_IDS = {e.ssn: e.employee_id for e in common.EMPLOYEES}
HEADER = ["Emp #", "Employee", "Period Begin", "Period End", "Check Date", "Code", "Description", "Hours", "Amount"]
EARNINGS = {"REG": ("REG", "Regular"), "OT": ("OT", "Overtime"), "BONUS": ("BONUS", "Bonus")}
EE = {"FIT": ("FIT", "Federal Income Tax"), "SS": ("SS", "Social Security"), "MED": ("MED", "Medicare"),
      "NJ SIT": ("SIT", "NJ Income Tax"), "NJ SUI": ("EE SUI", "NJ Unemployment"), "NJ SDI": ("EE SDI", "NJ Disability"),
      "NJ FLI": ("EE FLI", "NJ Family Leave")}
DED = {"401K": ("401K", "401(k)"), "MEDICAL": ("MED INS", "Medical Insurance")}
ER = {"SS": ("FICA", "Social Security"), "MED": ("MEDCR", "Medicare"), "FUTA": ("FUTA", "Federal Unemployment"),
      "NJ SUI": ("SUTA", "NJ Unemployment"), "NJ SDI": ("ER SDI", "NJ Disability")}


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return canonical_outputs(tmp_path_factory.mktemp("canonical"))


def rows(er: dict = ER, typed: bool = False) -> list[list]:
    """A line per code of each check (``typed``: a Type column, the codes of both sides alike)."""
    out = [HEADER + (["Type"] if typed else [])]
    for c in sorted(common.PAYROLL, key=lambda c: (c.pay_date, c.employee.employee_id)):
        ee = [c.employee.employee_id, c.employee.name, *(Cell(d, common.DATE) for d in
                                                         (c.period_start, c.period_end, c.pay_date))]
        lines = [(*EARNINGS[k], Cell(h, common.HOURS) if h else None, a, "Earnings") for k, (h, _, a) in c.earnings.items()]
        lines += [(*EE[k], None, a, "Employee Tax") for k, a in c.employee_taxes.items()]
        lines += [(*DED[k], None, a, "Deduction") for k, a in c.deductions.items()]
        lines += [(*er[k], None, a, "Employer Tax") for k, a in c.employer_taxes.items()]
        out += [[*ee, code, desc, h, Cell(a, common.MONEY), *([kind] if typed else [])] for code, desc, h, a, kind in lines]
    return out


def _draft_and_decide(tmp_path: Path, canonical, fmt: str, table: list[list]) -> tuple[str, dict]:
    sub = common.submission(tmp_path / "sub", employee_ids=EMPLOYEE_IDS)
    folder = sub / "payroll" / common.EMPLOYER
    path = (common.write_excel_csv(folder / "Payroll Register.csv", table) if fmt == "csv"
            else common.write_xlsx(folder / "Payroll Register.xlsx", {"Register": table}))
    text = draft_yaml(draft_profile(path, "code_lines_draft"))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "code_lines_draft.yaml").write_text(text, encoding="utf-8")
    assert "DOES NOT LOAD" not in text, text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_accepted) == ("code_lines_draft", "accepted", len(table) - 1), rec
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, EMPLOYEE_IDS) == canonical
    return text, yaml.safe_load(text)


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_employer_tax_codes_as_lines_drafted_unedited_decide_as_canonical(fmt, tmp_path, canonical):
    text, profile = _draft_and_decide(tmp_path, canonical, fmt, rows())
    assert profile["layout"] == "long" and "derived" not in profile
    assert profile["long"] == {
        "code": "line_code", "hours": "line_hours", "amount": "line_amount", "hours_codes": ["OT", "REG"],
        "wage_codes": ["BONUS", "OT", "REG"], "tax_codes": ["ER SDI", "FICA", "FUTA", "MEDCR", "SUTA"],
        "ignore_codes": ["401K", "EE FLI", "EE SDI", "EE SUI", "FIT", "MED", "SIT", "SS"]}, text
    assert {k: profile["fields"][k] for k in ("line_code", "line_hours", "line_amount")} == {
        "line_code": ["Code"], "line_hours": ["Hours"], "line_amount": ["Amount"]}
    assert ("# GUESSED: a line per code in 'Code' (layout: long): the employer's taxes are the codes ER SDI, FICA, "
            "FUTA, MEDCR, SUTA; wages BONUS, OT, REG (hours: OT, REG)") in text
    assert "NOT FOUND" not in text


def test_a_type_column_tells_the_sides_where_codes_repeat(tmp_path, canonical):
    """The employer's Social Security printed ``SS`` as the employee's: the Type column decides."""
    er = {**ER, "SS": ("SS", "Social Security"), "MED": ("MED", "Medicare")}
    text, profile = _draft_and_decide(tmp_path, canonical, "csv", rows(er, typed=True))
    assert profile["long"]["type"] == "line_type" and profile["fields"]["line_type"] == ["Type"]
    assert profile["long"]["type_counts"] == {"DEDUCTION": "ignored", "EARNINGS": "hours+wages",
                                              "EMPLOYEE TAX": "ignored", "EMPLOYER TAX": "taxes"}, text


@pytest.mark.parametrize(("code", "desc", "others", "got"), [
    ("ER FICA", "", set(), "taxes"), ("FICA", "", {"EE FICA"}, "taxes"), ("FICA", "", {"ER FICA"}, "ignored"),
    ("MEDCR", "", set(), "taxes"), ("MEDI", "", set(), "taxes"), ("FUTA", "", set(), "taxes"),
    ("SUTA", "", set(), "taxes"), ("WF-ER", "", set(), "taxes"), ("X1", "Employer Social Security", set(), "taxes"),
    ("SS", "", set(), "ignored"), ("MED", "", set(), "ignored"), ("FIT", "", set(), "ignored"),
    ("EE FICA", "", set(), "ignored"), ("NJ SUI", "", set(), "ignored"), ("401K", "", set(), "ignored"),
    ("ER 401K", "", set(), "ignored"), ("MED INS", "", set(), "ignored"), ("REG", "", set(), "wages"),
    ("OT", "Overtime", set(), "wages"), ("TIPS", "", set(), None), ("XYZ", "", set(), None),
    # a bare tax code beside its employee's twin only: maybe the employer's, left to the analyst
    ("SUI", "", {"EE SUI"}, None), ("SUI", "", {"SUI-ER"}, "ignored"), ("SUI", "", set(), "ignored"),
    ("MED", "", {"EE MED"}, None), ("ER MATCH", "", set(), None), ("ER MEDICAL", "", set(), "ignored")])
def test_the_side_of_a_code(code, desc, others, got):
    assert dc.side(vocabulary(None).reader(), code, desc, {code, *others}) == got


def test_a_tax_code_printed_for_both_sides_without_a_type_is_left_to_the_analyst(tmp_path):
    """``SS`` and ``MED`` printed for the employee's and the employer's share alike, no Type column:
    in no list (their lines rejected, the file never decided on a guess), and the foot says why."""
    er = {**ER, "SS": ("SS", "Social Security"), "MED": ("MED", "Medicare")}
    path = common.write_excel_csv(tmp_path / "Payroll Register.csv", rows(er))
    text = draft_yaml(draft_profile(path, "both_sides"))
    long = yaml.safe_load(text)["long"]
    assert long["tax_codes"] == ["ER SDI", "FUTA", "SUTA"] and not {"SS", "MED"} & set(long["ignore_codes"]), text
    assert "# CHECK: codes MED, SS are in no list (a code printed twice on a check may be the employee's" in text


SHIPPED_CODES = "dynamics_pay_statement_lines"  # the shipped profile of code_lines_register: the draft replaces it


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_the_code_lines_fixture_drafted_unedited_decides_as_canonical(fmt, tmp_path, canonical):
    """``tests/fixtures/exports/code_lines_register.py`` (Dynamics-style pay statement lines, written
    from the maker's documentation by another hand): the employer's taxes the ``ER_`` codes, the
    employee's ``FICA`` and ``MEDI`` (the same amounts) ignored since ``ER_FICA``/``ER_MEDI`` are
    printed; the hours in ``Quantity``. Drafted under the shipped profile's name
    (``dynamics_pay_statement_lines`` reads this export): the draft replaces it and alone reads."""
    from tests.fixtures.exports import code_lines_register as cl

    sub = cl.write_submission(tmp_path / "sub", fmt)
    (path,) = (sub / "payroll" / common.EMPLOYER).iterdir()
    text = draft_yaml(draft_profile(path, SHIPPED_CODES))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / f"{SHIPPED_CODES}.yaml").write_text(text, encoding="utf-8")
    long = yaml.safe_load(text)["long"]
    assert (long["tax_codes"], long["wage_codes"], long["hours_codes"]) == (
        ["ER_FICA", "ER_FUTA", "ER_MEDI", "ER_SDI", "ER_SUTA"], ["BONUS", "OT", "REG"], ["OT", "REG"]), text
    assert long["ignore_codes"] == ["401K", "FICA", "FIT", "FLI", "MEDI", "SDI", "SIT", "SUI"]
    assert yaml.safe_load(text)["fields"]["line_hours"] == ["Quantity"] and "DOES NOT LOAD" not in text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.profile, rec.status, rec.rows_rejected) == (SHIPPED_CODES, "accepted", 0), rec
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, cl.EMPLOYEE_IDS) == canonical


def test_the_shipped_register_lines_shape_is_drafted_to_read_as_its_shipped_profile(tmp_path):
    """``tests/fixtures/shapes/register/register_lines.csv`` (FICA-ER, MED-ER, SUI-ER, SDI-ER, FUTA
    beside FICA-EE, FIT, 401K): its draft, saved under the shipped profile's name (so it replaces it),
    reads the same canonical rows as the shipped ``register_lines`` profile (without FUTA among its
    tax codes, the draft would reject 76 lines: it is the draft that reads)."""
    import shutil

    from tests.test_profile_keys import read_payroll
    from transforms.ingest import ingest_folder
    from transforms.ingest.read.layouts.profile_files import load_profiles
    from transforms.pii import demo_key

    src = Path(__file__).parent / "fixtures" / "shapes" / "register" / "register_lines.csv"
    (tmp_path / "in" / "payroll" / "100000001").mkdir(parents=True)
    shutil.copy(src, tmp_path / "in" / "payroll" / "100000001" / src.name)
    text = draft_yaml(draft_profile(src, "register_lines"))
    assert yaml.safe_load(text)["long"]["tax_codes"] == ["FICA-ER", "FUTA", "MED-ER", "SDI-ER", "SUI-ER"], text
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "register_lines.yaml").write_text(text, encoding="utf-8")
    shipped = ingest_folder(tmp_path / "in", tmp_path / "w1", demo_key())
    drafted = ingest_folder(tmp_path / "in", tmp_path / "w2", demo_key(), layouts=load_profiles(tmp_path / "profiles"))
    assert [(f.status, f.rows_accepted) for f in drafted.files] == [(f.status, f.rows_accepted) for f in shipped.files] \
        == [("accepted", 684)]
    rows = read_payroll(tmp_path / "w2")
    assert len(rows) == 72 and rows == read_payroll(tmp_path / "w1")
