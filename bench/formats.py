"""What reading a payroll report costs beside the canonical layout (issue 29): the same payroll,
one file per employer, once in the canonical layout and once as Gusto's payroll journal (title
and address rows, a payroll period and a pay day line per payroll, a header per payroll with that
payroll's columns, Payroll Totals lines checked), ingested alone (``ingest_folder``: read,
validate, the lake) in a subprocess, best of ``repeat``. Target: the report's seconds per row at
most 1.5x the canonical layout's."""

from __future__ import annotations

import datetime as dt
import shutil
import textwrap
from pathlib import Path

import polars as pl

from bench.harness import PY, measure

INGEST = textwrap.dedent("""
    import sys
    from pathlib import Path
    from transforms.ingest import ingest_folder
    from transforms.pii import demo_key
    report = ingest_folder(Path(sys.argv[1]), Path(sys.argv[2]), demo_key())
    bad = [f for f in report.files if f.status != "accepted"]
    assert not bad, [(f.file, f.status, f.message) for f in bad]
    print("rows", sum(f.rows_read for f in report.files))
""")


def payroll(rows: int, employers: int) -> dict[str, list[dict]]:
    """``rows`` monthly pay periods of 2021-2023 over ``employers`` employers (36 periods an employee)."""
    out: dict[str, list[dict]] = {}
    per = max(1, rows // employers)
    for e in range(employers):
        emp = f"{100000000 + e + 1}"
        got = out.setdefault(emp, [])
        k = 0
        while len(got) < per:
            for y in (2021, 2022, 2023):
                for m in range(1, 13):
                    if len(got) >= per:
                        break
                    s = dt.date(y, m, 1)
                    end = dt.date(y + (m == 12), m % 12 + 1, 1) - dt.timedelta(days=1)
                    got.append(dict(employer_id=emp, employee_id=f"E{k}", ssn=f"9{e % 100:02d}-{k // 10000 % 100:02d}-{k % 10000:04d}",
                                    period_start=s.isoformat(), period_end=end.isoformat(), hours=f"{120 + k % 40}.50",
                                    gross_wages=f"{1800 + k % 300}.25", employer_taxes=f"{190 + k % 20}.92"))
            k += 1
    return out


def write(folder: Path, rows: int, employers: int) -> tuple[Path, Path]:
    """(canonical submission, report submission): the payroll of each employer in a folder named by its FEIN."""
    from transforms.synthetic import reports as rp

    canon, report = folder / "canonical", folder / "report"
    for d in (canon, report):
        if d.exists():
            shutil.rmtree(d)
    for emp, got in payroll(rows, employers).items():
        (canon / "payroll" / emp).mkdir(parents=True)
        pl.DataFrame(got).write_csv(canon / "payroll" / emp / "payroll.csv")
        rp.write_gusto_journal(got, report / "payroll" / emp / "Payroll Journal.csv", company=f"Employer {emp}",
                               address=("1 Main Street", "Newark, NJ 07102"))
    return canon, report


def phase_formats(runs_dir: Path, rows: int = 1_000_000, employers: int = 20, repeat: int = 3) -> dict:
    """Seconds per row of the report and of the canonical layout, and their ratio (see the module)."""
    canon, report = write(runs_dir / "formats", rows, employers)
    out: dict = {"rows": rows, "employers": employers, "report": "gusto_payroll_journal (CSV)"}
    for name, sub in (("canonical", canon), ("report", report)):
        best = None
        for i in range(repeat):
            work = runs_dir / f"formats-{name}-work"
            shutil.rmtree(work, ignore_errors=True)
            m = measure([PY, "-c", INGEST, str(sub), str(work)], runs_dir / f"formats-{name}-{i}.log")
            shutil.rmtree(work, ignore_errors=True)
            if m["returncode"] != 0:
                out[name] = m
                return out
            if best is None or m["wall_s"] < best["wall_s"]:
                best = m
        out[name] = best
    out["report_over_canonical_per_row"] = round(out["report"]["wall_s"] / out["canonical"]["wall_s"], 2)
    shutil.rmtree(runs_dir / "formats", ignore_errors=True)
    return out
