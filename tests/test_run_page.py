"""The run page in a real browser (issue 23): headless Chromium (the system's package, driven by
Playwright) opens index.html from the run's folder, the applications table holds every
application with its amounts and links, sorting and filtering work with no server, and no request
leaves the machine. Skipped where the machine has no Chromium, unless IMPCREDIT_REQUIRE_BROWSER=1
(CI sets it: there the test must run)."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import polars as pl
import pytest

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.products.reason_words import STATUS_LABELS, reasons_labelled
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    if CHROMIUM is None:
        if os.environ.get("IMPCREDIT_REQUIRE_BROWSER") == "1":
            pytest.fail("no Chromium on this machine (apt-get install chromium)")
        pytest.skip("no Chromium on this machine (apt-get install chromium; CI installs it)")
    root = tmp_path_factory.mktemp("page")
    sub = root / "sub"
    generate_submission(sub, employers=30, seed=3, tax_year=2023)
    # an employer name that is markup: shown as text, never run
    apps = pl.read_csv(sub / "applications.csv", infer_schema=False)
    apps.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit('<img src=x onerror="document.title=1">'))
                      .otherwise(pl.col("employer_name")).alias("employer_name")).write_csv(sub / "applications.csv")
    # one payroll line not read (hours "abc"): its employer's application held, the line by employer
    pay = sorted((sub / "payroll").glob("*.csv"))[0]
    lines = pay.read_text().splitlines()
    cells = lines[1].split(",")
    cells[5] = "abc"
    lines[1] = ",".join(cells)
    pay.write_text("\n".join(lines) + "\n")
    key, params, as_of = demo_key(), load_parameters(), dt.date(2024, 9, 1)
    staged = steps.stage_inputs(sub, root / "w", key)
    result = steps.compute(staged.frames, 2023, as_of, params, Settings())
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=run_id, tax_year=2023, as_of=as_of, params=params, settings=Settings(), workdir=root / "w",
        out_dir=root / "o", staged=staged, result=result, started_at=ledger.now_utc()))
    return root / "o"


@pytest.fixture(scope="module")
def page(out):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page()
        requests, errors = [], []
        pg.on("request", lambda r: requests.append(r.url))
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto((out / "index.html").as_uri())
        pg.wait_for_selector("#apps tbody tr")
        yield pg, requests, errors
        browser.close()


def cells(pg) -> list[list[str]]:
    return pg.eval_on_selector_all("#apps tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


def test_the_table_holds_every_application_with_its_amounts_and_links(out, page):
    pg, requests, errors = page
    awards = pl.read_csv(out / "awards.csv", infer_schema=False).sort("application_id")
    rows = cells(pg)
    assert len(rows) == awards.height and errors == []
    by_id = {r[0]: r for r in rows}
    for a in awards.iter_rows(named=True):
        r = by_id[a["application_id"]]
        assert r[5] == f"{STATUS_LABELS[a['status']]} ({a['status']})" and r[7] == f"${float(a['awarded']):,.2f}"
        assert r[8] == reasons_labelled(a["reasons"])  # the codes in words, the code beside them
        assert r[2] == f"{a['employer_id'][:2]}-{a['employer_id'][2:]}"
    assert pg.title() != "1"  # the markup in a name stayed text
    assert any(r[1].startswith("<img src=x") for r in rows)
    hrefs = pg.eval_on_selector_all("#apps tbody a", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all((out / h).is_file() for h in hrefs)
    assert {h.split("/")[0] for h in hrefs} == {"notices", "certificates"}
    assert pg.inner_text("#cap_text").endswith("left.")


def test_sorting_and_filtering_work_without_a_server(out, page):
    pg, requests, errors = page
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    pg.click("#apps th[data-k='7']")  # awarded, ascending
    got = [float(r[7].replace("$", "").replace(",", "")) for r in cells(pg)]
    assert got == sorted(got)
    pg.click("#apps th[data-k='7']")  # again: descending
    got = [float(r[7].replace("$", "").replace(",", "")) for r in cells(pg)]
    assert got == sorted(got, reverse=True)
    pg.select_option("#status", "REJECTED")
    assert {r[5] for r in cells(pg)} == {"Not approved (REJECTED)"}
    assert len(cells(pg)) == (awards["status"] == "REJECTED").sum()
    pg.select_option("#status", "")
    one = awards.row(0, named=True)
    pg.fill("#q", one["employer_id"])
    assert {r[2] for r in cells(pg)} == {f"{one['employer_id'][:2]}-{one['employer_id'][2:]}"}
    pg.fill("#q", "")
    assert len(cells(pg)) == awards.height and errors == []


def test_no_request_leaves_the_machine(out, page):
    pg, requests, errors = page
    pg.wait_for_load_state("networkidle")
    assert requests and all(u.startswith("file://") for u in requests), [u for u in requests if not u.startswith("file://")]


def test_the_page_leads_with_what_needs_the_analyst(out, page):
    """Held applications (the Department's own gaps, the employer's input) and the rejected input by
    employer, with the employer's name and the problem, come before the cap, the applications and the
    charts."""
    pg, requests, errors = page
    order = pg.evaluate("""() => ['#needs', '#cap', '#apps', 'img.chart'].map(
        s => document.querySelector(s).getBoundingClientRect().top + window.scrollY)""")
    assert order == sorted(order), order
    names = pl.read_csv(out.parent / "sub" / "applications.csv", infer_schema=False).select("application_id",
                                                                                           "employer_name")
    awards = pl.read_csv(out / "awards.csv", infer_schema=False).join(names, on="application_id")
    held = awards.filter(pl.col("status") == "HELD")
    assert held.height
    rows = pg.eval_on_selector_all("#held_agency tr, #held_apps tr", "rs => rs.map(r => r.innerText)")
    for a in held.iter_rows(named=True):
        row = next(r for r in rows if r.startswith(a["application_id"]))
        assert a["employer_name"] in row and f"{a['employer_id'][:2]}-{a['employer_id'][2:]}" in row
    assert any("hours: not a number" in r for r in rows)  # the problem, said
    rej = pg.eval_on_selector_all("#rejects_by_employer tr", "rs => rs.map(r => r.innerText)")[1:]
    assert len(rej) == 1 and "hours: not a number" in rej[0]
    (emp,) = [f.stem for f in (out / "rejects").glob("*.csv")]  # each employer's rejected rows
    name = awards.filter(pl.col("employer_id") == emp)["employer_name"][0]
    assert rej[0].startswith(f"{name} ({emp[:2]}-{emp[2:]})")


def test_chart_labels_are_legible_at_normal_zoom(out, page):
    """Every text of every chart is at least 11 px on the screen: the SVG's smallest font size times
    the scale the page shows the chart at (its width on the page over its own)."""
    import re

    pg, requests, errors = page
    pg.set_viewport_size({"width": 1280, "height": 900})
    charts = pg.eval_on_selector_all("img.chart", """imgs => imgs.map(i => [i.getAttribute('src'),
        i.getBoundingClientRect().width, i.naturalWidth])""")
    assert len(charts) == 5
    for src, shown, natural in charts:
        sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', (out / src).read_text())]
        assert sizes and min(sizes) * shown / natural >= 11, (src, min(sizes), shown, natural)


def test_certificates_are_counted_as_certificates(out, page):
    pg, requests, errors = page
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    n = (awards["awarded"].cast(pl.Float64) > 0).sum()
    files = len(list((out / "certificates").iterdir()))
    titles = pg.eval_on_selector_all("h2", "hs => hs.map(h => h.innerText)")
    assert f"Certificates of credit ({n} certificates, each linked from its application above; {files} files)" in titles


def test_the_summary_counts_certificates_and_notices_not_files(tmp_path):
    from flows.cli import common
    from transforms.runs.record import RunSummary

    out = tmp_path / "out"
    files = [out / "awards.csv", out / "certificates" / "certificates.pdf", out / "notices" / "notices.pdf"]
    files += [out / "certificates" / f"NJ-IMP-2024-A{i}.{ext}" for i in range(3) for ext in ("html", "pdf")]
    files += [out / "notices" / f"A{i}.{ext}" for i in range(5) for ext in ("html", "pdf")]
    summary = RunSummary(run_id="r", kind="annual", tax_year=2023, as_of=dt.date(2024, 7, 1), approval_year=2024,
                         policy="fcfs", cap=1.0, applications=5, employee_years=5, eligible_employee_years=3,
                         requested=0.0, awarded=0.0, approved_before=0.0, cap_left=1.0, rejected_rows=0,
                         statuses={}, outputs=[str(f) for f in files], out_dir=str(out), workdir=str(tmp_path))
    with common.console.capture() as cap:
        common.print_summary(summary)
    text = cap.get()
    assert "certificates/ (3 certificates, 7 files)" in text and "notices/ (5 notices, 11 files)" in text


@pytest.mark.parametrize("width", [1300, 900])
def test_the_applications_table_stays_inside_the_page(out, page, width):
    """At a laptop's width the table fits under the heading's rule; in a narrow window it scrolls
    inside the page, its right edge never past the rule's."""
    pg, requests, errors = page
    pg.set_viewport_size({"width": width, "height": 900})
    rule = pg.eval_on_selector("h1", "h => h.getBoundingClientRect().right")
    box = pg.eval_on_selector("#apps", "t => [t.getBoundingClientRect().right, t.parentElement.getBoundingClientRect().right]")
    assert box[1] <= rule + 1, (width, box, rule)
    if width >= 1300:
        assert box[0] <= rule + 1, (width, box, rule)


