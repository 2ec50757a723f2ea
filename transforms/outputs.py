"""Writing outputs safely: neutralised CSV cells, atomic files, a staging folder moved into
place only after the ledger commits (or uploaded to an object store, ``manifest.json`` last), and
file hashes for manifests."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from transforms import failpoints, leftovers, storage

_FORMULA_START = r"^[=+\-@\t\r]"
# characters XML 1.0 does not allow (C0 controls but tab, LF and CR; U+FFFE, U+FFFF; lone
# surrogates): each written as U+FFFD, so that every XML an output holds (awards.xlsx, the
# charts) parses, whatever text reaches it (input rejects them first: spec section 1)
XML_INVALID = "[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]"
XML_INVALID_POLARS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x{FFFE}\x{FFFF}]"


_XML_INVALID_RE = re.compile(XML_INVALID)


def xml_safe(text: str) -> str:
    """``text`` with what XML 1.0 cannot carry replaced by U+FFFD. Printable ASCII (most text:
    ids, names, amounts) holds none of it and is returned as it is, without a regex pass (the
    notices of 20,000 applications call this about 1.2 million times)."""
    if text.isascii() and text.isprintable():
        return text
    return _XML_INVALID_RE.sub("\ufffd", text)


def neutralise(frame: pl.DataFrame) -> pl.DataFrame:
    """Prefix ' to any text cell that a spreadsheet would read as a formula (= + - @ tab CR)."""
    text = [c for c, t in frame.schema.items() if t == pl.String]
    return frame.with_columns(
        pl.when(pl.col(c).str.contains(_FORMULA_START)).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in text
    )


def write_csv(frame: pl.DataFrame, path: Path, *, money_precision: int = 2) -> Path:
    """CSV with floats at 2 decimals (money and hours), formula cells neutralised, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    neutralise(frame).write_csv(tmp, float_precision=money_precision, null_value="")
    os.replace(tmp, path)
    return path


def write_json(obj: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class PendingOutputs:
    """Outputs of a run are written under ``<out>/.pending-<run_id>`` and moved into ``<out>``
    only when the block succeeds (after the ledger has committed inside it)::

        with PendingOutputs(out_dir, run_id) as staging:
            ...write to staging.path(name)..., commit
        staging.published  # the files now in out_dir

    An exception inside the block discards the staged files and publishes nothing.

    ``out_dir`` in an object store (``s3://bucket/prefix``): the staging folder is local (the
    system's temporary folder) and publishing uploads it (``upload_folder``): ``manifest.json``
    is taken away first and written last, so a folder without it is being written (or was left
    by a crash, which the next run's publish completes)."""

    def __init__(self, out_dir: Path | str, run_id: str):
        self.out_dir = storage.location(out_dir)
        if storage.is_remote(self.out_dir):
            self.dir = leftovers.temp_path("pending", run_id)
        else:
            self.dir = self.out_dir / f".pending-{run_id}"
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        self.published: list[Path] = []

    def __enter__(self) -> PendingOutputs:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.published = self.publish()
        else:
            self.discard()

    def path(self, name: str) -> Path:
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def files(self) -> list[Path]:
        return sorted(_walk_files(self.dir))

    def publish(self) -> list[Path]:
        """Move the staged files into place: a folder the output folder does not have yet is
        moved whole (one rename for thousands of notices); otherwise file by file."""
        if storage.is_remote(self.out_dir):
            try:
                return upload_folder(self.dir, self.out_dir)
            finally:  # uploaded or not (the ledger committed: the next run uploads them again)
                shutil.rmtree(self.dir, ignore_errors=True)
        moved: list[Path] = []

        def merge(src_dir: Path, dst_dir: Path) -> None:
            dst_dir.mkdir(parents=True, exist_ok=True)
            for entry in sorted(os.scandir(src_dir), key=lambda e: e.name):
                if entry.name.startswith("."):
                    continue
                src, dst = Path(entry.path), dst_dir / entry.name
                if entry.is_dir(follow_symlinks=False):
                    if dst.exists():
                        merge(src, dst)
                        continue
                    os.replace(src, dst)
                    moved.extend(_walk_files(dst))
                else:
                    os.replace(src, dst)
                    moved.append(dst)
                failpoints.hit("published_partly")

        merge(self.dir, self.out_dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        return sorted(moved)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _walk_files(root: Path) -> list[Path]:
    """Files under ``root`` (names starting with a dot skipped), by scandir: no stat per file."""
    out: list[Path] = []
    stack = [root]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                out.append(Path(entry.path))
    return out


MARKER = "manifest.json"  # in an object store, the object written last: the folder is complete


def upload_folder(src: Path, dst: storage.ObjectPath) -> list[storage.ObjectPath]:
    """Every file under ``src`` (names starting with a dot skipped) to the same names under
    ``dst``, ``MARKER`` deleted first and uploaded last: an object store has no rename, so the
    marker is the commit of the folder. A reader treats a folder without it as incomplete."""
    from concurrent.futures import ThreadPoolExecutor

    files = sorted(p.relative_to(src).as_posix() for p in _walk_files(src))
    (dst / MARKER).unlink(missing_ok=True)
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="upload") as pool:  # each file one PUT
        list(pool.map(lambda f: (dst / f).upload(src / f), [f for f in files if f != MARKER]))
    failpoints.hit("published_partly")
    if MARKER in files:
        (dst / MARKER).upload(src / MARKER)
    return [dst / f for f in files]


def clean_stale_pending(out_dir: Path | str) -> None:
    """Remove the pending folders left by runs that were killed before they committed (and the
    ``.staging-*`` folders of the releases before the name changed)."""
    out_dir = storage.location(out_dir)
    if storage.is_remote(out_dir):
        return  # pending in the system's temporary folder, named by its process (``leftovers``)
    if out_dir.is_dir():
        for d in [*out_dir.glob(".pending-*"), *out_dir.glob(".staging-*")]:
            shutil.rmtree(d, ignore_errors=True)
