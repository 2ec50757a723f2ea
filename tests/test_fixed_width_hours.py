"""Issue 42 parts 2 and 3: a payroll register printed to a text file (``fixed_width``,
``read/files/fixed_width.py``) and hours written as hours and minutes (``units: {hours: h:mm}``,
``read/cast/durations.py``; ``.xlsx`` duration cells, ``read/files/workbooks.py``).

The fixtures (``tests/fixtures/exports/printed_payroll_register.py``, ``timeclock_hours_minutes.py``)
are written from the makers' documentation; each is read by its shipped profile alone to the
canonical layout's credits and awards through a real annual decision. Bad input: a cut that
splits a value, minutes over 59, and hours and minutes where no profile says so, are rejects that
name the column and what to write."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import common, run
from tests.fixtures.exports import printed_payroll_register as printed
from tests.fixtures.exports import timeclock_hours_minutes as timeclock
from transforms.ingest import layout_check as lc
from transforms.ingest.read import tables
from transforms.ingest.read.cast.durations import hours_minutes
from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.files import fixed_width as fw
from transforms.ingest.read.files import submission as sub
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.layouts.profiles import NumberFormat, Profile
from transforms.pii import demo_key

ROOT = Path(__file__).resolve().parents[1]
VENDORS = ROOT / "data" / "vendors"


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    return run.canonical_outputs(tmp_path_factory.mktemp("canonical"))


def _decided(mod, fmt: str, tmp_path: Path, profile: str):
    s = mod.write_submission(tmp_path / "sub", fmt)
    staged, out = run.decide(s, tmp_path / "work")
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert rec.profile == profile and rec.status == "accepted", rec.message
    assert rec.rows_read == len(common.PAYROLL) == rec.rows_accepted and rec.rows_rejected == 0, rec.message
    assert staged.rejects.height == 0, staged.rejects
    return rec, out


def _staged(path: Path, root: Path, layouts=None) -> pl.DataFrame:
    rel = path.relative_to(root).as_posix()
    contexts, _ = ctx.contexts(root, [rel])
    got, problem, _, _ = tables.read_tables("payroll", path, rel, demo_key(), contexts.get(rel), layouts=layouts)
    assert problem is None, problem
    return pl.concat([t.staged for t in got])


def _agency(tmp_path: Path, name: str, **change) -> Path:
    """An agency profiles folder holding the shipped profile ``name`` with ``change`` (None: key removed)."""
    data = yaml.safe_load((VENDORS / f"{name}.yaml").read_text(encoding="utf-8"))
    for k, v in change.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    folder = tmp_path / "profiles"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return folder


# --- the printed register -----------------------------------------------------------------------

def test_printed_register_decides_as_canonical(tmp_path, canonical):
    """PAYREG.PRN (8 pages, a form feed before each after the first) read by
    ``printed_payroll_register`` alone: columns cut at the heading line, each later page's 3 title
    lines left out and counted, its repeated headings and dashed line passed over, 8 Page Totals and
    the Report Total checked, the 159 wrapped names joined; the canonical credits to the cent."""
    rec, out = _decided(printed, "prn", tmp_path, "printed_payroll_register")
    assert "159 continued line(s); 21 page header line(s); 3 preamble line(s), 9 totals line(s), " \
           "7 repeated header(s), 8 note line(s)" in rec.message, rec.message
    assert run.by_person(out) == canonical
    credits = {r[2]: r for r in run.by_person(out)[0]}
    # 2023: Rivera 80 h a check at 14.13, Sean O'Neil 44.5 h
    assert credits["900-11-0001"][5:10] == ("2085.71", "2085.71", "633.44", "0.00", "633.44")
    assert credits["900-11-0003"][5:10] == ("1045.43", "1160.18", "308.63", "38.28", "346.91")


def test_printed_register_lines(tmp_path):
    """The staged rows: the employee's number, the period, check date and number, the hours and
    money of the line; the wrapped name joined ("Rivera," + "Ana")."""
    (path,) = printed.write(tmp_path / "payroll" / common.EMPLOYER)
    rel = path.relative_to(tmp_path).as_posix()
    contexts, _ = ctx.contexts(tmp_path, [rel])
    (st,), problem, _, notes = tables.read_tables("payroll", path, rel, demo_key(), contexts.get(rel))
    assert problem is None and "read as cp1252" in notes
    first = st.staged.row(0, named=True)
    assert (first["employee_id"], first["period_start"], first["period_end"], first["pay_date"], first["check_id"],
            first["hours"], first["gross_wages"], first["employer_taxes"]) == (
        "1001", dt.date(2021, 12, 25), dt.date(2022, 1, 7), dt.date(2022, 1, 13), "20010", 80.0, 1040.0, 120.12)
    assert st.raw.row(0, named=True)["Employee"] == "Rivera, Ana"
    assert st.raw.get_column("Employee").to_list()[1:3] == ["Muñoz, José", "O'Neil, Sean"]
    assert st.staged.height == len(common.PAYROLL) and not st.structural


def test_prn_and_txt_are_payroll_files():
    assert sub.dataset_of(Path("payroll/100000001/PAYREG.PRN")) == "payroll"
    assert sub.dataset_of(Path("payroll/100000001/register.txt")) == "payroll"


def _columns(shift_gross: int = 0) -> list[list]:
    """The register's columns at their positions ([name, start, end], from 1); the cut between
    Hours and Gross Pay moved ``shift_gross`` characters right."""
    cols, at = [], 1
    for h, w, _ in printed.COLUMNS:
        cols.append([h, at, at + w - 1 + len(printed.GAP)])
        at += w + len(printed.GAP)
    hours = next(i for i, c in enumerate(cols) if c[0] == "Hours")
    cols[hours][2] += shift_gross
    cols[hours + 1][1] += shift_gross
    return cols


def test_a_cut_that_splits_a_value_rejects_the_line_naming_its_columns(tmp_path):
    """Columns given one character wrong (the cut between Hours and Gross Pay inside the amounts of
    four digits: ``1|,040.00``): each such line is rejected naming both columns and the split value,
    never read half; the lines of 780.00 and 520.00 are read."""
    (path,) = printed.write(tmp_path / "payroll" / common.EMPLOYER)
    layouts = load_profiles(_agency(tmp_path, "printed_payroll_register",
                                    fixed_width={"columns": _columns(5), "continued": ["Employee"]}))
    got = lc.check_file(path, layouts=layouts)
    assert got.problem is None
    split = [r for r in got.rejects if r["rule"] == "fixed_width_split"]
    wide = [c for c in common.PAYROLL if c.gross >= 1000]
    assert len(split) == len(wide) > 0
    # the page totals' amounts are cut alike: each disagrees with its lines, and says so
    assert {r["rule"] for r in got.rejects} == {"fixed_width_split", "totals_mismatch"}
    first = split[0]
    assert first["line"] == 7 and first["message"] == (
        "the columns cut a value: 'Hours' and 'Gross Pay' split before character 85 ('1|,040.00'); the line is not read "
        "(fix the columns of fixed_width)")
    assert got.rows == len(common.PAYROLL)


def test_columns_whose_names_are_not_the_headings_say_so(tmp_path):
    """Columns named otherwise than the heading line prints them (``Gross Wages`` for ``Gross
    Pay``): the file is not read, and the message names the profile's file, the key and the
    headings looked for."""
    (path,) = printed.write(tmp_path / "payroll" / common.EMPLOYER)
    cols = [["Gross Wages", a, b] if n == "Gross Pay" else [n, a, b] for n, a, b in _columns()]
    folder = _agency(tmp_path, "printed_payroll_register", fixed_width={"columns": cols})
    layouts = tuple(p for p in load_profiles(folder) if p.name == "printed_payroll_register" or p.name == "canonical")
    got = lc.check_file(path, layouts=layouts)
    assert got.problem is not None and "printed_payroll_register.yaml: fixed_width.columns: no line among the first " \
        "80 has the headings Emp No | Employee | Period Begin" in got.problem, got.problem


def test_columns_at_given_positions_read_as_the_heading_cut(tmp_path):
    """``fixed_width: {columns: [[name, start, end], ...]}`` (from 1, both ends included) reads the
    register as ``cut: heading`` does; text outside every column is a reject of its line."""
    (path,) = printed.write(tmp_path / "payroll" / common.EMPLOYER)
    by_heading = _staged(path, tmp_path)
    folder = _agency(tmp_path, "printed_payroll_register", fixed_width={"columns": _columns(), "continued": ["Employee"]})
    layouts = load_profiles(folder)
    by_columns = _staged(path, tmp_path, layouts)
    keep = ["__line", "employee_id", "period_start", "period_end", "pay_date", "check_id", "hours", "gross_wages",
            "employer_taxes"]
    assert by_columns.select(keep).equals(by_heading.select(keep))
    assert by_columns.height == len(common.PAYROLL)


def test_the_fixed_width_key_is_checked():
    base = dict(name="x", description="x", fields={"employee_id": ["Emp"], "period_start": ["B"], "period_end": ["E"],
                                                   "hours": ["Hours"], "gross_wages": ["Gross"],
                                                   "employer_taxes": ["Taxes"]})
    with pytest.raises(ValueError, match="either cut: heading"):
        Profile(**base, fixed_width={"cut": "heading", "columns": [["Emp", 1, 5]]})
    with pytest.raises(ValueError, match="run left to right"):
        Profile(**base, fixed_width={"columns": [["Emp", 1, 5], ["Hours", 4, 9]]})
    with pytest.raises(ValueError, match="units.gross_wages: not a field of hours"):
        Profile(**base, units={"gross_wages": "h:mm"})


def test_page_lines_and_headings():
    assert fw.page_lines("a\r\n\fb\r\n\r\nc") == [(1, "a", True), (2, "b", True), (3, "", False), (4, "c", False)]
    assert fw.headings("Emp No  Employee    Gross Pay") == [(0, "Emp No"), (8, "Employee"), (20, "Gross Pay")]


def test_what_a_cut_splits_is_said():
    """Given columns A (1-4) and B (7-10): a value across a cut, text between or after the columns."""
    bounds, names = [(0, 4), (6, 10)], ["A", "B"]
    assert fw._split("abcd  efgh", bounds, names) is None
    assert fw._split("abcd  efghij", bounds, names) == "'B' and the text after it split before character 11 ('efgh|ij')"
    assert fw._split("abcd  efgh  x", bounds, names) == "text after 'B' (from character 11)"
    assert fw._split("abcd xefgh", bounds, names) == "text between 'A' and 'B'"


# --- hours and minutes ---------------------------------------------------------------------------

def test_hours_minutes_read_exactly():
    cells = pl.Series("v", ["76:45", "76:45:30", "0:00", "7:30", " 44:30 ", "80", "1,234.50", "76:75", "8:5", "", None])
    got = hours_minutes(cells, NumberFormat()).to_list()
    assert got[:7] == [76.75, 76.75 + 30 / 3600, 0.0, 7.5, 44.5, 80.0, 1234.5]
    assert got[7:] == [None, None, None, None]  # minutes over 59; one digit of minutes; blank


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_timeclock_summary_decides_as_canonical(fmt, tmp_path, canonical):
    """``Total Hours`` as H:MM (CSV) or [h]:mm duration cells (xlsx), read by
    ``timeclock_payroll_summary`` alone (``units: {hours: h:mm}``): the canonical credits to the cent."""
    _, out = _decided(timeclock, fmt, tmp_path, "timeclock_payroll_summary")
    assert run.by_person(out) == canonical


def test_the_csv_and_the_xlsx_durations_read_to_the_same_hours(tmp_path):
    """The CSV's ``44:30`` and the workbook's duration cell (44.5/24 days) both read 44.5 hours; every
    check's hours as the payroll's."""
    folder = tmp_path / "payroll" / common.EMPLOYER
    (csv_path,) = timeclock.write(folder, "csv")
    (xlsx_path,) = timeclock.write(folder, "xlsx")
    assert "44:30" in csv_path.read_text(encoding="cp1252")
    a, b = _staged(csv_path, tmp_path), _staged(xlsx_path, tmp_path)
    assert a.get_column("hours").to_list() == b.get_column("hours").to_list() == [float(c.hours) for c in common.PAYROLL]
    assert 44.5 in a.get_column("hours").to_list()


def test_a_workbook_duration_of_76_45_is_76_75_hours(tmp_path):
    """A ``[h]:mm`` cell holding 76:45 (3.1979166... days) and one past Excel's day 60 (1,446 hours)."""
    rows = [["Employee ID", "Pay Period Start", "Pay Period End", "Pay Date", "Total Hours", "Gross Pay", "Employer Taxes"]]
    for i, h in enumerate([dt.timedelta(hours=76, minutes=45), dt.timedelta(hours=1446, seconds=30)]):
        rows.append([f"100{i}", common.Cell(dt.date(2023, 1, 1), common.DATE), common.Cell(dt.date(2023, 1, 14), common.DATE),
                     common.Cell(dt.date(2023, 1, 20), common.DATE), common.Cell(h, common.DURATION), 100, 10])
    path = common.write_xlsx(tmp_path / "payroll" / common.EMPLOYER / "t.xlsx", {"Sheet1": rows})
    got = _staged(path, tmp_path)
    assert got.get_column("hours").to_list() == [76.75, 1446 + 30 / 3600]


