"""What the tasks of an ingest do (``ingest.route`` sends them to an executor: this process's threads or a
Dask cluster's workers): each function
reads what it needs from the submission folder and the lake (a local folder every worker sees, or
an object store), writes what it makes there, and returns only what the driver gathers: counts,
digests, rejects and the paths it wrote with their sha256 (never a row of payroll).

Every task is idempotent: it writes under names fixed by its input (a staged part is the same
bytes when written again), so Dask may run it again on another worker when one dies. The ssn
hash key is never sent: each worker loads it (``key_loader``, given by the edge: ``flows._env.hash_key``,
its environment or key file) and checks it is the driver's by its fingerprint.

Long because every task of the one ingest route is here, in the order the route runs them (map,
reduce, the year parts, the other datasets, finish): one place to read what a worker does."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from transforms import failpoints, schema
from transforms.ingest.commit import QUARANTINE_ROWS, STAGED_QUARANTINE
from transforms.ingest.read.files.submission import physical_lines
from transforms.ingest.store import lake as lk
from transforms.ingest.store import lake_files
from transforms.ingest.store import scratch as sg
from transforms.ingest.store.ordered import _cast, ordered
from transforms.ingest.validate import batches as bt
from transforms.ingest.validate import cross_rows as xrows
from transforms.ingest.validate import earlier_rows
from transforms.ingest.validate import file_employers as fe
from transforms.ingest.validate import files as fl
from transforms.ingest.validate import pieces as pc
from transforms.ingest.validate import run_rejects as pp
from transforms.ingest.validate.cross_rows import ORDER_BASE
from transforms.ingest.validate.quarantine import FileWork
from transforms.pii import HashKey, KeyError_

POS = ["__k0", "__kf", "__kp"]  # a row's place in the single-process route's order (wide rows, then sums)
_KEYS: dict[str, HashKey] = {}


class KeyMismatch(KeyError_):
    """A worker's ssn hash key is not the driver's."""


def worker_key(loader, key_id: str) -> HashKey:
    """The ssn hash key on this worker, checked against the driver's fingerprint ``key_id``."""
    key = _KEYS.get(key_id)
    if key is None:
        if loader is None:
            raise KeyMismatch("a task on a Dask worker needs the key loader of the edge (key_loader: flows._env.hash_key): "
                              "the key is read on the worker, never sent")
        key = loader()
        if key.key_id != key_id:
            raise KeyMismatch(
                f"the ssn hash key of the Dask workers (id {key.key_id}, from {key.source.split(':')[0]}) is not this "
                f"run's (id {key_id}): give every worker the same key (IMPCREDIT_HMAC_KEY or IMPCREDIT_HMAC_KEY_FILE "
                "in its environment)")
        _KEYS[key_id] = key
    return key


def _wrote(lake: Path) -> dict[str, str | None]:
    """The lake parts this task wrote with their sha256 (the scratch area's own files left out)."""
    return {rel: s for rel, s in lake_files.take_sums(lake).items() if not rel.startswith("_scratch/")}


def digests(paths: list[Path]) -> list[tuple[str, int]]:
    """(sha256, size) of each file (``plan._digest``)."""
    from transforms.ingest.plan import _digest

    return [_digest(p) for p in paths]


def part_sums(lake: Path, rels: list[str]) -> dict[str, str | None]:
    from transforms.ingest.store.lake_verify import part_sums as sums

    return sums(lake, rels)


def incomplete(root: Path, exclude: list[Path]) -> list[str]:
    from transforms.ingest.read.files.submission import incomplete as problems

    return problems(root, exclude)


# --- map: read, stage and validate files; their rows to the scratch area --------------------------

@dataclass
class MapJob:
    kind: str  # "pieces" (one big file), "batch" (small files together, the others one by one) or "files"
    works: list[FileWork]
    paths: dict[int, Path]
    sizes: dict[int, int]
    now: datetime
    engine: str
    key_id: str
    loader: object
    stage: Path  # the run's scratch area (``<lake>/_scratch/<token>``)
    buckets: int  # employer partitions of payroll
    piece_bytes: int
    failpoint: str | None = None
    docs_dir: Path | None = None  # Data Docs of the gx engine (in-process only: written on one machine)


