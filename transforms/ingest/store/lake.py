"""The Parquet lake: staged rows partitioned for pruning, a file manifest, and the quarantine.

Layout under the lake (``<workdir>/lake/``, or where ``location`` says: a local folder or an
object store, ``transforms.storage``)::

    payroll/year=<year of period_start>/part-<run tag[:16]>.parquet
    payroll_lines/year=<year of period_start>/part-<run tag[:16]>.parquet   (code lines of long exports)
    applications/tax_year=<year>/part-<sha16>.parquet
    roster/part-<sha16>.parquet   certifications/part-<sha16>.parquet   employer_rates/part-<sha16>.parquet
    quarantine/<dataset>/part-<sha16>.parquet     rejected rows (raw cells except the ssn)
    _manifest.json                                every file ever ingested, by content sha256

One tax year of payroll reads only its own folders (and the year before, for periods across
January 1); one employer is a row filter pushed into the scan (row-group statistics prune
when the submitted files group their rows by employer, as exports do). Each part holds the rows of one submitted file for one
partition, so a corrected file rewrites only the parts it touches, and the number of files grows
with the submitted files, not with the employers (a partition per employer meant 60,000 tiny
files at 10M rows). Every write goes to a temporary name in the same folder and is renamed into place
(in an object store: uploaded in one PUT, ``lake_files``); the manifest, written last, commits.

Replacement (a corrected file): a payroll file is the file at its path in the submission
folder; a new version there (other content, same relative path) supersedes the earlier version
whole: every row of it is removed (``supersede``). A payroll file at another path adds to what
the lake holds: its rows may cover the same days (an off-cycle check, a correction: spec section
1). Other datasets replace by key: applications by application_id, roster by application_id
(the whole roster of the application), certifications by certification_id, employer rates by
(employer_id, rate_year_start).

Layout 3 added ``check_id``, ``pay_date`` and ``line_count`` to payroll and the
``payroll_lines`` dataset (the code lines of line-per-code exports, partitioned like payroll);
layout 4 the fiscal period of applications, the roster's employer and ssn (hash) and the
``control_groups`` dataset (replaced whole by a new version at its path, like payroll); an
older lake is upgraded in place by the next ingest.
"""

from __future__ import annotations

import contextlib
import json
from datetime import date
from pathlib import Path

import polars as pl

from transforms import schema, storage
from transforms.ingest.store.lake_files import (
    COMPRESSION,
    INTENT,
    _atomic,
    intend,
    write_parquet_atomic,
    write_text_atomic,
)
from transforms.ingest.store.location import lake_dir, lock_path

__all__ = ["COMPRESSION", "INTENT", "_atomic", "lake_dir", "lock_path", "write_parquet_atomic",
           "write_text_atomic"]  # re-exported

MANIFEST = "_manifest.json"
LAYOUT_VERSION = 4
REPLACE_KEYS = {
    "applications": ["application_id"],
    "roster": ["application_id"],
    "certifications": ["certification_id"],
    "employer_rates": ["employer_id", "rate_year_start"],
    "estimate_requests": ["request_id"],
}
QUARANTINE_SCHEMA = {
    "file_sha256": pl.String, "source_file": pl.String, "source_sheet": pl.String, "source_line": pl.Int64,
    "employer_id": pl.String, "rules": pl.String, "messages": pl.String, "cells": pl.String,
    # what could be read of the line, for the applications it holds (spec section 7): its
    # employee id, the hash of its ssn and its application id (null where unreadable or absent)
    # and the columns that were rejected
    "employee_id": pl.String, "ssn_hash": pl.String, "application_id": pl.String, "columns": pl.String,
}


class LakeDamaged(RuntimeError):
    """The lake does not hold what it wrote (``lake_verify``): the run stops before it reads it."""


def load_manifest(lake: Path) -> dict:
    """The manifest (empty for a new lake); ``LakeDamaged`` naming it when it is not the JSON
    this code wrote (never its content)."""
    p = lake / MANIFEST
    if not p.exists():
        return {"version": LAYOUT_VERSION, "files": {}}
    try:
        manifest = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            raise ValueError("no table of files")
        return manifest
    except (ValueError, UnicodeDecodeError) as exc:
        reason = f"not JSON at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else (
            "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc))
        aside = f"aws s3 mv --recursive {lake} {lake}.damaged" if storage.is_remote(lake) else f"mv {lake} {lake}.damaged"
        raise LakeDamaged(
            f"the lake's manifest {p} is damaged ({reason}): the lake cannot say what it holds. Recover: move "
            f"the lake aside ({aside}) and run again with every submitted file: the lake is "
            "rebuilt from them (the ledger keeps every decision)") from None