def _timeclock_csv(tmp_path: Path, total: str) -> Path:
    rows = timeclock.rows()
    rows[5][7] = total  # the second check's Total Hours, as written
    return common.write_excel_csv(tmp_path / "payroll" / common.EMPLOYER / timeclock.file_name("csv"), rows)


def test_minutes_over_59_are_a_reject_naming_the_column(tmp_path):
    path = _timeclock_csv(tmp_path, "60:75")
    got = lc.check_file(path)
    (rej,) = got.rejects
    assert rej["line"] == 6 and rej["rule"] == "hours_minutes"
    assert rej["message"] == ("Total Hours: '60:75' has 75 minutes: hours and minutes (H:MM) take 0 "
                              "to 59 minutes; the line is not read")
    assert got.rows == len(common.PAYROLL)


def test_hours_and_minutes_without_the_unit_name_it_and_the_key(tmp_path):
    """The same summary read by a profile without ``units``: every line is refused with hours and
    minutes and the key to write named, nothing read as a wrong number."""
    (path,) = timeclock.write(tmp_path / "payroll" / common.EMPLOYER, "csv")
    layouts = load_profiles(_agency(tmp_path, "timeclock_payroll_summary", units=None))
    got = lc.check_file(path, layouts=layouts)
    assert len(got.rejects) == len(common.PAYROLL)
    first = got.rejects[0]
    assert first["rule"] == "hours_minutes"
    assert first["message"] == ("Total Hours: '80:00' is written as hours and minutes (H:MM); "
                                "profile 'timeclock_payroll_summary' does not say so: write units: {hours: h:mm} "
                                "in the profile")


