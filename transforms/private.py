"""Private by default (issue 43): the workdir's folders (lake, ledger, Prefect home) made 0700 and its files 0600.

With the ssn hash key, anyone who reads the lake recovers ssns by hashing candidates; a folder
made here is its owner's alone whatever the umask, and so is each file written into it
(``lake_files._atomic``, the ledger, the locks). A folder that exists is left as it is (its
owner chose its mode); outputs meant to be shared are not written through here (they keep the
umask and hold no ssn).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_dir(path: str | os.PathLike) -> Path:
    """``path`` and each missing parent created 0700 (an existing folder is left as it is)."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for p in reversed(missing):
        try:
            p.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            os.chmod(p, DIR_MODE)  # mkdir's mode passes through the umask: said again
    return path


def own(path: str | os.PathLike) -> None:
    """The file ``path`` its owner's alone (0600), when it is there (best effort)."""
    with contextlib.suppress(OSError):
        os.chmod(path, FILE_MODE)
