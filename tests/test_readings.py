"""Decisions rest only on what the run can prove it read (spec sections 1, 5, 7 and 11: worked
examples M2, L2, N): end to end, from a submission folder in the canonical layout through the
ingest, the credits, the holds, the ledger and the notices.

- M2: the roster declares the payroll's net pay as the 2022 gross wages: HELD, DECLARED_TOTALS_DIFFER,
  the two figures side by side in held.csv and the notice; a release decides it as read.
- L2: pay periods at $0.80 an hour (a 14(c) piece rate) are rejected as implausible, held as read
  but doubtful; the release confirms them: the person is INELIGIBLE, SUBMINIMUM_ON_EFFECTIVE_DATE.
- N: no employer rates: HELD, MISSING_EMPLOYER_RATES (source agency), decided by the first run
  that has the rates.
- a declared total that is not a number is a reject of the roster line that holds its application.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from flows.cli import app
from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings

KEY = demo_key()
PARAMS = load_parameters()
EMPLOYER = "100000001"
SSN = "111-22-3333"


def cents(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def write_submission(root: Path, *, months: dict[int, tuple[float, str | float]], tax_year: int, received: str,
                     rates: bool = True, declared: dict[str, str] | None = None) -> Path:
    """The spec's common data (section 11) as a canonical submission folder: employer 100000001,
    E1 certified from 2018-01-01, application A1; ``months``: year -> (hours a month, rate: a number,
    "minimum_wage", or "M-N:rate" for months M to N at another rate)."""
    (root / "payroll").mkdir(parents=True, exist_ok=True)
    lines = ["employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes"]
    for year, (hours, rate) in sorted(months.items()):
        for m in range(1, 13):
            start = dt.date(year, m, 1)
            end = dt.date(year, m, calendar.monthrange(year, m)[1])
            r = rate
            if isinstance(rate, str) and ":" in rate:
                span, low = rate.split(":")
                a, b = (int(x) for x in span.split("-"))
                r = low if a <= m <= b else "minimum_wage"
            if r == "minimum_wage":
                r = PARAMS.value("minimum_wage.general", start)
            wages = cents(Decimal(str(hours)) * Decimal(str(r)))
            taxes = cents(wages * Decimal("0.1095"))
            lines.append(f"{EMPLOYER},E1,{SSN},{start},{end},{hours},{wages},{taxes}")
    (root / "payroll" / "payroll.csv").write_text("\n".join(lines) + "\n")
    (root / "applications.csv").write_text(
        "application_id,employer_id,employer_name,county,tax_type,tax_year,received_at\n"
        f"A1,{EMPLOYER},Example Employer LLC,Mercer,CBT,{tax_year},{received}\n")
    dec = declared or {}
    (root / "roster.csv").write_text(
        "application_id,employee_id,wage_category" + "".join(f",{k}" for k in dec) + "\n"
        "A1,E1,general" + "".join(f",{v}" for v in dec.values()) + "\n")
    (root / "certifications.csv").write_text(f"ssn,certification_id,status,valid_from,valid_to\n{SSN},C1,CERTIFIED,2018-01-01,\n")
    rate_lines = [f"{EMPLOYER},{y}-07-01,0.0280,0.0050" for y in range(2016, 2026)] if rates else []
    (root / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        line + "\n" for line in rate_lines))
    (root / "control_groups.csv").write_text("group_id,employer_id,member_from,member_to\n")
    return root


def run(sub: Path, work: Path, out: Path, tax_year: int, as_of: dt.date) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An annual run of the steps (no Prefect): (awards.csv, employee_credits.csv)."""
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, tax_year, as_of, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", tax_year, staged.inputs_sha256), tax_year=tax_year,
        as_of=as_of, params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc()))
    return (pl.read_csv(out / "awards.csv", infer_schema=False),
            pl.read_csv(out / "employee_credits.csv", infer_schema=False))


def release(work: Path, app_id: str) -> None:
    """``impcredit release`` as an analyst types it."""
    r = CliRunner().invoke(app, ["release", app_id, "--reason", "confirmed with the employer", "--workdir", str(work)])
    assert r.exit_code == 0, r.output


def one(frame: pl.DataFrame) -> dict:
    assert frame.height == 1, frame
    return frame.row(0, named=True)


EXAMPLE_A = {2022: (86.67, "minimum_wage"), 2023: (86.67, "minimum_wage")}


