"""The same inputs and settings give the same outputs, byte for byte: every file of two annual
runs of one submission (a vendor mix, with a workbook) in two workdirs, the run id and start time
held equal. What made them differ before: zip and PDF dates from the clock, the row order of a
group_by, and float sums whose last bit depended on the order a parallel group_by added them."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from transforms.options import DocumentOptions
from transforms.pii import HashKey
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

KEY = HashKey(b"reproducible-test-key-0123456789abcdef", "test")
RUN_ID = "annual-2023-20240701T000000000000Z-fixed"


def _run(src: Path, root: Path) -> dict[str, str]:
    params, settings = load_parameters(), Settings()
    staged = steps.stage_inputs(src, root / "work", KEY)
    result = steps.compute(staged.frames, 2023, dt.date(2024, 7, 1), params, settings)
    steps.decide_and_commit(steps.RunContext(workdir=root / "work", out_dir=root / "out", run_id=RUN_ID, kind="annual", tax_year=2023,
                            as_of=dt.date(2024, 7, 1), params=params, settings=settings, staged=staged, result=result,
                            started_at=dt.datetime(2024, 7, 1), documents=DocumentOptions(pdf="all")))
    out = root / "out"
    # the manifest and the index name the code version and paths; everything else is the run's
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name not in ("manifest.json", "index.html")}


def test_two_runs_of_the_same_inputs_write_the_same_bytes(tmp_path, monkeypatch):
    # 60 employers: every vendor layout and a workbook, every kind of document (the PDFs of 200
    # employers took five minutes of the suite for nothing more)
    generate_submission(tmp_path / "canonical", employers=60, seed=7, tax_year=2023)
    write_vendor_mix(tmp_path / "canonical", tmp_path / "mix", seed=7)
    write_vendor_mix(tmp_path / "canonical", tmp_path / "mix2", seed=7)
    same_input = {p.relative_to(tmp_path / "mix").as_posix(): p.read_bytes() for p in (tmp_path / "mix").rglob("*") if p.is_file()}
    assert same_input == {p.relative_to(tmp_path / "mix2").as_posix(): p.read_bytes()
                          for p in (tmp_path / "mix2").rglob("*") if p.is_file()}  # same seed, same files
    assert any(name.endswith(".xlsx") for name in same_input)
    first, second = _run(tmp_path / "mix", tmp_path / "a"), _run(tmp_path / "mix", tmp_path / "b")
    assert {"employee_years.parquet", "awards.xlsx", "certificates/certificates.pdf", "notices/notices.pdf"} <= set(first)
    assert first == second


def test_the_spread_sums_do_not_depend_on_the_order_of_their_terms(tmp_path):
    """The per-segment sums of the payroll of 200 employers, thirty times over: equal to the last bit (a float
    sum in a parallel group_by differed in its last bit from one call to the next)."""
    import polars as pl

    from transforms.rules.spreading import rate_segments, spread_payroll
    from transforms.settings import RuleSettings
    from transforms.synthetic.generate import generate_submission as gen

    gen(tmp_path / "s", employers=200, seed=7, tax_year=2023)
    payroll = pl.read_csv(tmp_path / "s" / "payroll" / "*.csv", try_parse_dates=True).lazy()
    segments = rate_segments(load_parameters(), dt.date(2021, 1, 1), dt.date(2023, 12, 31))
    runs = [spread_payroll(payroll, segments, RuleSettings()).collect().sort("employer_id", "employee_id", "seg_id")
            for _ in range(30)]
    assert runs[0].height > 5_000
    assert all(r.equals(runs[0]) for r in runs[1:])
