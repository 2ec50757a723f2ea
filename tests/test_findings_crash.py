"""Findings stay safe through crashes and concurrent commands (issue 27 item 4), with real
processes: a SIGKILL during ``impcredit finding record`` leaves either the finding and its
re-decision or neither, and the same command given again ends as an uninterrupted one; two
identical findings recorded at once are one finding."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.test_findings import annual, submission
from transforms.award.finding_acts import FAILPOINTS

REPO = Path(__file__).resolve().parents[1]
ARGS = ["finding", "record", "A1", "--kind", "misclassified", "--employee", "E1", "--knowing", "yes", "--reason",
        "no determination of impairment on file"]


def cli(args: list[str], *, failpoint: str = "", background: bool = False):
    env = dict(os.environ, IMPCREDIT_FAILPOINT=failpoint)
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    return proc if background else (proc.wait(timeout=120), proc.stdout.read())


def state(work: Path) -> dict:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return {
            "findings": con.sql("SELECT count(*) FROM findings").fetchall()[0][0],
            "finding_runs": con.sql("SELECT count(*) FROM runs WHERE kind = 'finding'").fetchall()[0][0],
            "rows": con.sql("""SELECT application_id, approval_year, awarded_cents, requested_cents, status FROM decisions
                               ORDER BY application_id, seq""").fetchall(),
            "used_2024": con.sql("SELECT sum(awarded_cents) FROM decisions WHERE approval_year = 2024").fetchall()[0][0],
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("findings-crash")
    annual(submission(root / "sub"), root / "work", root / "out0")
    ref = root / "reference"
    shutil.copytree(root / "work", ref)
    code, out = cli([*ARGS, "--workdir", str(ref), "--out", str(root / "ref-out")])
    assert code == 0, out
    return {"root": root, "before": state(root / "work"), "after": state(ref), "docs": root / "ref-out"}


@pytest.mark.parametrize("point", FAILPOINTS)
def test_sigkill_during_finding_record_leaves_all_or_nothing(point, base, tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    shutil.copytree(base["root"] / "work", work)
    code, said = cli([*ARGS, "--workdir", str(work), "--out", str(out)], failpoint=point)
    assert code == -signal.SIGKILL, said
    # killed before the commit: neither the finding nor its re-decision; after it: both, no documents yet
    assert state(work) == (base["before"] if point == "finding_decided" else base["after"])
    assert not (out / "notices").exists()
    code, said = cli([*ARGS, "--workdir", str(work), "--out", str(out)])
    assert code == 0, said
    assert state(work) == base["after"]  # one finding, one re-decision, whatever was killed
    assert ("recorded before" in said) == (point == "finding_committed")
    for name in ("taxation/recapture.csv", "notices/A1.html", "certificates/NJ-IMP-2024-A1-A1.html"):
        assert (out / name).read_bytes() == (base["docs"] / name).read_bytes(), name
    assert list(out.glob(".pending-*")) == []


def test_the_same_finding_recorded_twice_at_once_is_one_finding(base, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(base["root"] / "work", work)
    procs = [cli([*ARGS, "--workdir", str(work), "--out", str(tmp_path / f"out{i}"), "--wait", "60"], background=True)
             for i in range(2)]
    results = [(p.wait(timeout=120), p.stdout.read()) for p in procs]
    assert [c for c, _ in results] == [0, 0], results
    assert state(work) == base["after"]
    assert sum("recorded before" in s for _, s in results) == 1  # the second found the first
