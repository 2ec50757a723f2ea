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
from transforms.runs.inputs import SubmissionIncomplete


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


def _check_dates_only(root):
    """The code register without its period columns: a report with only check dates."""
    rows = [[c for i, c in enumerate(r) if i not in (2, 3)] for r in cr.rows()]
    sub = common.submission(root, employee_ids=cr.EMPLOYEE_IDS)
    path = common.write_excel_csv(sub / "payroll" / common.EMPLOYER / "Check Register.csv", rows)
    return sub, path


def test_a_report_of_check_dates_gets_the_files_csv_lines_to_write(tmp_path, canonical):
    """The period from the check date: the draft proposes ``period_from_pay_date`` and the exact
    lines of ``payroll/files.csv`` (the frequency read from the check dates' spacing); without them
    the file is not read, never decided on a guessed period; with them (the lag from a pay stub:
    6 days) the payroll is decided as the canonical one."""
    sub, path = _check_dates_only(tmp_path / "sub")
    text = draft_yaml(draft_profile(path, "check_register_draft"))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "check_register_draft.yaml").write_text(text, encoding="utf-8")
    assert "period_from_pay_date: {rule: period_ending_on_pay_date}\n" in text
    foot = text.split("# payroll/files.csv (the period from each check date needs the file's pay frequency):\n")[1]
    assert foot.startswith("#   file,employer_id,pay_frequency,pay_lag_days\n"
                           "#   100000001/Check Register.csv,100000001,biweekly,0\n"), foot
    assert "# CHECK: the check dates' spacing says biweekly: write these lines to payroll/files.csv" in text

    with pytest.raises(SubmissionIncomplete, match="nothing was decided: payroll/100000001/Check Register.csv could "
                       "not be read .profile 'check_register_draft': the report gives only check dates and no pay frequency"):
        decide(sub, tmp_path / "w0", profiles=tmp_path / "profiles")

    lines = [ln.removeprefix("#   ") for ln in foot.splitlines()[:2]]
    (sub / "payroll" / "files.csv").write_text("\n".join(lines).replace(",biweekly,0", ",biweekly,6") + "\n")
    again = draft_yaml(draft_profile(path, "check_register_draft"))
    assert "# payroll/files.csv" not in again
    assert ("# GUESSED: the pay frequency is biweekly (payroll/files.csv, for 100000001/Check Register.csv), "
            "the check 6 day(s) after the period's end") in again
    staged, out = decide(sub, tmp_path / "w1", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith(f"payroll/{common.EMPLOYER}/")]
    assert (rec.status, rec.rows_accepted) == ("accepted", 159), rec.message
    assert by_person(out, cr.EMPLOYEE_IDS) == canonical


@pytest.mark.parametrize(("step", "days", "frequency"), [
    ("w", 7, "weekly"), ("w", 14, "biweekly"), ("m", 1, "monthly"), ("s", 0, "semimonthly"), ("w", 10, None)])
def test_the_frequency_of_check_dates(step, days, frequency):
    import datetime as dt

    from transforms.ingest.read.draft.draft_ids import frequency_of

    start = dt.date(2023, 1, 6)
    if step == "w":
        dates = [start + dt.timedelta(days=days * k) for k in range(8)]
    elif step == "m":
        dates = [dt.date(2023, m, 5) for m in range(1, 9)]
    else:
        dates = [dt.date(2023, m, d) for m in range(1, 5) for d in (15, 28 if m == 2 else 30)]
    assert frequency_of(dates) == frequency


HOLIDAYS = {(12, 25), (1, 1), (7, 4)}


def _with_holiday_hours(root):
    """The code register with a third kind of earnings: 8 of the regular hours of a period holding
    a holiday paid as Holiday (``Hol Hrs`` / ``Holiday``); each check's hours and gross unchanged."""
    import datetime as dt
    from decimal import Decimal

    rows = cr.rows()
    head = rows[0]
    at = {h: i for i, h in enumerate(head)}
    out = [[*head[:7], "Hol Hrs", *head[7:9], "Holiday", *head[9:]]]
    for r in rows[1:-1]:
        start, end = (r[at[k]].value for k in ("Period Begin", "Period End"))
        days = {start + dt.timedelta(days=n) for n in range((end - start).days + 1)}
        hol = Decimal(8) if any((d.month, d.day) in HOLIDAYS for d in days) else Decimal(0)
        reg_h, reg = r[at["Reg Hrs"]].value, r[at["Regular"]].value
        amount = common.money(reg * hol / reg_h)
        cell = common.Cell
        out.append([*r[:5], cell(reg_h - hol, common.HOURS), r[6], cell(hol, common.HOURS),
                    cell(reg - amount, common.MONEY), r[8], cell(amount, common.MONEY), *r[9:]])
    sub = common.submission(root, employee_ids=cr.EMPLOYEE_IDS)
    return sub, common.write_excel_csv(sub / "payroll" / common.EMPLOYER / "Register.csv", out)


