"""Nothing legitimate is turned away (spec section 1, "Payroll as employers' systems write it"):
names that begin with = + - @ or hold markup, off-cycle checks, reversals and line-per-code
registers are accepted and count; what is written stays harmless; nothing is lost."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.make_fixtures import NAMES
from transforms.ingest import ingest_folder
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_long

SHAPES = Path(__file__).parent / "fixtures" / "shapes"
KEY = demo_key()
PARAMS = load_parameters()
NOW = dt.datetime(2026, 1, 1, 12, 0)
AS_OF = dt.date(2024, 7, 1)
ALL_NAMES = [*NAMES, "$5 Pizza & $ubs Inc."]  # a "$" pair is math to matplotlib: text here


# --- names ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain_and_named(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """A generated submission, and the same one with the applications that get a credit renamed."""
    root = tmp_path_factory.mktemp("names")
    plain = root / "plain"
    generate_submission(plain, employers=60, seed=5, tax_year=2023)
    staged = steps.stage_inputs(plain, root / "probe", KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    paying = result.applications.filter(pl.col("requested_cents") > 0).sort("received_at")
    ids = paying.get_column("application_id").to_list()[: len(ALL_NAMES)]
    assert len(ids) == len(ALL_NAMES), "the sample needs enough applications with a credit"
    named = root / "named"
    shutil.copytree(plain, named)
    apps = pl.read_csv(plain / "applications.csv", infer_schema=False)
    rename = dict(zip(ids, ALL_NAMES, strict=True))
    apps = apps.with_columns(pl.col("application_id").replace_strict(rename, default=pl.col("employer_name"))
                             .alias("employer_name"))
    apps.write_csv(named / "applications.csv")
    text = (named / "applications.csv").read_text(encoding="utf-8")
    assert '"Smith, Jones & ""Sons"""' in text and "Café Niño LLC" in text
    return plain, named, ids


def _csvs(out: Path) -> dict[str, str]:
    return {n: (out / n).read_text() for n in ("awards.csv", "employee_credits.csv")}


def test_names_are_data_through_the_annual_quarterly_and_whatif_runs(prefect_harness, plain_and_named, tmp_path):
    from flows.annual import annual_flow
    from flows.quarterly import quarterly_flow
    from flows.whatif import whatif_flow

    plain, named, ids = plain_and_named
    runs = {}
    for label, src in (("plain", plain), ("named", named)):
        kw = dict(input_dir=src, tax_year=2023, as_of=AS_OF, params=PARAMS, settings=Settings(),
                  workdir=tmp_path / label / "work")
        runs[label] = annual_flow(out_dir=tmp_path / label / "out", **kw)
        quarterly_flow(quarter=2, out_dir=tmp_path / label / "q", **kw)
        whatif_flow(out_dir=tmp_path / label / "w", assignments={"cap": "100000"},
                    **{**kw, "settings": Settings().with_assignments({"cap": "100000"})})
    # the same credits and awards under either name; every renamed application approved
    assert _csvs(tmp_path / "plain" / "out") == _csvs(tmp_path / "named" / "out")
    for sub in ("q", "w"):
        for name in ("estimates.csv", "employer_estimates.csv") if sub == "q" else ("awards.csv", "employee_credits.csv"):
            assert (tmp_path / "plain" / sub / name).read_text() == (tmp_path / "named" / sub / name).read_text()
    awards = pl.read_csv(tmp_path / "named" / "out" / "awards.csv").filter(pl.col("application_id").is_in(ids))
    assert awards.height == len(ids) and set(awards.get_column("status")) == {"APPROVED"}
    assert runs["named"].awarded == runs["plain"].awarded > 0

    # names intact in the lake and the ledger
    out, work = tmp_path / "named" / "out", tmp_path / "named" / "work"
    lake = scan_lake(work, "applications").collect()
    assert set(ALL_NAMES) <= set(lake.get_column("employer_name"))
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    ledger_names = {r[0] for r in con.sql("SELECT employer_name FROM decisions").fetchall()}
    con.close()
    assert set(ALL_NAMES) <= ledger_names

    # harmless where written: CSV cells neutralised, the Parquet award file as given, HTML escaped
    with (out / "taxation" / "award_file.csv").open(newline="", encoding="utf-8") as fh:
        cells = {r["employer_name"] for r in csv.DictReader(fh)}
    for name in ALL_NAMES:
        assert ("'" + name if name[0] in "=+-@" else name) in cells
    assert set(ALL_NAMES) <= set(pl.read_parquet(out / "taxation" / "award_file.parquet").get_column("employer_name"))
    pages = [p for d in ("certificates", "notices", "reports") for p in (out / d).glob("*.html")]
    assert len(pages) > 10
    html = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; Inc." in html
    assert "Smith, Jones &amp; &#34;Sons&#34;" in html and "Café Niño LLC" in html
    assert '=HYPERLINK(&#34;http://example.invalid&#34;,&#34;click&#34;)' in html
    # the analysts' workbook: text stays text; the index ties every output together
    import openpyxl

    wb = openpyxl.load_workbook(out / "awards.xlsx")
    assert wb.sheetnames == ["awards", "employee credits", "rejects"]
    assert wb["awards"].max_row == pl.read_csv(out / "awards.csv").height + 1
    assert not any(c.data_type == "f" for ws in wb for row in ws.iter_rows() for c in row)
    index = (out / "index.html").read_text(encoding="utf-8")
    for link in ("awards.csv", "awards.xlsx", "employee_credits.csv", "changes.csv", "taxation/award_file.csv",
                 "reports/cap_sufficiency.html", "rejects.csv", "certificates/", "notices/"):
        assert f'href="{link}' in index, link
    notice = next((out / "notices").glob("*.html")).read_text(encoding="utf-8")
    assert re.search(r'id="decided_on">[A-Z][a-z]+ \d{1,2}, 20\d\d<', notice) and "(New Jersey time)" in notice
    assert re.search(r'id="received">[A-Z][a-z]+ \d{1,2}, 2024, \d{1,2}:\d\d [ap]\.m\.', notice) and "Credit computed" in notice
    chart = (out / "reports" / "biennial_by_employer.svg").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in chart and "<script>" not in chart  # text, never markup
    assert "$5 Pizza &amp; $ubs Inc." in chart


