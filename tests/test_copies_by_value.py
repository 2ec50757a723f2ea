"""A copy saved again is still a copy (spec section 1, amended; issue 41 part 4): lines are compared
by the values they hold, not by how they are written. A payroll file sent again after a spreadsheet
saved it (``0.00`` written ``0``, ``1.30`` written ``1.3``, dates rewritten from ISO to m/d/yyyy,
check numbers without their leading zeros, every cell quoted, trailing spaces) adds nothing, in the
same run and in a later run against the lake under another file name: the credits are the single
file's to the cent and every line of the copy is a ``duplicate_row`` naming the earlier file and
line. A file differing in one real value is not a copy of that line."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import shutil
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.award import ledger
from transforms.ingest.read.cast.cell_values import check_value, compared
from transforms.ingest.read.layouts.profile_parts import NumberFormat
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
ORIGINAL = "payroll/payroll_001.csv"
COPY = "payroll/payroll_001_saved_again.csv"  # after the original in the run's order


def run(sub: Path, work: Path, out: Path):
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=run_id, tax_year=2023, as_of=AS_OF, params=PARAMS, settings=Settings(), workdir=work,
        out_dir=out, staged=staged, result=result, started_at=ledger.now_utc()))
    return staged, result


def saved_again(text: str, *, change=None) -> str:
    """``text`` (a CSV) as a spreadsheet writes it back: numbers without trailing zeros (and
    check numbers without leading ones), ISO dates as m/d/yyyy, every cell quoted, a trailing
    space on each. ``change(line, header, cell)``: a cell to write instead (a real difference)."""
    rows = list(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(rows[0])
    for n, row in enumerate(rows[1:], start=2):
        cells = []
        for head, cell in zip(rows[0], row, strict=True):
            if (m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", cell)) is not None:
                cell = f"{int(m[2])}/{int(m[3])}/{m[1]}"
            elif re.fullmatch(r"-?\d+\.\d+", cell):
                cell = cell.rstrip("0").rstrip(".")
            elif re.fullmatch(r"\d+", cell) and head == "check_id":
                cell = str(int(cell))
            if change is not None:
                cell = change(n, head, cell)
            cells.append(cell + " ")
        writer.writerow(cells)
    return out.getvalue()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A submission whose one payroll file carries cells no field maps (an amount ``0.00``, a rate
    ``1.30`` or ``13.00``, an ISO date, a department) and check numbers with leading zeros; its
    single run's credits and awards."""
    root = tmp_path_factory.mktemp("copies")
    sub = root / "sub"
    generate_submission(sub, employers=10, seed=7, tax_year=2023, groups_and_fiscal=False)
    path = sub / ORIGINAL
    frame = pl.read_csv(path, infer_schema=False)
    i = pl.int_range(pl.len())
    frame = frame.with_columns(
        pl.format("{}", (i + 1).cast(pl.String).str.zfill(6)).alias("check_id"),
        pl.lit("0.00").alias("deduction"),
        pl.when(i % 2 == 0).then(pl.lit("1.30")).otherwise(pl.lit("13.00")).alias("rate_note"),
        pl.lit("2023-01-15").alias("memo_date"),
        pl.lit("Shop A").alias("department"),
    )
    frame.write_csv(path)
    staged, result = run(sub, root / "w", root / "o")
    assert staged.rejects.height == 0  # every line of the file is read
    return root, staged, result


def credits(result) -> pl.DataFrame:
    return steps.employee_years_of(result).sort("application_id", "employee_id", "tax_year")


def awards(out: Path) -> str:
    return (out / "awards.csv").read_text()


def copy_rejects(staged) -> pl.DataFrame:
    return staged.rejects.filter(pl.col("file") == COPY).sort("line")


def test_the_single_file_has_credit_to_double(base):
    root, _, result = base
    assert credits(result).get_column("credit_cents").sum() > 100_000  # over $1,000: a copy counted shows
    assert "APPROVED" in awards(root / "o")


