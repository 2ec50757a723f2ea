"""Issue 42's four exports built from the makers' documentation by someone other than the
profiles' author (``tests/fixtures/exports/``: ``repeated_tabs``, ``code_lines_register``,
``bureau_workbook``, ``transposed_register``; their layouts cell by cell in
``tests/fixtures/exports/NEW_FIXTURES.md`` sections 4-7), each read by its shipped profile alone
(``data/vendors/<profile>.yaml``) to the canonical credits:

- one payroll register on three tabs (``payroll_register_by_group``): ONE tab read by
  ``sheets: {read, skip}``, the others repeat it; a profile reading them all never decides the
  payroll twice or three times;
- pay statement lines, a line per code (``dynamics_pay_statement_lines``, ``layout: long``): the
  employer's taxes are the ``ER_*`` codes alone (the employee's ``FICA`` / ``MEDI`` equal them to
  the cent), the personnel numbers keep their leading zeros;
- a payroll bureau's workbook, a tab per client (``bureau_client_payroll_register``): each tab
  routed to its employer by ``payroll/files.csv``'s ``sheet`` column, three clients' awards;
- a transposed register with its check date and pay period once above the table as two cells
  (``payroll_summary_by_pay_run``: ``transposed`` and block lines).

Each export, in every format it is written in, through a real annual decision
(``tests/fixtures/exports/run.py``, the shipped profiles only) gives exactly the canonical layout's
``employee_credits.csv`` and ``awards.csv``: every payroll record read by the profile, no reject,
nothing held.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.fixtures.exports import bureau_workbook as bureau
from tests.fixtures.exports import code_lines_register as code_lines
from tests.fixtures.exports import common, run
from tests.fixtures.exports import repeated_tabs as tabs
from tests.fixtures.exports import transposed_register as transposed
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.reports import transpose as tp
from transforms.runs.inputs import SubmissionIncomplete

ROOT = Path(__file__).resolve().parents[1]
VENDORS = ROOT / "data" / "vendors"
CHECKS = len(common.PAYROLL)


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    """The canonical submission's decision (employee_credits by person, awards), once."""
    return run.canonical_outputs(tmp_path_factory.mktemp("canonical"))


@pytest.fixture(scope="module")
def bureau_canonical(tmp_path_factory):
    """The bureau's three clients, each client's payroll as its own canonical file, decided once."""
    root = tmp_path_factory.mktemp("bureau-canonical")
    _, out = run.decide(bureau.write_canonical_submission(root / "sub"), root / "work")
    return run.by_person(out, bureau.EMPLOYEE_IDS)


def _payroll_files(sub: Path) -> list[str]:
    return sorted(p.relative_to(sub).as_posix() for p in (sub / "payroll").rglob("*")
                  if p.is_file() and p.name != "files.csv")


def _decides_as_canonical(mod, profile: str, fmt: str, tmp_path: Path, expected) -> list:
    """The export's submission through an annual run with the shipped profiles only: every payroll
    file read whole by ``profile``, no reject, nothing held, the credits and awards of ``expected``
    to the cent. The payroll files' ingest records, for what their messages say."""
    sub = mod.write_submission(tmp_path / "sub", fmt)
    return run.read_whole_as(sub, tmp_path / "work", profile, _payroll_files(sub), expected, mod.EMPLOYEE_IDS)


def _awards(out: Path) -> list[tuple]:
    return pl.read_csv(out / "awards.csv", infer_schema=False).select(
        "application_id", "status", "awarded", "reasons").rows()


# --- one payroll register on three tabs: one tab read --------------------------------------------

def test_repeated_tabs_one_tab_read_decides_as_canonical(tmp_path, canonical):
    """``By Department`` read (its group headings as block lines, each ``Total Department ...``
    and the ``Report Total`` checked), ``By Location`` and ``By Employee`` skipped by name and said:
    every check once, the canonical credits."""
    (rec,) = _decides_as_canonical(tabs, "payroll_register_by_group", "xlsx", tmp_path, canonical)
    assert rec.rows_read == CHECKS
    assert "sheet 'By Department': 3 preamble line(s), 3 totals line(s), 2 block header line(s)" in rec.message
    assert "sheet 'By Location' skipped: sheets.skip 'By Location' of 'payroll_register_by_group' " \
           "(168 line(s))" in rec.message, rec.message
    assert "sheet 'By Employee' skipped: sheets.skip 'By Employee' of 'payroll_register_by_group' " \
           "(170 line(s))" in rec.message, rec.message
    assert "sheet 'By Location':" not in rec.message and "sheet 'By Employee':" not in rec.message  # not read


