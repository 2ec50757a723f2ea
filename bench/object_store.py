"""The annual run with its lake in an object store (issue 28): ``--lake s3://...`` against a local
S3-compatible server (moto's, on 127.0.0.1, in a process of its own; nothing leaves the machine),
in pairs with the plain run (lake in the workdir) at the same size, so that both sides of the
ratio see the same moment; the outputs of each S3 run are compared with its pair's file by file
(``scale_runs.compare_outputs``), and so is the lake (the digest of its parts).

Credentials: fixed test values for moto in the measured process's environment only; the AWS
chain is kept from this machine's files (``AWS_CONFIG_FILE`` and ``AWS_SHARED_CREDENTIALS_FILE``
point to files that do not exist, instance metadata off), as ``tests/test_object_storage.py``
does.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from bench import measures
from bench.harness import child_env, median_run, side_process, tail
from bench.scale_runs import compare_outputs

BUCKET = "impcredit-bench"
KEY_ID, SECRET = "AKIABENCHMOTO0000001", "bench-moto-not-a-secret"  # moto accepts any
REGION = "us-east-1"
MOTO = """
import logging, time
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
print(f"http://{host}:{port}", flush=True)
while True:
    time.sleep(3600)
"""
AWS_NAMES = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "IMPCREDIT_LAKE",
              "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION")


def s3_env(endpoint: str, runs_dir: Path) -> dict[str, str]:
    env = child_env()
    for name in AWS_NAMES:
        env.pop(name, None)
    env.update(AWS_CONFIG_FILE=str(runs_dir / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(runs_dir / "no-aws-credentials"),
               AWS_EC2_METADATA_DISABLED="true", AWS_REGION=REGION, AWS_ENDPOINT_URL=endpoint,
               AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET)
    return env


def s3_annual(src: Path, runs_dir: Path, label: str, repeat: int) -> dict:
    """``repeat`` pairs of (plain annual run, annual run with ``--lake s3://...``) at one size."""
    log = runs_dir / f"{label}-moto.log"
    with side_process(MOTO, [], log) as server:
        return _pairs(server, log, src, runs_dir, label, repeat)


def _pairs(server: subprocess.Popen, log: Path, src: Path, runs_dir: Path, label: str, repeat: int) -> dict:
    import boto3

    t0 = time.perf_counter()
    endpoint = server.stdout.readline().strip()
    if not endpoint:
        return {"returncode": 1, "error": "the moto server did not start:\n" + tail(log)}
    server_s = round(time.perf_counter() - t0, 2)
    client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=KEY_ID,
                          aws_secret_access_key=SECRET)
    client.create_bucket(Bucket=BUCKET)
    env = s3_env(endpoint, runs_dir)
    plain, s3 = [], []
    for i in range(repeat):  # pairs, fresh folders and a fresh lake prefix each
        name = f"{label}-s3" if i == 0 else f"{label}-s3-{i + 1}"
        plain.append(measures.end_to_end(src, runs_dir, f"{name}-plain"))
        lake = f"s3://{BUCKET}/{name}/lake"
        m = measures.end_to_end(src, runs_dir, name, extra=["--lake", lake], env=env)
        m["lake"] = lake
        if m["returncode"] == 0 and plain[-1]["returncode"] == 0:
            m.update(compare_outputs(Path(m["out"]), Path(plain[-1]["out"])))
        s3.append(m)
    r = {"server": "moto ThreadedMotoServer (127.0.0.1, a process of its own)", "server_start_s": server_s,
         "plain": median_run(plain), "s3": median_run(s3)}
    r["s3"]["runs_compared"] = [{k: m.get(k) for k in ("same_outputs", "files_compared", "files_differing_count",
                                                       "same_lake")} for m in s3]
    objects = [o for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
               for o in page.get("Contents", [])]
    r["bucket_objects"], r["bucket_bytes"] = len(objects), sum(o["Size"] for o in objects)
    if r["plain"]["returncode"] == 0 and r["s3"]["returncode"] == 0:
        r["s3_over_plain"] = round(r["s3"]["wall_s"] / r["plain"]["wall_s"], 2)
        r["outputs_differing"] = max(m.get("files_differing_count", 0) for m in s3)
        r["same_outputs"] = all(m.get("same_outputs") for m in s3)
        r["same_lake"] = all(m.get("same_lake") for m in s3)
    return r
