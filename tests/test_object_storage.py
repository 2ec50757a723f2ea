"""The lake and the outputs in an object store (issue 28, item 1), against a local S3-compatible
server the tests start (moto's, on 127.0.0.1; no network): the annual run with its lake and its
outputs there writes, file by file, the bytes of the plain run; ``lake verify [--repair]`` reads
the objects back; the faults (no credentials, no bucket, no endpoint) stop in one line before
anything is read, written or decided; no ssn and no credential is stored anywhere."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from transforms.pii import HashKey
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

KEY = HashKey(b"object-storage-test-key-0123456789abcdef", "test")
RUN_ID = "annual-2023-20240701T000000000000Z-fixed"
AS_OF = dt.date(2024, 7, 1)
KEY_ID = "AKIAIMPCREDITTEST0001"
SECRET = "s3cr3t-Impcredit-Test-7f3a9c1e5b2d4a6f8e0c"
BUCKET = "agency"



def aws_env(monkeypatch, tmp_path: Path, endpoint: str, *, credentials: bool = True) -> None:
    """The AWS chain from this environment only: no file of this machine, no instance metadata."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "IMPCREDIT_LAKE",
                 "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    if credentials:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)


@pytest.fixture
def s3(endpoint, monkeypatch, tmp_path):
    """A boto3 client of a fresh server (reset) holding one empty bucket."""
    import boto3
    import requests

    aws_env(monkeypatch, tmp_path, endpoint)
    requests.post(f"{endpoint}/moto-api/reset", timeout=10)
    client = boto3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def objects(client, prefix: str = "") -> dict[str, bytes]:
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"]] = client.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
    return out


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def ssn_needles(canonical: Path) -> list[bytes]:
    text = "".join(p.read_text() for p in [*canonical.glob("payroll/*.csv"), canonical / "certifications.csv"])
    ssns = set(re.findall(r"\b\d{3}-\d\d-\d{4}\b", text))
    assert len(ssns) > 20
    return [f.encode() for s in ssns for f in (s, *(s.replace("-", sep) for sep in ("", ".", " ")))]


def no_needle(blobs: dict[str, bytes], needles: list[bytes], what: str) -> None:
    for name, data in blobs.items():
        hits = [n for n in needles if n in data]
        assert not hits, f"{what} found in {name}"
        if name.endswith(".parquet"):
            text = pl.read_parquet(data).cast(pl.String).write_csv().encode()
            assert not [n for n in needles if n in text], f"{what} found in the values of {name}"


@pytest.fixture
def same_clock(monkeypatch):
    """The decision's instant held equal between the runs compared (the run page shows it to the
    minute: two runs a minute apart differ there by design)."""
    from transforms.award import ledger

    monkeypatch.setattr(ledger, "now_utc", lambda: dt.datetime(2024, 7, 1, 12, tzinfo=dt.UTC))


def run(src: Path, work: Path, out, run_id: str = RUN_ID) -> None:
    params, settings = load_parameters(), Settings()
    staged = steps.stage_inputs(src, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, params, settings)
    steps.decide_and_commit(steps.RunContext(
        workdir=work, out_dir=out, run_id=run_id, kind="annual", tax_year=2023, as_of=AS_OF, params=params,
        settings=settings, staged=staged, result=result, started_at=dt.datetime(2024, 7, 1)))


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> tuple[Path, Path]:
    """(a vendor mix with a workbook and a file of rejected lines, its canonical folder)."""
    root = tmp_path_factory.mktemp("objsub")
    generate_submission(root / "canonical", employers=10, seed=7, tax_year=2023)
    write_vendor_mix(root / "canonical", root / "mix", seed=7)
    # two rejected lines (a quarantine in the lake, rejects in the outputs), an ssn as employee id in one
    canon = root / "mix" / "payroll" / "canonical.csv"
    row = canon.read_text().splitlines()[1].split(",")
    with canon.open("a") as fh:
        fh.write(",".join([row[0], row[2], *row[2:]]) + "\n" + ",".join([*row[:5], "many", *row[6:]]) + "\n")
    return root / "mix", root / "canonical"