def _agency_tabs(tmp_path: Path, read: list[str], skip: list[str]) -> Path:
    """The shipped profile as the agency's own (same name: it replaces it), reading the tabs ``read``
    and skipping ``skip``, its group headings and sub-totals said for every grouping."""
    data = yaml.safe_load((VENDORS / "payroll_register_by_group.yaml").read_text(encoding="utf-8"))
    data["sheets"] = {"read": read, "skip": skip}
    data["report"]["blocks"] = [{"label": r"(department|location):\s*(?P<group>.+)", "alone": True}]
    data["report"]["totals"][0]["label"] = "total (department|location|employee) .+"
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "payroll_register_by_group.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return folder


def _rejects(out: Path) -> dict[tuple[str, str], int]:
    """rejects.csv as (sheet, rule) -> lines."""
    got = pl.read_csv(out / "rejects.csv", infer_schema=False)
    got = got.with_columns(pl.col("file").str.extract(r"\[(.+)\]$").alias("sheet"))
    return {(s, r): n for s, r, n in got.group_by("sheet", "rule").len().iter_rows()}


def test_repeated_tabs_a_profile_reading_all_three_is_held_never_decided_three_times(tmp_path, canonical):
    """All three tabs read: ``By Location``'s 159 checks are exact copies of ``By Department``'s
    (``duplicate_row``: the first copy read, the copies rejected), ``By Employee`` (no ``Emp #``
    column: its employee only in the group heading) is a table of figures no layout reads, which
    holds the application. Each tab's own totals lines agree with its lines (scope ``file`` is
    the sheet's), so it is not the totals check that stops it: the application is HELD, nothing
    decided, and its credits are those of the payroll read once."""
    sub = tabs.write_submission(tmp_path / "sub")
    staged, out = run.decide(sub, tmp_path / "work", profiles=_agency_tabs(tmp_path, ["By *"], []))
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert rec.profile == "payroll_register_by_group" and rec.status == "partial", rec.message
    # By Employee's 170 lines (every one but the blanks) not read, By Location's 159 copies
    assert (rec.rows_read, rec.rows_accepted, rec.rows_rejected) == (2 * CHECKS + 170, CHECKS, CHECKS + 170)
    assert _rejects(out) == {("By Location", "duplicate_row"): CHECKS, ("By Employee", "unread_table"): 1}
    assert _awards(out) == [("A1", "HELD", "0.00", "INPUT_REJECTED")]
    held = pl.read_csv(out / "held.csv", infer_schema=False)
    assert set(held["file"]) == {f"payroll/{common.EMPLOYER}/{tabs.FILE_NAME}[By Employee]"}
    assert run.by_person(out, tabs.EMPLOYEE_IDS)[0] == canonical[0]  # the credits of the payroll once


def test_repeated_tabs_a_profile_reading_two_decides_the_payroll_once(tmp_path, canonical):
    """Two tabs of the same header read (``By Department``, ``By Location``; ``By Employee``
    skipped): the second tab's
    checks are exact copies of the first's, rejected as ``duplicate_row`` (a copy holds nothing:
    the first is read), each tab's totals agree with its own lines; the decision is the
    canonical one, the payroll counted once, never twice."""
    sub = tabs.write_submission(tmp_path / "sub")
    staged, out = run.decide(sub, tmp_path / "work",
                             profiles=_agency_tabs(tmp_path, ["By Department", "By Location"], ["By Employee"]))
    (rec,) = [f for f in staged.report.files if f.dataset == "payroll"]
    assert (rec.rows_read, rec.rows_accepted, rec.rows_rejected) == (2 * CHECKS, CHECKS, CHECKS), rec.message
    assert _rejects(out) == {("By Location", "duplicate_row"): CHECKS}
    assert "sheet 'By Location': 3 preamble line(s), 3 totals line(s), 2 block header line(s)" in rec.message
    assert run.by_person(out, tabs.EMPLOYEE_IDS) == canonical