def test_printed_the_page_keeps_every_column(out, page, tmp_path):
    """Issue 44: printed (Chromium's print to PDF, Letter), the applications table keeps every
    column: its ten headings on one line of the PDF, the last inside the page, and a held
    application's reasons in the text (the scrolling box no longer clips the table on paper)."""
    from pypdf import PdfReader

    pg = page[0].context.browser.new_page()
    try:
        pg.goto((out / "index.html").as_uri())
        pg.wait_for_selector("#apps tbody tr")
        pg.pdf(path=str(tmp_path / "page.pdf"), format="Letter")
    finally:
        pg.close()
    reader = PdfReader(tmp_path / "page.pdf")
    words: list[tuple[str, float, float, float]] = []  # (text, x, y, page width)
    for p in reader.pages:
        width = float(p.mediabox.width)
        p.extract_text(visitor_text=lambda t, cm, tm, font, size, w=width: words.append(
            (t.strip(), tm[4] * cm[0] + cm[4], round(tm[5] * cm[3] + cm[5], 1), w)) if t.strip() else None)
    headings = ["Application", "Employer", "FEIN", "Tax", "County", "Status", "Requested", "Awarded", "Reasons",
                "Documents"]
    rows: dict[float, list[str]] = {}
    for t, _, y, _ in words:
        rows.setdefault(y, []).append(t)
    assert any(all(h in " ".join(ws) for h in headings) for ws in rows.values()), sorted(rows.items())[:40]
    last = [(x, w) for t, x, _, w in words if t.startswith("Documents")]
    assert last and all(x < w - 40 for x, w in last), last  # inside the page, not past its edge
    text = " ".join(" ".join(p.extract_text() for p in reader.pages).split())
    held = pl.read_csv(out / "awards.csv", infer_schema=False).filter(pl.col("status") == "HELD").row(0, named=True)
    assert reasons_labelled(held["reasons"]) in text
