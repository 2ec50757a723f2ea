"""``ingest_folder``: read, stage, validate, quarantine and store one submission folder (see
``transforms.ingest``): the executor its tasks run on (``ingest.route``: one route whatever the
executor), chosen here: this process's threads, the scratch area in memory for a submission up to
``SCRATCH_IN_MEMORY_BYTES`` (on disk above it: bounded memory), or a Dask cluster."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from transforms import private, schema, storage
from transforms.ingest.executors import Executor
from transforms.ingest.read.files.line_limits import Limits
from transforms.ingest.read.layouts.profile_files import Layouts
from transforms.ingest.report import IngestReport
from transforms.ingest.route import ingest_with
from transforms.ingest.store import lake as lk
from transforms.pii import HashKey

ENGINES = ("polars", "gx")
PIECE_BYTES = 32 * 2**20  # a delimited file bigger than this is read and validated in pieces of about this size
BATCH_BYTES = 8 * 2**20  # files staged and validated together, up to about this much text (5 bench files)
# A submission bigger than this keeps its scratch area on disk (``<lake>/_scratch``: every file's passed
# rows, the run-level rules per employer bucket, each year's part written a bounded slice at a time,
# ``store.ordered``), a smaller one in memory (``store.scratch.Memory``): the same tasks, the same lake.
# Measured (2 cores, loaded): 3M clean rows (205 MB) in memory 1.2 GB peak, about 3 CPU-seconds less
# than on disk (1.3 GB); the bench's shaped 10M rows (4.3 GB) on disk: 1.3 GB peak and 284 s with one
# task at a time, 1.9 GB and 221 s with two. ``IMPCREDIT_SCRATCH_IN_MEMORY_MB`` changes the size (0:
# always on disk), ``IMPCREDIT_INGEST_TASKS`` the tasks at once.
SCRATCH_IN_MEMORY_BYTES = 256 * 2**20
INGEST_TASKS = 2


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
    cluster: Executor | str | None = None,
    key_loader=None,
    layouts: Layouts | None = None,
    memory_up_to_bytes: int = SCRATCH_IN_MEMORY_BYTES,
    tasks: int = INGEST_TASKS,
    limits: Limits | None = None,
) -> IngestReport:
    """Ingest a submission folder into the workdir's lake (``<workdir>/lake``, or where
    ``store.location`` says; idempotent; corrected files replace).

    ``engine`` evaluates the validation suites: ``"polars"`` (the suites compiled to Polars
    expressions, vectorised; the default) or ``"gx"`` (Great Expectations Core on pandas, file by
    file; needed for Data Docs, so the default when ``docs_dir`` is given).

    ``layouts``: the payroll profiles in effect (``profile_files.load_profiles``; None: the shipped
    ones). On this process: ``tasks`` at a time, the scratch area in memory for a submission up to
    ``memory_up_to_bytes`` (on disk above it). ``limits``: what one file may hold
    (``line_limits.Limits``: a line's bytes, a workbook sheet's XML; None: the defaults).

    ``cluster``: where the tasks run (``executors.Executor``, or its address): this process's threads
    by default, or the workers of a Dask scheduler (the same lake, byte for byte), each loading the
    ssn hash key with ``key_loader`` (given by the edge: ``flows._env.hash_key``), which must give ``key`` (checked by
    its fingerprint; never sent).
    """
    from filelock import FileLock

    root = Path(input_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    lake = lk.lake_dir(workdir)
    if storage.is_remote(lake):
        lake.mkdir(parents=True, exist_ok=True)
    else:
        private.make_dir(lake)  # 0700 when made here (issue 43)
    now_utc = _now_utc(now)
    engine = engine or ("gx" if docs_dir is not None else "polars")
    if engine not in ENGINES:
        raise ValueError(f"unknown validation engine {engine!r}; known: {', '.join(ENGINES)}")
    if engine == "polars" and docs_dir is not None:
        raise ValueError("Data Docs are written by the gx validation engine only")
    if cluster and docs_dir is not None:
        raise ValueError("Data Docs are written on one machine: validate with the polars engine on a Dask cluster "
                         "(--validation-engine polars), or run without the cluster for Data Docs")
    executor = Executor.of(cluster)
    if tasks < 1:
        raise ValueError(f"tasks at once must be 1 or more, not {tasks}")
    if executor.address is None:  # this process: one task at a time for gx (its context is not shared across threads)
        executor = Executor(None, 1 if engine == "gx" else tasks, executor.worker_wait_s)
    in_memory = executor.address is None and _submission_bytes(root, Path(workdir)) <= memory_up_to_bytes
    with FileLock(lk.lock_path(lake, workdir), mode=private.FILE_MODE):
        return ingest_with(executor, root, Path(workdir), lake, key, now_utc, engine, [Path(workdir)], key_loader,
                           PIECE_BYTES, BATCH_BYTES, docs_dir=Path(docs_dir) if docs_dir else None, in_memory=in_memory,
                           layouts=layouts, limits=limits)


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
