"""Documents an employer can file (issue 23): one PDF per certificate and per notice beside its
page, each with the issuing agency (data/agency.yaml), the FEIN labelled as such, the employer's
address, the tax period in its tax's words, the filing instructions of its tax type, the
certifying official; notices with each reason in plain words and what to do, the appeal rights
and the contact; no run id, spec section or register number on anything an employer receives.
The PDFs' text is extracted (pypdf) and asserted."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import polars as pl
import pytest
from pypdf import PdfReader

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.products.agency import load_agency
from transforms.products.reason_words import ACTIONS, HELD_ACTIONS, REASONS
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = demo_key()
AGENCY = load_agency()


def pdf_text(path: Path) -> str:
    return " ".join("".join(p.extract_text() for p in PdfReader(path).pages).split())


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    sub = root / "sub"
    generate_submission(sub, employers=40, seed=11, tax_year=2023)
    staged = steps.stage_inputs(sub, root / "w", KEY)
    params = load_parameters()
    as_of = dt.date(2024, 9, 1)
    result = steps.compute(staged.frames, 2023, as_of, params, Settings())
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=run_id, tax_year=2023, as_of=as_of, params=params, settings=Settings(), workdir=root / "w",
        out_dir=root / "o", staged=staged, result=result, started_at=ledger.now_utc()))
    out = root / "o"
    return {"out": out, "run_id": run_id, "awards": pl.read_csv(out / "awards.csv", infer_schema=False),
            "apps": pl.read_csv(sub / "applications.csv", infer_schema=False)}


def test_each_certificate_is_its_own_pdf_an_employer_can_file(run):
    out, awards, apps = run["out"], run["awards"], run["apps"]
    paid = awards.filter(pl.col("status").is_in(["APPROVED", "PARTIAL"])).join(
        apps.select("application_id", "employer_address", "period_start", "period_end"), on="application_id", how="left")
    seen = set()
    for a in paid.iter_rows(named=True):
        path = out / "certificates" / f"NJ-IMP-2024-{a['application_id']}.pdf"
        text = pdf_text(path)
        assert len(PdfReader(path).pages) == 1
        fein = f"{a['employer_id'][:2]}-{a['employer_id'][2:]}"
        assert f"Federal employer id (FEIN) {fein}" in text
        assert AGENCY.agency.name in text and AGENCY.certifying_official.title in text
        for line in a["employer_address"].split(";"):
            assert line.strip() in text
        assert f"${float(a['awarded']):,.2f}" in text
        start = dt.date.fromisoformat(a["period_start"]) if a["period_start"] else dt.date(2023, 1, 1)
        when = f"{start.strftime('%B')} {start.day}, {start.year}"
        if a["tax_type"] == "CBT":
            assert f"Privilege period {when} to" in text and "Form 328" in text
        else:
            assert f"Taxable year {when} to" in text and "Gross Income Tax Audit Branch" in text
            assert "P.O. Box 288" in text and "Form 328" not in text
        assert run["run_id"] not in text and "spec section" not in text and "impcredit" not in text
        seen.add(a["tax_type"])
    assert seen == {"CBT", "GIT"}


def test_each_notice_explains_and_says_how_to_contest(run):
    out, awards = run["out"], run["awards"]
    rejected = awards.filter(pl.col("status") == "REJECTED")
    assert rejected.height
    assert (awards["status"] == "HELD").any()  # the sample's missing employer rates hold (the agency's own gap)
    for a in awards.iter_rows(named=True):
        html = (out / "notices" / f"{a['application_id']}.html").read_text()
        text = pdf_text(out / "notices" / f"{a['application_id']}.pdf")
        held = a["status"] == "HELD"
        if held:  # nothing decided, nothing to contest yet; the remedy is the held one
            assert "nothing yet to contest" in text and "Your right to a hearing" not in text
        else:
            assert "Your right to a hearing" in text and AGENCY.appeal.citation.split(";")[0] in text
        assert AGENCY.agency.address[0] in text
        for code in filter(None, a["reasons"].split(";")):
            action = HELD_ACTIONS[code] if held and code in HELD_ACTIONS and code != "INPUT_REJECTED" else ACTIONS[code]
            assert " ".join(action.split())[:40] in text, code
            assert REASONS[code][1] in html
        for doc in (html, text):
            assert run["run_id"] not in doc and "spec section" not in doc and not re.search(r"\bI-\d+\b", doc)
    # the combined PDFs stay, for printing: every notice in one file
    assert len(PdfReader(out / "notices" / "notices.pdf").outline) == awards.height


def test_a_person_counted_over_the_group_is_shown_by_member(run):
    members = pl.read_parquet(run["out"] / "employee_members.parquet")
    decided = run["awards"].filter(pl.col("status") != "HELD")["application_id"]  # a held notice shows no rows counted
    multi = members.filter((pl.len().over("application_id", "roster_employer_id", "employee_id") > 1)
                           & pl.col("application_id").is_in(decided.implode()))
    if multi.height == 0:
        pytest.skip("the sample has no person paid by two members")
    app = multi["application_id"][0]
    html = (run["out"] / "notices" / f"{app}.html").read_text()
    assert 'id="members"' in html
    for m in multi.filter(pl.col("application_id") == app)["member_id"].unique():
        assert f"{m[:2]}-{m[2:]}" in html


def page_texts(path: Path) -> list[str]:
    return [" ".join(p.extract_text().split()) for p in PdfReader(path).pages]


def test_every_pdf_page_names_its_document(run):
    out, awards = run["out"], run["awards"]
    multi = 0
    for a in awards.iter_rows(named=True):
        pages = page_texts(out / "notices" / f"{a['application_id']}.pdf")
        multi += len(pages) > 1
        for i, t in enumerate(pages, 1):
            assert t.endswith(f"Notice {a['application_id']}, page {i} of {len(pages)}"), t[-80:]
    assert multi  # the sample has notices of several pages
    combined = page_texts(out / "notices" / "notices.pdf")  # the file for printing names each page too
    assert all(re.search(r"Notice APP-\d{4}-\d{6}, page \d+ of \d+$", t) for t in combined)
    for path in (out / "certificates").glob("NJ-*.pdf"):
        (t,) = page_texts(path)
        assert t.endswith(f"Certificate {path.stem}, page 1 of 1")


def test_no_table_row_is_split_across_pages(run):
    """Each reason's row (its words, statute and what to do) and each employee's row (with the line
    of its reasons) is whole on one page of a notice of several pages."""
    from transforms.products.reason_words import CATEGORY_LABELS, labelled, reasons_labelled

    out, checked = run["out"], 0
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema=False)
    for path in sorted((out / "notices").glob("APP-*.pdf")):
        pages = page_texts(path)
        if len(pages) < 2:
            continue
        app = path.stem
        status = run["awards"].filter(pl.col("application_id") == app)["status"][0]
        if status == "HELD":
            continue
        codes = set()
        for e in credits.filter(pl.col("application_id") == app).iter_rows(named=True):
            row = [e["employee_id"], labelled(e["wage_category"], CATEGORY_LABELS)]
            if e["reasons"]:  # WAGE_REDUCTION beside an employee says whose rate fell (issue 44): its code alone here
                rest = ";".join(c for c in e["reasons"].split(";") if c != "WAGE_REDUCTION")
                row.append("Reasons: " + (reasons_labelled(rest) if rest else ""))
                row += ["(WAGE_REDUCTION)"] if "WAGE_REDUCTION" in e["reasons"] else []
                codes |= set(e["reasons"].split(";"))
            assert any(all(part in t for part in row) for t in pages), (app, row)
            checked += 1
        for code in codes:
            words = "by more than half a cent" if code == "WAGE_REDUCTION" else REASONS[code][0].split("{")[0]
            row = [labelled(code), " ".join(words.split()), " ".join(ACTIONS[code].split())]
            assert any(all(part in t for part in row) for t in pages), (app, code)
    assert checked
