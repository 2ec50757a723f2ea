"""``impcredit check`` (issue 29, item 7): an employer's check of its submission before it submits.

Real submissions built from ``tests/fixtures/canonical_small`` (a clean canonical submission): the
clean one is read whole (exit 0) and its totals per employer and calendar year are the payroll file's
own sums spread by day, computed here independently; one bad payroll line is exit 1 and the page
names its file, line, column and value and the application it holds; a submission without its
roster is exit 2 in one line. No ssn reaches the page, nothing is left behind (no ledger, no lake,
no temporary folder, the submission unchanged), and the page, opened in headless Chromium (as
``tests/test_run_page.py`` does), shows the held application and loads nothing from anywhere."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from transforms.runs.check import TEMP_PREFIX, check_submission, write_check_page
from transforms.runs.inputs import SubmissionIncomplete

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "canonical_small"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SSNS = ("900-11-0001", "900110001")  # the bad submission's person E000 of employer 100000001, dashed and bare
MARKUP_NAME = '<b id="injected">Acme & Sons</b>'


def digest_tree(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (by relative path)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def cli(args: list[str], cwd: Path, tmpdir: Path) -> subprocess.CompletedProcess:
    """The command in its own process, with its own TMPDIR (to see what it leaves there)."""
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "flows.cli", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


class Cells(HTMLParser):
    """The text of each cell of each row of the table with a given id."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.depth, self.rows, self.cell = table_id, 0, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and (dict(attrs).get("id") == self.table_id or self.depth):
            self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table(html: str, table_id: str) -> list[list[str]]:
    p = Cells(table_id)
    p.feed(html)
    return p.rows[1:]  # without the header row


@pytest.fixture(scope="module")
def subs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("check")
    clean = root / "clean"
    shutil.copytree(FIXTURE, clean)
    bad = root / "bad"
    shutil.copytree(FIXTURE, bad)
    # E000's ssn becomes 900-11-0001 (dashed in certifications and payroll, bare on line 4);
    # line 3 (the header is line 1) has hours 'abc'; the employer's name is markup
    for name in ("certifications.csv", "payroll/payroll.csv"):
        (bad / name).write_text((bad / name).read_text().replace("900-50-1000", SSNS[0]))
    lines = (bad / "payroll" / "payroll.csv").read_text().splitlines(keepends=True)
    assert lines[2].startswith("100000001,E000,") and lines[3].startswith("100000001,E000,")
    cells = lines[2].split(",")
    cells[5] = "abc"
    lines[2] = ",".join(cells)
    lines[3] = lines[3].replace(SSNS[0], SSNS[1])
    (bad / "payroll" / "payroll.csv").write_text("".join(lines))
    apps = pl.read_csv(bad / "applications.csv", infer_schema=False)
    apps.with_columns(pl.when(pl.col("application_id") == "A000").then(pl.lit(MARKUP_NAME))
                      .otherwise(pl.col("employer_name")).alias("employer_name")).write_csv(bad / "applications.csv")
    incomplete = root / "incomplete"
    shutil.copytree(FIXTURE, incomplete)
    (incomplete / "roster.csv").unlink()
    tmpdir = root / "tmp"
    tmpdir.mkdir()
    return {"root": root, "clean": clean, "bad": bad, "incomplete": incomplete, "tmp": tmpdir}


@pytest.fixture(scope="module")
def runs(subs) -> dict[str, subprocess.CompletedProcess]:
    """The command on each submission, from the folder that holds them (its default page is
    ``<DIR>-check.html`` there); what every file held before and after."""
    root = subs["root"]
    before = {k: digest_tree(subs[k]) for k in ("clean", "bad", "incomplete")}
    work = ROOT / "data" / "work" / "impcredit.duckdb"
    ledger_before = work.stat().st_mtime_ns if work.exists() else None
    out = {k: cli(["--input", k], root, subs["tmp"]) for k in ("clean", "bad", "incomplete")}
    out["unchanged"] = all(digest_tree(subs[k]) == before[k] for k in before)
    out["ledger_unchanged"] = (work.stat().st_mtime_ns if work.exists() else None) == ledger_before
    return out