# --- payroll shapes ------------------------------------------------------------------------------

SSNS = ["900-22-0001", "900-22-0002", "900-22-0003"]


def submission(root: Path, payroll: dict[str, Path]) -> Path:
    """A submission of one employer (100000001, three rostered employees) with the given payroll files."""
    (root / "payroll").mkdir(parents=True)
    for name, src in payroll.items():
        shutil.copy(src, root / "payroll" / name)
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
        "A1,100000001,@Home Care LLC,Mercer,CBT,2023,2024-02-01T09:00:00\n")
    (root / "roster.csv").write_text("application_id,employee_id,wage_category\n"
                                     + "".join(f"A1,E{k},general\n" for k in (1, 2, 3)))
    (root / "certifications.csv").write_text("ssn,certification_id,status,valid_from,valid_to\n"
                                             + "".join(f"{s},C{k},CERTIFIED,2018-01-01,\n" for k, s in enumerate(SSNS)))
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n"
                                             + "".join(f"100000001,{y}-07-01,0.0280,0.0050\n" for y in (2021, 2022, 2023)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def credits(root: Path, work: Path):
    staged = steps.stage_inputs(root, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    emp = result.employees.select("employee_id", "hours_prior", "hours_current", "part1_cents", "part2_cents",
                                  "credit_cents", "status", "reasons").sort("employee_id")
    return staged, result, emp


def test_off_cycle_checks_reversals_and_line_per_code_exports_count_alike(tmp_path):
    off = SHAPES / "payroll" / "off_cycle.csv"
    shapes = {
        "canonical": {"off_cycle.csv": off},
        "register": {"register_lines.csv": SHAPES / "register" / "register_lines.csv"},
    }
    # the journal holds the regular checks; the off-cycle, manual, void and reissue lines come canonical
    extra = tmp_path / "extra.csv"
    rows = pl.read_csv(off, infer_schema=False)
    rows.filter(~pl.col("check_id").str.starts_with("R")).write_csv(extra)
    shapes["journal"] = {"journal_lines.csv": SHAPES / "journal" / "journal_lines.csv", "extra.csv": extra}
    got = {}
    for label, files in shapes.items():
        staged, result, emp = credits(submission(tmp_path / label, files), tmp_path / f"wd-{label}")
        report = staged.report
        # nothing lost: lines read = lines in canonical rows (through aggregation) + lines rejected
        for f in report.files:
            assert f.rows_read == f.rows_accepted + f.rows_rejected, f
        assert not report.rejects.height, report.rejects
        pay = [f for f in report.files if f.dataset == "payroll"]
        lake = scan_lake(tmp_path / f"wd-{label}", "payroll").collect()
        assert lake.get_column("line_count").sum() == sum(f.rows_accepted for f in pay)
        got[label] = emp
    for label in ("register", "journal"):
        assert got[label].equals(got["canonical"]), label
    emp = got["canonical"]
    assert emp.get_column("status").to_list() == ["ELIGIBLE"] * 3 and emp.get_column("credit_cents").min() > 0

    # the employee-year's hours, wages and taxes are the sums over its source lines
    lines = pl.read_csv(SHAPES / "register" / "register_lines.csv", infer_schema=False)
    lake = scan_lake(tmp_path / "wd-register", "payroll").collect()
    code_lines = scan_lake(tmp_path / "wd-register", "payroll_lines").collect()
    assert code_lines.height == lines.height
    money = pl.col("Amount").str.replace_all(r"[$,]", "").str.replace(r"^\((.*)\)$", "-$1").cast(pl.Float64)
    by_code = lines.with_columns(money.alias("amt"), pl.col("Hours").cast(pl.Float64, strict=False).alias("h"))
    assert round(lake.get_column("hours").sum(), 2) == round(by_code.filter(pl.col("Code").is_in(["REG", "OT"]))
                                                             .get_column("h").sum(), 2)
    assert round(lake.get_column("gross_wages").sum(), 2) == round(by_code.filter(pl.col("Line Type") == "E")
                                                                   .get_column("amt").sum(), 2)
    assert round(lake.get_column("employer_taxes").sum(), 2) == round(by_code.filter(pl.col("Line Type") == "T")
                                                                      .get_column("amt").sum(), 2)

    # the rows over the same days add: summing each employee's checks of a period into one row
    # gives the same credits (the void and its reissue net to the reissue)
    summed = rows.with_columns(pl.col(c).cast(pl.Float64) for c in ("hours", "gross_wages", "employer_taxes")).group_by(
        "employer_id", "employee_id", "ssn", "period_start", "period_end", maintain_order=True).agg(
        pl.col(c).sum().round(2) for c in ("hours", "gross_wages", "employer_taxes"))
    one = tmp_path / "one.csv"
    summed.write_csv(one, float_precision=2)
    _, _, emp_one = credits(submission(tmp_path / "summed", {"one.csv": one}), tmp_path / "wd-summed")
    assert emp_one.equals(got["canonical"])
    assert summed.height < rows.height


def test_explain_and_the_notice_name_the_netted_lines_and_the_code_lines(tmp_path):
    from transforms.award.decide import decide
    from transforms.products import write_notices
    from transforms.products.explain import explain

    root = submission(tmp_path / "sub", {"register_lines.csv": SHAPES / "register" / "register_lines.csv"})
    staged, result, emp = credits(root, tmp_path / "wd")
    out = tmp_path / "out"
    out.mkdir()
    result.employees.drop([c for c in result.employees.columns if c.startswith("__")]).write_parquet(
        out / "employee_years.parquet")
    e3 = result.employees.filter(pl.col("employee_id") == "E3")
    assert e3.get_column("netted_lines").item().startswith("payroll/register_lines.csv:")
    r = explain(tmp_path / "wd", out, 2023, "100000001", "E3", PARAMS)
    assert r["check"]["ok"] and r["netted_lines"] == e3.get_column("netted_lines").item()
    netted = [p for p in r["sources"]["payroll"] if p["netted"]]
    assert len(netted) == 1 and netted[0]["hours"] < 0 and netted[0]["check_id"].startswith("V")
    assert r["sources"]["code_lines"] and {c["code"] for c in r["sources"]["code_lines"]} >= {"REG", "FICA-ER", "FIT"}
    assert sum(p["line_count"] for p in r["sources"]["payroll"]) == len(r["sources"]["code_lines"])
    d = decide(result.applications, approval_year=2024, cap_cents=10**9, approved_before_cents=0)
    (page,) = write_notices(out, d.awards, result.employees, staged.rejects)
    html = page.read_text()
    assert 'id="netted"' in html and e3.get_column("netted_lines").item() in html


# --- splitting rows changes nothing ------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("split") / "base"
    generate_submission(root, employers=3, seed=21, tax_year=2023)
    rows = pl.concat([pl.read_csv(f, infer_schema=False) for f in sorted((root / "payroll").glob("*.csv"))])
    _, result, _ = credits(root, root.parent / "wd-base")
    return root, rows, _outcome(result)


def _outcome(result) -> tuple:
    from transforms.award.decide import decide

    emp = result.employees.select("application_id", "employee_id", "credit_cents", "part1_cents", "part2_cents",
                                  "status", "reasons").sort("application_id", "employee_id").rows()
    d = decide(result.applications, approval_year=2024, cap_cents=10**9, approved_before_cents=0)
    return emp, d.awards.select("application_id", "requested_cents", "awarded_cents", "status").sort("application_id").rows()


def _split(cents: int, k: int, rng) -> list[int]:
    cuts = sorted(rng.randint(0, abs(cents)) for _ in range(k - 1))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, abs(cents)], strict=True)]
    return [p if cents >= 0 else -p for p in parts]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n_files=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), as_lines=st.floats(0, 1),
       pick=st.lists(st.integers(0, 10_000), min_size=1, max_size=40, unique=True))
