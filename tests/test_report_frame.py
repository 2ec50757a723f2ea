"""A report's lines walked as one Polars frame (``report_frame``) give exactly what the line-by-line
walk (``shape.shape_report``) gives: the same staged rows, the same counts of every kind of line and
the same totals that disagree, on reports drawn at random (payroll blocks with their period and pay
day, labels in the same cell or the next, sections whose header adds an Overtime column, totals
right or wrong at three scopes, notes, blank lines, a summary below an end line, amounts as
spreadsheets write them)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.ingest.read import tables as tb
from transforms.ingest.read.files.context import FileContext
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.reports import report_frame as rf
from transforms.pii import demo_key

KEY = demo_key()
PROFILE = """name: random_journal
description: a journal drawn at random
date_formats: ["%m/%d/%Y"]
employee_id_from: [employee_name]
fields:
  employee_name: [Employee]
  regular_hours: [Reg Hours]
  overtime_hours: [OT Hours]
  gross_wages: [Gross Pay]
  employer_taxes: [Employer Taxes]
derived:
  hours: [regular_hours, overtime_hours]
optional: [overtime_hours]
report:
  blocks:
    - {label: "payroll period", fields: [period_start, period_end], value: "\\\\s*(\\\\S+)\\\\s*-\\\\s*(\\\\S+)\\\\s*"}
    - {label: "pay ?day", fields: [pay_date]}
  totals:
    - {label: "payroll totals", checks: [hours, gross_wages, employer_taxes], scope: block}
    - {label: "totals?", checks: [hours, gross_wages], scope: since_last}
    - {label: "grand totals?", checks: [gross_wages, employer_taxes], scope: file}
  notes: ["page \\\\d+", "confidential"]
  end: ["summary by code"]
"""


def money(cents: int, style: int) -> str:
    v = cents / 100
    return [f"{v:.2f}", f"{v:,.2f}", f"${v:,.2f}" if v >= 0 else f"(${-v:,.2f})"][style]


@st.composite
def reports(draw) -> str:
    rows: list[list[str]] = [["Payroll Journal"], ["Acme LLC"], []]
    style = draw(st.integers(0, 2))
    grand = [0, 0]
    for p in range(draw(st.integers(1, 4))):
        ot = draw(st.booleans())
        head = ["Employee", "Reg Hours", *(["OT Hours"] if ot else []), "Gross Pay", "Employer Taxes", "Net"]
        start = f"{p + 1:02d}/01/2023"
        end = f"{p + 1:02d}/14/2023"
        rows.append(["Payroll period", f" {start} - {end}"] if draw(st.booleans()) else [f"Payroll period: {start} - {end}"])
        rows.append(["Pay day", f"{p + 1:02d}/20/2023"])
        if draw(st.booleans()):
            rows.append([])
        rows.append(head)
        block = [0, 0, 0]
        for e in range(draw(st.integers(1, 4))):
            reg = draw(st.integers(0, 9000))
            o = draw(st.integers(0, 800)) if ot else 0
            gross, tax = draw(st.integers(-5000, 400000)), draw(st.integers(0, 40000))
            rows.append([f"Worker {e}", f"{reg / 100:.2f}", *([f"{o / 100:.2f}"] if ot else []), money(gross, style),
                         money(tax, style), "x"])
            block = [block[0] + reg + o, block[1] + gross, block[2] + tax]
            if draw(st.integers(0, 5)) == 0:
                rows.append(["Totals", f"{(reg + o) / 100:.2f}", *([""] if ot else []), money(gross, style)])
            if draw(st.integers(0, 6)) == 0:
                rows.append([draw(st.sampled_from(["Page 2", "Confidential"]))])
        off = draw(st.sampled_from([0, 0, 0, 1]))
        rows.append(["Payroll Totals", f"{block[0] / 100:.2f}", *([""] if ot else []), money(block[1] + off, style),
                     money(block[2], style)])
        grand = [grand[0] + block[1], grand[1] + block[2]]
    if draw(st.booleans()):
        rows.append(["Grand Totals", "", "", money(grand[0] + draw(st.sampled_from([0, 3])), style), money(grand[1], style)])
    if draw(st.booleans()):
        rows += [["Summary by code"], ["REG", "1.00"], ["OT", "2.00"]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def read(path: Path, profiles: Path, *, frame: bool):
    walk = rf.walk
    if not frame:
        rf.walk = lambda *a, **k: None
    try:
        tables, problem, _, notes = tb.read_tables("payroll", path, "payroll/100000001/j.csv", KEY,
                                                  FileContext((("employer_id", "100000001"),), None, "folder"),
                                                  layouts=load_profiles(profiles))
    finally:
        rf.walk = walk
    return tables, problem, notes


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=reports())
def test_the_frame_walk_is_the_line_walk(tmp_path, monkeypatch, text):
    profiles = tmp_path / "profiles"
    profiles.mkdir(exist_ok=True)
    (profiles / "random_journal.yaml").write_text(PROFILE)
    path = tmp_path / "j.csv"
    path.write_text(text, encoding="utf-8")
    calls = []
    real = rf.walk
    monkeypatch.setattr(rf, "walk", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast, p1, n1 = read(path, profiles, frame=True)
    monkeypatch.setattr(rf, "walk", real)
    slow, p2, n2 = read(path, profiles, frame=False)
    assert calls and (p1 is None) == (p2 is None)
    if p1 is not None:
        assert p1.message == p2.message
        return
    (a,), (b,) = fast, slow
    assert a.shape.words() == b.shape.words() and n1 == n2
    assert [(e.line, e.column, e.rule, e.message) for e in a.structural] == \
        [(e.line, e.column, e.rule, e.message) for e in b.structural]
    assert a.staged.drop("__extra", strict=False).equals(b.staged.drop("__extra", strict=False))
    assert a.text.equals(b.text) and a.ragged == b.ragged
    assert pl.DataFrame(a.raw).equals(pl.DataFrame(b.raw))
