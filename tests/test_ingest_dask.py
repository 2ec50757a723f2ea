"""Ingest on a Dask cluster (issue 28, item 2): the files, and the pieces of big files, are read,
validated and written to the lake by the workers of a real local cluster (2 worker processes,
started once for the module); the annual run's outputs and the lake are the plain run's, file by
file and byte for byte (through the library, a second run with a corrected file, and the CLI
with ``--workers 2``); with the lake in S3 (moto's server on 127.0.0.1) the driver reads no
payroll byte; a worker killed during the ingest: its task runs again elsewhere, or the run stops
in one line with nothing committed and a rerun gives the uninterrupted run's outputs."""

from __future__ import annotations

import builtins
import datetime as dt
import io
import logging
import os
import pathlib
import pickle
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from flows._env import hash_key
from tests.fixtures.compare import corrected, files, lake_files, same
from transforms import failpoints
from transforms.ingest import ingest_folder
from transforms.ingest import pipeline as pp
from transforms.pii import HashKey
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

SECRET_KEY = "dask-ingest-test-key-0123456789abcdef0123"
KEY = HashKey(SECRET_KEY.encode(), "env")
RUN_ID = "annual-2023-20240701T000000000000Z-fixed"
AS_OF = dt.date(2024, 7, 1)
BUCKET = "agency"
PIECE = 12_000  # bytes: the bigger payroll files go in pieces (on a worker, one after another)



@pytest.fixture(scope="module")
def cluster(endpoint, tmp_path_factory):
    """A local cluster of 2 worker processes (a thread each), started once: its workers inherit
    this environment, the ssn hash key and the AWS chain of the test's S3 server included."""
    from distributed import LocalCluster

    home = tmp_path_factory.mktemp("aws")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "IMPCREDIT_LAKE",
                     "IMPCREDIT_HMAC_KEY_FILE", "IMPCREDIT_HMAC_KEY_BLOCK", "IMPCREDIT_FAILPOINT", "IMPCREDIT_DASK_ADDRESS"):
            mp.delenv(name, raising=False)
        mp.setenv("IMPCREDIT_HMAC_KEY", SECRET_KEY)
        mp.setenv("AWS_CONFIG_FILE", str(home / "no-config"))
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-credentials"))
        mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
        mp.setenv("AWS_REGION", "us-east-1")
        mp.setenv("AWS_ENDPOINT_URL", endpoint)
        mp.setenv("AWS_ACCESS_KEY_ID", "AKIAIMPCREDITDASK0001")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "dask-test-secret-0000000000000000")
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR) as c:
            yield c.scheduler_address


@pytest.fixture(autouse=True)
def same_clock_and_pieces(monkeypatch):
    """The decision's instant held equal between the runs compared; big files in pieces."""
    from transforms.award import ledger

    monkeypatch.setattr(ledger, "now_utc", lambda: dt.datetime(2024, 7, 1, 12, tzinfo=dt.UTC))
    monkeypatch.setattr(pp, "PIECE_BYTES", PIECE)


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    """A vendor mix (many layouts, reports, workbooks) with a rejected line and an ssn as an
    employee id, and a bigger canonical payroll file (read in pieces)."""
    root = tmp_path_factory.mktemp("dasksub")
    generate_submission(root / "canonical", employers=10, seed=7, tax_year=2023)
    write_vendor_mix(root / "canonical", root / "mix", seed=7)
    canon = root / "mix" / "payroll" / "canonical.csv"
    row = canon.read_text().splitlines()[1].split(",")
    with canon.open("a") as fh:
        fh.write(",".join([row[0], row[2], *row[2:]]) + "\n" + ",".join([*row[:5], "many", *row[6:]]) + "\n")
    assert canon.stat().st_size > PIECE
    return root / "mix"


def run(src: Path, work: Path, out, cluster: str | None = None, run_id: str = RUN_ID) -> None:
    params, settings = load_parameters(), Settings()
    staged = steps.stage_inputs(src, work, KEY, cluster=cluster, key_loader=hash_key if cluster else None)
    result = steps.compute(staged.frames, 2023, AS_OF, params, settings)
    steps.decide_and_commit(steps.RunContext(
        workdir=work, out_dir=out, run_id=run_id, kind="annual", tax_year=2023, as_of=AS_OF, params=params,
        settings=settings, staged=staged, result=result, started_at=dt.datetime(2024, 7, 1)))


