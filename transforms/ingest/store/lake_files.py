"""Atomic files of the lake, and the record of what an ingest wrote (``lake_verify`` turns it
into checksums): every write goes to a temporary name in the same folder and is renamed into
place; in an object store (no rename) it goes to a local temporary file uploaded in one PUT,
which is the atomic step there (``transforms.storage``); a part about to be rewritten or deleted
is noted first (``intend``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import uuid
from pathlib import Path

import polars as pl

from transforms import leftovers, private
from transforms.storage import ObjectPath

# lz4: a third faster to write than zstd at 10M rows for files about 1.5 times larger (200 MB)
COMPRESSION = "lz4"


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")


# every path written since its lake last recorded checksums (``lake_verify.refresh`` takes them)
WRITTEN: set[Path] = set()
_WRITTEN_LOCK = threading.RLock()
# the sha256 of each lake part as written, taken from the local file before it is renamed or
# uploaded (by whichever process or worker wrote it), so the manifest records checksums without
# reading parts back; the scratch area's rows (``SCRATCH``) are not hashed: they never reach the lake
SUMS: dict[Path, str] = {}
SCRATCH = "_scratch"
INTENT = "_rewriting.json"  # listed parts an ingest is about to rewrite or delete (until its manifest is saved)


@contextlib.contextmanager
def _atomic(path: Path):
    """Yield a temporary name beside ``path``; renamed into place when the block succeeds (an
    object: a local temporary file, uploaded when the block succeeds)."""
    if isinstance(path, ObjectPath):
        with leftovers.temp_dir("lake") as tmpdir:
            tmp = Path(tmpdir) / path.name
            yield tmp
            _hash(tmp, path)
            path.upload(tmp)
        with _WRITTEN_LOCK:
            WRITTEN.add(path)
        return
    private.make_dir(path.parent)
    tmp = _tmp(path)
    try:
        yield tmp
        _hash(tmp, path.resolve())
        private.own(tmp)  # the lake's files are the agency's alone (issue 43), whatever the umask
        os.replace(tmp, path)
        with _WRITTEN_LOCK:
            WRITTEN.add(path.resolve())
    finally:
        tmp.unlink(missing_ok=True)


def _hash(tmp: Path, path: Path) -> None:
    if SCRATCH not in str(path):
        h = hashlib.sha256()
        with open(tmp, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
        with _WRITTEN_LOCK:
            SUMS[path] = h.hexdigest()


def take_sums(lake: Path) -> dict[str, str | None]:
    """The parts of ``lake`` written since the last call (relative paths) with their sha256 as
    written (None for the scratch area's files, never hashed), forgotten."""
    root = lake.resolve()
    with _WRITTEN_LOCK:
        mine = {p for p in WRITTEN if root in p.parents}
        WRITTEN.difference_update(mine)
        sums = {p: SUMS.pop(p, None) for p in mine}
    return {p.relative_to(root).as_posix(): s for p, s in sums.items()}


def intend(lake: Path, path: Path) -> None:
    """Note that the listed part ``path`` of ``lake`` is about to be rewritten or deleted: an
    ingest that crashes before it saves the manifest leaves it changed, which is not damage
    (``lake_verify.check`` takes the note; the next ingest records its checksum again)."""
    if not path.exists():
        return
    rel = path.relative_to(lake).as_posix()
    with _WRITTEN_LOCK:
        now = intended(lake)
        if rel not in now:
            write_text_atomic(json.dumps(sorted(now | {rel})), lake / INTENT)


def intended(lake: Path) -> set[str]:
    """The parts an ingest noted it would rewrite or delete (``intend``), not yet recorded."""
    try:
        return set(json.loads((lake / INTENT).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return set()


def take_written(lake: Path) -> set[str]:
    """The parts of ``lake`` written since the last call (relative paths), forgotten."""
    root = lake.resolve()
    with _WRITTEN_LOCK:
        mine = {p for p in WRITTEN if root in p.parents}
        WRITTEN.difference_update(mine)
    return {p.relative_to(root).as_posix() for p in mine}


def write_parquet_atomic(frame: pl.DataFrame, path: Path) -> None:
    with _atomic(path) as tmp:
        frame.write_parquet(tmp, statistics=True, compression=COMPRESSION)


IPC_BATCH_ROWS = 2**12


def write_ipc_atomic(frame: pl.DataFrame, path: Path) -> None:
    """Arrow IPC, uncompressed, in record batches of ``IPC_BATCH_ROWS`` rows (the last one shorter):
    rows staged for a moment (``ingest.route``), not the lake's parts. The fixed batches let a
    reader take a range of rows reading only the batches that hold it (``store.ordered``)."""
    import pyarrow as pa

    table = frame.to_arrow()
    with _atomic(path) as tmp, pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=IPC_BATCH_ROWS)


def write_text_atomic(text: str, path: Path) -> None:
    with _atomic(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
