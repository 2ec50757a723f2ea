"""Every physical line of a file accounted for (issue 41 parts 2 and 8; spec section 1, "Payroll as
employers' systems write it"): a quote left open in a payroll cell makes each line it would carry
into one cell a line not read, named, and those lines hold the applications they could belong to;
a UTF-8 file with one line saved as Windows-1252 is read as UTF-8 but that line (``Café`` stays
``Café`` on the notice, the certificate and the Division's award file); the lines of a file are
those read, rejected and passed over; a workbook whose tabs repeat the same lines is one line."""

from __future__ import annotations

import datetime as dt
import re
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


def run(sub: Path, work: Path, out: Path, products: bool = False) -> pl.DataFrame:
    """awards.csv of an annual run of tax year 2023 (the steps, no Prefect)."""
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=products))
    return pl.read_csv(out / "awards.csv", infer_schema=False)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("lines")
    sub = root / "canonical"
    twelve_employers_without_agency_gaps(sub)  # no agency gap holds anything here
    right = run(sub, root / "w_right", root / "o_right")
    assert (right["status"] == "APPROVED").sum() >= 2
    return {"root": root, "sub": sub, "right": right}


def copy(base, name: str) -> Path:
    dst = base["root"] / name
    shutil.copytree(base["sub"], dst)
    return dst


def test_a_quote_left_open_holds_the_applications_of_the_lines_it_would_hide(base):
    """A stray ``"`` opening the last cell of a payroll line: today the line is one huge cell
    (one reject) and the applications of every line below it are decided on what is left."""
    root = base["root"]
    right = base["right"]
    approved = right.filter(pl.col("status") == "APPROVED")
    sub = copy(base, "open_quote")
    (pay,) = sorted((sub / "payroll").glob("*.csv"))
    lines = pay.read_text().splitlines(keepends=True)
    # the quote opens on the second line of an approved applicant's lines: the rest of the file hidden
    employer = approved["employer_id"][0]
    at = next(i for i, ln in enumerate(lines) if ln.startswith(employer + ",")) + 1  # 0-based: physical line at + 1
    assert lines[at].startswith(employer + ",")
    cells = lines[at].rstrip("\n").split(",")
    cells[-1] = '"' + cells[-1]
    lines[at] = ",".join(cells) + "\n"
    pay.write_text("".join(lines))
    rows = pl.read_csv(base["sub"] / "payroll" / pay.name, infer_schema=False)
    read, hidden = rows.head(at - 1), rows.slice(at - 1)  # physical lines 2..at, and at + 1 to the end
    # the applications of the employers the file's lines read name, whose lines the quote hides
    both = set(read["employer_id"]) & set(hidden["employer_id"])
    touched = right.filter(pl.col("employer_id").is_in(list(both)))["application_id"].to_list()
    assert approved.filter(pl.col("application_id").is_in(touched)).height >= 1

    awards = run(sub, root / "w_quote", root / "o_quote")
    status = dict(awards.select("application_id", "status").iter_rows())
    assert {status[a] for a in touched} == {"HELD"}, status
    rejects = pl.read_csv(root / "o_quote" / "rejects.csv", infer_schema=False)
    mine = rejects.filter(pl.col("file") == f"payroll/{pay.name}")
    assert mine["rule"].unique().to_list() == ["open_quote"]
    assert sorted(int(x) for x in mine["line"]) == list(range(at + 1, len(lines) + 1))  # every line named
    first = mine.filter(pl.col("line") == str(at + 1))["message"][0]
    assert first.startswith(f"employer_taxes: a quote opened in this cell is not closed on its line: it would carry "
                            f"lines {at + 2} to {len(lines)} into one cell")
    held = pl.read_csv(root / "o_quote" / "held.csv", infer_schema=False)
    assert set(held.filter(pl.col("rules") == "open_quote")["application_id"]) >= set(touched)