def test_M2_declared_net_pay_holds_and_shows_both_figures(tmp_path):
    sub = write_submission(tmp_path / "m2", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00",
                           declared={"declared_wages_prior": "10816.42", "declared_hours_current": "1080.00"})
    work, as_of = tmp_path / "w", dt.date(2024, 7, 1)
    awards, credits = run(sub, work, tmp_path / "o1", 2023, as_of)
    a = one(awards)
    assert (a["status"], a["reasons"], a["requested"], a["awarded"]) == ("HELD", "DECLARED_TOTALS_DIFFER", "388.24", "0.00")
    held = pl.read_csv(tmp_path / "o1" / "held.csv", infer_schema=False)
    h = one(held)
    assert (h["source"], h["employee_id"], h["figure"], h["file"], h["line"]) == (
        "declared_totals", "E1", "declared_wages_prior", "roster.csv", "2")
    assert (float(h["declared"]), float(h["read"])) == (10816.42, 13520.52)  # M: the hours (1080 vs 1040.04) agree
    notice = (tmp_path / "o1" / "notices" / "A1.html").read_text()
    assert 'id="declared"' in notice and "$10,816.42" in notice and "$13,520.52" in notice and "$2,704.10" in notice
    manifest = (tmp_path / "o1" / "manifest.json").read_text()
    assert json.loads(manifest)["reconciliation"] == {
        "decided_with_declared_totals": 0, "decided_without_declared_totals": 0, "held_declared_totals_differ": 1,
        "applications_declaring": 1, "applications_differing": 1, "figures_compared": 2, "figures_differing": 1}
    # explain shows the figures side by side, as the auditor reads them
    r = CliRunner().invoke(app, ["explain", "--tax-year", "2023", "--employer", EMPLOYER, "--employee", "E1",
                                 "--workdir", str(work), "--out", str(tmp_path / "o1"), "--format", "json"])
    assert r.exit_code == 0, r.output
    shown = {d["figure"]: d for d in json.loads(r.output)["declared_totals"]}
    assert (shown["declared_wages_prior"]["declared"], shown["declared_wages_prior"]["read"],
            shown["declared_wages_prior"]["differs"]) == (10816.42, 13520.52, True)
    assert (shown["declared_hours_current"]["read"], shown["declared_hours_current"]["tolerance"],
            shown["declared_hours_current"]["differs"]) == (1040.04, 86.67, False)
    r = CliRunner().invoke(app, ["explain", "--tax-year", "2023", "--employer", EMPLOYER, "--employee", "E1",
                                 "--workdir", str(work), "--out", str(tmp_path / "o1")], env={"COLUMNS": "200"})
    assert "Declared by the employer and read" in r.output and "yes: held" in r.output
    # the analyst confirms with the employer that the payroll is right: decided as read
    release(work, "A1")
    awards, credits = run(sub, work, tmp_path / "o2", 2023, as_of)
    a = one(awards)
    assert (a["status"], a["requested"], a["awarded"]) == ("APPROVED", "388.24", "388.24")
    con = ledger.connect(work / "impcredit.duckdb", read_only=True)
    rows = con.sql("SELECT source, figure, declared, read FROM confirmed_lines").fetchall()
    con.close()
    assert rows == [("declared_totals", "declared_wages_prior", 10816.42, 13520.52)]


def test_L2_a_confirmed_low_rate_counts_as_read(tmp_path):
    # 2018 and January-March 2019 at $0.80 an hour (a 14(c) piece rate), then the minimum wage
    sub = write_submission(tmp_path / "l2", months={2018: (80, 0.80), 2019: (80, "1-3:0.80")}, tax_year=2019,
                           received="2020-02-01T09:00:00")
    work, as_of = tmp_path / "w", dt.date(2020, 7, 1)
    awards, _ = run(sub, work, tmp_path / "o1", 2019, as_of)
    assert (one(awards)["status"], one(awards)["reasons"]) == ("HELD", "INPUT_REJECTED")
    held = pl.read_csv(tmp_path / "o1" / "held.csv", infer_schema=False)
    assert held.height == 15 and set(held["source"]) == {"doubtful"} and set(held["rules"]) == {"hourly_rate"}
    notice = (tmp_path / "o1" / "notices" / "A1.html").read_text()
    assert 'id="doubtful_lines"' in notice and "14(c)" in notice and "special licence" in notice
    # the lines are kept in the lake, read: released, the application is decided with them
    release(work, "A1")
    awards, credits = run(sub, work, tmp_path / "o2", 2019, as_of)
    e = one(credits)
    assert (e["status"], e["reasons"]) == ("INELIGIBLE", "SUBMINIMUM_ON_EFFECTIVE_DATE")
    assert (one(awards)["status"], one(awards)["reasons"]) == ("REJECTED", "NO_CREDIT_DUE")
    con = ledger.connect(work / "impcredit.duckdb", read_only=True)
    confirmed = con.sql("SELECT source, file, line, rules FROM confirmed_lines ORDER BY line").pl()
    con.close()
    assert confirmed.height == 15 and set(confirmed["source"]) == {"doubtful"}
    assert confirmed["line"].to_list() == list(range(2, 17))  # 12 months of 2018, January-March 2019
    # a confirmed line holds nothing again: a later tax year's application of the same person is decided
    (sub / "applications.csv").write_text((sub / "applications.csv").read_text()
                                          + f"A2,{EMPLOYER},Example Employer LLC,Mercer,CBT,2020,2021-02-01T09:00:00\n")
    (sub / "roster.csv").write_text((sub / "roster.csv").read_text() + "A2,E1,general\n")
    lines = (sub / "payroll" / "payroll.csv").read_text()
    extra = [f"{EMPLOYER},E1,{SSN},2020-{m:02d}-01,2020-{m:02d}-{calendar.monthrange(2020, m)[1]},80,"
             f"{cents(Decimal(80) * Decimal(str(PARAMS.value('minimum_wage.general', dt.date(2020, m, 1)))))},100.00"
             for m in range(1, 13)]
    (sub / "payroll" / "2020.csv").write_text(lines.splitlines()[0] + "\n" + "\n".join(extra) + "\n")
    awards, credits = run(sub, work, tmp_path / "o3", 2020, dt.date(2021, 7, 1))
    assert one(awards)["status"] != "HELD" and not (tmp_path / "o3" / "held.csv").exists()


