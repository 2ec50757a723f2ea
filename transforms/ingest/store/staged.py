"""The rows an ingest on the staged route (``ingest.cluster``) keeps for a moment in the run's
staging area (``<lake>/_staging/<token>/``): written by one task, read by the next, removed
when the run ends; never part of the lake."""

from __future__ import annotations

import polars as pl

from transforms import storage
from transforms.ingest.store.lake_files import write_ipc_atomic, write_parquet_atomic


def ext(stage) -> str:
    """The staged rows' format: Arrow IPC, uncompressed, in a local folder (far cheaper than Parquet
    to write and read back); Parquet in an object store."""
    return ".parquet" if storage.is_remote(stage) else ".arrow"


def put(frame: pl.DataFrame, path) -> None:
    if path.name.endswith(".arrow"):
        write_ipc_atomic(frame, path)
    else:
        write_parquet_atomic(frame, path)


def get(path, columns: list[str] | None = None, lazy: bool = False):
    if path.name.endswith(".arrow"):
        if lazy:
            return pl.scan_ipc(path)
        return pl.read_ipc(path, columns=columns)
    return storage.scan_parquet(path) if lazy else storage.read_parquet(path, columns=columns)
