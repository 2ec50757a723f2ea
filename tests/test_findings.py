"""Audit findings through the commands (spec section 9a; issue 27): ``impcredit finding record`` re-
decides at once and writes the amended certificate, the notice of the finding and
``taxation/recapture.csv``; the same finding recorded twice is one finding with the same documents;
a rerun after a finding reports what the ledger decided and reproduces its outputs; bad input is
one line, a non-zero exit and nothing written; ``finding list``, ``withdraw`` and ``explain``."""

from __future__ import annotations

import calendar
import datetime as dt
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.runs import findings as run_findings
from transforms.settings import AllocationSettings, Settings

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)
SSNS = {"A1/E1": "111-22-0001", "A1/E2": "111-22-0002", "B1/E1": "111-22-0003", "C1/E1": "111-22-0004"}


def _rows(employer: str, employee: str, ssn: str, h22: int, h23: int) -> list[str]:
    out = []
    for y, h in ((2022, h22), (2023, h23)):
        for m in range(1, 13):
            s, e = dt.date(y, m, 1), dt.date(y, m, calendar.monthrange(y, m)[1])
            w = round(h * PARAMS.value("minimum_wage.general", s), 2)
            out.append(f"{employer},{employee},{ssn},{s},{e},{h},{w:.2f},{round(w * 0.1095, 2):.2f}\n")
    return out


def submission(root: Path) -> Path:
    """A1 (100000001: E1 433.20, E2 396.91), B1 and C1 (433.20 each), and H1, held: its only roster
    line has an employee id that cannot be printed. A cap of $1,500: C1 PARTIAL."""
    (root / "payroll").mkdir(parents=True)
    rows = ["employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes\n"]
    rows += _rows("100000001", "E1", SSNS["A1/E1"], 80, 100) + _rows("100000001", "E2", SSNS["A1/E2"], 80, 90)
    rows += _rows("100000002", "E1", SSNS["B1/E1"], 80, 100) + _rows("100000003", "E1", SSNS["C1/E1"], 80, 100)
    (root / "payroll" / "payroll.csv").write_text("".join(rows))
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
        "A1,100000001,Alpha LLC,Mercer,CBT,2023,2024-02-01T09:00:00\nB1,100000002,Beta Inc,Mercer,GIT,2023,2024-02-02T09:00:00\n"
        "C1,100000003,Gamma Co,Mercer,CBT,2023,2024-02-03T09:00:00\nH1,100000004,Held Co,Mercer,CBT,2023,2024-02-04T09:00:00\n")
    (root / "roster.csv").write_text("application_id,employee_id,wage_category\nA1,E1,general\nA1,E2,general\n"
                                     "B1,E1,general\nC1,E1,general\nH1,E\x01,general\n")
    (root / "certifications.csv").write_text("ssn,certification_id,status,valid_from,valid_to\n" + "".join(
        f"{s},C{k},CERTIFIED,2018-01-01,\n" for k, s in enumerate(SSNS.values())))
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"10000000{e},{y}-07-01,0.0280,0.0050\n" for e in (1, 2, 3, 4) for y in (2021, 2022, 2023)))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def annual(sub: Path, work: Path, out: Path) -> pl.DataFrame:
    settings = Settings(allocation=AllocationSettings(cap=1500))
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, settings)
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=settings, workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc()))
    return pl.read_csv(out / "awards.csv", infer_schema=False)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("findings")
    sub = submission(root / "sub")
    awards = annual(sub, root / "work", root / "out0")
    status = dict(awards.select("application_id", "status").iter_rows())
    assert status == {"A1": "APPROVED", "B1": "APPROVED", "C1": "PARTIAL", "H1": "HELD"}
    return {"root": root, "sub": sub}


@pytest.fixture
def work(base, tmp_path) -> Path:
    shutil.copytree(base["root"] / "work", tmp_path / "work")
    return tmp_path / "work"


def record(work: Path, out: Path, **kw):
    args = {"application_id": "A1", "kind": "misclassified", "employees": ["E1"], "tax_years": [], "knowing": "yes",
            "reason": "no determination of impairment on file", "params": PARAMS, "on": dt.date(2024, 9, 3)} | kw
    return run_findings.record_finding(work, out, **args)


def counts(work: Path) -> dict[str, int]:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return {t: con.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                for t in ("runs", "decisions", "findings", "withdrawals", "finding_decisions")}
    finally:
        con.close()


def used_2024(work: Path) -> float:
    con = ledger.connect(work / "impcredit.duckdb", read_only=True)
    try:
        return ledger.awarded_in_year(con, 2024) / 100
    finally:
        con.close()