def spread_by_day(payroll: Path) -> dict[tuple[str, int], list[float]]:
    """Hours, wages and taxes per (employer, calendar year), each row spread evenly over its days
    (spec section 3), computed here from the CSV with the standard library alone."""
    out: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in pl.read_csv(payroll, infer_schema=False).iter_rows(named=True):
        start, end = dt.date.fromisoformat(row["period_start"]), dt.date.fromisoformat(row["period_end"])
        n = (end - start).days + 1
        for year in range(start.year, end.year + 1):
            days = (min(end, dt.date(year, 12, 31)) - max(start, dt.date(year, 1, 1))).days + 1
            for i, col in enumerate(("hours", "gross_wages", "employer_taxes")):
                out[(row["employer_id"], year)][i] += float(row[col]) * days / n
    return out


def test_a_clean_submission_is_read_whole_and_its_totals_are_the_payroll_spread_by_day(subs, runs):
    r = runs["clean"]
    assert r.returncode == 0, r.stdout + r.stderr
    page = subs["root"] / "clean-check.html"
    assert "would be read whole" in r.stdout and str(page) in r.stdout.replace("\n", "")
    result = check_submission(subs["clean"], now=dt.datetime(2024, 7, 1, 9, 0))
    assert result.read_whole and result.problems == 0 and result.rejects == [] and result.held == []
    assert result.applications == 10 and all(f.read for f in result.files) and len(result.files) == 6
    assert {f.file: f.layout for f in result.files}["payroll/payroll.csv"] == "canonical"
    expected = spread_by_day(FIXTURE / "payroll" / "payroll.csv")
    got = {(t.employer_id, t.year): [t.hours, t.gross_wages, t.employer_taxes] for t in result.totals}
    assert got.keys() == expected.keys() and len(got) == 30
    for k, v in expected.items():
        assert got[k] == pytest.approx(v, abs=1e-6), k
    # the first row (2021-12-27..2022-01-09, 100.66 hours) puts 5/14 of itself in 2021, 9/14 in 2022
    assert got[("100000001", 2021)][0] > 100.66 * 5 / 14 > 0 and ("100000001", 2020) not in got
    html = page.read_text()
    assert "Spread by day" in html
    rows = {(c[0].split()[0], c[1]): c for c in table(html, "totals")}
    h, w, t = expected[("100000001", 2022)]
    assert rows[("100000001", "2022")][2:] == [f"{h:,.2f}", f"${w:,.2f}", f"${t:,.2f}"]


def test_a_bad_payroll_line_is_named_with_the_application_it_holds(subs, runs):
    r = runs["bad"]
    assert r.returncode == 1, r.stdout + r.stderr
    assert "would not be read whole" in r.stdout and "payroll/payroll.csv line 3, hours" in r.stdout
    # one message per problem: the column said once; the value as written; the application it holds
    assert "hours: hours:" not in r.stdout
    assert "payroll/payroll.csv line 3, hours \u201cabc\u201d: not a number (application A000)" in r.stdout
    result = check_submission(subs["bad"])
    assert not result.read_whole and result.problems == 1 and result.rejected_lines == 1
    (line,) = result.rejects
    assert (line.file, line.line, line.column, line.value, line.rule) == ("payroll/payroll.csv", 3, "hours", "abc",
                                                                        "not_a_number")
    assert [h.application_id for h in result.held] == ["A000"]
    assert result.held[0].why == ["payroll/payroll.csv line 3, hours: not a number"]
    html = (subs["root"] / "bad-check.html").read_text()
    assert table(html, "rejects") == [["payroll/payroll.csv", "3", "hours", "\u201cabc\u201d", "not a number",
                                       "application A000"]]
    held = table(html, "held")
    assert held == [["A000", f"{MARKUP_NAME} (100000001)", "2023", "payroll/payroll.csv line 3, hours: not a number"]]
    files = {row[0]: row for row in table(html, "files")}
    # every line: 1,156 = 1,154 read + 1 rejected + 1 passed over (the header)
    assert files["payroll/payroll.csv"][1:8] == ["payroll", "canonical", "1,156", "1,155", "1,154", "1", "1"]
    # the rejected row counts for nothing: 2022 of employer 100000001 lacks exactly its hours
    clean = {(t.employer_id, t.year): t.hours for t in check_submission(subs["clean"]).totals}
    bad = {(t.employer_id, t.year): t.hours for t in result.totals}
    assert bad[("100000001", 2022)] == pytest.approx(clean[("100000001", 2022)] - 65.27)


