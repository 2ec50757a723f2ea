"""What a killed run leaves behind, removed by the next one: its folders in the system's temporary
folder (a lake part or an output being uploaded to an object store, the outputs staged for one, a
PDF being rendered) and its unfinished multipart uploads in the object store.

Every temporary folder a run makes is named ``impcredit-<kind>-<pid>-...`` (``temp_dir``): the
next run removes those whose process is gone (``remove_temp``), never a live run's. An unfinished
upload under the lake's prefix (one run at a time per workdir: the lock) or the outputs' prefix
that began before this run is a killed run's: aborted (``abort_uploads``)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "impcredit-"
_OWNED = re.compile(rf"^{PREFIX}[a-z]+-(\d+)-")


def temp_dir(kind: str) -> tempfile.TemporaryDirectory:
    """A temporary folder of this process (``impcredit-<kind>-<pid>-...``), removed when done."""
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{kind}-{os.getpid()}-")


def temp_path(kind: str, name: str) -> Path:
    """A temporary folder's path of this process, named ``impcredit-<kind>-<pid>-<name>`` (not made)."""
    return Path(tempfile.gettempdir()) / f"{PREFIX}{kind}-{os.getpid()}-{name}"


def _alive(pid: int) -> bool:
    import psutil

    return psutil.pid_exists(pid)


def remove_temp(root: Path | None = None) -> list[Path]:
    """The temporary folders of runs whose process is gone, removed (``root``: the system's
    temporary folder). Returns them."""
    root = Path(root or tempfile.gettempdir())
    gone = []
    with contextlib.suppress(OSError):
        for d in root.iterdir():
            m = _OWNED.match(d.name)
            if m and d.is_dir() and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
                shutil.rmtree(d, ignore_errors=True)
                gone.append(d)
    return gone


def abort_uploads(places: list, before: dt.datetime) -> int:
    """The unfinished multipart uploads under each object-store place of ``places`` (``storage.ObjectPath``;
    local folders are passed over) that began before ``before``, aborted. Returns how many."""
    from transforms import storage

    n = 0
    for loc in places:
        if not storage.is_remote(loc) or loc.scheme != "s3":
            continue
        client = storage.s3_client()
        prefix = loc.path.partition("/")[2].rstrip("/") + "/"
        kw = {"Bucket": loc.bucket, "Prefix": prefix}
        while True:
            got = client.list_multipart_uploads(**kw)
            for u in got.get("Uploads", []):
                if u["Initiated"] < before:
                    client.abort_multipart_upload(Bucket=loc.bucket, Key=u["Key"], UploadId=u["UploadId"])
                    n += 1
            if not got.get("IsTruncated"):
                return n
            kw.update(KeyMarker=got.get("NextKeyMarker"), UploadIdMarker=got.get("NextUploadIdMarker"))
    return n


def clean(places: list, started: dt.datetime) -> str | None:
    """What killed runs left, removed before this run (begun at ``started``) writes: one line
    saying what was removed, or None."""
    folders = remove_temp()
    uploads = abort_uploads(places, started)
    if not folders and not uploads:
        return None
    return (f"removed what killed runs left: {len(folders)} temporary folder(s), {uploads} unfinished upload(s) "
            "in the object store")
