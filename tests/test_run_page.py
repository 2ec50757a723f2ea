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
from transforms.pii import load_key
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
    key, params, as_of = load_key({}), load_parameters(), dt.date(2024, 9, 1)
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
        assert r[5] == a["status"] and r[7] == f"${float(a['awarded']):,.2f}"
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
    assert {r[5] for r in cells(pg)} == {"REJECTED"}
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
