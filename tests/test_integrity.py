"""Integrity (spec section 1; issue 21): a file sent again under another name, with other line
endings, in a later run is a copy: its lines are ``duplicate_row`` rejects that hold nothing and
no hour is counted twice; the lake knows the checksum of every part it wrote and a damaged part or
manifest stops the run with a named error, never a silent wrong amount."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import polars as pl
import pytest

from transforms.award import held, ledger
from transforms.ingest.lake import scan_lake
from transforms.pii import load_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = load_key({})
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)


def run(sub: Path, work: Path, out: Path) -> steps.RunSummary:
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    return steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=run_id, tax_year=2023, as_of=AS_OF, params=PARAMS, settings=Settings(), workdir=work,
        out_dir=out, staged=staged, result=result, started_at=ledger.now_utc()))


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    root = tmp_path_factory.mktemp("integrity")
    sub = root / "sub"
    generate_submission(sub, employers=6, seed=7, tax_year=2023, groups_and_fiscal=False)
    run(sub, root / "w", root / "o1")
    return root


def hours(work: Path) -> float:
    return scan_lake(work, "payroll").select(pl.col("hours").sum()).collect().item()


def test_a_file_sent_again_under_another_name_with_crlf_is_a_copy(first, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    before = hours(work)
    original = sorted((sub / "payroll").glob("*.csv"))[0]
    lines = original.read_text().splitlines()
    (sub / "payroll" / "resent_copy.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    staged = steps.stage_inputs(sub, work, KEY)
    assert hours(work) == pytest.approx(before)
    rejects = staged.rejects.filter(pl.col("file").str.ends_with("resent_copy.csv"))
    assert rejects.height == len(lines) - 1
    assert set(rejects.get_column("rule")) == {"duplicate_row"}
    assert rejects.get_column("message").str.contains("sent in an earlier run").all()
    assert rejects.get_column("message").str.contains(original.name).all()
    # a copy holds nothing: every application is decided as before
    assert staged.standing.filter(pl.col("file").str.ends_with("resent_copy.csv")).height == len(lines) - 1
    assert held.holding_lines(staged.standing).filter(pl.col("file").str.ends_with("resent_copy.csv")).height == 0


def test_a_corrected_file_at_the_same_path_is_not_a_copy_of_its_earlier_version(first, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    original = sorted((sub / "payroll").glob("*.csv"))[0]
    frame = pl.read_csv(original, infer_schema=False)
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("1.5")).otherwise(pl.col("hours"))
                               .alias("hours"))
    frame.write_csv(original)
    staged = steps.stage_inputs(sub, work, KEY)
    assert staged.rejects.filter(pl.col("rule") == "duplicate_row").height == 0