def test_splitting_rows_into_checks_or_code_lines_changes_no_credit(base, tmp_path_factory, n_files, seed, as_lines, pick):
    """Any canonical row split into several checks (canonical lines with their own check ids) or
    code lines of a register, in any order and across files, gives every credit and award to the cent."""
    import random

    root, rows, want = base
    rng = random.Random(seed)
    tmp = tmp_path_factory.mktemp("case")
    out: list[list[dict]] = [[] for _ in range(n_files)]
    long_out: list[dict] = []
    picked = {p % rows.height for p in pick}
    for i, r in enumerate(rows.iter_rows(named=True)):
        if i not in picked:
            out[rng.randrange(n_files)].append(r)
            continue
        k = rng.randint(2, 3)
        parts = {c: _split(round(float(r[c]) * 100), k, rng) for c in ("hours", "gross_wages", "employer_taxes")}
        lines = rng.random() < as_lines
        for j in range(k):
            piece = {**r, **{c: f"{parts[c][j] / 100:.2f}" for c in parts}, "check_id": f"S{i}-{j}"}
            (long_out if lines else out[rng.randrange(n_files)]).append(piece)
    sub = tmp / "sub"
    shutil.copytree(root, sub, ignore=shutil.ignore_patterns("payroll"))
    (sub / "payroll").mkdir()
    for f, part in enumerate(out):
        rng.shuffle(part)
        frame = pl.DataFrame(part, schema={**dict.fromkeys(rows.columns, pl.String), "check_id": pl.String})
        frame.write_csv(sub / "payroll" / f"part_{f}.csv")
    if long_out:
        rng.shuffle(long_out)
        write_long("register_lines", long_out, sub / "payroll" / "register", seed=seed)
    staged, result, _ = credits(sub, tmp / "wd")
    assert not staged.rejects.height, staged.rejects.select("file", "line", "column", "value", "rule", "message").rows()
    assert _outcome(result) == want