def test_a_finding_re_decides_at_once_and_writes_its_documents(work, tmp_path):
    before = counts(work)
    got = record(work, tmp_path / "f1")
    assert got.created and got.finding.finding_id == "F-0001" and got.event == "finding"
    assert [(e["application_id"], e["certified_before"], e["certified_now"], e["status"]) for e in got.effects] == [
        ("A1", 830.11, 396.91, "APPROVED")]
    after = counts(work)
    assert after["findings"] == 1 and after["finding_decisions"] == 1 and after["runs"] == before["runs"] + 1
    assert after["decisions"] == before["decisions"] + 1  # one amendment row: -433.20 in 2024
    assert used_2024(work) == pytest.approx(1500.00 - 433.20)  # the cap used goes down; nothing re-awarded
    out = tmp_path / "f1"
    rec = pl.read_csv(out / "taxation" / "recapture.csv", infer_schema=False)
    assert rec.rows() == [("A1", "100000001", "10-0000001", "CBT", "2023", "830.11", "396.91", "433.20", "2024-09-03",
                           "yes", "3", "no")]
    cert = (out / "certificates" / "NJ-IMP-2024-A1-A1.html").read_text()
    assert 'id="amount">$396.91<' in cert and "NJ-IMP-2024-A1" in cert and (out / "certificates" / "NJ-IMP-2024-A1-A1.pdf").is_file()
    notice = (out / "notices" / "A1.html").read_text()
    assert "Notice of an audit finding: application A1" in notice and 'class="finding_id">F-0001<' in notice
    assert "3 times the penalties" in notice and "$433.20 is taken back" in notice and 'id="appeal"' in notice
    assert "MISCLASSIFIED" in notice and "Rejected payroll rows" not in notice
    assert (out / "notices" / "A1.pdf").is_file() and (out / "finding.json").is_file()
    # the notice opens with what happened and the amount now, never "approved"; it states the penalty
    from pypdf import PdfReader

    from tests.test_products import parse

    page = parse(out / "notices" / "A1.html")
    opening = " ".join(page.by_id["status_words"].split())
    assert opening.startswith("This notice amends the decision of application A1 after an audit finding that an "
                              "employee claimed is not an employee with an impairment (F-0001, September 3, 2024).")
    assert "it is now $396.91" in opening and "recapture $433.20" in opening and "approved" not in opening.lower()
    assert "Your application is approved" not in notice
    from tests.test_notice_words import assert_pointers_true

    assert_pointers_true(notice)
    penalty = " ".join(notice.split('class="finding_penalty">')[1].split("<")[0].split())
    assert penalty.startswith("3 times the penalties the Corporation Business Tax law provides, on the $433.20 "
                              "recaptured") and "never waived" in penalty
    pdf = " ".join(" ".join(pg.extract_text() for pg in PdfReader(out / "notices" / "A1.pdf").pages).split())
    assert opening in pdf and penalty in pdf and "Your application is approved" not in pdf
    # the certificate it supersedes is written again, marked superseded (HTML and PDF)
    old = out / "certificates" / "NJ-IMP-2024-A1.html"
    assert "Superseded: do not file this certificate." in parse(old).by_id["superseded"]
    assert "NJ-IMP-2024-A1-A1" in parse(old).by_id["superseded"] and 'id="superseded"' not in cert
    old_pdf = " ".join(PdfReader(out / "certificates" / "NJ-IMP-2024-A1.pdf").pages[0].extract_text().split())
    assert "Superseded: do not file this certificate. Certificate NJ-IMP-2024-A1-A1 replaced it on" in old_pdf
    assert old_pdf.endswith("Certificate NJ-IMP-2024-A1 (superseded), page 1 of 1")
    for p in out.rglob("*"):
        if p.is_file() and p.suffix in (".html", ".csv", ".json"):
            assert "111-22-000" not in p.read_text() and "11122000" not in p.read_text()  # no ssn anywhere


def test_a_finding_recorded_twice_is_one_finding_with_the_same_documents(work, tmp_path):
    record(work, tmp_path / "f1")
    before = counts(work)
    again = record(work, tmp_path / "f2")
    assert not again.created and again.finding.finding_id == "F-0001"
    assert counts(work) == before  # nothing new in the ledger
    for name in ("taxation/recapture.csv", "notices/A1.html", "certificates/NJ-IMP-2024-A1-A1.html"):
        assert (tmp_path / "f1" / name).read_bytes() == (tmp_path / "f2" / name).read_bytes(), name