@dataclass
class Mapped:
    """A file after the map: its ``FileWork`` without rows (``passed`` and ``quarantine`` are in
    the scratch area) and what it staged."""

    work: FileWork
    staged: dict[int, str] = field(default_factory=dict)  # bucket -> staged part (relative to the stage)
    quarantined: bool = False


def map_job(job: MapJob) -> list[Mapped]:
    key = worker_key(job.loader, job.key_id)
    if job.failpoint:
        failpoints.exit_worker(job.failpoint, job.stage)
    rest = job.works
    if job.kind == "pieces":
        w = job.works[0]
        rest = [] if pc.validate_in_pieces(w, job.paths[w.index], job.sizes[w.index], job.piece_bytes, key, job.now) else [w]
    elif job.kind == "batch":
        rest = bt.validate_batch(job.works, job.paths, key, job.now)
    for w in rest:
        fl.read_and_validate(w, job.paths[w.index], key, job.now, job.docs_dir, job.engine)
    for w in job.works:  # every line accounted for (spec section 1): counted here, where the file is read
        w.lines, w.blank_lines = physical_lines(job.paths[w.index], w.limits.max_sheet_mb)
    return _stage_works(job)


def _stage_works(job: MapJob) -> list[Mapped]:
    """The job's rows that passed, with ``__seq`` (their place in their file), to the scratch area:
    one part per dataset and employer partition for all its files, by file, then place (a part per
    file and partition was 7,300 small writes at 10M rows), listed under its first file; each
    file's quarantined rows to the scratch area too."""
    outs = [Mapped(w) for w in sorted(job.works, key=lambda w: w.index)]
    rows_of: dict[str, list[tuple[Mapped, pl.DataFrame]]] = {}
    for m in outs:
        w = m.work
        if w.passed:
            rows = _concat(w.passed).with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("__seq"))
            rows_of.setdefault(w.dataset, []).append((m, rows))
        if w.quarantine:
            sg.put(pl.DataFrame(w.quarantine, schema=STAGED_QUARANTINE), job.stage / f"quarantine/f{w.index}.parquet")
            m.quarantined = True
        w.passed, w.quarantine = [], []
    for dataset, items in rows_of.items():
        first = items[0][0]
        n = job.buckets if dataset == "payroll" else 1
        bucket = (pl.col("employer_id").hash(seed=28) % n).cast(pl.Int64) if n > 1 else pl.lit(0, dtype=pl.Int64)
        rows = _concat([f for _, f in items]).with_columns(bucket.alias("__bucket"))
        for (b,), part in rows.partition_by("__bucket", as_dict=True, maintain_order=True).items():
            first.staged[int(b)] = rel = f"map/{dataset}/b{b}/f{first.work.index}{sg.ext(job.stage)}"
            sg.put(part.drop("__bucket"), job.stage / rel)
    _forget(job.stage)
    return outs


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    if len(frames) == 1:
        return frames[0]
    return pl.concat(frames, how="vertical" if all(f.schema == frames[0].schema for f in frames) else "diagonal_relaxed")


def _forget(stage) -> None:
    """The scratch area's files out of the record of what was written (they never reach the lake)."""
    if not sg.is_memory(stage):
        lake_files.take_sums(stage)


# --- reduce: the run-level rules per employer partition ---------------------------------------------

@dataclass
class Reduced:
    """What a reduce gives the driver: the cross-row rejects of each rule pass (``cross_row_hits``,
    no cell), accepted lines and the ids of accepted rows per file, the partitions it holds
    (year -> its first row's place) and the parts it wrote (with sha256)."""

    hits: list[tuple[str, pl.DataFrame]] = field(default_factory=list)
    accepted: dict[int, int] = field(default_factory=dict)
    ids: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    years: dict[str, dict] = field(default_factory=dict)
    staged: dict[str, dict] = field(default_factory=dict)  # dataset -> year -> accepted rows in the scratch area
    replaced: list[dict] = field(default_factory=list)
    parts_of: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # dataset -> sha -> parts
    sums: dict[str, str | None] = field(default_factory=dict)