def test_a_line_per_code_file_with_an_unknown_code_rejects_that_line_naming_it(tmp_path):
    src = (SHAPES / "register" / "register_lines.csv").read_text(encoding="cp1252").splitlines()
    src[1] = src[1].replace(",E,REG,", ",E,XREG,")
    (tmp_path / "in" / "payroll").mkdir(parents=True)
    (tmp_path / "in" / "payroll" / "r.csv").write_text("\n".join(src) + "\n", encoding="cp1252")
    report = ingest_folder(tmp_path / "in", tmp_path / "wd", KEY, now=NOW)
    (rec,) = report.files
    assert rec.rows_read == rec.rows_accepted + rec.rows_rejected and rec.rows_rejected == 1
    (rej,) = report.rejects.rows(named=True)
    assert (rej["line"], rej["column"], rej["rule"]) == (2, "Code", "unknown_code")
    assert "'XREG'" in rej["message"] and "register_lines" in rej["message"]
    q = pl.read_parquet(next((tmp_path / "wd" / "lake" / "quarantine").rglob("*.parquet")))
    assert json.loads(q.get_column("cells")[0])["Code"] == "XREG"
    assert not re.search(r"900-22-000\d|90022000\d", q.write_csv())


def test_data_docs_show_hostile_text_harmlessly_with_the_same_results(tmp_path):
    """GX writes unexpected values into its Data Docs unescaped; they are written from look-alike
    text, with exactly the failures of the Polars engine."""
    (tmp_path / "in").mkdir()
    shutil.copy(SHAPES / "applications.csv", tmp_path / "in" / "applications.csv")
    with (tmp_path / "in" / "applications.csv").open("a", encoding="utf-8") as fh:
        fh.write('X1,200000099,"<script>alert(2)</script>\x01 & \'Co\'",Mercer,CBT,2023,2024-02-01T09:00:00\n')
    got = {}
    for engine in ("gx", "polars"):
        docs = tmp_path / engine / "docs" if engine == "gx" else None
        report = ingest_folder(tmp_path / "in", tmp_path / engine / "wd", KEY, now=NOW, docs_dir=docs, engine=engine)
        got[engine] = report.rejects.rows()
    assert got["gx"] == got["polars"] and [r[4] for r in got["gx"]] == ["unprintable_character"]
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "gx" / "docs").rglob("*.html"))
    assert "alert(2)" in pages and "<script>alert" not in pages
    # the site opens with no network: nothing loaded from elsewhere, the index plain HTML naming
    # each validation's dataset and file and its result, the failing one marked FAIL
    assert not re.search(r'(src|href)="(https?:)?//', pages)
    index = (tmp_path / "gx" / "docs" / "index.html").read_text(encoding="utf-8")
    assert "<td>applications</td>" in index and "applications.csv" in index and 'class="bad">FAIL' in index
    assert "Data asset: None" not in pages and "Data asset: applications, file" in pages
    names = scan_lake(tmp_path / "gx" / "wd", "applications").collect().get_column("employer_name").to_list()
    assert sorted(names) == sorted(NAMES)  # stored as given