def test_a_rerun_after_a_finding_reports_it_and_reproduces_its_outputs(base, work, tmp_path):
    record(work, tmp_path / "f1")
    a = annual(base["sub"], work, tmp_path / "r1")
    b = annual(base["sub"], work, tmp_path / "r2")
    for name in ("awards.csv", "employee_credits.csv", "taxation/award_file.csv", "taxation/recapture.csv"):
        assert (tmp_path / "r1" / name).read_bytes() == (tmp_path / "r2" / name).read_bytes(), name
    assert a.equals(b)
    assert a.filter(pl.col("application_id") == "A1").select("requested", "awarded", "status").row(0) == (
        "396.91", "396.91", "APPROVED")
    credits = pl.read_csv(tmp_path / "r1" / "employee_credits.csv", infer_schema=False)
    e1 = credits.filter((pl.col("application_id") == "A1") & (pl.col("employee_id") == "E1")).row(0, named=True)
    assert (e1["status"], e1["reasons"], e1["credit"]) == ("INELIGIBLE", "MISCLASSIFIED", "0.00")
    changes = (tmp_path / "r1" / "changes.csv").read_text()
    assert "request differs" not in changes  # the request the finding decided is the one recomputed
    assert 'class="finding_id">F-0001<' in (tmp_path / "r1" / "notices" / "A1.html").read_text()
    # the run's certificates: the first one superseded by the finding's amendment, said on it
    assert 'id="superseded"' in (tmp_path / "r1" / "certificates" / "NJ-IMP-2024-A1.html").read_text()
    assert 'id="superseded"' not in (tmp_path / "r1" / "certificates" / "NJ-IMP-2024-A1-A1.html").read_text()
    index = (tmp_path / "r1" / "index.html").read_text()
    cap = (tmp_path / "r1" / "reports" / "cap_sufficiency.html").read_text()
    for page in (index, cap):  # the freed amount and C1, approved in part, that could use it
        assert 'id="freed"' in page and "$433.20" in page and "<td>C1</td>" in page
    assert 'id="freed"' not in (base["root"] / "out0" / "index.html").read_text()  # no finding, no section


def test_explain_shows_the_finding(base, work, tmp_path):
    from transforms.products.explain import explain

    record(work, tmp_path / "f1")
    annual(base["sub"], work, tmp_path / "r1")
    got = explain(work, tmp_path / "r1", 2023, "100000001", "E1", PARAMS)
    assert got["employee_year"]["reasons"] == "MISCLASSIFIED" and got["check"]["ok"]
    assert [(f["finding_id"], f["kind"], f["knowing"], f["status"]) for f in got["findings"]] == [
        ("F-0001", "misclassified", True, "in force")]