# --- pay statement lines: the ER_ codes are the employer's taxes ---------------------------------

@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_code_lines_register_decides_as_canonical(fmt, tmp_path, canonical):
    """2,184 code lines read by ``dynamics_pay_statement_lines``, summed per pay statement: hours
    and gross from REG / OT / BONUS, employer taxes from the five ER_ codes; the personnel numbers
    with their leading zeros are the roster's ids (``001001``)."""
    (rec,) = _decides_as_canonical(code_lines, "dynamics_pay_statement_lines", fmt, tmp_path, canonical)
    assert rec.rows_read == len(code_lines.rows()) - 1 == 2184
    credits = pl.read_csv(tmp_path / "out-work" / "employee_credits.csv", infer_schema=False)
    assert sorted(credits["employee_id"]) == ["001001", "001002", "001003"]


def _code_lines_changed(sub: Path, code: str) -> None:
    """The first 2022 pay statement of 001001 wholly inside 2022 (period from 01/08/2022): its line
    ``code`` one cent more, in the CSV as Excel saved it."""
    path = sub / "payroll" / common.EMPLOYER / f"{code_lines.FILE_STEM}.csv"
    raw = path.read_bytes()
    rows = list(csv.reader(io.StringIO(raw.decode("cp1252"), newline="")))
    col = {h: k for k, h in enumerate(rows[0])}
    (r,) = [r for r in rows[1:] if r[col["Personnel number"]] == "001001"
            and r[col["Period start date"]] == "01/08/2022" and r[col["Code"]] == code]
    r[col["Amount"]] = f"{float(r[col['Amount']].replace(',', '')) + 0.01:,.2f}"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    path.write_bytes(buf.getvalue().encode("cp1252"))


def test_code_lines_a_cent_on_an_er_code_changes_the_decision_the_employee_side_does_not(tmp_path, canonical):
    """A cent more on ``ER_FICA`` of one 2022 check (the prior year's employer taxes T_p): that
    employee's part 1 credit falls by a cent and the award with it; a cent more on the employee's
    ``FICA`` of the same check (which equals ``ER_FICA``) changes nothing: the right lines are read."""
    ana = next(e.ssn for e in common.EMPLOYEES if e.employee_id == "1001")
    base = {r[2]: r for r in canonical[0]}
    got = {}
    for code in ("ER_FICA", "FICA"):
        sub = code_lines.write_submission(tmp_path / code / "sub", "csv")
        _code_lines_changed(sub, code)
        _, out = run.decide(sub, tmp_path / code / "work")
        got[code] = run.by_person(out, code_lines.EMPLOYEE_IDS)
    assert got["FICA"] == canonical
    changed = {r[2]: r for r in got["ER_FICA"][0]}
    assert {p for p in base if base[p] != changed[p]} == {ana}
    cols = pl.read_csv(tmp_path / "ER_FICA" / "out-work" / "employee_credits.csv", infer_schema=False).columns
    part1, credit = cols.index("part1_credit"), cols.index("credit")
    assert round(float(base[ana][part1]) - float(changed[ana][part1]), 2) == 0.01
    assert round(float(base[ana][credit]) - float(changed[ana][credit]), 2) == 0.01
    (a_base,), (a_changed,) = canonical[1], got["ER_FICA"][1]
    assert a_base != a_changed


# --- a bureau's workbook: each tab routed to its client by files.csv -----------------------------

@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_bureau_workbook_decides_as_the_three_clients_canonical_files(fmt, tmp_path, bureau_canonical):
    """The bureau's workbook (a tab per client, ``payroll/files.csv`` routing each by its ``sheet``
    column) or its three CSVs (routed by file), read by ``bureau_client_payroll_register``: each
    client's 159 checks under its own employer, ``Company Total`` checked; the three awards of the
    canonical files (A1 1405.49, A2 626.07, A3 1249.18, all APPROVED)."""
    recs = _decides_as_canonical(bureau, "bureau_client_payroll_register", fmt, tmp_path, bureau_canonical)
    assert sum(r.rows_read for r in recs) == 3 * CHECKS
    assert _awards(tmp_path / "out-work") == [("A1", "APPROVED", "1405.49", ""), ("A2", "APPROVED", "626.07", ""),
                                              ("A3", "APPROVED", "1249.18", "")]
    if fmt == "xlsx":
        (rec,) = recs
        for c in bureau.CLIENTS:
            assert f"sheet '{c.tab}': 4 preamble line(s), 1 totals line(s)" in rec.message, rec.message
    lake = pl.read_csv(tmp_path / "out-work" / "employee_credits.csv", infer_schema=False)
    by_employer = dict(lake.group_by("employer_id").agg(pl.col("employee_id").sort()).iter_rows())
    assert by_employer == {c.employer_id: sorted(e.employee_id for e in c.employees) for c in bureau.CLIENTS}