def test_certificates_and_notices_are_also_pdfs_with_hostile_text_as_text(tmp_path):
    """One multi-page PDF per kind, a document per page range and a bookmark each; names are
    placed as text (a Typst directive in a name does nothing)."""
    import datetime as dt

    from transforms.award.decide import empty_decisions
    from transforms.products import write_certificates, write_notices

    ids = ["APP-1", "X/1", "APP-3"]
    n = len(ids)
    awards = pl.DataFrame({
        "application_id": ids, "approval_year": [2024] * n, "tax_year": [2023] * n, "employer_id": ["100000001"] * n,
        "employer_name": ["<script>alert(1)</script> Inc.", '#set page(fill: red) #panic("x") $x$', "Café Niño LLC"],
        "county": ["Essex"] * n, "tax_type": ["CBT", "GIT", "CBT"],
        "received_at": [dt.datetime(2024, 2, 1, 14, tzinfo=dt.UTC)] * n, "requested_cents": [123456] * n,
        "awarded_cents": [123456, 100, 0], "status": ["APPROVED", "PARTIAL", "REJECTED"], "reasons": ["", "CAP_EXHAUSTED", "NO_CREDIT_DUE"],
        "run_id": ["annual-2023-20240701T130000000000Z-abcd"] * n}).with_columns(pl.lit(None, dtype=pl.Date).alias("period_start"), pl.lit(None, dtype=pl.Date).alias("period_end")).cast(
        empty_decisions().schema)
    emp = pl.DataFrame({"application_id": ids, "employee_id": ["E1"] * n, "wage_category": ["general"] * n,
                        "hours_prior": [1.0] * n, "hours_current": [1.0] * n, "part1_cents": [100] * n, "part2_cents": [0] * n,
                        "credit_cents": [100] * n, "status": ["ELIGIBLE"] * n, "reasons": [""] * n})
    jobs: list = []
    write_certificates(tmp_path, awards, run_id="r1", pdf_jobs=jobs)
    write_notices(tmp_path, awards, emp, run_id="r1", pdf_jobs=jobs)
    assert len(jobs) == 2
    (certs, *cert_docs), (notices, *notice_docs) = (job() for job in jobs)
    # each document's own PDF beside its page, named like it (what an employer portal attaches)
    assert sorted(p.name for p in cert_docs) == sorted(p.with_suffix(".pdf").name for p in (tmp_path / "certificates").glob("*.html"))
    assert sorted(p.name for p in notice_docs) == sorted(p.with_suffix(".pdf").name for p in (tmp_path / "notices").glob("*.html"))
    for path, count in ((certs, 2), (notices, 3)):
        data = path.read_bytes()
        assert data.startswith(b"%PDF-") and path.name.endswith(".pdf")
        assert data.count(b"/Type /Page\n") + data.count(b"/Type/Page\n") + data.count(b"/Type /Page ") >= count or \
            len(re.findall(rb"/Type\s*/Page[^s]", data)) >= count
        assert len(re.findall(rb"/Title", data)) >= count  # a bookmark per document (and the document's title)
    assert certs.parent.name == "certificates" and notices.parent.name == "notices"