def test_an_employer_all_of_whose_lines_a_quote_hides_is_held(base):
    """The lines a quote left open would swallow still name their employer in their text (spec
    section 7: every application of the employers named in the same file): an employer none of
    whose lines is read, in a file of several employers with no folder, is held, not decided on nothing."""
    root, right = base["root"], base["right"]
    sub = copy(base, "open_quote_sorted")
    (pay,) = sorted((sub / "payroll").glob("*.csv"))
    head, *body = pay.read_text().splitlines(keepends=True)
    body.sort(key=lambda ln: ln.split(",", 1)[0])  # one employer's lines together, employers in order
    employers = list(dict.fromkeys(ln.split(",", 1)[0] for ln in body))
    approved = set(right.filter(pl.col("status") == "APPROVED")["employer_id"])
    cut = next(e for e in employers[1:-1] if e in approved)  # the quote opens on its first line
    at = next(i for i, ln in enumerate(body) if ln.startswith(cut + ","))
    cells = body[at].rstrip("\n").split(",")
    cells[-1] = '"' + cells[-1]
    body[at] = ",".join(cells) + "\n"
    pay.write_text(head + "".join(body))
    hidden = employers[employers.index(cut):]  # every line of these employers is hidden
    awards = run(sub, root / "w_sorted", root / "o_sorted")
    status = dict(awards.select("application_id", "status").iter_rows())
    theirs = right.filter(pl.col("employer_id").is_in(hidden))
    assert theirs.height >= 2 and {status[a] for a in theirs["application_id"]} == {"HELD"}, status
    # the hidden lines name other employers than the one the lines read name: whose each is, is in
    # doubt, so they hold every application of the file's employers (the first one's too)
    assert {status[a] for a in right["application_id"]} == {"HELD"}
    held = pl.read_csv(root / "o_sorted" / "held.csv", infer_schema=False).filter(pl.col("rules") == "open_quote")
    assert set(held["application_id"]) == set(right["application_id"])


def test_a_quoted_cell_holding_line_breaks_is_still_one_cell(tmp_path):
    """A note over three lines, its quote closed, in a record of the header's width: read (as before)."""
    from transforms.ingest.read.files.readers import read_delimited

    t = read_delimited('a,b,c\n1,"first\nsecond, third",3\n4,5,6\n', ",")
    assert t.frame.get_column("__line").to_list() == [2, 4] and not t.unread and not t.ragged
    t = read_delimited('a,b,c\n1,"x,2,3\n4,5,6\n7,8,9\n', ",")
    assert t.frame.height == 0 and sorted(t.unread) == [2, 3, 4]
    t = read_delimited('a,b,c\n"1,2,3\n4,5,6\n7,8"9,0\n1,1,1\n', ",")  # closed by another stray quote
    assert t.frame.get_column("__line").to_list() == [5] and sorted(t.unread) == [2, 3, 4]


