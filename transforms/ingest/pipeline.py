"""``ingest_folder``: read, stage, validate, quarantine and store one submission folder (see
``transforms.ingest``): which route each file takes, the run-level rules over all its rows, and
the lake."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms import schema
from transforms.ingest import commit
from transforms.ingest.check import batches as bt
from transforms.ingest.check import cross_rows as xrows
from transforms.ingest.check import docs_offline, earlier_rows
from transforms.ingest.check import files as fl
from transforms.ingest.check import pieces as pc
from transforms.ingest.check.cross_rows import ORDER_BASE, cross_row_rejects
from transforms.ingest.check.quarantine import FileWork
from transforms.ingest.check.run_rejects import (
    cross_row_hits,
    payroll_sums,
    quote_hits,
    to_code_lines,
    unread,
)
from transforms.ingest.plan import FILE_WORKERS, Plan, plan_files
from transforms.ingest.read import submission as sub
from transforms.ingest.report import IngestReport
from transforms.ingest.store import lake as lk
from transforms.ingest.store import lake_check, lake_files
from transforms.pii import HashKey
from transforms.stages import start

ENGINES = ("polars", "gx")
PIECE_BYTES = 32 * 2**20  # a delimited file bigger than this is read and validated in pieces of about this size
BATCH_BYTES = 8 * 2**20  # files staged and validated together, up to about this much text (5 bench files)
# A submission bigger than this goes the staged route in this process (``ingest.local_client``): every
# file's passed rows to the lake's staging area, the run-level rules per employer bucket, each year's
# part written a bounded slice at a time (``store.ordered``). Measured on the bench's shaped payroll
# (a line per code): 2M rows, 830 MB, peak RSS 4.7 GB -> 1.9 GB, 1.8x the time (one task at a time);
# 10M rows, 4.3 GB: 1.3 GB peak and 284 s with one task at a time, 1.9 GB and 221 s with two.
# ``IMPCREDIT_STAGED_ABOVE_MB`` changes the size (0: always), ``IMPCREDIT_STAGED_TASKS`` the tasks at once.
STAGED_ABOVE_BYTES = 2**30
STAGED_TASKS = 2


def _now_utc(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=ZoneInfo(schema.NJ_TZ))
    return now.astimezone(UTC)


def ingest_folder(
    input_dir: Path,
    workdir: Path,
    key: HashKey,
    *,
    now: datetime | None = None,
    docs_dir: Path | None = None,
    engine: str | None = None,
    cluster: str | None = None,
    key_loader=None,
) -> IngestReport:
    """Ingest a submission folder into the workdir's lake (``<workdir>/lake``, or where
    ``store.location`` says; idempotent; corrected files replace).

    ``engine`` evaluates the validation suites: ``"polars"`` (the suites compiled to Polars
    expressions, vectorised; the default) or ``"gx"`` (Great Expectations Core on pandas, file by
    file; needed for Data Docs, so the default when ``docs_dir`` is given). The environment
    variable ``IMPCREDIT_VALIDATION_ENGINE`` changes the default.

    ``cluster``: the address of a Dask scheduler whose workers read, validate and write (``ingest.cluster``;
    the same lake, byte for byte); each loads the ssn hash key with ``key_loader`` (default
    ``pii.load_key``), which must give ``key`` (checked by its fingerprint; never sent).
    """
    from filelock import FileLock

    root = Path(input_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    lake = lk.lake_dir(workdir)
    lake.mkdir(parents=True, exist_ok=True)
    now_utc = _now_utc(now)
    engine = engine or os.environ.get("IMPCREDIT_VALIDATION_ENGINE") or ("gx" if docs_dir is not None else "polars")
    if engine not in ENGINES:
        raise ValueError(f"unknown validation engine {engine!r}; known: {', '.join(ENGINES)}")
    if engine == "polars" and docs_dir is not None:
        raise ValueError("Data Docs are written by the gx validation engine only")
    if cluster and docs_dir is not None:
        raise ValueError("Data Docs are written on one machine: validate with the polars engine on a Dask cluster "
                         "(--validation-engine polars), or run without the cluster for Data Docs")
    if not cluster and engine == "polars" and _submission_bytes(root, Path(workdir)) > _staged_above():
        from transforms.ingest.local_client import LOCAL

        cluster = f"{LOCAL}:{_staged_tasks()}"
    with FileLock(lk.lock_path(lake, workdir)):
        if cluster:
            from transforms.ingest.cluster import ingest_on_cluster

            return ingest_on_cluster(root, Path(workdir), lake, key, now_utc, engine, cluster, [Path(workdir)], key_loader,
                                     PIECE_BYTES, BATCH_BYTES)
        return _ingest(root, Path(workdir), lake, key, now_utc, Path(docs_dir) if docs_dir else None, engine)


def _staged_above() -> int:
    mb = os.environ.get("IMPCREDIT_STAGED_ABOVE_MB")
    try:
        return int(float(mb) * 2**20) if mb else STAGED_ABOVE_BYTES
    except ValueError:
        raise ValueError(f"IMPCREDIT_STAGED_ABOVE_MB={mb!r}: give a number of megabytes (0: always staged)") from None


def _staged_tasks() -> int:
    n = os.environ.get("IMPCREDIT_STAGED_TASKS")
    if n is None:
        return STAGED_TASKS
    if not n.isdigit() or int(n) < 1:
        raise ValueError(f"IMPCREDIT_STAGED_TASKS={n!r}: give a whole number of tasks at once, 1 or more")
    return int(n)


def _submission_bytes(root: Path, workdir: Path) -> int:
    """The bytes of the submission's files (the workdir's excluded), the files' sizes only."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath).resolve() == workdir.resolve():
            dirnames.clear()
            continue
        for name in filenames:
            with contextlib.suppress(OSError):  # a file gone since: the run says so where it reads it
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total