def test_list_and_withdraw_through_the_cli(work, tmp_path):
    from flows.cli import app

    record(work, tmp_path / "f1")
    runner = CliRunner()
    r = runner.invoke(app, ["finding", "list", "--workdir", str(work)], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "F-0001" in r.output and "433.20" in r.output
    r = runner.invoke(app, ["finding", "withdraw", "F-0001", "--reason", "appeal upheld", "--workdir", str(work),
                            "--out", str(tmp_path / "w1")])
    assert r.exit_code == 0, r.output
    assert "withdrew F-0001" in r.output and "$396.91 -> $830.11" in r.output  # the cap left covers it
    rec = pl.read_csv(tmp_path / "w1" / "taxation" / "recapture.csv", infer_schema=False)
    assert rec.select("certified_before", "certified_now", "recapture", "penalty_multiplier").row(0) == (
        "396.91", "830.11", "-433.20", "0")
    assert used_2024(work) == pytest.approx(1500.00)
    notice = (tmp_path / "w1" / "notices" / "A1.html").read_text()
    assert "Notice: audit finding withdrawn, application A1" in notice and "Audit finding F-0001 (withdrawn)" in notice
    # the withdrawal's certificate replaces the finding's one (the one before it), which is marked superseded
    assert "Certificate NJ-IMP-2024-A1-A2 replaces certificate NJ-IMP-2024-A1-A1, which is superseded" in " ".join(
        notice.split())
    first = (tmp_path / "w1" / "certificates" / "NJ-IMP-2024-A1-A1.html").read_text()
    assert 'id="superseded"' in first and "NJ-IMP-2024-A1-A2" in first
    second = (tmp_path / "w1" / "certificates" / "NJ-IMP-2024-A1-A2.html").read_text()
    assert 'id="amends">NJ-IMP-2024-A1-A1<' in second and "$396.91 / $830.11" in second
    assert (tmp_path / "w1" / "notices" / "A1.pdf").is_file()


BAD = [
    (["finding", "record", "NOPE", "--kind", "misclassified", "--employee", "E1", "--knowing", "no", "--reason", "x"],
     "unknown application 'NOPE'"),
    (["finding", "record", "A1", "--kind", "misclassified", "--employee", "E9", "--knowing", "no", "--reason", "x"],
     "employee 'E9' is not claimed in application 'A1'"),
    (["finding", "record", "H1", "--kind", "misclassified", "--employee", "E1", "--knowing", "no", "--reason", "x"],
     "application 'H1' is not decided"),
    (["finding", "record", "A1", "--kind", "wage-reduction", "--tax-year", "2022", "--knowing", "no", "--reason", "x"],
     "no decided application for tax year 2022"),
    (["finding", "record", "A1", "--kind", "misclassified", "--knowing", "no", "--reason", "x"], "--employee ID"),
    (["finding", "record", "A1", "--kind", "misclassified", "--employee", "E1", "--knowing", "maybe", "--reason", "x"],
     "--knowing must be yes or no"),
    (["finding", "withdraw", "F-0009", "--reason", "x"], "no finding 'F-0009'"),
]


@pytest.mark.parametrize(("args", "said"), BAD, ids=[b[1][:30] for b in BAD])
def test_bad_input_is_one_line_and_writes_nothing(work, tmp_path, args, said):
    from flows.cli import app

    before = counts(work)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, [*args, "--workdir", str(work), "--out", str(out)], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert said in r.output and r.output.count("\n") == 1 and r.output.startswith("error:"), r.output
    assert counts(work) == before and not out.exists()


def test_a_finding_withdrawn_twice_is_refused(work, tmp_path):
    from flows.cli import app

    record(work, tmp_path / "f1")
    run_findings.withdraw_finding(work, tmp_path / "w1", "F-0001", "appeal upheld", PARAMS)
    before = counts(work)
    r = CliRunner().invoke(app, ["finding", "withdraw", "F-0001", "--reason", "again", "--workdir", str(work), "--out",
                                 str(tmp_path / "w2")], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "finding F-0001 was already withdrawn" in r.output and r.output.count("\n") == 1
    assert counts(work) == before and not (tmp_path / "w2").exists()


def test_a_finding_not_knowing_bears_the_tax_laws_own_penalty(work, tmp_path):
    record(work, tmp_path / "f1", knowing="no")
    notice = (tmp_path / "f1" / "notices" / "A1.html").read_text()
    penalty = " ".join(notice.split('class="finding_penalty">')[1].split("<")[0].split())
    assert penalty == ("The penalties the Corporation Business Tax law provides, on the $433.20 recaptured, not "
                       "multiplied (multiplier 1). The Division of Taxation computes their amount.")


def test_without_out_the_documents_go_beside_the_workdirs_outputs(base, work, tmp_path):
    """``finding record`` with no ``--out``: ``findings/<FINDING>`` in the output folder of the
    workdir's latest annual run (the run records it), never the checkout's ``data/out``."""
    from flows.cli import app
    from flows.cli.common import DATA

    before = sorted((DATA / "out" / "findings").glob("F-*")) if (DATA / "out" / "findings").is_dir() else []
    out = tmp_path / "run-out"
    annual(base["sub"], work, out)
    r = CliRunner().invoke(app, ["finding", "record", "A1", "--kind", "misclassified", "--employee", "E1", "--knowing",
                                 "no", "--reason", "no determination on file", "--workdir", str(work)],
                           env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    folder = out / "findings" / "F-0001"
    assert (folder / "notices" / "A1.html").is_file() and (folder / "taxation" / "recapture.csv").is_file()
    assert str(folder) in " ".join(r.output.split())
    after = sorted((DATA / "out" / "findings").glob("F-*")) if (DATA / "out" / "findings").is_dir() else []
    assert after == before  # nothing written into the checkout
    r = CliRunner().invoke(app, ["finding", "withdraw", "F-0001", "--reason", "appeal upheld", "--workdir", str(work)],
                           env={"COLUMNS": "300"})
    assert r.exit_code == 0 and (out / "findings" / "F-0001-withdrawal" / "notices" / "A1.html").is_file(), r.output


def test_a_finding_shows_at_the_application_level_with_audit_words(base, work, tmp_path):
    """Issue 44: a finding that took an application's award shows on the run page (found on audit,
    the amount recaptured, the penalty multiplier) and in the notice, explained as a finding with a
    hearing as its remedy, never a payroll remedy; an (f) finding likewise. awards.csv's reasons
    are section 7's (a misclassification is an employee-level reason: NO_CREDIT_DUE when it took
    every employee; an (f) finding's WAGE_REDUCTION is application-level); I-16's alternative
    ``finding_code`` puts the finding's code there (``test_i16_...``)."""
    got = record(work, tmp_path / "f1", application_id="B1", employees=["E1"], knowing="yes")
    assert [(e["status"], e["reasons"], e["certified_now"]) for e in got.effects] == [("REJECTED", "NO_CREDIT_DUE", 0.0)]
    record(work, tmp_path / "f2", application_id="C1", kind="wage-reduction", employees=[], knowing="no",
           reason="rates cut to qualify")
    awards = annual(base["sub"], work, tmp_path / "r1")
    reasons = dict(awards.select("application_id", "reasons").iter_rows())
    assert reasons["B1"] == "NO_CREDIT_DUE" and reasons["C1"] == "WAGE_REDUCTION"
    page = (tmp_path / "r1" / "index.html").read_text()
    assert "found on audit (F-0001, September 3, 2024): $433.20 recaptured, penalties x3, never waived" in page
    assert "Wages reduced (WAGE_REDUCTION); found on audit (F-0002, September 3, 2024): $236.69 recaptured, penalties x1" in page
    from tests.test_notice_words import assert_pointers_true

    for out, app, fid in (("f1", "B1", "F-0001"), ("r1", "B1", "F-0001"), ("f2", "C1", "F-0002"), ("r1", "C1", "F-0002")):
        notice = (tmp_path / out / "notices" / f"{app}.html").read_text()
        flat = " ".join(notice.split())
        assert "Nothing is owed" not in flat and "corrected payroll" not in flat and "send again" not in flat, (out, app)
        assert "Found on audit" in flat and f"See \u201cAudit finding {fid}\u201d above." in flat, (out, app)
        assert "ask for a hearing" in flat
        assert_pointers_true(notice)
    c1 = " ".join((tmp_path / "r1" / "notices" / "C1.html").read_text().split())
    assert "average hourly rate" not in c1  # an (f) finding is not the payroll's computation


def test_the_cap_stated_is_the_cap_applied(base):
    """Issue 44: the reason CAP_EXHAUSTED states the cap the run allocated against (here 1,500 dollars,
    its ``cap``), never the statute's $10,000,000."""
    flat = " ".join((base["root"] / "out0" / "notices" / "C1.html").read_text().split())
    assert "The annual limit of approvals ($1,500 per calendar year) was reached" in flat
    assert "10,000,000" not in flat


def test_i16_the_finding_code_among_an_applications_reasons():
    """I-16 (transforms.settings): section 7's reasons by default (a misclassification that took
    every employee: NO_CREDIT_DUE), the finding's code among them with ``finding_code``; an (f)
    finding's WAGE_REDUCTION is application-level either way."""
    from transforms.award import findings as fnd

    day = dt.date(2024, 9, 3)
    mis = fnd.Finding("F-1", "B1", "misclassified", "200000001", ("E1",), (2023,), True, "r", day, "run")
    wage = fnd.Finding("F-2", "C1", "wage-reduction", "200000002", (), (2023,), False, "r", day, "run")
    emp = pl.DataFrame({"application_id": ["B1", "C1"], "employee_id": ["E1", "E9"], "employer_id": ["200000001", "200000002"],
                        "tax_year": [2023, 2023], "status": ["ELIGIBLE", "ELIGIBLE"], "reasons": ["", ""],
                        "credit_cents": [43320, 23669]})
    apps = pl.DataFrame({"application_id": ["B1", "C1"], "employer_id": ["200000001", "200000002"], "tax_year": [2023, 2023],
                         "requested_cents": [43320, 23669], "status": ["PENDING", "PENDING"], "reasons": ["", ""]})
    for shown, want in (("application_level", {"B1": "NO_CREDIT_DUE", "C1": "WAGE_REDUCTION"}),
                        ("finding_code", {"B1": "MISCLASSIFIED", "C1": "WAGE_REDUCTION"})):
        _, out = fnd.apply(emp, apps, [mis, wage], shown)
        assert dict(out.select("application_id", "reasons").iter_rows()) == want, shown
        assert out["status"].to_list() == ["REJECTED", "REJECTED"] and out["requested_cents"].to_list() == [0, 0]
