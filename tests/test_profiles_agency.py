"""Profiles outside the package and headers matched by meaning (issue 29, items 1-3, 5).

- An agency's profiles folder (``--profiles``, ``IMPCREDIT_PROFILES``, ``profiles`` in
  impcredit.toml) is read beside the shipped profiles through the same strict schema; one with a
  shipped profile's name replaces it; ``layouts`` says where each comes from.
- A profile with an unknown key, a bad pattern or an ambiguous mapping stops the command with one
  line naming the file, the key and what to write: ``layouts`` never prints "internal error", and a
  run never starts on half its layouts.
- Headers compare as sets of words in one spelling (the vocabulary, data beside the profiles):
  ``SOCIAL SECURITY - EMPLOYER TAX``, ``ER Social Security``, ``Employer OASDI`` and ``Soc Sec ER
  Amt`` reach the same field; two columns reaching one field is an error naming both.
- The header is found below title rows for every profile, those rows said; when no row matches,
  the message names the nearest row (file, sheet, line), the nearest profile, what is missing and
  what is unmatched, in one short line (the full lists in the rejects).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.exports import common
from transforms.ingest import ingest_folder
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts.profile_files import ProfileError, load_profiles, origin
from transforms.ingest.read.layouts.vocabulary import load_vocabulary
from transforms.pii import demo_key

ROOT = Path(__file__).resolve().parents[1]
KEY = demo_key()

PROFILE = """name: acme_register
product: Acme Payroll (register)
description: Acme's register
fields:
  employee_id: [Employee Number]
  period_start: [Period Start]
  period_end: [Period End]
  hours: [Hours Worked]
  gross_wages: [Gross Pay]
  er_social_security: [Employer Social Security Tax]
  er_medicare: [Employer Medicare Tax]
derived:
  employer_taxes: [er_social_security, er_medicare]
