"""What the lake holds rejected now: the quarantined lines of every file whose content still
counts, and the files rejected whole. Runs read them before deciding (spec section 7: no decision
on input it could not read): a standing line holds the applications it could touch
(``transforms.award.held``), a standing whole-file reject or a line of the agency's own files
stops the run. A corrected file releases them: a new version at the same path supersedes the old
one, and a later roster or application of the same application replaces the earlier by key.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms import storage
from transforms.ingest.store.lake import BY_PATH, QUARANTINE_SCHEMA, _parts, lake_dir, load_manifest
from transforms.ingest.validate.file_employers import folder_employer

STANDING_SCHEMA = {
    "dataset": pl.String, "path": pl.String, "file": pl.String, "source_sheet": pl.String, "line": pl.Int64, "employer_id": pl.String,
    "employee_id": pl.String, "ssn_hash": pl.String, "application_id": pl.String, "rules": pl.String,
    "messages": pl.String, "columns": pl.String, "ingest_seq": pl.Int64, "file_sha256": pl.String,
}


def standing_files(manifest: dict) -> dict[str, dict]:
    """The manifest's files whose content still counts (sha256 -> entry): not superseded by a new
    version at their path (payroll, control groups), and not followed by a later version at their
    path (the datasets that replace by key: a corrected roster sent again under its name)."""
    files = manifest.get("files", {})
    latest: dict[str, int] = {}
    for f in files.values():
        if f.get("dataset") and f.get("status") != "duplicate":
            latest[f["file"]] = max(latest.get(f["file"], 0), int(f.get("ingest_seq", 0)))
    out = {}
    for sha, f in files.items():
        if not f.get("dataset") or f.get("superseded_by"):
            continue
        if f["dataset"] not in BY_PATH and int(f.get("ingest_seq", 0)) < latest.get(f["file"], 0):
            continue
        out[sha] = f
    return out


def standing_rejects(workdir: Path) -> pl.DataFrame:
    """Every rejected line the lake holds now (``STANDING_SCHEMA``): the quarantine of each
    standing file, less the roster and application lines whose application a later file gave
    again (replaced by key). A decision may not rest on them (spec section 7)."""
    lake = lake_dir(workdir)
    manifest = load_manifest(lake)
    files = standing_files(manifest)
    parts = []
    for sha, f in files.items():
        q = f.get("quarantine")
        if not q or not (lake / q).exists():
            continue
        part = storage.read_parquet(lake / q)
        part = part.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in QUARANTINE_SCHEMA.items() if c not in part.columns])
        parts.append(part.select(
            pl.lit(f["dataset"]).alias("dataset"), pl.lit(f["file"]).alias("path"),
            pl.when(pl.col("source_sheet").is_not_null()).then(pl.format("{}[{}]", "source_file", "source_sheet"))
            .otherwise(pl.col("source_file")).alias("file"),
            "source_sheet", pl.col("source_line").alias("line"), "employer_id", "employee_id", "ssn_hash",
            "application_id", "rules", "messages", "columns", pl.lit(int(f.get("ingest_seq", 0)), dtype=pl.Int64).alias("ingest_seq"),
            pl.lit(sha).alias("file_sha256"),
        ))
    if not parts:
        return pl.DataFrame(schema=STANDING_SCHEMA)
    out = pl.concat(parts).cast(STANDING_SCHEMA)
    keyed = out.filter(pl.col("dataset").is_in(["roster", "applications"]) & pl.col("application_id").is_not_null())
    if keyed.height:
        seq_of = {sha: int(f.get("ingest_seq", 0)) for sha, f in files.items()}
        given = []
        for dataset in ("roster", "applications"):
            for path in _parts(lake, dataset):
                given.append(storage.read_parquet(path, columns=["application_id", "_file_sha256"]).with_columns(
                    pl.lit(dataset).alias("dataset")))
        if given:
            rows = pl.concat(given).unique().with_columns(
                pl.col("_file_sha256").replace_strict(seq_of, default=0, return_dtype=pl.Int64).alias("__seq"))
            later = rows.group_by("dataset", "application_id").agg(pl.col("__seq").max().alias("__latest"))
            out = out.join(later, on=["dataset", "application_id"], how="left").filter(
                pl.col("__latest").is_null() | (pl.col("__latest") <= pl.col("ingest_seq"))).drop("__latest")
    return out.sort("file", "line")


def as_rejects(workdir: Path, standing: pl.DataFrame, fresh: pl.DataFrame, read_anew: set[str]) -> pl.DataFrame:
    """The standing lines of the files this run did not read anew (``read_anew``: the sha256 of
    those it did; ``fresh``: their rejects, never repeated), as rejected cells (``report.REJECT_SCHEMA``): a rerun that did not read a file again still reports
    the lines of it that stand rejected and hold applications (rejects.csv, rejects/, the page).
    One row per rejected column (its message and the value as the quarantine kept it, masked),
    or one row for the line when its columns and messages do not pair."""
    import json

    from transforms.ingest.report import REJECT_SCHEMA
    from transforms.ingest.validate.masking import short

    seen = set(fresh.select("file", "line").iter_rows()) if fresh.height else set()
    left = [r for r in standing.iter_rows(named=True)
            if r["file_sha256"] not in read_anew and (r["file"], r["line"]) not in seen]
    cells_of = _cells(workdir, {r["file_sha256"] for r in left if r["file_sha256"]})
    rows = []
    for r in left:
        columns = [c for c in (r["columns"] or "").split(";") if c]
        messages = [m for m in (r["messages"] or "").split(" | ") if m]
        rules = [x for x in (r["rules"] or "").split(";") if x]
        kept = cells_of.get((r["file_sha256"], r["source_sheet"], r["line"]))
        cells = json.loads(kept) if kept else {}
        if columns and len(columns) == len(messages):
            pairs = list(zip(columns, messages, strict=True))
        else:
            pairs = [(";".join(columns) or None, " | ".join(messages))]
        for column, message in pairs:
            rows.append({"file": r["file"], "line": r["line"], "column": column,
                         "value": short(cells.get(column)) if column else None,
                         "rule": rules[0] if len(rules) == 1 else ";".join(rules) or None, "message": message,
                         "employer_id": r["employer_id"]})
    return pl.DataFrame(rows, schema=REJECT_SCHEMA) if rows else pl.DataFrame(schema=REJECT_SCHEMA)


def under_applicant(rejects: pl.DataFrame, standing: pl.DataFrame, applications: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """``rejects`` with each rejected roster line that names no employer (its ``employer_id``
    empty or absent: the applicant, spec section 2) filed under its application's employer, found
    by the application id the lake kept of the line (``standing``): rejects/<employer>.csv, the
    run page and the notice list it with its employer, never as an unreadable employer id."""
    if not rejects.height or rejects.get_column("employer_id").is_not_null().all():
        return rejects
    lines = standing.filter((pl.col("dataset") == "roster") & pl.col("employer_id").is_null()
                            & pl.col("application_id").is_not_null()).select("file", "line", "application_id")
    if not lines.height:
        return rejects
    applicant = applications.lazy().select("application_id", pl.col("employer_id").alias("__applicant")).unique(
        "application_id", keep="first").collect()
    found = lines.join(applicant, on="application_id").select("file", "line", "__applicant").unique(["file", "line"])
    return rejects.join(found, on=["file", "line"], how="left", maintain_order="left").with_columns(
        pl.coalesce("employer_id", "__applicant").alias("employer_id")).drop("__applicant")


def _cells(workdir: Path, shas: set[str]) -> dict[tuple, str]:
    """(file sha256, sheet, line) -> the cells the quarantine kept of the line (masked), for ``shas``."""
    if not shas:
        return {}
    lake = lake_dir(workdir)
    files = load_manifest(lake).get("files", {})
    out: dict[tuple, str] = {}
    for sha in shas:
        q = (files.get(sha) or {}).get("quarantine")
        if q and (lake / q).exists():
            part = storage.read_parquet(lake / q, columns=["source_sheet", "source_line", "cells"])
            out.update({(sha, sheet, line): cells for sheet, line, cells in part.iter_rows()})
    return out


def standing_problems(workdir: Path) -> list[dict]:
    """The standing files that were rejected whole (``problem``: unknown layout, wrong types,
    not text ...), with their manifest entries: nothing may be decided while one stands."""
    manifest = load_manifest(lake_dir(workdir))
    return [f for f in standing_files(manifest).values() if f.get("problem")]


def named_ids(workdir: Path) -> dict[str, dict]:
    """file -> {employers, applications, sha256, unread}: the ids each standing file with a rejected
    line names (its employers: those its readable lines name, the one its folder or files.csv gives,
    those its disputed lines print; a lake written before the manifest kept the context: its folder's),
    and why none of its lines was read (``file_employers.unread_reason``, absent where some was)."""
    manifest = load_manifest(lake_dir(workdir))
    out: dict[str, dict] = {}
    for sha, f in standing_files(manifest).items():
        if f.get("quarantine"):
            employers = set(f.get("employers") or [])
            if f.get("dataset") == "payroll" and (folder := folder_employer(f["file"])):
                employers.add(folder)
            out[f["file"]] = {"employers": sorted(employers), "applications": list(f.get("applications") or []),
                              "sha256": sha, **({"unread": f["unread"]} if f.get("unread") else {})}
    return out