def save_manifest(lake: Path, manifest: dict) -> None:
    write_text_atomic(json.dumps(manifest, indent=1, sort_keys=True, default=str), lake / MANIFEST)
    (lake / INTENT).unlink(missing_ok=True)  # the parts it noted are recorded as they now are


# --- writing ---------------------------------------------------------------------------------------

def _part_name(sha: str) -> str:
    return f"part-{sha[:16]}.parquet"


# rows per row group of a run's part: fixed, so a part's bytes depend on its rows alone, not on how
# the frame written is chunked in memory (Polars' default follows the chunks): the single-process
# route and the cluster route (``ingest.route``) write the same bytes
ROW_GROUP_ROWS = 2**18

# dataset -> (partition key expression, folder pattern); datasets not listed are one folder
PARTITION_KEYS: dict[str, tuple[pl.Expr, str]] = {
    "payroll": (pl.col("period_start").dt.year(), "payroll/year={}"),
    "payroll_lines": (pl.col("period_start").dt.year(), "payroll_lines/year={}"),
    "applications": (pl.col("tax_year"), "applications/tax_year={}"),
}


def file_shas(index: list[int], shas: list[str]) -> pl.DataFrame:
    """Each file's index (``__file``) and sha256 (``_file_sha256``): joined to the rows as a part
    streams out (``write_run_part``). A join, not ``replace_strict``: Polars' streaming sink holds
    every row of the part when a column comes from ``replace_strict`` (1.4 GB against 0.2 GB for
    6M rows measured here), not when it comes from a join."""
    return pl.DataFrame({"__file": index, "_file_sha256": shas}, schema={"__file": pl.Int64, "_file_sha256": pl.String})


def write_run_rows(lake: Path, dataset: str, rows: pl.DataFrame, run_tag: str, file_sha: pl.DataFrame | None = None) -> dict[str, list[str]]:
    """Write the accepted staged rows of one run, one part per partition named by ``run_tag``.

    ``rows``: staged schema + ``_file_sha256``, or + ``__file`` with ``file_sha`` (``file_shas``):
    ``_file_sha256`` is then joined while each part streams out, never held for the
    whole run (a 64-character hash per row is 0.6 GB at 10M rows). Returns the parts holding
    each file's rows.
    """
    if rows.height == 0:
        return {}
    key, _ = PARTITION_KEYS.get(dataset, (None, dataset))
    keys = [None] if key is None else rows.select(key.unique(maintain_order=True)).to_series().to_list()
    out: dict[str, list[str]] = {}
    for k in keys:
        for s_, rel in write_run_part(lake, dataset, k, rows.lazy() if key is None else rows.lazy().filter(key == k),
                                      run_tag, file_sha).items():
            out.setdefault(s_, []).append(rel)
    return out


def write_run_part(lake: Path, dataset: str, k, rows: pl.LazyFrame, run_tag: str, file_sha: pl.DataFrame | None = None
                   ) -> dict[str, str]:
    """The run's part of partition ``k`` of ``dataset``: ``rows`` (lazy: streamed to the file)
    as ``write_run_rows`` writes them; the part (relative) of each file sha it holds."""
    if file_sha is not None:
        rows = rows.join(file_sha.lazy(), on="__file", how="left", maintain_order="left")
    cols = [*[pl.col(c).cast(t) for c, t in schema.LAKE[dataset].items()], pl.col("_file_sha256")]
    rel = f"{PARTITION_KEYS.get(dataset, (None, dataset))[1].format(k)}/{_part_name(run_tag)}"
    with _atomic(lake / rel) as tmp:
        rows.select(cols).sink_parquet(tmp, statistics=True, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)
        shas = pl.scan_parquet(tmp).select(pl.col("_file_sha256").unique(maintain_order=True)).collect()
    return dict.fromkeys(shas.to_series().to_list(), rel)


def remove_orphans(lake: Path, manifest: dict) -> list[str]:
    """Delete parts no manifest entry lists: written by a run that crashed before it saved the
    manifest (its files are ingested again, so keeping them would double their rows)."""
    listed = {p for f in manifest["files"].values() for p in (f.get("parts") or [])}
    listed |= {f["quarantine"] for f in manifest["files"].values() if f.get("quarantine")}
    removed = []
    for dataset in [*schema.LAKE, "quarantine"]:
        for path in _parts(lake, dataset):
            rel = path.relative_to(lake).as_posix()
            if rel not in listed:
                path.unlink()
                removed.append(rel)
    return removed


