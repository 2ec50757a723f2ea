"""What a killed run leaves is removed by the next one (issue 37 part 4): its folders in the
system's temporary folder (named by its process: a live run's are never touched) and its
unfinished multipart uploads under the lake's and the outputs' prefixes in an object store; a lake
the ledger recorded and that is gone is said, then rebuilt from the submission."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_crash_safety import impcredit
from tests.test_object_storage import BUCKET, aws_env
from transforms import leftovers
from transforms.synthetic.generate import generate_submission


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_only_the_folders_of_processes_that_are_gone_are_removed(tmp_path):
    gone = tmp_path / f"impcredit-lake-{dead_pid()}-abc"
    mine = tmp_path / f"impcredit-pending-{os.getpid()}-annual-2023-x"
    other = tmp_path / "impcredit-old-layout"  # no process in its name: never guessed at
    unrelated = tmp_path / "somebody-else-12345-x"
    for d in (gone, mine, other, unrelated):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "f").write_text("x")
    assert leftovers.remove_temp(tmp_path) == [gone]
    assert not gone.exists() and mine.exists() and other.exists() and unrelated.exists()
    with leftovers.temp_dir("pdf") as d:  # a folder this process makes names it
        assert Path(d).name.startswith(f"impcredit-pdf-{os.getpid()}-")


@pytest.mark.slow
def test_a_killed_s3_run_leaves_nothing_behind_the_next_run(endpoint, monkeypatch, tmp_path):
    """``impcredit annual`` with its lake and outputs in S3, killed (SIGKILL) once its outputs are
    staged: its temporary folders are left, and an upload it began is unfinished; the next run
    removes both, says so, and writes its outputs."""
    import boto3
    import requests

    aws_env(monkeypatch, tmp_path, endpoint)
    requests.post(f"{endpoint}/moto-api/reset", timeout=10)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the runs' temporary folder (tempfile.gettempdir)
    sub = tmp_path / "sub"
    generate_submission(sub, employers=6, seed=4, tax_year=2023)
    args = ["annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir",
            str(tmp_path / "w"), "--lake", f"s3://{BUCKET}/left/lake", "--out", f"s3://{BUCKET}/left/out"]
    killed = impcredit(args, tmp_path, failpoint="outputs_written")
    assert killed.returncode == -9, killed.stdout
    left = [d for d in temp.iterdir() if d.name.startswith("impcredit-")]
    assert any(d.name.startswith("impcredit-pending-") for d in left), left  # the outputs it had staged
    # an upload a killed run began and never finished (a big part goes in several pieces)
    started = s3.create_multipart_upload(Bucket=BUCKET, Key="left/lake/payroll/year=2023/part-killed.parquet")
    s3.upload_part(Bucket=BUCKET, Key="left/lake/payroll/year=2023/part-killed.parquet", PartNumber=1,
                   UploadId=started["UploadId"], Body=b"x" * 1024)
    assert len(s3.list_multipart_uploads(Bucket=BUCKET, Prefix="left/").get("Uploads", [])) == 1
    again = impcredit(args, tmp_path)
    assert again.returncode == 0, again.stdout
    said = " ".join(again.stdout.split())
    assert "removed what killed runs left:" in said and "1 unfinished upload(s)" in said
    assert [d for d in temp.iterdir() if d.name.startswith("impcredit-")] == []
    assert s3.list_multipart_uploads(Bucket=BUCKET, Prefix="left/").get("Uploads", []) == []
    assert "left/out/manifest.json" in {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="left/out/")["Contents"]}


def test_a_lake_the_ledger_recorded_and_that_is_gone_is_said(tmp_path):
    from transforms.award import ledger
    from transforms.runs.inputs import lake_gone

    work = tmp_path / "w"
    assert lake_gone(work) is None  # no ledger: a first run
    con = ledger.connect(work / "impcredit.duckdb")
    now = dt.datetime(2024, 7, 1)
    con.execute("INSERT INTO runs VALUES ('annual-1', 'annual', 2023, NULL, '2024-07-01', 2024, 'fcfs', 0, '{}', '', "
                "'', 'completed', ?, ?, '{}')", [now, now])
    con.close()
    said = lake_gone(work)
    assert said is not None and "is gone" in said and "rebuilt from this submission" in said
    (work / "lake").mkdir()
    (work / "lake" / "_manifest.json").write_text('{"version": 4, "files": {}}')
    assert lake_gone(work) is None