def test_the_annual_run_ingested_on_the_cluster_writes_the_plain_runs_files(cluster, submission, tmp_path):
    """Two runs on each workdir (the submission, then a corrected file, a copy under another name
    and a reversal): the lake's parts and every output, byte for byte."""
    from transforms.ingest.store import lake as lk

    again = corrected(submission, tmp_path / "corrected")
    for i, src in enumerate((submission, again)):
        run(src, tmp_path / "plain" / "w", tmp_path / "plain" / f"out{i}", run_id=f"{RUN_ID}-{i}")
        run(src, tmp_path / "dask" / "w", tmp_path / "dask" / f"out{i}", cluster=cluster, run_id=f"{RUN_ID}-{i}")
        plain, dask = files(tmp_path / "plain" / f"out{i}"), files(tmp_path / "dask" / f"out{i}")
        assert {"awards.csv", "employee_credits.csv", "manifest.json", "rejects.csv", "employee_years.parquet"} <= set(plain)
        same(plain, dask)  # manifest.json included: it names the lake's digest
        same(lake_files(tmp_path / "plain" / "w" / "lake"), lake_files(tmp_path / "dask" / "w" / "lake"))
    rejects = pl.read_csv(tmp_path / "dask" / "out1" / "rejects.csv", infer_schema=False)
    assert {"negative_net", "duplicate_row", "employee_id_is_ssn", "not_a_number"} <= set(
        rejects.get_column("rule").str.strip_chars("'").to_list())
    manifest = lk.load_manifest(tmp_path / "dask" / "w" / "lake")
    assert any(f.get("superseded_by") for f in manifest["files"].values())
    assert not (tmp_path / "dask" / "w" / "lake" / "_scratch").exists() or not any(
        (tmp_path / "dask" / "w" / "lake" / "_scratch").iterdir())


class DriverRead(AssertionError):
    pass


def guard_driver(mp: pytest.MonkeyPatch, payroll_dir: Path, quarantine: bool = False) -> None:
    """In this process only (the driver; the workers are other processes): reading a payroll
    file of the submission (but ``payroll/files.csv``, the files' context) or a payroll part of
    the lake raises (``quarantine``: but the quarantine's, the rejected lines that hold
    applications, which the run reads after the ingest)."""
    import polars

    from transforms import storage

    def payroll(target) -> bool:
        text = str(target)
        if quarantine and "/quarantine/" in text:
            return False
        if "/payroll/" in text or "/payroll_lines/" in text:
            return not text.startswith(str(payroll_dir)) or Path(text).name != "files.csv"
        return False

    def guarded(fn):
        def inner(target, *a, **k):
            if payroll(target):
                raise DriverRead(f"the driver read {target}")
            return fn(target, *a, **k)
        return inner

    for mod, names in ((builtins, ["open"]), (io, ["open"]),
                       (polars, ["read_csv", "scan_csv", "read_parquet", "scan_parquet", "read_excel"])):
        for name in names:
            mp.setattr(mod, name, guarded(getattr(mod, name)))
    for name in ("read_bytes", "read_text", "open"):
        mp.setattr(pathlib.Path, name, guarded(getattr(pathlib.Path, name)))
        mp.setattr(storage.ObjectPath, name, guarded(getattr(storage.ObjectPath, name)))