def test_the_annual_run_with_its_lake_and_outputs_in_s3_writes_the_plain_runs_bytes(s3, submission, tmp_path,
                                                                                    monkeypatch, same_clock):
    from transforms import failpoints
    from transforms.ingest.store import lake as lk
    from transforms.ingest.store import lake_verify as lake_check
    from transforms.ingest.store.location import use_lake

    src, canonical = submission
    run(src, tmp_path / "plain" / "work", tmp_path / "plain" / "out")
    plain = files(tmp_path / "plain" / "out")
    assert {"awards.csv", "employee_credits.csv", "manifest.json", "rejects.csv", "awards.xlsx", "index.html",
            "employee_years.parquet"} <= set(plain)

    work = tmp_path / "s3" / "work"
    lake = use_lake(work, f"s3://{BUCKET}/impcredit/lake", record=True)
    assert lk.lake_dir(work) == lake and str(lake) == f"s3://{BUCKET}/impcredit/lake"
    run(src, work, f"s3://{BUCKET}/impcredit/out/annual-2023")
    out = {k.removeprefix("impcredit/out/annual-2023/"): v for k, v in objects(s3, "impcredit/out/").items()}
    assert set(out) == set(plain)
    assert [name for name in plain if out[name] != plain[name]] == []  # every file, byte for byte
    # the lake is in the bucket, not on this machine: the workdir holds the ledger and the lake's place
    assert sorted(p.name for p in work.iterdir()) == [".lake.lock", "impcredit.duckdb", "lake.json"]
    in_lake = objects(s3, "impcredit/lake/")
    assert "impcredit/lake/_manifest.json" in in_lake and any("/quarantine/" in k for k in in_lake)
    assert any(k.startswith("impcredit/lake/payroll/year=2023/part-") for k in in_lake)
    manifest = lk.load_manifest(lake)
    assert lake_check.verify(lake, manifest) == [] and len(manifest["checksums"]) == len(in_lake) - 1
    # no ssn in any object (lake, quarantine, manifest, outputs), in any of its forms
    no_needle(objects(s3), ssn_needles(canonical), "an ssn")

    # a crash while the outputs are uploaded (after the ledger committed) leaves them without
    # manifest.json, the folder's commit; a part no manifest lists (a crashed ingest) is an orphan
    def crash(name):
        if name == "published_partly":
            raise RuntimeError("killed")
    s3.put_object(Bucket=BUCKET, Key="impcredit/lake/payroll/year=2023/part-0000000000000000.parquet", Body=b"orphan")
    with monkeypatch.context() as m, pytest.raises(RuntimeError, match="killed"):
        m.setattr(failpoints, "hit", crash)
        run(src, work, f"s3://{BUCKET}/impcredit/out/annual-2023", run_id=RUN_ID + "-2")
    left = objects(s3, "impcredit/out/")
    assert "impcredit/out/annual-2023/manifest.json" not in left and "impcredit/out/annual-2023/awards.csv" in left
    assert "impcredit/lake/payroll/year=2023/part-0000000000000000.parquet" not in objects(s3, "impcredit/lake/")
    from transforms.products.explain import ExplainError, explain

    person = pl.read_csv(plain["employee_credits.csv"], infer_schema=False).row(0, named=True)
    with pytest.raises(ExplainError, match="incomplete"):  # a reader treats it as incomplete
        explain(work, f"s3://{BUCKET}/impcredit/out/annual-2023", 2023, person["employer_id"], person["employee_id"],
                load_parameters())
    run(src, work, f"s3://{BUCKET}/impcredit/out/annual-2023", run_id=RUN_ID + "-3")  # published whole again
    again = {k.removeprefix("impcredit/out/annual-2023/"): v for k, v in objects(s3, "impcredit/out/").items()}
    assert json.loads(again["manifest.json"])["run_id"] == RUN_ID + "-3"
    assert again["awards.csv"] == plain["awards.csv"] and again["employee_credits.csv"] == plain["employee_credits.csv"]


def cli(*args: str):
    from flows.cli import app

    return CliRunner().invoke(app, list(args))