def test_a_pivot_with_an_hours_column_per_earning_sums_them_all(tmp_path, canonical):
    sub, path = _with_holiday_hours(tmp_path / "sub")
    text = draft_yaml(draft_profile(path, "pivot_draft"))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "pivot_draft.yaml").write_text(text, encoding="utf-8")
    profile = yaml.safe_load(text)
    assert profile["fields"]["hours_holiday"] == ["Hol Hrs"] and profile["fields"]["earn_holiday"] == ["Holiday"]
    assert profile["derived"]["hours"] == ["regular_hours", "overtime_hours", "hours_holiday"]
    assert profile["derived"]["gross_wages"] == ["earn_regular", "earn_overtime", "earn_holiday", "earn_bonus"]
    assert "# CHECK: hours is the sum of the hours columns, 'Hol Hrs' among them" in text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert (rec.status, rec.rows_accepted) == ("accepted", 159), rec.message
    assert by_person(out, cr.EMPLOYEE_IDS) == canonical


@pytest.mark.parametrize(("header", "field"), [
    ("Hol Hrs", "hours_holiday"), ("Vac Hrs", "hours_vacation"), ("Sick Hours", "hours_sick"),
    ("DT Hrs", "double_time_hours"), ("Total Hrs", None), ("Holiday Pay", None), ("YTD Vac Hrs", None)])
def test_the_hours_of_one_kind_of_earnings(header, field):
    assert dg.hours_of(vocabulary(None).reader(), header) == field


def _with_sub_lines(root):
    """The code register with a check's overtime and bonus on a sub-line under it: the employee's
    number repeated, the name, the period and the check date blank (printed on the first line only)."""
    rows = cr.rows()
    head = rows[0]
    at = {h: i for i, h in enumerate(head)}
    out = [head]
    for r in rows[1:-1]:
        extra = [at["OT Hrs"], at["Overtime"], at["Bonus"]]
        if all(r[k].value == 0 for k in extra):
            out.append([None if k in extra else c for k, c in enumerate(r)])
            continue
        out.append([None if k in extra else c for k, c in enumerate(r)])
        out.append([c if k in extra or k == at["Emp #"] else None for k, c in enumerate(r)])
    sub = common.submission(root, employee_ids=cr.EMPLOYEE_IDS)
    return sub, common.write_excel_csv(sub / "payroll" / common.EMPLOYER / "Register.csv", out)


def test_dates_on_a_checks_first_line_only_are_carried_to_its_sub_lines(tmp_path, canonical):
    sub, path = _with_sub_lines(tmp_path / "sub")
    text = draft_yaml(draft_profile(path, "sub_lines_draft"))
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "sub_lines_draft.yaml").write_text(text, encoding="utf-8")
    profile = yaml.safe_load(text)
    assert profile["carry"] == ["period_start", "period_end", "pay_date"], text
    assert profile["number"] == {"blank": "zero"}
    assert "# GUESSED: period_start, period_end, pay_date blank on some lines of figures" in text
    staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles")
    (rec,) = [f for f in staged.report.files if f.file.startswith("payroll/")]
    assert rec.status == "accepted" and rec.rows_accepted == rec.rows_read > 159, rec.message
    assert staged.rejects.filter(pl.col("file").str.starts_with("payroll/")).height == 0
    assert by_person(out, cr.EMPLOYEE_IDS) == canonical


def test_a_carried_date_never_crosses_to_another_employee(tmp_path):
    """A sub-line whose employee differs from the line its date would come from keeps its blank:
    a reject naming the missing period, never another employee's."""
    import polars as pl

    from transforms.ingest.read.cast.cells import carried
    from transforms.ingest.read.files.readers import RawTable

    frame = pl.DataFrame({"c0": ["1001", "1001", "", "1002"], "c1": ["01/06/2023", "", "", ""],
                          "__line": [2, 3, 4, 5]})
    got = carried(RawTable(["Emp", "Begin"], 1, frame), ["c1"], ["c0"]).frame
    assert got.get_column("c1").to_list() == ["01/06/2023", "01/06/2023", "01/06/2023", None]