def test_an_unconfirmed_low_rate_without_release_stays_held(tmp_path):
    sub = write_submission(tmp_path / "l2", months={2018: (80, 0.80), 2019: (80, "1-3:0.80")}, tax_year=2019,
                           received="2020-02-01T09:00:00")
    work, as_of = tmp_path / "w", dt.date(2020, 7, 1)
    run(sub, work, tmp_path / "o1", 2019, as_of)
    awards, _ = run(sub, work, tmp_path / "o2", 2019, as_of)
    assert one(awards)["status"] == "HELD"
    held = pl.read_csv(tmp_path / "o2" / "held.csv", infer_schema=False)  # the standing lines, said again
    assert held.height == 15 and set(held["rules"]) == {"hourly_rate"}


def test_N_missing_rates_hold_and_the_first_run_with_them_decides(tmp_path):
    sub = write_submission(tmp_path / "n", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00", rates=False)
    work, as_of = tmp_path / "w", dt.date(2024, 7, 1)
    awards, credits = run(sub, work, tmp_path / "o1", 2023, as_of)
    a = one(awards)
    assert (a["status"], a["reasons"], a["awarded"]) == ("HELD", "MISSING_EMPLOYER_RATES", "0.00")
    h = one(pl.read_csv(tmp_path / "o1" / "held.csv", infer_schema=False))
    assert (h["source"], h["file"]) == ("agency", "employer_rates.csv")
    # held.csv and the run page name the rate years missing (both: the table has none of the employer's)
    years = (f"the rate year starting 2022-07-01 of employer {EMPLOYER}; "
             f"the rate year starting 2023-07-01 of employer {EMPLOYER}")
    assert f"rates for {years}, which its tax period 2023-01-01 to 2023-12-31 needs" in h["messages"]
    assert f"no UI/DI rates in employer_rates.csv for {years}, which its tax period needs" in (
        tmp_path / "o1" / "index.html").read_text()
    # a release cannot decide the agency's gap (spec section 7): refused in one line naming the years, nothing recorded
    r = CliRunner().invoke(app, ["release", "A1", "--reason", "decide it", "--workdir", str(work)])
    assert r.exit_code == 2 and "release cannot decide it" in r.output, r.output
    assert years in " ".join(r.output.split())
    notice = (tmp_path / "o1" / "notices" / "A1.html").read_text()
    assert "The Department is completing its records" in notice and "Nothing on your side" not in notice.split(
        "Why it is held")[0]
    con = ledger.connect(work / "impcredit.duckdb", read_only=True)
    assert con.sql("SELECT count(*) FROM decisions").fetchall()[0][0] == 0  # nothing final, no cap used
    assert con.sql("SELECT count(*) FROM releases").fetchall()[0][0] == 0
    assert con.sql("SELECT kind FROM runs").fetchall() == [("annual",)]
    con.close()
    # the Department adds the rates: the next run decides it as example A
    (sub / "employer_rates.csv").write_text("employer_id,rate_year_start,ui_rate,di_rate\n" + "".join(
        f"{EMPLOYER},{y}-07-01,0.0280,0.0050\n" for y in range(2016, 2026)))
    awards, credits = run(sub, work, tmp_path / "o2", 2023, as_of)
    a = one(awards)
    assert (a["status"], a["requested"], a["awarded"]) == ("APPROVED", "388.24", "388.24")


def test_a_declared_total_that_is_not_a_number_is_a_reject_that_holds(tmp_path):
    sub = write_submission(tmp_path / "bad", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00",
                           declared={"declared_hours_prior": '"1,040.04"', "declared_wages_current": "14695.8O"})
    awards, _ = run(sub, tmp_path / "w", tmp_path / "o1", 2023, dt.date(2024, 7, 1))
    assert (one(awards)["status"], one(awards)["reasons"]) == ("HELD", "INPUT_REJECTED")
    rej = one(pl.read_csv(tmp_path / "o1" / "rejects.csv", infer_schema=False))
    assert (rej["file"], rej["line"], rej["column"], rej["rule"]) == ("roster.csv", "2", "declared_wages_current",
                                                                       "not_a_number")


@pytest.mark.parametrize("figure,value", [("declared_hours_current", "-5"), ("declared_taxes_prior", "12.345")])
def test_a_declared_total_out_of_range_or_with_fractions_of_a_cent_is_a_reject(tmp_path, figure, value):
    sub = write_submission(tmp_path / "bad", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00",
                           declared={figure: value})
    awards, _ = run(sub, tmp_path / "w", tmp_path / "o1", 2023, dt.date(2024, 7, 1))
    assert one(awards)["status"] == "HELD"
    rej = one(pl.read_csv(tmp_path / "o1" / "rejects.csv", infer_schema=False))
    assert (rej["line"], rej["column"]) == ("2", figure)


def test_check_shows_each_persons_figures_read_beside_those_declared(tmp_path):
    sub = write_submission(tmp_path / "m2", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00",
                           declared={"declared_wages_prior": "10816.42", "declared_hours_current": "1080.00"})
    page = tmp_path / "check.html"
    r = CliRunner().invoke(app, ["check", "--input", str(sub), "--out", str(page)], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output  # not read whole: A1 would be held
    assert "1 of 1 claimed persons, 1 of 2 figures differ from what was read" in r.output
    assert ("A1 held: roster.csv line 2, declared_wages_prior: gross wages of the prior calendar year of employee E1 "
            "(January 1, 2022 to December 31, 2022)") in " ".join(r.output.split())
    from tests.test_products import parse

    rows = parse(page).tables["figures"][1:]
    by_figure = {row[2]: row for row in rows}
    assert len(rows) == 6
    assert by_figure["gross wages of the prior calendar year"][4:] == ["13,520.52", "10,816.42", "no: held"]
    assert by_figure["hours of the tax period"][4:] == ["1,040.04", "1,080.00", "yes"]
    assert by_figure["employer payroll taxes of the tax period"][4:] == ["1,609.20", "not declared", "-"]


def test_the_summary_says_why_applications_are_held_by_source_at_80_columns(tmp_path, monkeypatch):
    """The run's summary, as a script gets it (piped, 80 columns), counts the held applications by
    why (held.csv's source): the Department's own gap is not the employer's lines to correct."""
    import io

    from rich.console import Console

    from flows.cli import common, consoles

    sub = write_submission(tmp_path / "n", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00", rates=False)
    work, as_of = tmp_path / "w", dt.date(2024, 7, 1)
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, as_of, PARAMS, Settings())
    summary = steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=as_of,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=tmp_path / "o", staged=staged, result=result,
        started_at=ledger.now_utc()))
    assert summary.held_by == {"agency": 1}
    buf = io.StringIO()
    monkeypatch.setattr(consoles, "console", Console(file=buf, width=80, force_terminal=False))
    common.print_summary(summary)
    text = buf.getvalue()
    held = [line for line in text.splitlines() if "Held, not decided" in line or "by the Department" in line]
    assert len(held) == 2 and held[0].split("Held, not decided")[1].strip(" │").startswith("1 (held.csv says why")
    assert held[1].strip(" │").endswith("1") and "lines to correct" not in text