def test_with_the_lake_in_s3_no_payroll_byte_passes_through_the_driver(cluster, submission, tmp_path):
    """The lake in the bucket, the ingest on the cluster: the driver's reads of payroll files and
    payroll parts raise, yet both ingests (the second supersedes, nets and finds copies against
    the lake's rows) complete with the plain lake's parts, byte for byte."""
    import boto3

    from transforms.ingest.store.location import use_lake

    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    work = tmp_path / "w"
    lake = use_lake(work, f"s3://{BUCKET}/dask/lake", record=True)
    again = corrected(submission, tmp_path / "corrected")
    for src in (submission, again):
        plain = ingest_folder(src, tmp_path / "plain", KEY)
        with pytest.MonkeyPatch.context() as mp:
            guard_driver(mp, src / "payroll")
            with pytest.raises(DriverRead):  # the guard holds in this process
                pl.read_csv(src / "payroll" / "canonical.csv")
            report = ingest_folder(src, work, KEY, cluster=cluster, key_loader=hash_key)
        assert report.lake_sha256 == plain.lake_sha256 and report.rejects.equals(plain.rejects)
        assert report.files == plain.files
    objects = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="dask/lake/"):
        for o in page.get("Contents", []):
            if not o["Key"].endswith("/"):  # a folder marker the store's client leaves: no object impcredit lists
                objects[o["Key"].removeprefix("dask/lake/")] = s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
    assert not [k for k in objects if k.startswith("_scratch/")]
    same(lake_files(tmp_path / "plain" / "lake"), {k: v for k, v in objects.items() if k != "_manifest.json"})
    assert str(lake) == f"s3://{BUCKET}/dask/lake"


def guard_plans(mp: pytest.MonkeyPatch, payroll_dir: Path) -> None:
    """``guard_driver``, but a plan over the lake's payroll may be built here (and sent to a worker):
    what raises is running one in this process (collect, sink), besides opening a payroll file."""
    import polars

    guard_driver(mp, payroll_dir, quarantine=True)
    for name in ("scan_parquet", "scan_csv"):  # building a plan reads nothing
        mp.setattr(polars, name, getattr(polars.io, name))

    def runs_payroll(lf) -> bool:
        blob = pickle.dumps(lf)  # the plan as it is sent (explaining it could read a part's footer)
        return b"/payroll/year=" in blob or b"/payroll_lines/year=" in blob

    for name in ("collect", "collect_batches", "sink_parquet", "sink_ipc", "sink_csv"):
        fn = getattr(polars.LazyFrame, name)

        def guarded(self, *a, _fn=fn, _name=name, **k):
            if runs_payroll(self):
                raise DriverRead(f"the driver ran a plan over payroll parts ({_name})")
            return _fn(self, *a, **k)
        mp.setattr(polars.LazyFrame, name, guarded)


def test_with_the_lake_in_s3_the_annual_run_reads_no_payroll_row_on_the_driver(cluster, submission, tmp_path):
    """Ingest, identities, credits (per employer batch), decision and products with the lake in
    the bucket: the driver runs no plan over payroll parts and opens no payroll file (each worker
    reads its own rows), yet writes the plain run's files."""
    import boto3
    from distributed import Client

    from transforms.ingest.store.location import use_lake
    from transforms.runs.batches import employer_batches, merge_results

    boto3.client("s3").create_bucket(Bucket=BUCKET)
    run(submission, tmp_path / "plain" / "w", tmp_path / "plain" / "out")
    work, out = tmp_path / "w", tmp_path / "out"
    use_lake(work, f"s3://{BUCKET}/whole-run/lake", record=True)
    params, settings = load_parameters(), Settings()
    with pytest.MonkeyPatch.context() as mp, Client(cluster, set_as_default=False) as client:
        guard_plans(mp, submission / "payroll")
        with pytest.raises(DriverRead):  # the guard holds in this process
            pl.scan_parquet(f"s3://{BUCKET}/whole-run/lake/payroll/year=2023/x.parquet").collect()
        staged = steps.stage_inputs(submission, work, KEY, cluster=cluster, key_loader=hash_key)
        batches = employer_batches(staged.frames, 2)
        assert len(batches) == 2 and all(isinstance(b["payroll"], pl.LazyFrame) for b in batches)
        result = merge_results(client.gather([client.submit(steps.compute, b, 2023, AS_OF, params, settings, pure=False)
                                              for b in batches]))
        steps.decide_and_commit(steps.RunContext(
            workdir=work, out_dir=out, run_id=RUN_ID, kind="annual", tax_year=2023, as_of=AS_OF, params=params,
            settings=settings, staged=staged, result=result, started_at=dt.datetime(2024, 7, 1)))
    plain, mine = files(tmp_path / "plain" / "out"), files(out)
    assert "employee_credits.csv" in plain and "rejects.csv" in plain
    same({k: v for k, v in plain.items() if k != "manifest.json"}, {k: v for k, v in mine.items() if k != "manifest.json"})


