"""A misread of any kind, with declared totals present, decides nothing wrongly (issue 35; spec
section 1, "What the employer declares, and what was read"): the payroll of a sample submission is
read wrongly in the ways the issue measured on real exports, and every application whose roster
declares totals is either decided exactly as the right reading decides it, or HELD with
DECLARED_TOTALS_DIFFER (the figures shown in held.csv). The right reading with declared totals
holds nothing for them.

The misreadings, each of a whole payroll as a wrong profile or a skipped tab gives it:
- the net pay read as gross wages (a one-word slip in a profile: "Net pay" mapped to gross_wages);
- one tab (a quarter of the tax year) not read;
- the employer taxes of one code missed (half of them read);
- the hours of another column added (half as many again).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import polars as pl
import pytest

from transforms.award import ledger
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)


def decide(sub: Path, root: Path) -> pl.DataFrame:
    """awards.csv of an annual run of tax year 2023 (no Prefect), with held.csv's figures checked."""
    work, out = root / "work", root / "out"
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=steps.new_run_id("annual", 2023, staged.inputs_sha256), tax_year=2023, as_of=AS_OF,
        params=PARAMS, settings=Settings(), workdir=work, out_dir=out, staged=staged, result=result,
        started_at=ledger.now_utc(), with_products=False))
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    if (out / "held.csv").is_file():
        held = pl.read_csv(out / "held.csv", infer_schema=False).filter(pl.col("source") == "declared_totals")
        assert held.filter(pl.col("declared").is_null() | pl.col("read").is_null()).height == 0  # both shown
    return awards


def misread(sub: Path, dst: Path, how) -> Path:
    shutil.copytree(sub, dst)
    for f in sorted((dst / "payroll").glob("*.csv")):
        rows = pl.read_csv(f, infer_schema=False)
        how(rows).write_csv(f)
    return dst


def scale(col: str, factor: float):
    return lambda rows: rows.with_columns((pl.col(col).cast(pl.Float64) * factor).round(2).cast(pl.String).alias(col))


def drop_quarter(rows: pl.DataFrame) -> pl.DataFrame:
    end = pl.col("period_end").str.to_date()
    return rows.filter(~((end >= dt.date(2023, 10, 1)) & (end <= dt.date(2023, 12, 31))))


def more_hours(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.with_columns((pl.col("hours").cast(pl.Float64) * 1.5).round(2).cast(pl.String).alias("hours"))


MISREADINGS = {
    "net pay as gross wages": scale("gross_wages", 0.78),
    "a tab of the year not read": drop_quarter,
    "an employer tax code missed": scale("employer_taxes", 0.5),
    "another column's hours added": more_hours,
}


@pytest.fixture(scope="module")
def right(tmp_path_factory):
    root = tmp_path_factory.mktemp("right")
    sub = root / "sub"
    generate_submission(sub, employers=40, seed=17, tax_year=2023, groups_and_fiscal=False)
    roster = pl.read_csv(sub / "roster.csv", infer_schema=False)
    declaring = set(roster.filter(pl.col("declared_hours_current").is_not_null()).get_column("application_id"))
    awards = decide(sub, root / "right")
    # the right reading holds nothing for its declared totals
    assert awards.filter(pl.col("reasons").str.contains("DECLARED_TOTALS_DIFFER")).height == 0
    assert len(declaring) >= 10 and awards.filter(pl.col("status") == "APPROVED").height >= 5
    return {"sub": sub, "awards": awards, "declaring": declaring}


@pytest.mark.parametrize("name", sorted(MISREADINGS))
def test_a_misread_with_declared_totals_decides_nothing_wrongly(right, tmp_path, name):
    sub = misread(right["sub"], tmp_path / "sub", MISREADINGS[name])
    got = decide(sub, tmp_path)
    want = right["awards"].select("application_id", "status", "requested", "awarded", "reasons")
    both = got.select("application_id", "status", "requested", "awarded", "reasons").join(
        want, on="application_id", suffix="_right")
    mine = both.filter(pl.col("application_id").is_in(list(right["declaring"])))
    wrong = mine.filter((pl.col("status") != "HELD") & (
        (pl.col("status") != pl.col("status_right")) | (pl.col("awarded") != pl.col("awarded_right"))
        | (pl.col("requested") != pl.col("requested_right"))))
    assert wrong.height == 0, wrong
    held = mine.filter((pl.col("status") == "HELD") & (pl.col("status_right") != "HELD"))
    assert held.height > 0 and held["reasons"].str.contains("DECLARED_TOTALS_DIFFER").all(), held
    # and the reading was wrong where it mattered: some application without declarations would be decided otherwise
    changed = both.filter(pl.col("requested") != pl.col("requested_right"))
    assert changed.height > 0
