"""Where a workdir's lake is: ``<workdir>/lake`` by default, or the place a deployment names
(``--lake``, ``IMPCREDIT_LAKE``, ``lake`` in ``impcredit.toml``): another local folder or an
object store (``s3://bucket/prefix``, ``transforms.storage``).

The workdir stays a local folder: it holds the ledger (``impcredit.duckdb``, one writer), the
locks and the other local state. A workdir keeps its ledger with one lake: the first command that
writes a lake elsewhere records it in ``<workdir>/lake.json``, every later command on the workdir
uses it without being told, and a command naming another lake is refused (the ledger's digests
and what changed since the last run are about that lake). Moving the lake is a deliberate step:
copy it, then write the new place in ``lake.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from transforms import private, storage

LAKE_RECORD = "lake.json"


class LakeLocationError(ValueError):
    """The lake named is not the workdir's (one ledger, one lake), or cannot be named."""


def recorded(workdir: Path) -> storage.Location | None:
    """The lake ``<workdir>/lake.json`` names, or None."""
    rec = Path(workdir) / LAKE_RECORD
    if not rec.is_file():
        return None
    try:
        return storage.location(json.loads(rec.read_text(encoding="utf-8"))["lake"])
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise LakeLocationError(f"{rec}: not the record of a lake ({exc}); write {{\"lake\": \"s3://bucket/prefix\"}} "
                                "or delete it to use <workdir>/lake") from None


def lake_dir(workdir: Path) -> storage.Location:
    """The workdir's lake: the one it recorded, else ``<workdir>/lake``."""
    return recorded(workdir) or Path(workdir) / "lake"


def _same(a: storage.Location, b: storage.Location) -> bool:
    if storage.is_remote(a) or storage.is_remote(b):
        return a == b
    return os.path.abspath(a) == os.path.abspath(b)


def use_lake(workdir: Path, given: str | None, *, record: bool) -> storage.Location:
    """The lake of ``workdir`` for a command given ``given`` (None: what the workdir uses).
    ``record``: the command writes the lake, so a new place is recorded in the workdir (call
    after ``storage_probe.probe`` passed: a place that cannot be used is never recorded)."""
    workdir = Path(workdir)
    default = workdir / "lake"
    before = recorded(workdir)
    if given is None or given == "":
        return before or default
    loc = storage.location(given)
    if not storage.is_remote(loc):
        loc = Path(os.path.abspath(loc))
    current = before or default
    if _same(loc, current):
        return current
    if before is not None or (default / "_manifest.json").is_file():
        raise LakeLocationError(
            f"the workdir {workdir} keeps its ledger with the lake {current}; this command names {loc}. One ledger, "
            f"one lake: give --lake {current} (or IMPCREDIT_LAKE), or move the lake there first (copy it, then write "
            f"{{\"lake\": \"{loc}\"}} in {workdir / LAKE_RECORD})")
    if record and not _same(loc, default):
        private.make_dir(workdir)
        tmp = workdir / f".{LAKE_RECORD}.tmp"
        tmp.write_text(json.dumps({"lake": str(loc)}) + "\n", encoding="utf-8")
        os.replace(tmp, workdir / LAKE_RECORD)
    return loc


def lock_path(lake: storage.Location, workdir: Path) -> str:
    """The file lock of one ingest at a time: in a local lake, beside it; for an object store, in
    the workdir (an object store has no lock: one workdir writes a lake)."""
    if storage.is_remote(lake):
        private.make_dir(workdir)
        return str(Path(workdir) / ".lake.lock")
    private.make_dir(lake)  # 0700 when made here (issue 43)
    return str(Path(lake) / ".lock")