def test_a_worker_without_the_drivers_key_stops_the_ingest_in_one_line(cluster, submission, tmp_path):
    from transforms.pii import KeyError_

    other = HashKey(b"another-key-0123456789abcdef0123456789", "env")
    with pytest.raises(KeyError_, match="ssn hash key of the Dask workers .* is not this run's"):
        ingest_folder(submission, tmp_path / "w", other, cluster=cluster, key_loader=hash_key)
    assert not (tmp_path / "w" / "lake" / "_manifest.json").exists()


def cli(*args: str):
    from flows.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.slow
def test_the_cli_annual_run_with_workers_writes_the_plain_commands_files(prefect_harness, submission, tmp_path,
                                                                          monkeypatch):
    """``impcredit annual --workers 2`` (a local cluster started for the command) writes what the
    plain command writes, file by file; ``impcredit ingest --dask-address`` with a bad address
    stops in one line."""
    monkeypatch.setenv("IMPCREDIT_HMAC_KEY", SECRET_KEY)
    monkeypatch.setattr(steps, "new_run_id", lambda *a: RUN_ID)
    common = ["annual", "--input", str(submission), "--tax-year", "2023", "--as-of", "2024-07-01"]
    plain = cli(*common, "--workdir", str(tmp_path / "w-plain"), "--out", str(tmp_path / "out-plain"))
    assert plain.exit_code == 0, plain.output
    r = cli(*common, "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "out"), "--workers", "2")
    assert r.exit_code == 0, r.output
    same(files(tmp_path / "out-plain"), files(tmp_path / "out"))
    same(lake_files(tmp_path / "w-plain" / "lake"), lake_files(tmp_path / "w" / "lake"))
    bad = cli("ingest", "--input", str(submission), "--workdir", str(tmp_path / "w2"), "--dask-address",
              "tcp://127.0.0.1:9")
    assert bad.exit_code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in " ".join(bad.output.split())
    assert "Traceback" not in bad.output


def test_a_worker_killed_during_the_ingest(cluster, submission, tmp_path, monkeypatch):
    """The first attempt of the first file's task ends its worker's process (os._exit): Dask runs
    it again on another worker and the run's outputs are the uninterrupted run's. Killed at every
    attempt: the run stops in one line, nothing committed; a rerun gives the same outputs."""
    from distributed import Client

    from transforms.ingest.executors import ClusterError

    def worker_pids() -> set[int]:
        with Client(cluster, set_as_default=False) as client:
            return set(client.run(os.getpid).values())

    run(submission, tmp_path / "plain" / "w", tmp_path / "plain" / "out")
    reference = files(tmp_path / "plain" / "out")
    before = worker_pids()
    monkeypatch.setattr(failpoints, "_armed", ["ingest_worker"])
    run(submission, tmp_path / "once" / "w", tmp_path / "once" / "out", cluster=cluster)
    same(reference, files(tmp_path / "once" / "out"))
    assert len(before - worker_pids()) == 1  # one worker's process ended (its nanny started another)

    monkeypatch.setattr(failpoints, "_armed", ["ingest_worker_always"])
    work = tmp_path / "always" / "w"
    with pytest.raises(ClusterError) as got:
        run(submission, work, tmp_path / "always" / "out", cluster=cluster)
    message = str(got.value)
    assert "\n" not in message and "nothing was committed" in message and "run again" in message
    assert not (work / "lake" / "_manifest.json").exists() and not (tmp_path / "always" / "out").exists()
    monkeypatch.setattr(failpoints, "_armed", [None])
    run(submission, work, tmp_path / "always" / "out", cluster=cluster)
    same(reference, files(tmp_path / "always" / "out"))
    same(lake_files(tmp_path / "plain" / "w" / "lake"), lake_files(work / "lake"))
    assert failpoints.armed() is None