def test_one_windows_1252_line_leaves_every_other_name_as_written(base):
    sub = copy(base, "cp1252_line")
    first, second = base["right"].filter(pl.col("status") == "APPROVED")["application_id"].head(2)
    text = (sub / "applications.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    for line in text:
        if line.startswith(first + ","):
            cells = line.split(",")
            cells[2] = "Café Niño LLC"
            line = ",".join(cells)
        if line.startswith(second + ","):
            cells = line.split(",")
            cells[2] = "Señor Peño's Cantina"
            out.append(",".join(cells).encode("cp1252"))
            continue
        out.append(line.encode("utf-8"))
    (sub / "applications.csv").write_bytes(b"".join(out))
    cp_line = 1 + next(i for i, b in enumerate(out) if b.startswith(second.encode()))
    root = base["root"]
    from transforms.ingest import ingest_folder

    (rec,) = [f for f in ingest_folder(sub, root / "w_enc_ingest", KEY).files if f.file == "applications.csv"]
    assert f"read as utf-8, line {cp_line} as cp1252 (not valid UTF-8)" in rec.message and rec.rows_rejected == 0
    awards = run(sub, root / "w_enc", root / "o_enc", products=True)
    names = (root / "o_enc" / "taxation" / "award_file.csv").read_text(encoding="utf-8")
    assert "Ã" not in names and "Â" not in names
    assert awards.filter(pl.col("application_id").is_in([first, second]))["status"].to_list() == ["APPROVED"] * 2
    assert "Café Niño LLC" in names and "Señor Peño's Cantina" in names
    # the run page counts each file's lines beside those read, rejected and passed over (the header)
    n = len(out)
    page = (root / "o_enc" / "index.html").read_text(encoding="utf-8")
    assert (f'<tr><td>applications.csv</td><td class="num">{n}</td><td class="num">{n - 1}</td>'
            f'<td class="num">0</td><td class="num">1</td></tr>') in page
    notice = (root / "o_enc" / "notices" / f"{first}.html").read_text(encoding="utf-8")
    assert "Café Niño LLC" in notice and "CafÃ©" not in notice
    assert "Señor Peño" in (root / "o_enc" / "notices" / f"{second}.html").read_text(encoding="utf-8")
    certs = sorted((root / "o_enc" / "certificates").glob(f"*{first}.html")) + sorted(
        (root / "o_enc" / "certificates").glob(f"*{second}.html"))
    assert len(certs) == 2
    for cert in certs:
        page = cert.read_text(encoding="utf-8")
        assert ("Café Niño LLC" in page or "Señor Peño" in page) and "Ã" not in page


def test_a_workbook_whose_tabs_repeat_the_same_lines_reads_the_first_copy(tmp_path):
    """Two tabs of one pay run, the same lines, read by a profile naming both (``sheets: {read:
    [...]}``): was ``internal error: IndexError`` (the run's exact-copy rule took the same line of
    the two tabs for one row, and the file read again for its cells lacked its folder's employer).
    Now the first tab is read and the second tab's lines are exact copies of it, each named."""
    from tests.test_profile_keys import TRANSPOSED, expected, profiles, read_payroll, run_tab
    from tests.test_unread_tables import EMPLOYER, submission, workbook
    from transforms.ingest import ingest_folder
    from transforms.ingest.read.layouts.profile_files import load_profiles

    layouts = load_profiles(profiles(tmp_path, TRANSPOSED))
    sub = submission(tmp_path / "sub")
    workbook(sub / "payroll" / EMPLOYER / "register.xlsx",
             {"Run 2023-01-06": run_tab("01/06/2023"), "Run 2023-01-06 (copy)": run_tab("01/06/2023")})
    report = ingest_folder(sub, tmp_path / "w", KEY, layouts=layouts)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert (rec.status, rec.rows_read, rec.rows_accepted, rec.rows_rejected) == ("partial", 4, 2, 2), rec
    rejects = report.rejects.filter(pl.col("file").str.contains("register.xlsx"))
    assert sorted(rejects.select("file", "line", "rule", "message").rows()) == [
        (f"payroll/{EMPLOYER}/register.xlsx[Run 2023-01-06 (copy)]", line, "duplicate_row",
         f"exact duplicate of line {line} of payroll/{EMPLOYER}/register.xlsx[Run 2023-01-06]") for line in (2, 3)]
    assert read_payroll(tmp_path / "w") == {k: v for k, v in expected().items() if k[1] == "2023-01-06"}


HEADER = "employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes\n"


def _row(m: int, employer: str = "100000001") -> str:
    return f"{employer},E{m},900-11-00{m:02d},2023-0{m}-01,2023-0{m}-28,120.50,1807.50,197.92\n"


@pytest.mark.parametrize("name, text, counts", [
    # lines, read, rejected, passed over
    ("blanks.csv", "\n" + HEADER + _row(1) + "\n" + _row(2) + "  \n" + _row(3) + "\n", (8, 3, 0, 5)),
    ("open_quote.csv", HEADER + _row(1) + _row(2).replace(",1807.50", ',"1807.50') + _row(3) + _row(4), (5, 1, 3, 1)),
    ("open_quote_closed.csv", HEADER + _row(1) + _row(2).replace(",E2", ',"E2') + _row(3).replace("E3,", 'E3",')
     + _row(4) + _row(5), (6, 3, 2, 1)),
    ("quoted_note.csv", HEADER.replace("\n", ",notes\n") + _row(1).replace("\n", ',"a note\nover two lines"\n')
     + _row(2).replace("\n", ",\n"), (4, 2, 0, 2)),
])
def test_every_line_of_a_file_is_read_rejected_or_passed_over(tmp_path, name, text, counts):
    from transforms.ingest import ingest_folder

    (tmp_path / "in" / "payroll").mkdir(parents=True)
    (tmp_path / "in" / "payroll" / name).write_text(text)
    report = ingest_folder(tmp_path / "in", tmp_path / "wd", KEY)
    (rec,) = report.files
    assert (rec.lines, rec.rows_accepted, rec.rows_rejected, rec.passed_over) == counts, rec
    assert rec.lines == rec.rows_accepted + rec.rows_rejected + rec.passed_over
    assert f"{counts[0]} lines: {counts[1]} read, {counts[2]} rejected, {counts[3]} passed over" in report.summary()
    if "open_quote" in name:
        assert set(report.rejects["rule"]) == {"open_quote"}
    if name == "blanks.csv":
        assert "4 blank line(s) passed over" in rec.message


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_report_with_a_title_and_totals_lines_accounts_for_them(tmp_path, fmt):
    """A Gusto custom report (a title and its time period above the header, a subtotal per payroll,
    a grand total): every line is a row read or a line passed over, and the file's message says them."""
    from tests.fixtures.exports import gusto_custom_report as gusto
    from transforms.ingest import ingest_folder
    from transforms.ingest.read.files import bytecount
    from transforms.ingest.read.files.workbooks import read_workbook

    sub = gusto.write_submission(tmp_path / "sub", fmt)
    (path,) = sorted((sub / "payroll").rglob(f"*.{fmt}"))
    report = ingest_folder(sub, tmp_path / "wd", KEY)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    physical = (bytecount.lines(path.read_bytes()) if fmt == "csv"
                else sum(len(s.records) for s in read_workbook(path)))
    assert rec.lines == physical and rec.rows_rejected == 0 and rec.rows_accepted > 0
    assert rec.lines == rec.rows_accepted + rec.rows_rejected + rec.passed_over
    said = dict((what, int(n)) for n, what in re.findall(r"(\d+) (preamble|totals|blank) line", rec.message))
    assert said["preamble"] >= 1 and said["totals"] >= 1, rec.message
    assert rec.passed_over == 1 + sum(said.values()), rec.message  # the header, and what the message says


def test_a_quote_left_open_in_a_report_is_lines_not_read(tmp_path):
    """The report route (a title above the header, subtotals): a stray quote opening a cell of
    line 21, closed by the quotes of a later cell, makes lines 21 to 23 lines not read, each named."""
    from tests.fixtures.exports import gusto_custom_report as gusto
    from transforms.ingest import ingest_folder

    sub = gusto.write_submission(tmp_path / "sub", "csv")
    (path,) = sorted((sub / "payroll").rglob("*.csv"))
    lines = path.read_bytes().split(b"\n")
    cells = lines[20].split(b",")
    cells[1] = b'"' + cells[1]
    lines[20] = b",".join(cells)
    path.write_bytes(b"\n".join(lines))
    report = ingest_folder(sub, tmp_path / "wd", KEY)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    quoted = report.rejects.filter(pl.col("rule") == "open_quote")
    assert quoted["line"].to_list() == [21, 22, 23]
    assert quoted["message"][0].startswith("Pay period start: a quote opened in this cell is not closed on its line: "
                                           "it would carry lines 22 to 23 into one cell")
    assert rec.lines == rec.rows_accepted + rec.rows_rejected + rec.passed_over and rec.lines == len(lines) - 1