def upgrade(lake: Path, manifest: dict) -> None:
    """Lake layout 1 (payroll partitioned by year and employer) to 2 (by year only), 2 to 3
    (payroll gains ``check_id``, ``pay_date``, ``line_count``: empty, empty, 1), and 3 to 4
    (applications gain ``period_start``, ``period_end``, the roster ``employer_id``, ``ssn_hash``,
    payroll and roster ``ssn_last4_hash``: nothing is rewritten, ``scan_lake`` reads a column a
    part lacks as empty: a calendar year, the applicant, no ssn given)."""
    if manifest.get("version", 1) >= LAYOUT_VERSION:
        return
    if manifest.get("version", 1) < 3:
        for path in _parts(lake, "payroll"):
            part = storage.read_parquet(path)
            if "line_count" not in part.columns:
                part = part.with_columns(pl.lit(None, dtype=pl.String).alias("check_id"),
                                         pl.lit(None, dtype=pl.Date).alias("pay_date"),
                                         pl.lit(1, dtype=pl.Int32).alias("line_count"))
                intend(lake, path)
                write_parquet_atomic(part.select(*schema.PAYROLL, "_file_sha256"), path)
    old = sorted((lake / "payroll").glob("year=*/employer_id=*/part-*.parquet"))
    if old:
        rows = pl.concat([storage.read_parquet(p) for p in old], how="vertical_relaxed")
        new_parts: dict[str, list[str]] = {}
        for (sha,), grp in rows.group_by(["_file_sha256"], maintain_order=True):
            for s_, parts in write_run_rows(lake, "payroll", grp, sha).items():
                new_parts.setdefault(s_, []).extend(parts)
        for sha, f in manifest["files"].items():
            if f.get("dataset") == "payroll":
                f["parts"] = new_parts.get(sha, [])
        for p in old:
            intend(lake, p)
            p.unlink()
            with contextlib.suppress(OSError):
                p.parent.rmdir()
    manifest["version"] = LAYOUT_VERSION
    save_manifest(lake, manifest)


def write_quarantine(lake: Path, dataset: str, rows: pl.DataFrame, sha: str) -> str | None:
    if rows.height == 0:
        return None
    rel = f"quarantine/{dataset}/{_part_name(sha)}"
    rows = rows.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in QUARANTINE_SCHEMA.items() if c not in rows.columns])
    write_parquet_atomic(rows.select([pl.col(c).cast(t) for c, t in QUARANTINE_SCHEMA.items()]), lake / rel)
    return rel


def _parts(lake: Path, dataset: str) -> list[Path]:
    base = lake / dataset
    if not base.exists():
        return []
    return sorted(base.rglob("part-*.parquet"))


def _rewrite(lake: Path, path: Path, keep: pl.DataFrame) -> None:
    intend(lake, path)
    if keep.height == 0:
        path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()
    else:
        write_parquet_atomic(keep, path)


# datasets whose file is replaced whole by a new version at its path (the others replace by key)
BY_PATH = ("payroll", "control_groups")


def supersede(lake: Path, files: dict, new: dict[str, str], dataset: str = "payroll") -> list[dict]:
    """Remove the rows of every earlier version of the ``dataset`` files ``new`` (sha256 -> path
    relative to the submission folder) from the lake: an earlier version is a manifest entry
    (``files``: the manifest's, updated in place) of the same path and other content, not
    superseded yet. Returns one record per superseded file; ``files[old]["superseded_by"]``
    names the new version (the manifest's parts of the old one are emptied)."""
    by_path: dict[str, list[str]] = {}
    for sha, f in files.items():
        if f.get("dataset") == dataset and not f.get("superseded_by"):
            by_path.setdefault(f["file"], []).append(sha)
    records: list[dict] = []
    for new_sha, rel in new.items():
        for old_sha in by_path.get(rel, []):
            if old_sha == new_sha:
                continue
            old = files[old_sha]
            removed = 0
            for part in old.get("parts") or []:
                path = lake / part
                if not path.exists():
                    continue
                frame = storage.read_parquet(path)
                mine = pl.col("_file_sha256") == old_sha
                if part.startswith(f"{dataset}/"):
                    removed += frame.select(mine.sum()).item()
                _rewrite(lake, path, frame.filter(~mine))
            old["superseded_by"] = new_sha
            old["parts"] = []
            records.append({
                "dataset": dataset, "file": rel, "sha256": new_sha, "employer_id": None,
                "window_start": None, "window_end": None, "replaced_file": old["file"], "replaced_sha256": old_sha,
                "rows_removed": removed, "superseded": True,
            })
    return records