# --- a transposed register with its check date and pay period above the table --------------------

@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_transposed_register_decides_as_canonical(fmt, tmp_path, canonical):
    """A sheet (or a CSV) per pay run read by ``payroll_summary_by_pay_run``: the two-cell
    ``Check date`` and ``Pay period`` lines above the table set every employee's column, a line per
    employee's group of columns, the TOTAL group checked on every sheet; no files.csv."""
    recs = _decides_as_canonical(transposed, "payroll_summary_by_pay_run", fmt, tmp_path, canonical)
    assert sum(r.rows_read for r in recs) == CHECKS
    said = "4 preamble line(s), 1 totals line(s), 2 block header line(s)"
    if fmt == "xlsx":
        assert [r.file.rsplit("/", 1)[1] for r in recs] == [transposed.workbook_name(y) for y in (2022, 2023, 2024)]
        assert sum(r.message.count(said) for r in recs) == 53
    else:
        assert len(recs) == 53 and all(said in r.message for r in recs)


def test_transposed_register_without_its_period_block_is_not_decided(tmp_path):
    """The shipped profile less its ``pay period`` block, as the agency's own: the period printed
    above the table is read by nothing (its line is taken for the table's first row): no file is
    read, and the run stops before anything is decided (``SubmissionIncomplete``, naming each file)."""
    data = yaml.safe_load((VENDORS / "payroll_summary_by_pay_run.yaml").read_text(encoding="utf-8"))
    data["report"]["blocks"] = [b for b in data["report"]["blocks"] if b["label"] != "pay period"]
    assert len(data["report"]["blocks"]) == 1
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "payroll_summary_by_pay_run.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    sub = transposed.write_submission(tmp_path / "sub", "csv")
    with pytest.raises(SubmissionIncomplete, match="nothing was decided") as err:
        run.decide(sub, tmp_path / "work", profiles=folder)
    assert all(f"{transposed.csv_name(d)} could not be read" in str(err.value) for d, _ in transposed.qbd.years()[2023])


def test_the_two_transposed_profiles_each_read_their_own_table():
    """QuickBooks Desktop's table and this one's are the same table: both transposed profiles reach
    its four fields on either. Where the ``Check date`` and ``Pay period`` lines stand above it,
    only ``payroll_summary_by_pay_run`` finds the table (without them the first of those lines is
    taken for its first row); where they do not, the profile that needs them fits less
    (``transpose.fit``: its two block lines missing), so QuickBooks Desktop's reads its own file."""
    layouts = {p.name: p for p in load_profiles()}
    qbd, by_run = layouts["quickbooks_desktop_payroll_summary"], layouts["payroll_summary_by_pay_run"]
    (d, checks), *_ = transposed.qbd.years()[2022]

    def records(rows: list[list]) -> list:
        return rd.delimited_records(common.excel_csv(rows).decode("cp1252"), ",")

    theirs, ours = records(transposed.qbd.sheet_rows(d, checks)), records(transposed.sheet_rows(d, checks))
    fits = {}
    for p in (qbd, by_run):
        f, _, used = tp.find_layout([p], theirs)
        fits[p.name] = tp.fit(f, used)
    assert fits == {"quickbooks_desktop_payroll_summary": (4, 0), "payroll_summary_by_pay_run": (4, -2)}
    assert tp.find_layout([qbd, by_run], theirs)[0].match.profile.name == "quickbooks_desktop_payroll_summary"
    assert tp.find_layout([qbd], ours)[0] is None
    found, _, used = tp.find_layout([qbd, by_run], ours)
    assert found.match.profile.name == "payroll_summary_by_pay_run" and tp.fit(found, used) == (4, 0)
