"""The other runs an analyst starts, at the largest size (issue 14, item 3): quarterly estimates,
a what-if and a rerun with one corrected payroll file, each on the workdir of an annual run (as
analysts run them), and the annual run through ``--dask-address`` on a local cluster of 2
workers (the ingest too: its files read, validated and written to the lake by the workers),
whose outputs and lake must be the plain run's, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from bench.harness import (
    AS_OF,
    IMPCREDIT,
    REPO,
    TAX_YEAR,
    measure,
    side_process,
    tail,
)
from bench.measures import stage_seconds

DASK_WORKERS = 2
DASK_CLUSTER = """
import sys, time
from distributed import LocalCluster
cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True, dashboard_address=None)
print(cluster.scheduler_address, flush=True)
while True:
    time.sleep(3600)
"""


def _run(argv: list[str], runs_dir: Path, name: str) -> dict:
    m = measure([str(IMPCREDIT), *argv], runs_dir / f"{name}.log")
    m["stages"] = stage_seconds(REPO / m["log"])
    if m["returncode"] != 0:
        m["error"] = tail(REPO / m["log"])
    return m


def quarterly(src: Path, work: Path, runs_dir: Path, label: str) -> dict:
    """Quarter 4 of the tax year, as of the annual run's date, on the annual run's workdir."""
    return _run(["quarterly", "--input", str(src), "--tax-year", str(TAX_YEAR), "--quarter", "4", "--as-of", AS_OF,
                 "--workdir", str(work), "--out", str(runs_dir / f"{label}-quarterly-out")], runs_dir, f"{label}-quarterly")


def whatif(src: Path, work: Path, runs_dir: Path, label: str) -> dict:
    """Overtime priced at the premium (register I-5), against the annual run's ledger."""
    return _run(["whatif", "--input", str(src), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF, "--workdir", str(work),
                 "--set", "overtime=premium", "--out", str(runs_dir / f"{label}-whatif-out")], runs_dir, f"{label}-whatif")


def corrected_copy(src: Path, runs_dir: Path) -> tuple[Path, str]:
    """The submission with one payroll file corrected (ten rows' hours up by 1.00), the other files
    hard links to the originals (regular files, so nothing is copied)."""
    dst = runs_dir / f"{src.name}-corrected"
    shutil.rmtree(dst, ignore_errors=True)
    for f in src.rglob("*"):
        if f.is_file() and not f.name.startswith("."):
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(f, target)
    first = sorted((dst / "payroll").glob("*.csv"))[0]
    lines = first.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    col = header.index("hours")
    for i in range(1, min(11, len(lines))):
        cells = lines[i].rstrip("\n").split(",")
        cells[col] = f"{float(cells[col]) + 1:.2f}"
        lines[i] = ",".join(cells) + "\n"
    first.unlink()  # the link, not the original
    first.write_text("".join(lines))
    return dst, first.relative_to(dst).as_posix()


def rerun_corrected(src: Path, work: Path, runs_dir: Path, label: str) -> dict:
    """The annual run again on its workdir with one corrected file: the new version supersedes the
    old one, the credits are computed again, the decisions stay (spec section 7)."""
    dst, changed = corrected_copy(src, runs_dir)
    m = _run(["annual", "--input", str(dst), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF, "--workdir", str(work),
              "--out", str(runs_dir / f"{label}-rerun-out")], runs_dir, f"{label}-rerun")
    m["corrected_file"] = changed
    shutil.rmtree(dst, ignore_errors=True)
    return m


def _outputs(out: Path) -> dict[str, str]:
    """sha256 of every output file, the run's id written as RUN in text files (two runs have two
    ids); the manifest and the index (paths, times, code version) are left out, and so are PDFs
    (their text is compressed, run id included; they are rendered from the records of the HTML
    pages, which are compared)."""
    run_id = json.loads((out / "manifest.json").read_text())["run_id"].encode()
    hashes = {}
    for p in sorted(out.rglob("*")):
        if not p.is_file() or p.name in ("manifest.json", "index.html") or p.suffix == ".pdf":
            continue
        data = p.read_bytes()
        if p.suffix in (".csv", ".json", ".html", ".txt", ".xml"):
            data = data.replace(run_id, b"RUN")
        hashes[p.relative_to(out).as_posix()] = hashlib.sha256(data).hexdigest()
    return hashes


def dask_annual(src: Path, reference_out: Path, runs_dir: Path, label: str) -> dict:
    """The annual run through ``--dask-address`` on a local cluster (2 worker processes, a
    thread each): its time, and whether its outputs are the plain run's (``reference_out``)."""
    log = runs_dir / f"{label}-dask-cluster.log"
    with side_process(DASK_CLUSTER, [str(DASK_WORKERS)], log) as cluster:
        return _on_cluster(cluster, log, src, reference_out, runs_dir, label)


def _on_cluster(cluster: subprocess.Popen, log: Path, src: Path, reference_out: Path, runs_dir: Path, label: str) -> dict:
    t0 = time.perf_counter()
    address = cluster.stdout.readline().strip()
    if not address:
        return {"returncode": 1, "error": tail(log)}
    cluster_s = round(time.perf_counter() - t0, 2)
    out = runs_dir / f"{label}-dask-out"
    m = _run(["annual", "--input", str(src), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF,
              "--workdir", str(runs_dir / f"{label}-dask-work"), "--out", str(out), "--dask-address", address],
             runs_dir, f"{label}-dask")
    m.update(workers=DASK_WORKERS, cluster_start_s=cluster_s, ingest_on_cluster=True,
             ingest_s=round(m["stages"].get("ingest", 0.0) + m["stages"].get("validate", 0.0), 1))
    if m["returncode"] == 0:
        m.update(compare_outputs(out, reference_out))
    return m


def compare_outputs(out: Path, reference_out: Path) -> dict:
    """Whether two annual runs' output folders hold the same files (``_outputs``: the run id as
    RUN; the manifest, the index and PDFs left out), and the same lake (the digest of its parts'
    sha256 in the manifests: byte for byte the same lake when equal)."""
    mine, theirs = _outputs(out), _outputs(reference_out)
    differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    lakes = [json.loads((o / "manifest.json").read_text())["inputs"]["lake_sha256"] for o in (out, reference_out)]
    out_ = {"same_outputs": not differ, "files_compared": len(theirs), "files_differing": differ[:20],
            "files_differing_count": len(differ), "same_lake": lakes[0] == lakes[1]}
    parquet = [k for k in differ if k.endswith(".parquet") and k in mine and k in theirs][:5]
    if parquet:
        out_["parquet_differences"] = {k: _parquet_difference(out / k, reference_out / k) for k in parquet}
    return out_


def _parquet_difference(a: Path, b: Path) -> dict:
    """How two Parquet files of the same name differ: shape, the columns whose values differ, and
    for float columns the largest absolute difference (a sum in another order differs in its last
    bits)."""
    import polars as pl

    x, y = pl.read_parquet(a), pl.read_parquet(b)
    if x.shape != y.shape or x.schema != y.schema:
        return {"shape": [x.shape, y.shape], "same_schema": x.schema == y.schema}
    cols = {}
    for c in x.columns:
        if x[c].equals(y[c]):
            continue
        if x[c].dtype.is_float():
            cols[c] = {"rows": int((x[c] != y[c]).sum()), "max_abs_diff": float((x[c] - y[c]).abs().max())}
        else:
            cols[c] = {"rows": int((x[c] != y[c]).fill_null(True).sum())}
    return {"rows": x.height, "columns_differing": cols,
            "only_floats_differ": all(x[c].dtype.is_float() for c in cols)}