def replace_by_key(lake: Path, dataset: str, new_rows: pl.DataFrame, run_shas: set[str]) -> list[dict]:
    """Remove earlier rows of ``dataset`` whose replace key appears in ``new_rows`` (+ ``_file_sha256``, ``source_file``)."""
    key = REPLACE_KEYS[dataset]
    keys = new_rows.select(*key, "_file_sha256", "source_file").unique(subset=key, keep="first")
    records: list[dict] = []
    for path in _parts(lake, dataset):
        part = storage.read_parquet(path)
        if part.height == 0:
            continue
        old = part.filter(~pl.col("_file_sha256").is_in(list(run_shas)))
        hits = old.join(keys.rename({"_file_sha256": "__new_sha", "source_file": "__new_file"}), on=key, how="inner")
        if hits.height == 0:
            continue
        for (new_sha, new_file, old_sha, old_file), grp in hits.group_by(["__new_sha", "__new_file", "_file_sha256", "source_file"]):
            records.append({
                "dataset": dataset, "file": new_file, "sha256": new_sha,
                "employer_id": grp.get_column("employer_id")[0] if "employer_id" in grp.columns else None,
                "window_start": None, "window_end": None,
                "replaced_file": old_file, "replaced_sha256": old_sha, "rows_removed": grp.height,
                "keys": ", ".join(sorted({"/".join(str(v) for v in r) for r in grp.select(key).iter_rows()})[:10]),
            })
        keep = part.join(hits.select(*key, "_file_sha256").unique(), on=[*key, "_file_sha256"], how="anti")
        _rewrite(lake, path, keep)
    return _merge(records)


def _merge(records: list[dict]) -> list[dict]:
    merged: dict[tuple, dict] = {}
    for r in records:
        k = (r["dataset"], r["sha256"], r.get("employer_id"), r["replaced_sha256"], r.get("window_start"))
        if k in merged:
            merged[k]["rows_removed"] += r["rows_removed"]
        else:
            merged[k] = dict(r)
    return list(merged.values())


# --- reading ---------------------------------------------------------------------------------------

def scan_lake(
    workdir: Path,
    dataset: str,
    *,
    years: list[int] | None = None,
    employer_ids: list[str] | None = None,
    lake: Path | None = None,
) -> pl.LazyFrame:
    """Staged rows of ``dataset`` (exactly the staged schema of ``transforms.schema``) of the
    workdir's lake (or of ``lake``, where the workdir is not at hand: a Dask worker).

    Filters prune partitions where the layout allows it:
    - payroll: ``years`` = rows whose period touches one of the years (reads the partitions of
      each year and the year before, for periods across January 1); ``employer_ids`` by partition.
    - applications: ``years`` = tax_year (by partition); ``employer_ids`` by row.
    - roster: through the applications of those years / employers.
    - certifications: ``years`` = validity overlapping the years; ``employer_ids`` does not apply.
    - employer_rates: ``years`` = rate years starting July 1 of y-1 or y; ``employer_ids`` by row.
    """
    if dataset not in schema.LAKE:
        raise KeyError(f"unknown dataset {dataset!r}; known: {', '.join(schema.LAKE)}")
    target = schema.LAKE[dataset]
    lake = lake if lake is not None else lake_dir(workdir)
    base = lake / dataset
    files: list[Path] = []
    if dataset in ("payroll", "payroll_lines") and base.exists():
        ys = None if years is None else sorted({y for x in years for y in (x - 1, x)})
        year_dirs = [base / f"year={y}" for y in ys] if ys is not None else sorted(base.glob("year=*"))
        for yd in year_dirs:
            files += sorted(yd.glob("part-*.parquet"))
    elif dataset == "applications" and base.exists():
        dirs = [base / f"tax_year={y}" for y in years] if years is not None else sorted(base.glob("tax_year=*"))
        for d in dirs:
            files += sorted(d.glob("part-*.parquet"))
    elif base.exists():
        files = sorted(base.glob("part-*.parquet"))
    if files:
        # a part written before a column existed (an older layout) reads it as empty
        lf = storage.scan_parquet(files, schema=dict(target), missing_columns="insert", extra_columns="ignore")
    else:
        lf = pl.LazyFrame(schema=target)
    if dataset in ("payroll", "payroll_lines") and years is not None:
        touch = pl.lit(False)
        for y in years:
            touch = touch | ((pl.col("period_start") <= date(y, 12, 31)) & (pl.col("period_end") >= date(y, 1, 1)))
        lf = lf.filter(touch)
    if dataset in ("payroll", "payroll_lines", "applications", "employer_rates") and employer_ids is not None:
        lf = lf.filter(pl.col("employer_id").is_in(list(employer_ids)))
    if dataset == "employer_rates" and years is not None:
        lf = lf.filter(pl.col("rate_year_start").dt.year().is_in(sorted({y for x in years for y in (x - 1, x)})))
    if dataset == "certifications" and years is not None:
        lo, hi = date(min(years), 1, 1), date(max(years), 12, 31)
        lf = lf.filter((pl.col("valid_from") <= hi) & (pl.col("valid_to").is_null() | (pl.col("valid_to") >= lo)))
    if dataset == "roster" and (years is not None or employer_ids is not None):
        apps = scan_lake(workdir, "applications", years=years, employer_ids=employer_ids, lake=lake).select(
            "application_id").unique()
        lf = lf.join(apps, on="application_id", how="semi")
    return lf
