"""Products on a generated submission (transforms.synthetic.generate, seed 3, 20 employers), staged by
transforms.runs.annual.stage_inputs: explain reproduces every employee-year's credit to the cent,
and write_products writes a certificate per award and a notice per application."""

from __future__ import annotations

import datetime as dt
import re

import polars as pl
import pytest

from transforms.award import ledger
from transforms.products import write_products
from transforms.products.explain import explain
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.scenario import TEST_KEY

PARAMS = load_parameters()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gen")
    generate_submission(tmp / "sub", employers=20, seed=3)
    workdir, out = tmp / "work", tmp / "out"
    staged = steps.stage_inputs(tmp / "sub", workdir, TEST_KEY)
    settings = Settings()
    as_of = dt.date(2024, 12, 31)
    result = steps.compute(staged.frames, 2023, as_of, PARAMS, settings)
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    steps.decide_and_commit(steps.RunContext(
        workdir=workdir, out_dir=out, run_id=run_id, kind="annual", tax_year=2023, as_of=as_of, params=PARAMS,
        settings=settings, staged=staged, result=result, started_at=ledger.now_utc()))
    return {"workdir": workdir, "out": out, "result": result, "staged": staged, "run_id": run_id}


def test_explain_reproduces_every_employee_year(generated):
    emp = pl.read_parquet(generated["out"] / "employee_years.parquet")
    assert emp.height > 20 and (emp["credit_cents"] > 0).sum() > 0
    for e in emp.iter_rows(named=True):
        r = explain(generated["workdir"], generated["out"], 2023, e["employer_id"], e["employee_id"], PARAMS,
                    application_id=e["application_id"])
        assert r["check"]["ok"], (e["application_id"], e["employee_id"], r["check"])
        assert r["result"]["credit_cents"] == e["credit_cents"]
        if e["H_t"] + e["H_p"] > 0:
            assert r["sources"]["payroll"], e["employee_id"]
            assert all(p["source_file"] and p["source_line"] for p in r["sources"]["payroll"])


def test_write_products_on_generated_run(generated, tmp_path):
    con = ledger.connect(generated["workdir"] / "impcredit.duckdb")
    try:
        awards = con.sql(f"SELECT {', '.join(ledger.DECISION_COLUMNS)} FROM decisions").pl()
        files = write_products(
            tmp_path, con=con, awards=awards, employee_years=generated["result"].employees,
            rejects=generated["staged"].rejects, run_id=generated["run_id"], tax_year=2023, approval_year=2024,
            cap_cents=1_000_000_000,
        )
    finally:
        con.close()
    assert all(f.exists() for f in files)
    pos = awards.filter(pl.col("awarded_cents") > 0)
    for a in pos.iter_rows(named=True):
        html = (tmp_path / "certificates" / f"NJ-IMP-2024-{a['application_id']}.html").read_text()
        m = re.search(r'id="amount">\$([\d,]+)\.(\d\d)<', html)
        assert int(m.group(1).replace(",", "")) * 100 + int(m.group(2)) == a["awarded_cents"]
    assert len(list((tmp_path / "notices").glob("*.html"))) == awards.height
    csv = pl.read_csv(tmp_path / "taxation" / "award_file.csv", infer_schema=False)
    assert csv.height == pos.height