def test_an_incomplete_submission_cannot_be_checked_in_one_line(subs, runs):
    r = runs["incomplete"]
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "roster.csv is missing" in lines[0] and "Traceback" not in r.stderr
    assert not (subs["root"] / "incomplete-check.html").exists()
    with pytest.raises(SubmissionIncomplete, match="roster.csv is missing"):
        check_submission(subs["incomplete"])


def test_a_file_no_layout_reads_and_a_year_without_reference_data_are_problems(tmp_path):
    unread = tmp_path / "unread"
    shutil.copytree(FIXTURE, unread)
    (unread / "payroll" / "other.csv").write_text("foo,bar,baz\n1,2,3\n")
    result = check_submission(unread)
    assert [(f.file, f.layout, f.read) for f in result.unread_files] == [("payroll/other.csv", None, False)]
    assert result.stop and "payroll/other.csv could not be read" in result.stop  # the annual run's own line
    assert not result.read_whole and result.problems == 1 and len(result.totals) == 30  # what was read is totalled
    html = write_check_page(result, tmp_path / "unread.html").read_text()
    assert {r[0]: r[2] for r in table(html, "files")}["payroll/other.csv"] == "no layout reads it"
    late = tmp_path / "late"
    shutil.copytree(FIXTURE, late)
    apps = pl.read_csv(late / "applications.csv", infer_schema=False)
    apps.with_columns(pl.when(pl.col("application_id") == "A003").then(pl.lit("2099")).otherwise(pl.col("tax_year"))
                      .alias("tax_year")).write_csv(late / "applications.csv")
    result = check_submission(late)
    assert not result.read_whole and result.problems == 1 and result.held == []
    (year,) = result.unchecked_years
    assert year.startswith("tax year 2099 (A003)")


def test_no_ssn_reaches_the_page(subs, runs):
    ssns = set(SSNS)
    for name in ("certifications.csv", "payroll/payroll.csv"):  # every ssn of both submissions
        for sub in (subs["clean"], subs["bad"]):
            for ssn in pl.read_csv(sub / name, infer_schema=False).get_column("ssn").drop_nulls().to_list():
                ssns |= {ssn, ssn.replace("-", "")}
    assert SSNS[0] in (subs["bad"] / "certifications.csv").read_text()
    for page in ("clean-check.html", "bad-check.html"):
        html = (subs["root"] / page).read_text()
        assert not [s for s in ssns if s in html], page


