"""The rows an ingest keeps for a moment between its tasks, in the run's scratch area: written by
one task, read by the next, dropped when the run ends; never part of the lake.

The area is ``<lake>/_scratch/<token>/`` (a folder every worker sees, or an object store's prefix)
for a Dask cluster and for a submission too big for memory; for the in-process executor on a
smaller submission it is ``Memory``, this process's own memory: the same tasks, the same bytes
in the lake, no file written or read back."""

from __future__ import annotations

import threading

import polars as pl

from transforms import storage
from transforms.ingest.store.lake_files import write_ipc_atomic, write_parquet_atomic


class Memory:
    """A scratch area in this process's memory, addressed like a folder (``area / "map/f1.arrow"``)."""

    def __init__(self, frames: dict[str, pl.DataFrame] | None = None, key: str = "") -> None:
        self.frames = {} if frames is None else frames
        self.key = key
        self._lock = threading.Lock()

    def __truediv__(self, rel: str) -> Memory:
        out = Memory(self.frames, f"{self.key}/{rel}".strip("/"))
        out._lock = self._lock
        return out

    @property
    def name(self) -> str:
        return self.key.rpartition("/")[2]

    def put(self, frame: pl.DataFrame) -> None:
        with self._lock:
            self.frames[self.key] = frame

    def get(self) -> pl.DataFrame:
        with self._lock:
            return self.frames[self.key]

    def delete(self) -> None:
        with self._lock:
            self.frames.pop(self.key, None)

    def clear(self) -> None:
        with self._lock:
            self.frames.clear()

    def drop(self, prefix: str) -> None:
        """Let go of the rows under ``prefix`` (read by every task that needs them)."""
        with self._lock:
            for k in [k for k in self.frames if k.startswith(prefix)]:
                del self.frames[k]

    def __str__(self) -> str:
        return f"memory:{self.key}"


def is_memory(area) -> bool:
    return isinstance(area, Memory)


def ext(stage) -> str:
    """The staged rows' format: Arrow IPC, uncompressed, in a local folder (far cheaper than Parquet
    to write and read back); Parquet in an object store; frames as they are in memory."""
    return ".parquet" if storage.is_remote(stage) else ".arrow"


def put(frame: pl.DataFrame, path) -> None:
    if is_memory(path):
        path.put(frame)
    elif path.name.endswith(".arrow"):
        write_ipc_atomic(frame, path)
    else:
        write_parquet_atomic(frame, path)


def get(path, columns: list[str] | None = None, lazy: bool = False):
    if is_memory(path):
        frame = path.get()
        frame = frame.select(columns) if columns is not None else frame
        return frame.lazy() if lazy else frame
    if path.name.endswith(".arrow"):
        if lazy:
            return pl.scan_ipc(path)
        return pl.read_ipc(path, columns=columns)
    return storage.scan_parquet(path) if lazy else storage.read_parquet(path, columns=columns)
