"""An analyst onboards a product no shipped profile reads (issue 29): `layouts draft` on its export,
at most two lines edited, `layouts check` clean, and `annual --profiles DIR` gives the credits of
the same payroll in the canonical layout. The export is Square Payroll's Paycheck Details report
as its help center documents it (tests/fixtures/exports/onboard_product.py, written from Square's
documentation by someone other than the profile's author)."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.exports import common
from tests.fixtures.exports import onboard_product as square
from tests.fixtures.exports.run import by_person, canonical_outputs

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "IMPCREDIT_PROFILES": "", "IMPCREDIT_HMAC_KEY": "",
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=600)


def test_an_analyst_onboards_a_product_in_minutes(tmp_path):
    sub = common.submission(tmp_path / "sub", employee_ids=square.EMPLOYEE_IDS, roster_ssn=square.ROSTER_SSN)
    (export,) = square.write(sub / "payroll" / common.EMPLOYER, "xlsx")
    (sub / "payroll" / "files.csv").write_text(square.files_csv("xlsx") if hasattr(square, "files_csv")
                                              else square.FILES_CSV, encoding="utf-8")
    # no shipped profile reads it: the run would stop naming the nearest row and layout
    r = cli("layouts", "check", str(export))
    assert r.returncode == 1 and "the header matches no known payroll layout; nearest: profile" in r.stdout.replace("\n", " ")
    assert ", line 5 of sheet 'Paycheck Details' (" in r.stdout.replace("\n", " ")

    profiles = tmp_path / "profiles"
    r = cli("layouts", "draft", str(export), "--out", str(profiles / "square_paycheck_details.yaml"),
            "--name", "square_paycheck_details")
    assert r.returncode == 0, r.stderr
    drafted = (profiles / "square_paycheck_details.yaml").read_text().splitlines()
    assert 'employer_taxes: ["Total Employer Taxes"]' in "\n".join(drafted)
    edited = [('product: "Square Payroll (Paycheck Details report)"' if ln.startswith("product:") else ln) for ln in drafted]
    changed = [d for d in difflib.unified_diff(drafted, edited, lineterm="", n=0) if d[:1] in "+-" and d[:3] not in ("+++", "---")]
    assert len(changed) // 2 <= 2  # at most two lines edited (here: the product's name)
    (profiles / "square_paycheck_details.yaml").write_text("\n".join(edited) + "\n")

    r = cli("layouts", "check", "--profiles", str(profiles), str(export))
    assert r.returncode == 0, r.stdout
    assert "layout square_paycheck_details" in r.stdout and "read whole: 159 row(s), no reject" in r.stdout

    out, work = tmp_path / "out", tmp_path / "work"
    r = cli("annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--profiles", str(profiles),
            "--workdir", str(work), "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    assert by_person(out, square.EMPLOYEE_IDS) == canonical_outputs(tmp_path / "canonical")