def test_the_cli_annual_run_and_lake_verify_on_s3_store_no_credential(prefect_harness, s3, submission, tmp_path,
                                                                       monkeypatch, same_clock):
    """``impcredit annual --lake s3://... --out s3://...`` writes what the plain command writes, file
    by file (the run id and the clock held equal, as the reproducibility test holds them);
    ``lake verify`` checks the objects (a damaged one is named, ``--repair`` takes it out); and
    no credential is in the ledger, the workdir, the outputs, the lake, the output or Prefect's
    database."""
    import prefect.settings

    src, _ = submission
    monkeypatch.setattr(steps, "new_run_id", lambda *a: RUN_ID)
    common = ["annual", "--input", str(src), "--tax-year", "2023", "--as-of", "2024-07-01"]
    plain = cli(*common, "--workdir", str(tmp_path / "w-plain"), "--out", str(tmp_path / "out-plain"))
    assert plain.exit_code == 0, plain.output
    work = tmp_path / "w"
    r = cli(*common, "--workdir", str(work), "--lake", f"s3://{BUCKET}/cli/lake", "--out", f"s3://{BUCKET}/cli/out")
    assert r.exit_code == 0, r.output
    assert f"s3://{BUCKET}/cli/out" in r.output
    local = files(tmp_path / "out-plain")
    remote = {k.removeprefix("cli/out/"): v for k, v in objects(s3, "cli/out/").items()}
    assert set(remote) == set(local) and len(local) > 20
    assert [name for name in local if remote[name] != local[name]] == []
    assert json.loads((work / "lake.json").read_text()) == {"lake": f"s3://{BUCKET}/cli/lake"}
    assert not (work / "lake").exists()

    # explain reads the run's outputs and the lake where they are
    first = pl.read_csv(tmp_path / "out-plain" / "employee_credits.csv", infer_schema=False).row(0, named=True)
    who = ["explain", "--tax-year", "2023", "--employer", first["employer_id"], "--employee", first["employee_id"],
           "--format", "json"]
    told = [cli(*who, "--workdir", str(w), "--out", o) for w, o in
            ((tmp_path / "w-plain", str(tmp_path / "out-plain")), (work, f"s3://{BUCKET}/cli/out"))]
    assert [t.exit_code for t in told] == [0, 0] and told[0].output == told[1].output
    # the workdir knows its lake: verify reads every object back
    ok = cli("lake", "verify", "--workdir", str(work))
    assert ok.exit_code == 0 and f"s3://{BUCKET}/cli/lake" in ok.output and "every one as written" in ok.output
    part = sorted(k for k in objects(s3, "cli/lake/payroll/"))[0]
    s3.put_object(Bucket=BUCKET, Key=part, Body=objects(s3, part)[part][:-9] + b"\x00" * 9)  # a few bytes changed
    bad = cli("lake", "verify", "--workdir", str(work))
    assert bad.exit_code == 1 and part.removeprefix("cli/lake/") in bad.output and "changed" in bad.output
    fixed = cli("lake", "verify", "--workdir", str(work), "--repair")
    assert fixed.exit_code == 0 and "repaired: 1 damaged part" in fixed.output
    assert part not in objects(s3, "cli/lake/")
    assert cli("lake", "verify", "--workdir", str(work)).exit_code == 0
    # another lake for this workdir is refused (one ledger, one lake)
    other = cli(*common, "--workdir", str(work), "--lake", f"s3://{BUCKET}/elsewhere", "--out", str(tmp_path / "o"))
    assert other.exit_code == 2 and "one lake" in other.output and not objects(s3, "elsewhere/")

    db_url = prefect.settings.get_current_settings().server.database.connection_url.get_secret_value()
    searched = {**{f"workdir/{k}": v for k, v in files(work).items()},
                **{f"prefect/{k}": v for k, v in files(Path(db_url.split("///", 1)[1]).parent).items()},
                **{f"prefect-home/{k}": v for k, v in files(Path(os.environ["PREFECT_HOME"])).items()},
                **objects(s3), "output": (r.output + ok.output + bad.output + fixed.output).encode()}
    assert any(k.startswith("prefect/prefect-test.db") for k in searched) and "workdir/impcredit.duckdb" in searched
    no_needle(searched, [SECRET.encode(), KEY_ID.encode()], "a credential")