def test_the_profiles_load(tmp_path):
    got = {p.name: p for p in load_profiles(None)}
    assert got["printed_payroll_register"].fixed_width.cut == "heading"
    assert got["timeclock_payroll_summary"].units == {"hours": "h:mm"}
    shutil.rmtree(tmp_path)


# --- the draft ----------------------------------------------------------------------------------

def test_the_draft_of_a_printed_register_proposes_fixed_width_and_reads_it(tmp_path):
    """``impcredit layouts draft PAYREG.PRN``: the lines align under a heading line, so the draft
    proposes ``fixed_width: {cut: heading, continued: ["Employee"]}``, the page and report totals and
    the rule under the headings as a note; unedited, with the shipped profile taken away, it reads
    the register whole and decides as the canonical layout."""
    from transforms.ingest.read.draft.draft import draft_profile, draft_yaml

    s = printed.write_submission(tmp_path / "sub")
    path = s / "payroll" / common.EMPLOYER / printed.FILE
    text = draft_yaml(draft_profile(path, "payreg"))
    assert 'fixed_width: {cut: heading, continued: ["Employee"]}' in text and "DOES NOT LOAD" not in text
    assert '- {label: "page total", checks: [hours, gross_wages, employer_taxes], scope: since_last}' in text
    assert "# GUESSED: a text printed in columns: cut at the heading line's columns" in text
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "payreg.yaml").write_text(text, encoding="utf-8")
    layouts = tuple(p for p in load_profiles(folder) if p.name != "printed_payroll_register")
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == len(common.PAYROLL), (got.problem, got.rejects[:3])
    assert got.tables[0].profile == "payreg"


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_the_draft_of_an_hours_and_minutes_summary_proposes_the_unit_and_reads_it(fmt, tmp_path):
    """The draft of the time-and-attendance summary takes ``Total Hours`` (44:30, or the workbook's
    durations) for hours with ``units: {hours: "h:mm"}`` and says so at its foot; unedited, with the
    shipped profile taken away, it reads every line to the payroll's hours."""
    from transforms.ingest.read.draft.draft import draft_profile, draft_yaml

    (path,) = timeclock.write(tmp_path / "payroll" / common.EMPLOYER, fmt)
    text = draft_yaml(draft_profile(path, "timesheet"))
    assert 'units: {hours: "h:mm"}' in text and 'hours: ["Total Hours"]' in text and "DOES NOT LOAD" not in text
    assert "# GUESSED: 'Total Hours' is written as hours and minutes (44:30 is 44.5 hours): read with units: " \
           "{hours: h:mm}" in text
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "timesheet.yaml").write_text(text, encoding="utf-8")
    layouts = tuple(p for p in load_profiles(folder) if p.name != "timeclock_payroll_summary")
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == len(common.PAYROLL), (got.problem, got.rejects[:3])
    staged = _staged(path, tmp_path, layouts)
    assert staged.get_column("hours").to_list() == [float(c.hours) for c in common.PAYROLL]


