"""Counting bytes of a whole file, as the fast readers' checks do (``readers._check_bytes``,
``arrow_csv``): NumPy compares every byte at once, about twice as fast as ``bytes.count`` of one
byte here, and finds a CR outside a CRLF in one pass instead of counting both."""

from __future__ import annotations

import numpy as np


def count(data: bytes, byte: bytes) -> int:
    """``data.count(byte)`` for one byte."""
    return int(np.count_nonzero(np.frombuffer(data, np.uint8) == byte[0]))


def lone_cr(data: bytes) -> bool:
    """True when a CR of ``data`` is not followed by LF (``data.count(b"\\r") != data.count(b"\\r\\n")``)."""
    if b"\r" not in data:
        return False
    arr = np.frombuffer(data, np.uint8)
    at = np.flatnonzero(arr == 13)
    if at[-1] == arr.size - 1:
        return True
    return bool((arr[at + 1] != 10).any())