def test_nothing_is_left_behind(subs, runs, tmp_path, monkeypatch):
    assert runs["unchanged"] and runs["ledger_unchanged"]  # every file of every submission, byte for byte
    assert list(subs["tmp"].iterdir()) == []  # the commands' TMPDIR: no impcredit-check-* folder left
    left = sorted(p.relative_to(subs["root"]).as_posix() for p in subs["root"].iterdir())
    assert left == ["bad", "bad-check.html", "clean", "clean-check.html", "incomplete", "tmp"]
    found = [p for p in subs["root"].rglob("*") if p.name in ("impcredit.duckdb", "lake", "_manifest.json")]
    assert found == []
    # the library function: its temporary folder is made under tempfile's and deleted
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    result = check_submission(subs["bad"])
    assert list(tmp_path.iterdir()) == [] and not list(Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"))
    page = write_check_page(result, tmp_path / "page.html")
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"] and page.stat().st_size > 0


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("IMPCREDIT_REQUIRE_BROWSER") == "1":
            pytest.fail("no Chromium on this machine (apt-get install chromium)")
        pytest.skip("no Chromium on this machine (apt-get install chromium; CI installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_the_page_in_a_browser_shows_the_held_application_and_loads_nothing(subs, runs, browser):
    pg = browser.new_page()
    requests, errors = [], []
    pg.on("request", lambda r: requests.append(r.url))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    page = subs["root"] / "bad-check.html"
    pg.goto(page.as_uri())
    pg.wait_for_load_state("networkidle")
    assert "would not be read whole" in pg.inner_text("#headline")
    held = pg.eval_on_selector_all("#held tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")
    assert held[1][0] == "A000" and "payroll/payroll.csv line 3, hours" in held[1][3]
    assert held[1][1].startswith(MARKUP_NAME) and pg.query_selector("#injected") is None  # text, never markup
    assert pg.inner_text("#rejects").count("not a number") == 1
    assert requests == [page.as_uri()] and errors == []  # the page itself, nothing else
    pg.close()


def test_the_page_says_what_was_written_and_how_it_was_read(tmp_path):
    """Issue 36, part 4: a value shown as written, quoted, with a letter that looks like a digit
    named (``O7.04``); every header read though it differs from the layout's words and every value
    read leniently said, with what it was read as; a roster line's application named, also when the
    line gives none (then every application its file names); no internal reference; one date format."""
    sub = tmp_path / "sub"
    shutil.copytree(FIXTURE, sub)
    pay = sub / "payroll" / "payroll.csv"
    lines = pay.read_text().splitlines()
    lines[0] = lines[0].replace("gross_wages", "gross_wag#es")
    cells = lines[2].split(",")
    cells[5] = "O7.04"  # the letter O
    lines[2] = ",".join(cells)
    cells = lines[4].split(",")
    cells[6] = cells[6] + "$"  # a $ after the number: read, leniently
    lines[4] = ",".join(cells)
    pay.write_text("\n".join(lines) + "\n")
    roster = (sub / "roster.csv").read_text().splitlines()
    roster[2] = roster[2].rsplit(",", 1)[0] + ","  # A001's line without its wage category
    roster.append(",E999,general")  # a line that names no application
    (sub / "roster.csv").write_text("\n".join(roster) + "\n")
    result = check_submission(sub, now=dt.datetime(2024, 7, 1, 9, 0))
    html = write_check_page(result, tmp_path / "page.html").read_text()
    rows = {(r[0], r[1]): r for r in table(html, "rejects")}
    assert rows[("payroll/payroll.csv", "3")][3:] == ["\u201cO7.04\u201d", "not a number: it holds the letter O, not the "
                                                      "digit 0", "application A000"]
    assert rows[("roster.csv", "3")][2:] == ["wage_category", "(empty)", "empty", "application A001"]
    apps = sorted(pl.read_csv(FIXTURE / "applications.csv", infer_schema=False)["application_id"])
    unnamed = rows[("roster.csv", str(len(roster)))]
    assert unnamed[5] == f"applications {', '.join(apps[:5])} and {len(apps) - 5} more"  # the file's applications
    read = table(html, "readings")
    assert ["payroll/payroll.csv", "\u201cgross_wag#es\u201d", "the header \u201cgross_wag#es\u201d is read as gross_wages "
            "(the layout \u201ccanonical\u201d names it \u201cgross_wages\u201d): check that this column holds it"] in read
    lenient = [r for r in read if "currency sign after the number" in r[2]]
    assert len(lenient) == 1 and re.search(r"^1 value with a currency sign after the number, taken off: "
                                           r"\u201c[\d.]+\$\u201d \(line 5\) read as [\d,.]+$", lenient[0][2])
    text = re.sub(r"<[^>]+>", " ", html)
    assert "spec section" not in text and "hours: hours" not in text and not re.search(r"\b\d{4}-\d\d-\d\d\b", text)
    assert "July 1, 2024, 9:00 a.m. (New Jersey time)" in text


def test_a_clean_submission_has_nothing_read_loosely(subs):
    result = check_submission(subs["clean"])
    assert result.readings == []


# each quoted value (up to check_page.MAX_UNBROKEN_CHARS) and each character named in brackets, in a
# cell's text: the lines it is laid out on (a Range over the text, whatever elements hold it)
LINES_OF_NAMED = r"""sel => { const out = [], re = /\u201c[^\u201d]{0,40}\u201d|\[[^\[\]]+\]/g;
  for (const td of document.querySelectorAll(sel)) {
    const nodes = [], walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT); let n, text = "";
    while ((n = walk.nextNode())) { nodes.push([n, text.length]); text += n.data; }
    const at = i => { for (let k = nodes.length - 1; k >= 0; k--) if (nodes[k][1] <= i && nodes[k][0].data.length)
      return [nodes[k][0], i - nodes[k][1]]; };
    for (const m of text.matchAll(re)) {
      const r = document.createRange(), [a, ao] = at(m.index), [b, bo] = at(m.index + m[0].length - 1);
      r.setStart(a, ao); r.setEnd(b, bo + 1);
      out.push([m[0], new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.bottom))).size]);
    } }
  return out; }"""


def named_values_page(tmp_path: Path) -> Path:
    """The check page of a payroll whose rejected values hold characters the page names."""
    sub = tmp_path / "sub"
    shutil.copytree(FIXTURE, sub)
    pay = sub / "payroll" / "payroll.csv"
    lines = pay.read_text().splitlines()
    for i, col, value in ((2, 5, "12\u00a0345.50"), (3, 6, "1\u200b234.00\u202f"), (4, 5, "O7.04")):
        cells = lines[i].split(",")
        cells[col] = value
        lines[i] = ",".join(cells)
    lines[0] = lines[0].replace("gross_wages", "gross_wag#es")
    pay.write_text("\n".join(lines) + "\n")
    return write_check_page(check_submission(sub, now=dt.datetime(2024, 7, 1, 9, 0)), tmp_path / "page.html")


def test_a_value_and_a_characters_name_are_never_broken_on_the_page(tmp_path):
    """Issue 44: each quoted value and each character named in brackets is in an element the page
    never wraps inside (no break-all, no overflow-wrap: anywhere applies to it)."""
    html = named_values_page(tmp_path).read_text()
    nobreak = '<span class="nobreak">'
    assert f'<td class="value">{nobreak}\u201c12[no-break space]345.50\u201d</span></td>' in html
    # a value longer than MAX_UNBROKEN_CHARS may wrap, between the characters it names
    assert (f'<td class="value">\u201c1{nobreak}[zero-width space]</span>234.00{nobreak}[narrow no-break space]'
            '</span>\u201d</td>') in html
    assert f"the header {nobreak}\u201cgross_wag#es\u201d</span> is read as gross_wages" in html
    assert "span.nobreak { white-space: nowrap; word-break: normal; overflow-wrap: normal; }" in html


def test_in_a_browser_no_named_character_or_value_is_wrapped_inside(tmp_path, browser):
    """The page at 900 px: every quoted value and every character's name is laid out on one line."""
    page = named_values_page(tmp_path)
    pg = browser.new_page(viewport={"width": 900, "height": 1200})
    pg.goto(page.as_uri())
    got = pg.evaluate(LINES_OF_NAMED, "#rejects td, #readings td, #held td")
    named = {text for text, _ in got}
    assert {"\u201c12[no-break space]345.50\u201d", "[zero-width space]", "[narrow no-break space]", "\u201cO7.04\u201d",
            "\u201cgross_wag#es\u201d"} <= named
    assert [(text, lines) for text, lines in got if lines != 1] == []
    styles = pg.eval_on_selector_all("span.nobreak", """spans => spans.map(s => { const c = getComputedStyle(s);
        return [c.whiteSpace, c.wordBreak, c.overflowWrap]; })""")
    assert styles and set(map(tuple, styles)) == {("nowrap", "normal", "normal")}
    pg.close()