def _read_staged(stage: Path, rels: list[str]) -> pl.DataFrame:
    """Staged rows in the single-process route's order (file, then place in the file), with
    ``POS`` (wide rows: 0, file, place)."""
    rels = sorted(rels, key=lambda r: int(r.rpartition("/f")[2].partition(".")[0]))  # by first file
    rows = pl.concat([sg.get(stage / r) for r in rels], how="diagonal_relaxed")
    # each part is its files' rows by file, then place (``_stage_works``); parts of two jobs may
    # interleave (a batch passes over a workbook between its files): then by file, stably
    rows = rows.with_columns((pl.col("__order") // ORDER_BASE).alias("__kf"))
    if not rows.get_column("__kf").is_sorted():
        rows = rows.sort("__kf", maintain_order=True)
    return rows.with_columns(pl.lit(0, dtype=pl.Int64).alias("__k0"), pl.col("__seq").alias("__kp")).drop("__seq")


def _keep(frame: pl.DataFrame, gone: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(~pl.col("__order").is_in(gone.get_column("__order").implode()))


def _ids(rows: pl.DataFrame) -> dict[int, dict[str, set[str]]]:
    out: dict[int, dict[str, set[str]]] = {}
    cols = [c for c in ("employer_id", "application_id") if c in rows.columns]
    if not cols:
        return out
    for (f,), grp in rows.group_by(["__file"]):
        out[int(f)] = {c: set(grp.get_column(c).drop_nulls().unique().cast(pl.String).to_list()) for c in cols}
    return out


def _aggregate(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``cross_rows.aggregate_lines`` with each row's place (``POS``): a wide row keeps its own, a
    row summed from code lines takes its first line's after every wide row (the order
    ``aggregate_lines`` gives), a code line its own."""
    canon, code_lines = xrows.aggregate_lines(rows.drop(POS))
    if "__code" not in rows.columns:
        return canon.hstack(rows.select(POS)), code_lines.hstack(pl.DataFrame(schema=dict.fromkeys(POS, pl.Int64)))
    is_line = pl.col("__code").is_not_null()
    lines = rows.filter(is_line).with_columns((pl.col("__order") // ORDER_BASE).alias("__fileno"))
    wide_pos = rows.filter(~is_line).select(POS)
    first = lines.group_by(["__fileno", *xrows.CHECK_KEY], maintain_order=True).agg(
        pl.lit(1, dtype=pl.Int64).alias("__k0"), pl.col("__kf").first(), pl.col("__kp").min()).select(POS)
    line_pos = lines.select(POS) if code_lines.height else pl.DataFrame(schema=dict.fromkeys(POS, pl.Int64))
    return canon.hstack(pl.concat([wide_pos, first])), code_lines.hstack(line_pos)


@dataclass
class ReduceJob:
    lake: Path
    stage: Path
    bucket: int
    staged: list[str]  # the staged parts of the bucket (relative to the stage)


def reduce_payroll(job: ReduceJob) -> Reduced:
    """The run-level rules of payroll over one employer partition (``pipeline._accept``'s steps,
    every one per employer or finer: exact copies, lines summed per check, copies of rows an
    earlier run stored, nets and rates with the lake's rows of the same employees); the accepted
    rows and code lines to the scratch area."""
    out = Reduced()
    rows = _read_staged(job.stage, job.staged)
    if sg.is_memory(job.stage):  # read by this task alone: let go of them
        for rel in job.staged:
            (job.stage / rel).delete()
    xr = xrows.cross_row_rejects("payroll", rows.drop(POS))
    out.hits.append(("payroll:xr", pp.cross_row_hits(xr, rows)))
    rows = _keep(rows, xr) if xr.height else rows
    lines_frame = rows
    rows, code_lines = _aggregate(rows)
    again = pp.to_code_lines(earlier_rows.resent(rows.drop(POS), None, job.lake), code_lines)
    out.hits.append(("payroll:again", pp.cross_row_hits(again, lines_frame)))
    rows, code_lines = (_keep(rows, again), _keep(code_lines, again)) if again.height else (rows, code_lines)
    xn = pp.payroll_sums(rows.drop(POS), code_lines.drop(POS), None, job.lake)
    out.hits.append(("payroll:xn", pp.cross_row_hits(xn, lines_frame)))
    gone = pp.unread(xn)  # a doubtful line is stored (spec section 7)
    rows, code_lines = (_keep(rows, gone), _keep(code_lines, gone)) if gone.height else (rows, code_lines)
    del lines_frame
    for dataset, frame in (("payroll_lines", code_lines), ("payroll", rows)):
        if frame.height == 0:
            continue
        frame = frame.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
        if dataset == "payroll":
            out.accepted = dict(frame.group_by("__file").agg(pl.col("line_count").sum()).iter_rows())
            out.ids = _ids(frame)
        year = lk.PARTITION_KEYS[dataset][0]
        out.years[dataset], out.staged[dataset] = {}, {}
        # one staged part per year, its rows in ``POS`` order: ``write_year`` reads its year's only
        by_year = frame.with_columns(year.alias("__year")).partition_by("__year", as_dict=True, maintain_order=True)
        del frame
        for (y,), part in by_year.items():
            if y is None:  # no year: no part (as ``lake.write_run_rows`` filters by year)
                continue
            part = part.drop("__year").sort(POS)
            rel = f"accepted/{dataset}/y{y}/r{job.bucket}{sg.ext(job.stage)}"
            sg.put(part, job.stage / rel)
            out.staged[dataset][y] = rel
            out.years[dataset][y] = part.select(POS).row(0)
        del by_year
    _forget(job.stage)
    return out


@dataclass
class WriteJob:
    lake: Path
    stage: Path
    dataset: str  # payroll or payroll_lines
    year: int
    staged: list[str]
    run_tag: str
    index: list[int]
    shas: list[str]


def write_year(job: WriteJob) -> tuple[dict[str, list[str]], dict[str, str | None]]:
    """One partition (a year) of payroll or its code lines: every reduce's accepted rows of the
    year, in the single-process route's order, written as its one part of this run."""
    parts = {s: [rel] for s, rel in lk.write_run_part(job.lake, job.dataset, job.year, _merged(job), job.run_tag,
                                                         file_sha=lk.file_shas(job.index, job.shas)).items()}
    return parts, _wrote(job.lake)


def _merged(job: WriteJob) -> pl.LazyFrame:
    """The year's staged parts (each in ``POS`` order, ``reduce_payroll``) as one frame in ``POS``
    order, a bounded slice at a time (``ordered``); parts in this process's memory (a small
    submission) are in memory already: one sort of them all, the same rows in the same order (a
    row's ``POS`` is its own), a fifth less time than the slices."""
    want = {**schema.LAKE[job.dataset], "__file": pl.Int64, **dict.fromkeys(POS, pl.Int64)}
    parts = [job.stage / rel for rel in job.staged]
    if sg.is_memory(job.stage):
        return pl.concat([_cast(sg.get(p), want) for p in parts], how="vertical", rechunk=False).sort(POS).lazy()
    return ordered(parts, want, POS)


def supersede(lake: Path, files: dict, new: dict[str, dict[str, str]]) -> tuple[list[dict], dict[str, str | None]]:
    """``lake.supersede`` of each dataset replaced whole by a new version at its path (one task:
    one writer of the note of parts being rewritten)."""
    records: list[dict] = []
    for dataset in lk.BY_PATH:
        if new.get(dataset):
            records += lk.supersede(lake, files, new[dataset], dataset)
    return records, _wrote(lake)


@dataclass
class OtherJob:
    """The datasets other than payroll, one task (small; their keys are not all per employer)."""

    lake: Path
    stage: Path
    staged: dict[str, list[str]]  # dataset -> staged parts
    payroll: list[str]  # the accepted payroll rows of the run (their ssn hashes: ``ids_that_are_ssns``)
    run_tag: str
    index: list[int]
    shas: list[str]
    rels: list[str]
    key_id: str
    loader: object


def other_datasets(job: OtherJob) -> Reduced:
    """``pipeline._accept`` and ``_store`` for every dataset but payroll: exact copies and
    conflicting keys, roster employee ids that are ssns of the payroll (this run's and the
    lake's), the replacement by key of earlier rows, this run's parts."""
    out = Reduced()
    accepted: dict[str, pl.DataFrame] = {}
    for dataset in schema.STAGED:
        if dataset == "payroll" or not job.staged.get(dataset):
            continue
        rows = _read_staged(job.stage, job.staged[dataset]).drop(POS)
        xr = xrows.cross_row_rejects(dataset, rows)
        out.hits.append((f"{dataset}:xr", pp.cross_row_hits(xr, rows)))
        rows = _keep(rows, xr) if xr.height else rows
        if dataset == "roster":
            payroll = pl.concat([sg.get(job.stage / r, columns=["ssn_hash"]) for r in job.payroll]) \
                if job.payroll else None
            xs = earlier_rows.ids_that_are_ssns(rows, payroll, None, worker_key(job.loader, job.key_id), job.lake)
            out.hits.append((f"{dataset}:xs", pp.cross_row_hits(xs, rows)))
            rows = _keep(rows, xs) if xs.height else rows
        accepted[dataset] = rows.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
    file_sha = pl.col("__file").replace_strict(job.index, job.shas, return_dtype=pl.String)
    file_rel = pl.col("__file").replace_strict(job.index, job.rels, return_dtype=pl.String)
    for dataset, rows in accepted.items():
        if dataset not in lk.BY_PATH:
            new = rows.select(*schema.STAGED[dataset], "__file").with_columns(
                file_sha.alias("_file_sha256"), file_rel.alias("source_file")).drop("__file")
            out.replaced += lk.replace_by_key(job.lake, dataset, new, set(job.shas))
    shas = lk.file_shas(job.index, job.shas)
    for dataset, rows in accepted.items():
        out.parts_of[dataset] = lk.write_run_rows(job.lake, dataset, rows, job.run_tag, file_sha=shas)
        out.accepted.update(rows.group_by("__file").len().iter_rows())
        out.ids.update(_ids(rows))
    out.sums = _wrote(job.lake)
    return out


@dataclass
class FinishJob:
    """One file with quarantined rows or cross-row rejects (``calls``: its hits of each rule pass, in order)."""

    work: FileWork
    path: Path
    lake: Path
    stage: Path
    quarantined: bool
    calls: list[pl.DataFrame]
    key_id: str
    loader: object


def finish_file(job: FinishJob) -> tuple[FileWork, str | None, dict[str, set[str]], dict[str, str | None]]:
    """The cross-row rejects of a file quoted from its cells (the file read again, as
    ``pipeline._cross_row_records`` does) and its quarantine part written; returns its
    ``FileWork`` (rejects added), the part, the ids its quarantined rows name, what it wrote."""
    w = job.work
    if job.quarantined:
        w.quarantine = sg.get(job.stage / f"quarantine/f{w.index}.parquet").to_dicts()
    calls = [c for c in job.calls if c.height]
    if calls:
        key = worker_key(job.loader, job.key_id)
        for hits in calls:
            pp.quote_hits(hits, {w.index: w}, {w.index: job.path}, key)
    qpart, ids = None, {}
    if w.quarantine:
        q = pl.DataFrame(w.quarantine, schema=QUARANTINE_ROWS)
        ids = {c: set(q.get_column(c).drop_nulls().unique().to_list()) for c in ("employer_id", "application_id")}
        # the file's employers are also the one its folder or files.csv gives and those its disputed lines print
        ids["employer_id"] |= fe.context_employers(w)
        w.unread = fe.unread_reason(w)
        qpart = lk.write_quarantine(job.lake, w.dataset, q.with_columns(
            pl.lit(w.sha).alias("file_sha256"), pl.lit(w.rel).alias("source_file")), w.sha)
    w.quarantine = []
    return w, qpart, ids, _wrote(job.lake)