@pytest.mark.parametrize(("module", "fmt"), [("patriot_payroll_details", "xlsx"), ("transposed_register", "xlsx"),
                                             ("gusto_custom_report", "xlsx"), ("adp_run", "xlsx")])
def test_check_of_an_export_read_by_section_or_position_names_no_header_loosely(module, fmt, tmp_path):
    """`impcredit check` of shipped products' exports, as an employer runs it: read whole, and nothing
    is said "read loosely" of a column the profile names by section (`{header: Amount, section:
    Employer Taxes}`: Patriot) or position (`{column: 1}`), of a total-or-parts field (Gusto's
    `employer_taxes: {total, parts}`), of a header whose spaces run double (ADP RUN's `Payment  1  Check
    Date`), of a value from a block line, or of a workbook's date cell (its midnight). Patriot's and
    Gusto's ended in an internal error ('ColumnRef' / 'tuple' object has no attribute 'casefold')."""
    from tests.test_draft_coverage import ENTRIES, write

    entry = next(e for e in ENTRIES if e.module == module and e.fmt == fmt)
    sub, _, _ = write(entry, tmp_path / "sub")
    r = CliRunner().invoke(app, ["check", "--input", str(sub)], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "This submission would be read whole" in said, said
    assert "read loosely" not in said, said