@pytest.mark.parametrize("fault", ["no credentials", "no bucket", "no endpoint"])
@pytest.mark.parametrize("where", ["--lake", "--out"])
def test_a_store_that_cannot_be_used_stops_the_run_in_one_line_before_anything(s3, submission, tmp_path, monkeypatch,
                                                                               fault, where):
    """One line naming the URL and what to set, exit 2, nothing decided (no ledger), nothing
    written (the bucket and the workdir as they were)."""
    src, _ = submission
    lake, out = f"s3://{BUCKET}/lake", str(tmp_path / "out")
    if fault == "no credentials":
        aws_env(monkeypatch, tmp_path, os.environ["AWS_ENDPOINT_URL"], credentials=False)
        said = ["no credentials", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "~/.aws/config"]
    elif fault == "no bucket":
        lake = "s3://missing-bucket/lake"
        said = ["no bucket 'missing-bucket'", "create it"]
    else:
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
        said = ["cannot reach http://127.0.0.1:9", "AWS_ENDPOINT_URL"]
    if where == "--out":
        lake, out = str(tmp_path / "lake"), lake.replace("/lake", "/out")
    work = tmp_path / "w"
    r = cli("annual", "--input", str(src), "--tax-year", "2023", "--as-of", "2024-07-01", "--workdir", str(work),
            "--lake", lake, "--out", out)
    assert r.exit_code == 2
    line = " ".join(r.output.split())
    assert line.startswith(f"error: {'lake' if where == '--lake' else '--out'} {lake if where == '--lake' else out}:")
    assert all(s in line for s in said), line
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) <= 3  # one line, wrapped by the console
    assert not work.exists() and not (tmp_path / "lake").exists() and not (tmp_path / "out").exists()
    aws_env(monkeypatch, tmp_path, os.environ["AWS_ENDPOINT_URL"] if fault != "no endpoint" else s3.meta.endpoint_url)
    assert objects(s3) == {}


def test_a_location_is_never_a_secret_and_a_workdir_keeps_one_lake(tmp_path):
    from transforms import storage
    from transforms.ingest.store.location import LakeLocationError, lake_dir, use_lake

    with pytest.raises(storage.StorageError, match="may not carry credentials") as exc:
        storage.location(f"s3://{KEY_ID}:{SECRET}@bucket/lake")
    assert SECRET not in str(exc.value) and KEY_ID not in str(exc.value)
    with pytest.raises(storage.StorageError, match="not a storage"):
        storage.location("ftp://host/lake")
    assert lake_dir(tmp_path / "w") == tmp_path / "w" / "lake"  # the default, unchanged
    assert use_lake(tmp_path / "w", None, record=True) == tmp_path / "w" / "lake"
    assert not (tmp_path / "w").exists()
    assert use_lake(tmp_path / "w", "s3://b/lake", record=True) == storage.location("s3://b/lake")
    assert lake_dir(tmp_path / "w") == storage.location("s3://b/lake")
    with pytest.raises(LakeLocationError, match="one lake"):
        use_lake(tmp_path / "w", "s3://b/other", record=True)
    assert use_lake(tmp_path / "w", "s3://b/lake/", record=False) == storage.location("s3://b/lake")
    (tmp_path / "v" / "lake").mkdir(parents=True)
    (tmp_path / "v" / "lake" / "_manifest.json").write_text("{}")
    with pytest.raises(LakeLocationError, match="keeps its ledger with the lake"):
        use_lake(tmp_path / "v", "s3://b/lake", record=True)


def test_credentials_from_a_profile_in_the_aws_files(s3, tmp_path, monkeypatch):
    """The chain's files: a profile of ~/.aws/credentials (here AWS_SHARED_CREDENTIALS_FILE) with
    AWS_PROFILE, no key in the environment: the probe finds it, and the lake's IO (pyarrow for
    objects, Polars for Parquet) works with it."""
    from transforms import storage
    from transforms.storage_probe import probe

    (tmp_path / "aws-credentials").write_text(f"[agency]\naws_access_key_id = {KEY_ID}\n"
                                              f"aws_secret_access_key = {SECRET}\n")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_PROFILE", "agency")
    loc = storage.location(f"s3://{BUCKET}/profiled")
    probe(loc, what="lake")
    pl.DataFrame({"a": [1, 2]}).write_parquet(tmp_path / "a.parquet")
    (loc / "a.parquet").upload(tmp_path / "a.parquet")
    assert storage.read_parquet(loc / "a.parquet").get_column("a").to_list() == [1, 2]
    assert loc.glob("*") == [loc / "a.parquet"]
    monkeypatch.setenv("AWS_PROFILE", "nobody")
    with pytest.raises(storage.StorageError, match="nobody.*AWS_PROFILE"):
        probe(loc, what="lake")