def test_a_plain_fixed_width_file_with_no_report_keys(tmp_path):
    """A fixed-width file whose heading is its first line and whose lines are all rows (no report
    keys): read by position, on the route of any file (never taken for a delimited one)."""
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "plain.yaml").write_text("\n".join([
        "name: plain", "description: a plain fixed-width file", "formats: [csv]", 'extensions: [".txt"]',
        "fixed_width: {cut: heading}",
        "fields: {employee_id: [Emp], period_start: [Begin], period_end: [End], hours: [Hours], "
        "gross_wages: [Gross], employer_taxes: [ER Tax]}", "units: {hours: \"h:mm\"}"]), encoding="utf-8")
    path = tmp_path / "payroll" / common.EMPLOYER / "plain.txt"
    path.parent.mkdir(parents=True)
    path.write_text("Emp   Begin       End            Hours     Gross  ER Tax\n"
                    "1001  01/01/2023  01/14/2023     76:45  1,084.48  100.00\n"
                    "1002  01/01/2023  01/14/2023  76:45:30    100.00    9.00\n", encoding="utf-8")
    layouts = load_profiles(folder)
    got = lc.check_file(path, layouts=layouts)
    assert got.read_whole and got.rows == 2 and got.tables[0].profile == "plain", (got.problem, got.rejects)
    staged = _staged(path, tmp_path, layouts)
    assert staged.get_column("hours").to_list() == [76.75, 76.75 + 30 / 3600]
    assert staged.get_column("gross_wages").to_list() == [1084.48, 100.0]