def test_a_copy_saved_again_in_the_same_run_adds_nothing(base, tmp_path):
    root, single, result = base
    sub = tmp_path / "sub"
    shutil.copytree(root / "sub", sub)
    original = (sub / ORIGINAL).read_text()
    (sub / COPY).write_text(saved_again(original))
    staged, got = run(sub, tmp_path / "w", tmp_path / "o")
    assert credits(got).equals(credits(result))
    assert awards(tmp_path / "o") == awards(root / "o")
    rejects = copy_rejects(staged)
    lines = len(original.splitlines()) - 1
    assert rejects.height == lines
    assert set(rejects.get_column("rule")) == {"duplicate_row"}
    assert rejects.get_column("message").to_list() == [f"exact duplicate of line {n} of {ORIGINAL}"
                                                       for n in range(2, lines + 2)]
    assert staged.rejects.filter(pl.col("file") != COPY).height == 0


def test_a_copy_saved_again_in_a_later_run_under_another_name_adds_nothing(base, tmp_path):
    root, _, result = base
    work = tmp_path / "w"
    shutil.copytree(root / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(root / "sub", sub)
    original = (sub / ORIGINAL).read_text()
    (sub / COPY).write_text(saved_again(original))
    staged = steps.stage_inputs(sub, work, KEY)
    got = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    assert credits(got).equals(credits(result))
    rejects = copy_rejects(staged)
    lines = len(original.splitlines()) - 1
    assert rejects.height == lines
    assert set(rejects.get_column("rule")) == {"duplicate_row"}
    assert rejects.get_column("message").to_list() == [
        f"exact duplicate of line {n} of {ORIGINAL} (sent in an earlier run)" for n in range(2, lines + 2)]


def _one_hour_more(line: int, head: str, cell: str) -> str:
    """Line 5's hours one tenth more (1.3 -> 1.4); line 8's rate 13 where it was 1.3."""
    if line == 5 and head == "hours":
        return str(Decimal(cell) + Decimal("0.1"))
    if line == 8 and head == "rate_note":
        return "13" if cell == "1.3" else "1.3"
    return cell


def test_a_file_differing_in_one_value_is_not_a_copy_of_that_line(base, tmp_path):
    root, _, result = base
    sub = tmp_path / "sub"
    shutil.copytree(root / "sub", sub)
    original = (sub / ORIGINAL).read_text()
    (sub / COPY).write_text(saved_again(original, change=_one_hour_more))
    staged, _ = run(sub, tmp_path / "w", tmp_path / "o")
    rejects = copy_rejects(staged)
    lines = len(original.splitlines()) - 1
    assert set(range(2, lines + 2)) - set(rejects.get_column("line").to_list()) == {5, 8}
    assert set(rejects.get_column("rule")) == {"duplicate_row"}
    # the two lines that differ are read and add (the hours of both lines count)
    read = staged.frames["payroll"]
    read = read.collect() if isinstance(read, pl.LazyFrame) else read
    assert read.filter(pl.col("source_file") == COPY).get_column("source_line").sort().to_list() == [5, 8]


def test_a_later_run_tells_one_real_difference_from_a_copy(base, tmp_path):
    root, _, _ = base
    work = tmp_path / "w"
    shutil.copytree(root / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(root / "sub", sub)
    original = (sub / ORIGINAL).read_text()
    (sub / COPY).write_text(saved_again(original, change=_one_hour_more))
    staged = steps.stage_inputs(sub, work, KEY)
    lines = len(original.splitlines()) - 1
    # the lake keeps no cell that no field maps: line 8 (its rate only differs) is a copy there
    assert set(range(2, lines + 2)) - set(copy_rejects(staged).get_column("line").to_list()) == {5}


# --- the values a cell is compared by ---------------------------------------------------------

FMT = NumberFormat()
DATES = ["%Y-%m-%d"]


def value(cell: str | None) -> str | None:
    return compared(pl.Series("c", [cell], dtype=pl.String), DATES, FMT).item()


def test_cells_are_compared_by_their_values():
    assert value("0.00") == value("0") == value(" -0 ") == value('0.') == "0"
    assert value("1.30") == value("1.3") == value("+1.300") == value("$1.30") == "1.3"
    assert value("(1,234.50)") == value("-1234.5") == "-1234.5"
    assert value("2023-01-15") == value("1/15/2023") == value("01/15/23") == value("2023-01-15 00:00:00") == "2023-01-15"
    assert value("  Shop A ") == "Shop A" and value("") is None and value("   ") is None
    assert len({value(c) for c in ("1.3", "13", "1,3", "0.13", "130")}) == 5
    assert value("12345678901234567890") != value("12345678901234567891")  # no float: every digit counts
    assert value("2023-01-15 09:30:00") != value("2023-01-15 17:00:00")  # a time of day is not taken off
    assert pl.select(check_value(pl.Series(["000123", "123", "0123", "1230", "000", "A0012"]))).to_series().to_list() \
        == ["123", "123", "123", "1230", "0", "A0012"]


def test_a_column_of_few_values_and_one_of_many_are_compared_alike():
    """A column repeating a few values is worked out once per value, one of many cell by cell:
    the same values either way, and the table's own cells are left as written."""
    few = pl.Series("c", [" 0.00", "1.30 ", "1/15/2023", "Shop A", None] * 40)
    many = pl.Series("c", [*few.to_list(), *[f"{i}.10" for i in range(200)]])
    got_few, got_many = compared(few, DATES, FMT), compared(many, DATES, FMT)
    assert got_few.to_list() == ["0", "1.3", "2023-01-15", "Shop A", None] * 40
    assert got_many.head(200).to_list() == got_few.to_list() and got_many[200] == "0.1" and got_many[-1] == "199.1"
    assert few[0] == " 0.00" and many[1] == "1.30 " and many[-1] == "199.10"


def _written(d: Decimal, zeros: int, lead: int, style: int) -> str:
    """``d`` as a person or a spreadsheet writes it: trailing and leading zeros, a sign, a
    currency sign, thousands separators, parentheses for a negative, spaces around."""
    sign, digits, exp = d.as_tuple()
    text = f"{abs(d):f}"
    if zeros:
        text += ("" if "." in text else ".") + "0" * zeros
    whole, _, frac = text.partition(".")
    if style == 1 and len(whole) > 3:
        whole = f"{int(whole):,}"
    text = "0" * lead + whole + ("." + frac if frac else "")
    if style == 2:
        text = "$" + text
    if sign and d != 0:
        text = f"({text})" if style == 3 else "-" + text
    elif style == 4:
        text = "+" + text
    return f" {text} "


AMOUNTS = st.decimals(min_value=Decimal("-1e15"), max_value=Decimal("1e15"), places=4, allow_nan=False)
WRITTEN = st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 4))


