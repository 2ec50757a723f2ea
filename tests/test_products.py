"""Products of an approving run: award file (golden), certificates, notices, reports, explain."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from transforms.award import ledger
from transforms.products import REASONS, write_award_file, write_products
from transforms.products.explain import ExplainError, explain
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import AllocationSettings, Settings
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()
GOLDEN = Path(__file__).parent / "golden"
REJECT_SCHEMA = {c: pl.String for c in ("file", "column", "value", "rule", "message", "employer_id")} | {"line": pl.Int64}


def _emp(eid: str, ssn: str, cat: str, h_p: float, h_t: float, t: int = 2023) -> dict:
    return {"employee_id": eid, "ssn": ssn, "category": cat,
            "months": {t - 1: {"hours": h_p, "rate": "minimum_wage"}, t: {"hours": h_t, "rate": "minimum_wage"}}}


def cases() -> list[dict]:
    return [
        {"employer_id": "100000001", "application_id": "APP-2023-001", "tax_year": 2023,
         "applications": [{"employer_name": "Garden State Widgets LLC", "county": "Mercer", "tax_type": "CBT",
                           "received_at": "2024-02-01T09:00:00"}],
         "employees": [_emp("E1", "222-33-4001", "general", 80, 100), _emp("E2", "222-33-4002", "general", 80, 80)]},
        {"employer_id": "100000002", "application_id": "APP-2023-002", "tax_year": 2023,
         "applications": [{"employer_name": "Shore Diner", "county": "Ocean", "tax_type": "GIT",
                           "received_at": "2024-02-02T09:00:00"}],
         "employees": [_emp("T1", "222-33-4003", "tipped", 120, 130), _emp("G1", "222-33-4008", "general", 80, 90)]},
        {"employer_id": "100000003", "application_id": "APP-2023-003", "tax_year": 2023,
         "applications": [{"employer_name": "=HYPERLINK(\"x\") Farms", "county": "Salem", "tax_type": "CBT",
                           "received_at": "2024-02-03T09:00:00"}],
         "employees": [_emp("F1", "222-33-4004", "agricultural", 60, 90), _emp("F2", "222-33-4005", "general", 90, 60)]},
        {"employer_id": "100000004", "application_id": "APP-2023-004", "tax_year": 2023,
         "applications": [{"employer_name": "Pine Barrens Co.", "county": "Burlington", "tax_type": "GIT",
                           "received_at": "2024-02-04T09:00:00"}],
         "employees": [_emp("P1", "222-33-4006", "general", 100, 80)]},
        {"employer_id": "100000005", "application_id": "APP-2023-005", "tax_year": 2023,
         "applications": [{"employer_name": "Late Comer Inc", "county": "Mercer", "tax_type": "CBT",
                           "received_at": "2024-02-05T09:00:00"}],
         "employees": [_emp("L1", "222-33-4007", "general", 80, 120)]},
    ]


def frames_for(cs: list[dict]) -> dict[str, pl.DataFrame]:
    parts = [build_frames(c, PARAMS) for c in cs]
    return {k: pl.concat([p[k] for p in parts]) for k in parts[0]}


def run_scenario(tmp: Path, *, cap: float | None = 1200.0, as_of: str = "2024-07-01") -> dict:
    """A small deterministic annual run (no Prefect). The frames are written to the lake as
    stage_inputs would (lineage columns from transforms.synthetic.scenario)."""
    workdir, out = tmp / "work", tmp / "out"
    frames = frames_for(cases())
    lake = workdir / "lake"
    lake.mkdir(parents=True, exist_ok=True)
    for name, f in frames.items():
        f.write_parquet(lake / f"{name}.parquet")
    rejects = pl.DataFrame(
        [{"file": "payroll/p.csv", "line": 7, "column": "hours", "value": "-3", "rule": "non_negative",
          "message": "hours must be 0 or more", "employer_id": "100000004"},
         {"file": "payroll/p.csv", "line": 9, "column": "ssn", "value": "123-45-678", "rule": "ssn_format",
          "message": "ssn must have 9 digits", "employer_id": "100000004"}], schema=REJECT_SCHEMA)
    staged = steps.RunInputs(frames, rejects.drop("employer_id"), [{"path": "x.csv", "sha256": "0" * 64, "bytes": 1}],
                                "demo", "test")
    settings = Settings(allocation=AllocationSettings(cap=cap))
    as_of_d = dt.date.fromisoformat(as_of)
    result = steps.compute(frames, 2023, as_of_d, PARAMS, settings)
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    summary = steps.decide_and_commit(steps.RunContext(
        workdir=workdir, out_dir=out, run_id=run_id, kind="annual", tax_year=2023, as_of=as_of_d, params=PARAMS,
        settings=settings, staged=staged, result=result, started_at=ledger.now_utc()))
    return {"workdir": workdir, "out": out, "result": result, "summary": summary, "rejects": rejects, "run_id": run_id}


def ledger_awards(workdir: Path, run_id: str | None = None) -> pl.DataFrame:
    con = ledger.connect(workdir / "impcredit.duckdb", read_only=True)
    try:
        return con.sql(f"SELECT {', '.join(ledger.DECISION_COLUMNS)} FROM decisions ORDER BY application_id").pl()
    finally:
        con.close()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("products")
    r = run_scenario(tmp)
    awards = ledger_awards(r["workdir"])
    staging = tmp / "staging"
    con = ledger.connect(r["workdir"] / "impcredit.duckdb")
    try:
        files = write_products(
            staging, con=con, awards=awards, employee_years=r["result"].employees, rejects=r["rejects"],
            run_id=r["run_id"], tax_year=2023, approval_year=2024, cap_cents=120000,
        )
    finally:
        con.close()
    return {**r, "awards": awards, "staging": staging, "files": files}


# ------------------------------------------------------------------------------------------ 1


def test_scenario_has_the_statuses_the_products_need(scenario):
    st = dict(scenario["awards"].select("application_id", "status").iter_rows())
    assert st["APP-2023-004"] == "REJECTED"
    assert "PARTIAL" in st.values() or "WAITLISTED" in st.values()
    assert sum(1 for s in st.values() if s in ("APPROVED", "PARTIAL")) >= 2


def test_award_file_matches_golden(scenario):
    got = (scenario["staging"] / "taxation" / "award_file.csv").read_text()
    golden = GOLDEN / "award_file.csv"
    if os.environ.get("UPDATE_GOLDEN") == "1":  # regenerate: UPDATE_GOLDEN=1 pytest tests/test_products.py
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert golden.exists(), "golden file missing; run with UPDATE_GOLDEN=1 once and review it"
    assert got == golden.read_text()


def test_award_file_rows_manifest_and_parquet(scenario):
    s, awards = scenario["staging"] / "taxation", scenario["awards"]
    csv = pl.read_csv(s / "award_file.csv", infer_schema=False)
    pos = awards.filter(pl.col("awarded_cents") > 0).sort("application_id")
    assert csv.height == pos.height > 0
    assert csv["certificate_no"].to_list() == sorted(csv["certificate_no"].to_list())
    assert csv["certificate_no"].to_list() == [f"NJ-IMP-2024-{a}" for a in pos["application_id"]]
    assert [int(round(float(v) * 100)) for v in csv["certified_credit"]] == pos["awarded_cents"].to_list()
    assert all(re.fullmatch(r"\d+\.\d\d", v) for v in csv["certified_credit"])
    assert set(csv["schema_version"]) == {"1.1"} and set(csv["record_type"]) == {"AWARD"}
    assert set(csv["tax_year_start"]) == {"2023-01-01"} and set(csv["tax_year_end"]) == {"2023-12-31"}
    # formula neutralised
    assert any(n.startswith("'=HYPERLINK") for n in csv["employer_name"])
    assert not any(n.startswith("=") for n in csv["employer_name"])
    pq = pl.read_parquet(s / "award_file.parquet")
    assert pq["certificate_no"].to_list() == csv["certificate_no"].to_list()
    assert isinstance(pq.schema["certified_credit"], pl.Decimal)
    m = json.loads((s / "award_manifest.json").read_text())
    assert m["schema_version"] == "1.1" and m["row_count"] == csv.height
    assert m["total_certified_cents"] == int(pos["awarded_cents"].sum())
    from transforms.outputs import sha256_file

    for name in ("award_file.csv", "award_file.parquet"):
        assert m["files"][name]["sha256"] == sha256_file(s / name)


def test_award_file_empty_when_nothing_awarded(tmp_path, scenario):
    none = scenario["awards"].with_columns(pl.lit(0, pl.Int64).alias("awarded_cents"))
    m = write_award_file(tmp_path, none, none, "r", 2023, 2024)
    assert m["row_count"] == 0 and m["total_certified_cents"] == 0
    assert (tmp_path / "taxation" / "award_file.csv").read_text().startswith("schema_version,certificate_no,")


# ------------------------------------------------------------------------------------------ 2, 3


class _Cells(HTMLParser):
    """Text by element id, and table rows as lists of cell texts, by table id."""

    def __init__(self):
        super().__init__()
        self.by_id: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self._stack: list[str | None] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("br", "img", "meta"):
            return
        self._stack.append(a.get("id"))
        if a.get("id"):
            self.by_id[a["id"]] = ""
        if tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag in ("br", "img", "meta"):
            return
        if self._stack:
            self._stack.pop()
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._table is not None and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        for i in self._stack:
            if i:
                self.by_id[i] += data
        if self._cell is not None:
            self._cell.append(data)
        if self._in_title:
            self.title += data


def parse(path: Path) -> _Cells:
    p = _Cells()
    p.feed(path.read_text())
    return p


def cents(text: str) -> int:
    m = re.fullmatch(r"\s*\$([\d,]+)\.(\d\d)\s*", text)
    assert m, text
    return int(m.group(1).replace(",", "")) * 100 + int(m.group(2))


def test_certificates_carry_the_ledger_amounts_and_notices(scenario):
    pos = scenario["awards"].filter(pl.col("awarded_cents") > 0)
    certs = sorted((scenario["staging"] / "certificates").glob("*.html"))
    assert len(certs) == pos.height
    for a in pos.iter_rows(named=True):
        no = f"NJ-IMP-{a['approval_year']}-{a['application_id']}"
        p = parse(scenario["staging"] / "certificates" / f"{no}.html")
        assert p.by_id["certificate_no"].strip() == no
        assert cents(p.by_id["amount"]) == a["awarded_cents"]
        assert p.by_id["tax_year"].strip() == str(a["tax_year"])
        assert p.by_id["approval_year"].strip() == str(a["approval_year"])
        assert p.by_id["employer_name"].strip() == a["employer_name"]
        assert p.by_id["tax_type"].startswith(a["tax_type"])
        assert "34:11-56a40" in p.by_id["statutory_basis"]
        assert "carry forward" in p.by_id["no_carry_forward"]
        if a["tax_type"] == "CBT":
            assert "54:10A-5.42(c)" in p.by_id["floor"] and "statutory minimum" in p.by_id["floor"]
        else:
            assert "54A:4-18(c)" in p.by_id["floor"] and "below zero" in p.by_id["floor"]
        assert "@media print" in (scenario["staging"] / "certificates" / f"{no}.html").read_text()


def code_of(cell: str) -> str:
    """The code an employer reads beside its words: ``Not approved (REJECTED)`` -> ``REJECTED``."""
    m = re.fullmatch(r"(.+) \(([A-Z0-9_a-z]+)\)", cell.strip())
    assert m, cell
    return m.group(2)


def codes_of(cell: str) -> list[str]:
    """``Words (A); words (B)`` -> ``[A, B]``."""
    return [code_of(part) for part in cell.split("; ") if part]


def test_notices_match_decisions_and_employee_years(scenario):
    from transforms.products.reason_words import CATEGORY_LABELS, REASON_LABELS, STATUS_LABELS

    emp = scenario["result"].employees
    for a in scenario["awards"].iter_rows(named=True):
        p = parse(scenario["staging"] / "notices" / f"{a['application_id']}.html")
        # every code in words, the code beside them
        assert p.by_id["status"].strip() == f"{STATUS_LABELS[a['status']]} ({a['status']})"
        assert cents(p.by_id["awarded"]) == a["awarded_cents"]
        assert cents(p.by_id["requested"]) == a["requested_cents"]
        codes = [r for r in a["reasons"].split(";") if r]
        got = [code_of(row[0]) for row in p.tables.get("reasons", [])[1:]]
        assert got == codes
        for row in p.tables.get("reasons", [])[1:]:
            code = code_of(row[0])
            assert row[0] == f"{REASON_LABELS[code]} ({code})"
            # the cap stated is the run's (issue 44); a duplicate names the first application where it can
            words = re.escape(REASONS[code][0].replace("{cap}", " ($1,200 per calendar year)"))
            assert re.fullmatch(words.replace(re.escape("{first}"), r"( \(application [^)]+\))?"), row[1]), row[1]
            assert row[2] == REASONS[code][1]
        lines = p.tables["employees"][1:]
        mine = emp.filter(pl.col("application_id") == a["application_id"]).sort("employee_id")
        assert len(lines) == mine.height
        for line, e in zip(lines, mine.iter_rows(named=True), strict=True):
            assert line[0] == e["employee_id"] and line[1] == f"{CATEGORY_LABELS[e['wage_category']]} ({e['wage_category']})"
            assert float(line[2].replace(",", "")) == pytest.approx(e["hours_prior"], abs=0.005)
            assert float(line[3].replace(",", "")) == pytest.approx(e["hours_current"], abs=0.005)
            assert [cents(line[4]), cents(line[5]), cents(line[6])] == [e["part1_cents"], e["part2_cents"], e["credit_cents"]]
            assert code_of(line[7]) == e["status"] and codes_of(line[8]) == [c for c in e["reasons"].split(";") if c]
        for row in p.tables.get("employee_reasons", [])[1:]:
            assert code_of(row[0]) in REASONS
    # the rejected employer sees its rejected rows, the value as written (quoted), the ssn value withheld, one
    # message each (the column said once); its decision does not rest on them, and a corrected file alone changes nothing
    path = scenario["staging"] / "notices" / "APP-2023-004.html"
    p = parse(path)
    rej = p.tables["rejects"][1:]
    assert [r[1] for r in rej] == ["7", "9"]
    assert rej[0][2:] == ["hours", "\u201c-3\u201d", "hours must be 0 or more"]
    assert rej[1][3] == "(withheld)" and "123-45-678" not in path.read_text()
    assert "does not change this decision by itself" in p.by_id["rejects_text"]
    assert "HOURS_DECREASED" in [code_of(r[0]) for r in p.tables["employee_reasons"][1:]]
    assert "rejects" not in parse(scenario["staging"] / "notices" / "APP-2023-001.html").tables


def test_reasons_table_covers_every_code():
    from transforms.rules import reasons

    codes = {v for k, v in vars(reasons).items() if k.isupper() and v == k}  # a code is a constant named by itself
    assert len(codes) == 16 and codes == set(REASONS)  # every code of spec sections 5, 7 and 9a, words for each
    assert all(words and cite for words, cite in REASONS.values())


# ------------------------------------------------------------------------------------------ 4


def svg_size(path: Path) -> tuple[int, int]:
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return int(root.get("width")), int(root.get("height"))


def test_report_charts_and_titles(scenario):
    r = scenario["staging"] / "reports"
    svgs = sorted(r.glob("*.svg"))
    assert {p.name for p in svgs} == {"cap_by_approval_year.svg", "cap_by_wage_category.svg", "cap_by_county.svg",
                                      "biennial_by_employer.svg", "biennial_by_county.svg"}
    for p in svgs:
        w, h = svg_size(p)
        assert w >= 600 and h >= 100 and p.stat().st_size > 1000
    # every bar says its amount: the approved total of the approval year is written on the chart
    approved = int(scenario["awards"]["awarded_cents"].sum())
    assert f"${approved / 100:,.2f}" in (r / "cap_by_approval_year.svg").read_text()
    cap = parse(r / "cap_sufficiency.html")
    assert cap.title == "Annual cap-sufficiency report, approval year 2024"
    assert cents(cap.by_id["cap"]) == 120000
    pos = scenario["awards"]
    assert cents(cap.by_id["approved"]) == int(pos["awarded_cents"].sum())
    assert cents(cap.by_id["requested"]) == int(pos.filter(pl.col("status") != "REJECTED")["requested_cents"].sum())
    html = (r / "cap_sufficiency.html").read_text()
    for img in ("cap_by_approval_year.svg", "cap_by_wage_category.svg", "cap_by_county.svg"):
        assert f'src="{img}"' in html
    bi = parse(r / "biennial.html")
    assert bi.title.startswith("Biennial report") and "2024" in bi.title
    rows = bi.tables["employers"][1:]
    allowed = pos.filter(pl.col("awarded_cents") > 0)
    assert len(rows) == allowed.height
    by_id = {row[1]: row for row in rows}
    for a in allowed.iter_rows(named=True):
        assert by_id[a["employer_id"]][2] == a["county"]
        assert cents(by_id[a["employer_id"]][-1]) == a["awarded_cents"]
    assert cents(bi.by_id["total"]) == int(allowed["awarded_cents"].sum())


# ------------------------------------------------------------------------------------------ 5


def test_explain_reproduces_every_employee_year_of_the_scenario(scenario):
    emp = scenario["result"].employees
    for e in emp.iter_rows(named=True):
        r = explain(scenario["workdir"], scenario["out"], 2023, e["employer_id"], e["employee_id"], PARAMS)
        assert r["check"]["ok"], r["check"]
        assert r["result"]["credit_cents"] == e["credit_cents"]
        names = {q["name"] for q in r["quantities"]}
        assert {"H_t", "H_p", "W_p", "T_p", "RW_t", "RT_t", "MWavg_t", "MWavg_p", "ADJ_t", "part1", "part2"} <= names
        labels = {p["label"] for p in r["parameters"]}
        assert {"CF(2023)", "CF(2022)", "FED(2023)", "Social Security rate", "NJ taxable wage base (UI/DI)"} <= labels
        # the members whose rows counted (one: the employer alone), their RT summing to RT_t
        assert [m["member_id"] for m in r["members"]] == [e["employer_id"]]
        assert sum(m["RT_m"] for m in r["members"]) == pytest.approx(e["RT_t"], abs=1e-6)
        assert {x["employer_id"] for x in r["sources"]["employer_rates"]} == {e["employer_id"]}
        assert all(p["citation"]["title"] for p in r["parameters"])
        # the payroll lines: 24 monthly rows (2022 and 2023), with lineage, summing to H_p + H_t
        pay = r["sources"]["payroll"]
        assert len(pay) == 24 and all(p["source_file"] == "payroll.csv" and p["source_line"] for p in pay)
        assert r["sources"]["payroll_totals"]["hours"] == pytest.approx(e["H_t"] + e["H_p"], abs=0.01)
        assert [x["code"] for x in r["reasons"]] == [c for c in e["reasons"].split(";") if c]
        json.dumps(r)


def test_explain_not_found(scenario):
    with pytest.raises(ExplainError, match="the employee NOPE is unknown for employer 100000001"):
        explain(scenario["workdir"], scenario["out"], 2023, "100000001", "NOPE", PARAMS)


def test_cli_explain_json_text_and_error(scenario):
    import typer
    from typer.testing import CliRunner

    from flows.cli.explain import explain as explain_command

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    app.command()(explain_command)
    base = ["explain", "--workdir", str(scenario["workdir"]), "--out", str(scenario["out"]), "--tax-year", "2023",
            "--employer", "100000001"]
    runner = CliRunner()
    res = runner.invoke(app, [*base, "--employee", "E1", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["check"]["ok"] and data["employee_year"]["employee_id"] == "E1"
    cites = {x["label"]: x["citation"] for x in data["parameters"]}
    assert cites["CF(2023)"]["source"] == "derived" and cites["Social Security wage base"]["source"] == "government"
    assert {c["source"] for c in cites.values()} == {"government", "official_text", "derived", "secondary"}
    assert all(c["label"].startswith(c["title"] + " [") for c in cites.values())
    res = runner.invoke(app, [*base, "--employee", "E1"])
    assert res.exit_code == 0 and "Check" in res.stdout and "CF(2023)" in res.stdout
    assert "SECONDARY" in res.stdout  # a citation says what kind of source it is (not read as markup)
    res = runner.invoke(app, [*base, "--employee", "NOPE"])
    assert res.exit_code == 2
    assert "the employee NOPE is unknown" in " ".join(res.output.split()) and "Traceback" not in res.output