def _cross_row_records(dataset: str, xr: pl.DataFrame, allrows: pl.DataFrame, by_index: dict[int, FileWork],
                       paths: dict[int, Path], key: HashKey, now: datetime) -> None:
    """Reject records and quarantine rows for the cross-row rejects ``xr`` (``__order``, rule, ...).

    The files' tables were let go after validation (memory); the few files with a cross-row
    reject are read again (same bytes, same result) to quote their cells.
    """
    quote_hits(cross_row_hits(xr, allrows), by_index, paths, key)


def _in_pieces(work: FileWork, path: Path, size: int, key: HashKey, now: datetime) -> list[FileWork]:
    """``pieces.validate_in_pieces``; [work] when the file must be read whole instead."""
    return [] if pc.validate_in_pieces(work, path, size, PIECE_BYTES, key, now) else [work]


def _validate_files(plan: Plan, key: HashKey, now: datetime, docs_dir: Path | None, engine: str) -> None:
    """Read, stage and validate every new file into its ``FileWork``.

    Files are independent until the cross-row rules: two jobs at a time (Polars releases the
    GIL; GX's context is not shared across threads). With the polars engine, big delimited
    files go in pieces (bounded memory) and the others in batches; the files that do not pass
    as they are, and every file under gx, then go one by one."""
    todo, paths, sizes = plan.todo, plan.paths, plan.sizes

    def one_file(work: FileWork) -> FileWork:
        fl.read_and_validate(work, paths[work.index], key, now, docs_dir, engine)
        return work

    workers = 1 if engine == "gx" or len(todo) < 2 else FILE_WORKERS
    # a workbook, or a file the submission gives fields (folder, files.csv), goes the file route
    simple = {w.index for w in todo if w.context is None and paths[w.index].suffix.lower() not in sub.WORKBOOK_EXT}
    big = {w.index for w in todo if engine == "polars" and sizes[w.index] > PIECE_BYTES > 0 and w.index in simple}
    one_by_one = [w for w in todo if w.index not in big]
    jobs = [functools.partial(_in_pieces, w, paths[w.index], sizes[w.index], key, now) for w in todo if w.index in big]
    if engine == "polars" and BATCH_BYTES > 0:
        batched = [w for w in one_by_one if w.index in simple]
        jobs += [functools.partial(bt.validate_batch, b, paths, key, now) for b in bt.batches(batched, sizes, BATCH_BYTES)]
        one_by_one = [w for w in one_by_one if w.index not in simple]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest") as pool:
        one_by_one += [w for rest in pool.map(lambda job: job(), jobs) for w in rest]
        list(pool.map(one_file, one_by_one))