"""


def cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          env={**os.environ, "IMPCREDIT_PROFILES": "", **(env or {})}, timeout=120)


def test_the_four_spellings_of_the_employer_social_security_reach_one_field():
    words = load_vocabulary().reader()
    said = {"SOCIAL SECURITY - EMPLOYER TAX", "ER Social Security", "Employer OASDI", "Soc Sec ER Amt",
            "Employer Social Security Tax"}
    assert {words.words(h) for h in said} == {frozenset({"employer", "social_security"})}
    # but not the employee's share, nor Medicare
    assert words.words("SOCIAL SECURITY - EMPLOYEE TAX") != words.words("Employer OASDI")
    assert words.words("Medicare - Employer Tax") == words.words("ER Med")
    assert words.words("O/T Hrs") == words.words("Overtime Hours") and words.words("Reg Hrs") == words.words("Regular Hours")
    assert words.words("Amount") == frozenset({"amount"})  # filler alone is still a word


def test_headers_by_meaning_and_two_columns_on_one_field_named(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "acme.yaml").write_text(PROFILE)
    acme = next(p for p in load_profiles(d) if p.name == "acme_register")
    head = ["EMPLOYEE NUMBER", "PERIOD START", "PERIOD END", "HRS WORKED", "GROSS PAY", "SOC SEC ER AMT",
            "MEDICARE - EMPLOYER TAX", "SOCIAL SECURITY - EMPLOYEE TAX"]
    m = hd.match_headers(acme, head)
    assert m.ok and m.columns["er_social_security"] == 5 and m.columns["er_medicare"] == 6 and m.columns["hours"] == 3
    assert m.unmatched == ["SOCIAL SECURITY - EMPLOYEE TAX"]
    m = hd.match_headers(acme, [*head, "Employer OASDI"])
    assert not m.ok and m.twice() == ["er_social_security: 'SOC SEC ER AMT' and 'Employer OASDI'"]


@pytest.mark.parametrize(("text", "key", "said"), [
    (PROFILE + "shape: wide\n", "shape", "unknown key"),
    (PROFILE + "report: {totals: [{label: 'total(', checks: []}]}\n", "report.totals.0.label", "bad pattern 'total('"),
    (PROFILE.replace("  gross_wages: [Gross Pay]", "  gross_wages: [Gross Pay]\n  gross_pay: [GROSS - PAY]"),
     "fields.gross_pay", "one column would reach two fields"),
    (PROFILE.replace("derived:\n  employer_taxes: [er_social_security, er_medicare]\n", ""),
     "fields.employer_taxes", "add 'employer_taxes: [its header]' under fields"),
])
def test_a_broken_profile_is_one_line_naming_file_key_and_what_to_write(tmp_path, text, key, said):
    d = tmp_path / "p"
    d.mkdir()
    (d / "acme.yaml").write_text(text)
    with pytest.raises(ProfileError) as err:
        load_profiles(d)
    msg = str(err.value)
    assert msg.startswith(f"{d / 'acme.yaml'}: {key}") and said in msg and "\n" not in msg, msg


def test_layouts_reports_a_broken_profile_and_a_run_never_starts(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "acme.yaml").write_text(PROFILE + "headers_below: 3\n")
    r = cli("layouts", "--profiles", str(d))
    assert r.returncode == 2 and "internal error" not in r.stderr
    assert f"{d / 'acme.yaml'}: headers_below: unknown key" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    sub = common.submission(tmp_path / "sub")
    common.write_canonical(sub / "payroll" / "payroll.csv")
    r = cli("annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir",
            str(tmp_path / "w"), "--out", str(tmp_path / "out"), env={"IMPCREDIT_PROFILES": str(d)})
    assert r.returncode == 2 and "headers_below: unknown key" in r.stderr
    assert not (tmp_path / "w").exists() and not (tmp_path / "out").exists()  # nothing read, nothing written


def test_an_agency_profile_is_read_beside_the_shipped_and_replaces_one_by_name(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "acme.yaml").write_text(PROFILE)
    gusto = (ROOT / "data" / "vendors" / "gusto_payroll_journal.yaml").read_text()
    (d / "gusto.yaml").write_text(gusto.replace("product: Gusto (Payroll Journal report)", "product: Gusto (ours)"))
    got = {p.name: p for p in load_profiles(d)}
    assert origin(got["acme_register"]) == f"agency ({d / 'acme.yaml'})"
    assert got["gusto_payroll_journal"].product == "Gusto (ours)" and origin(got["canonical"]) == "shipped"
    r = cli("layouts", env={"IMPCREDIT_PROFILES": str(d)})
    assert r.returncode == 0
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("acme_register"))
    assert "Acme Payroll (register)" in line and f"agency ({d / 'acme.yaml'})" in r.stdout.replace("\n", "")
    # the settings file names the folder too
    (tmp_path / "impcredit.toml").write_text(f'profiles = "{d}"\n')
    r = cli("layouts", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and "acme_register" in r.stdout
    (tmp_path / "impcredit.toml").write_text('profile = "x"\n')
    r = cli("layouts", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and "impcredit.toml: profile: not a setting; the settings are profiles, lake" in r.stderr


def test_the_header_below_title_rows_for_every_profile_and_the_nearest_row_named(tmp_path):
    sub = tmp_path / "sub"
    common.submission(sub)
    canonical = common.canonical_rows()
    lines = ["Garden State Bakery LLC,,,,,,,,,", "Payroll 2022-2023,,,,,,,,,", ",,,,,,,,,", ",".join(canonical[0])]
    lines += [",".join(r.values()) for r in canonical]
    (sub / "payroll" / "with_titles.csv").write_text("\n".join(lines) + "\n")
    report = ingest_folder(sub, tmp_path / "w", KEY)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert rec.profile == "canonical" and rec.rows_accepted == len(canonical) and "2 preamble line(s)" in rec.message
    # a file no layout reads: the nearest row, layout, what is missing, in one short line
    bad = tmp_path / "bad"
    common.submission(bad)
    head = ["Employee Number", "Period Start", "Period End", "Hours Worked", "Gross Pay",
            *[f"Memo {i}" for i in range(40)]]
    (bad / "payroll" / "x.csv").write_text("Acme Payroll\nRegister\n" + ",".join(head) + "\n" + ",".join(["1"] * len(head)) + "\n")
    report = ingest_folder(bad, tmp_path / "w2", KEY)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert rec.status == "rejected" and len(rec.message) < 400, rec.message
    # the title rows are passed over: the row named is the header's, by the layout reaching most fields
    # (the bureau's register reaches Employee No, Period Start, Period End and Gross Pay: 4 of its 9)
    assert "nearest: profile 'bureau_client_payroll_register', line 3 (4 of 9 fields); missing column(s): " \
           "Check Date, Check No, Regular Hours, Overtime Hours, Employer Taxes" in rec.message
    assert "unmatched column(s): Hours Worked, Memo 0" in rec.message and "and 35 more" in rec.message
    full = report.rejects.filter(report.rejects["file"] == "payroll/x.csv")["message"][0]
    assert "Memo 39" in full and len(full) > len(rec.message)