@settings(max_examples=300, deadline=None)
@given(AMOUNTS, WRITTEN, WRITTEN, AMOUNTS)
def test_a_number_however_written_is_its_value_and_no_other(a, w1, w2, b):
    """Two writings of one value compare equal; writings of two values never do."""
    same = compared(pl.Series("c", [_written(a, *w1), _written(a, *w2)]), DATES, FMT).to_list()
    assert same[0] == same[1]
    other = compared(pl.Series("c", [_written(a, *w1), _written(b, *w2)]), DATES, FMT).to_list()
    assert (other[0] == other[1]) == (a == b)


@settings(max_examples=200, deadline=None)
@given(st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2068, 12, 31)), st.integers(0, 4),
       st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2068, 12, 31)))
def test_a_date_however_written_is_its_date_and_no_other(d, style, e):
    def written(x: dt.date, s: int) -> str:
        return [x.isoformat(), f"{x.month}/{x.day}/{x.year}", x.strftime("%m/%d/%Y"), x.strftime("%m/%d/%y"),
                f"{x.isoformat()} 00:00:00"][s]
    got = compared(pl.Series("c", [d.isoformat(), written(d, style), written(e, style)]), DATES, FMT).to_list()
    assert got[0] == got[1] == d.isoformat()
    assert (got[2] == got[0]) == (d == e)