def _accept(works: list[FileWork], paths: dict[int, Path], lake: Path, known: dict, workdir: Path, key: HashKey,
            now: datetime) -> tuple[dict[str, pl.DataFrame], list[dict]]:
    """The cross-row rules over the whole run, per dataset, then the accepted rows of each
    dataset (``__file``: each row's file index), and the earlier files that corrected payroll
    files supersede."""
    by_index = {w.index: w for w in works}
    accepted: dict[str, pl.DataFrame] = {}
    replaced: list[dict] = []
    for dataset in schema.STAGED:
        passed = [p for w in works if w.dataset == dataset for p in w.passed]
        for w in works:
            if w.dataset == dataset:
                w.passed = []
        if dataset in lk.BY_PATH:
            # a corrected file (a new version at the same path, even one left with a header
            # only) supersedes the earlier version whole, before the nets are taken over this
            # run's rows and the lake's
            replaced += lk.supersede(lake, known, {w.sha: w.rel for w in works if w.dataset == dataset}, dataset)
        if not passed:
            continue
        same = all(p.schema == passed[0].schema for p in passed)
        allrows = pl.concat(passed, how="vertical" if same else "diagonal_relaxed", rechunk=False)
        del passed
        xr = cross_row_rejects(dataset, allrows)
        if xr.height:
            _cross_row_records(dataset, xr, allrows, by_index, paths, key, now)
            allrows = allrows.filter(~pl.col("__order").is_in(xr.get_column("__order").unique()))
        if dataset == "roster":
            xs = earlier_rows.ids_that_are_ssns(allrows, accepted.get("payroll"), workdir, key)
            if xs.height:
                _cross_row_records(dataset, xs, allrows, by_index, paths, key, now)
                allrows = allrows.filter(~pl.col("__order").is_in(xs.get_column("__order").implode()))
        if dataset == "payroll":
            lines_frame = allrows
            allrows, code_lines = xrows.aggregate_lines(allrows)
            again = to_code_lines(earlier_rows.resent(allrows, workdir), code_lines)
            if again.height:  # sent in an earlier run under another name: the later copy is rejected
                _cross_row_records(dataset, again, lines_frame, by_index, paths, key, now)
                gone = again.get_column("__order").implode()
                allrows = allrows.filter(~pl.col("__order").is_in(gone))
                code_lines = code_lines.filter(~pl.col("__order").is_in(gone))
            xn = payroll_sums(allrows, code_lines, workdir)
            if xn.height:
                _cross_row_records(dataset, xn, lines_frame, by_index, paths, key, now)
                gone = unread(xn).get_column("__order").implode()  # a doubtful line is stored (spec 7)
                allrows = allrows.filter(~pl.col("__order").is_in(gone))
                code_lines = code_lines.filter(~pl.col("__order").is_in(gone))
            del lines_frame
            if code_lines.height:
                accepted["payroll_lines"] = code_lines.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
        accepted[dataset] = allrows.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
    return accepted, replaced


def _store(accepted: dict[str, pl.DataFrame], works: list[FileWork], lake: Path, known: dict,
           replaced: list[dict]) -> dict[str, list[str]]:
    """The lake: replacements by key of the other datasets (rows from earlier runs), then this
    run's parts, one per dataset and partition for the whole run (named by the run's file
    hashes), not one per file: far fewer, larger Parquet files; ``_file_sha256`` keeps each
    row's file. Adds the replacements to ``replaced``; returns the parts of each file (by sha);
    ``accepted`` is emptied."""
    run_shas = {w.sha for w in works}
    index = [w.index for w in works]
    file_sha = pl.col("__file").replace_strict(index, [w.sha for w in works], return_dtype=pl.String)
    file_rel = pl.col("__file").replace_strict(index, [w.rel for w in works], return_dtype=pl.String)
    for dataset, rows in accepted.items():
        if rows.height == 0 or dataset in (*lk.BY_PATH, "payroll_lines"):
            continue
        new = rows.select(*schema.STAGED[dataset], "__file").with_columns(
            file_sha.alias("_file_sha256"), file_rel.alias("source_file")).drop("__file")
        replaced.extend(lk.replace_by_key(lake, dataset, new, run_shas))
    for r in replaced:
        if r["replaced_sha256"] in known:
            known[r["replaced_sha256"]].setdefault("replaced_by", []).append(r["sha256"])
    parts_of: dict[str, list[str]] = {}
    run_tag = hashlib.sha256("\n".join(sorted(run_shas)).encode()).hexdigest()
    shas = lk.file_shas(index, [w.sha for w in works])
    for dataset in list(accepted):
        rows = accepted.pop(dataset)
        if rows.height:
            for sha, parts in lk.write_run_rows(lake, dataset, rows, run_tag, file_sha=shas).items():
                parts_of.setdefault(sha, []).extend(parts)
        del rows
    return parts_of


def _ingest(root: Path, workdir: Path, lake: Path, key: HashKey, now: datetime, docs_dir: Path | None, engine: str) -> IngestReport:
    manifest = lk.load_manifest(lake)
    lake_check.check(lake, manifest)  # before anything is read
    lake_files.take_written(lake)  # forget what a crashed ingest wrote (remove_orphans takes it out)
    lk.upgrade(lake, manifest)
    lk.remove_orphans(lake, manifest)
    known = manifest["files"]
    plan = plan_files(root, [workdir] + ([docs_dir] if docs_dir else []), known)
    works = plan.todo
    validating = start("validate")
    _validate_files(plan, key, now, docs_dir, engine)
    if docs_dir is not None:
        docs_offline.offline(docs_dir)  # pages that open with no network
    accepted, replaced = _accept(works, plan.paths, lake, known, workdir, key, now)
    n_accepted = commit.accepted_counts(accepted)
    named = commit.named(accepted, [w for w in works if w.quarantine])
    parts_of = _store(accepted, works, lake, known, replaced)
    qparts = {}
    for w in works:
        if w.quarantine:
            qrows = pl.DataFrame(w.quarantine, schema=commit.QUARANTINE_ROWS).with_columns(
                pl.lit(w.sha).alias("file_sha256"), pl.lit(w.rel).alias("source_file"))
            qparts[w.index] = lk.write_quarantine(lake, w.dataset, qrows, w.sha)
    return commit.commit(lake, manifest, plan, parts_of, qparts, n_accepted, named, replaced, validating,
                         workdir, docs_dir)