def test_a_big_run_leaves_its_pdfs_as_data_and_documents_renders_them(prefect_harness, tmp_path, monkeypatch):
    """IMPCREDIT_PDF=auto: over IMPCREDIT_PDF_MAX documents the run writes the PDFs' data, and
    `impcredit documents` renders them and lists them in the manifest."""
    from typer.testing import CliRunner

    from flows.cli import app

    monkeypatch.setenv("IMPCREDIT_PDF_MAX", "2")
    sub = tmp_path / "sub"
    generate_submission(sub, employers=6, seed=4, tax_year=2023)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01",
                                 "--out", str(out), "--workdir", str(tmp_path / "w")])
    assert r.exit_code == 0, r.output
    assert (out / "notices" / "notices.pdf.json").is_file() and not (out / "notices" / "notices.pdf").exists()
    r = CliRunner().invoke(app, ["documents", "--out", str(out)])
    assert r.exit_code == 0 and "notices.pdf" in "".join(r.output.split()), r.output
    assert (out / "notices" / "notices.pdf").read_bytes().startswith(b"%PDF-")
    assert not list(out.glob("*/*.pdf.json"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert "notices/notices.pdf" in manifest["documents"]
    # the run page's Documents column links each application's PDFs, as a run that rendered them
    # itself does (issue 44: `documents` left the page without its PDF links)
    monkeypatch.setenv("IMPCREDIT_PDF_MAX", "1000")
    inline = tmp_path / "inline"
    r = CliRunner().invoke(app, ["annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01",
                                 "--out", str(inline), "--workdir", str(tmp_path / "w2")])
    assert r.exit_code == 0, r.output

    def documents_column(folder: Path) -> list[tuple]:
        html = (folder / "index.html").read_text()
        rows = json.loads(html.split('id="apps-data">', 1)[1].split("</script>", 1)[0])
        return [(row[0], *row[9:13]) for row in rows]

    linked = documents_column(out)
    assert linked == documents_column(inline)
    assert linked and all(row[2] == f"notices/{row[0]}.pdf" and (out / row[2]).is_file() for row in linked)
    assert any(row[4].startswith("certificates/") and row[4].endswith(".pdf") for row in linked)
    assert all((out / row[4]).is_file() for row in linked if row[4])

    def page(folder: Path) -> str:  # but its run id and time
        text = re.sub(r"<dt>Decided</dt><dd>[^<]*</dd>", "", (folder / "index.html").read_text())
        return re.sub(r"annual-2023-\d{8}T\d+Z-\w+", "RUN", text)

    # and its lists of certificates and notices: the combined PDFs, every file counted
    assert "certificates/certificates.pdf" in page(out) and page(out) == page(inline)
