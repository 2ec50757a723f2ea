"""A second process for a run's many pages (certificates, notices).

Rendering a page (Jinja) and creating its file is Python's work, one core's: 20,000 notices take
about 5 s here. ``Helper`` starts a plain subprocess (``python -m transforms.products.render_helper``:
it imports the templates' module, not the run's) when a run has many pages; ``_html.render_many``
sends it half of a template's pages (pickled on its stdin, by a thread, so this process goes on
with its own half at once) and waits for its one-line answer. The pages are the same files whichever
process writes them. Nothing the helper does can fail a run or lose a page: a helper that could not
start, died or answered an error leaves its pages to this process, which renders them itself (and
so raises the template's own error, if that was it). ``render_helper = false`` in the run's settings
(``DocumentOptions``; ``IMPCREDIT_RENDER_HELPER=0``) turns it off.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from pathlib import Path

# fewer pages than this: the helper's start (0.7 s: Python and the products' imports) is not repaid
# (measured: 2,729 pages took 1.1-1.8 s with it or without; 26,887 pages 9.6 s without, 7.0 s with)
MIN_PAGES = 5000
_LEN = struct.Struct("<Q")


def wanted(pages: int, allowed: bool = True) -> bool:
    """Whether a run of ``pages`` pages starts a helper (``allowed``: the run's settings allow it)."""
    return allowed and pages >= MIN_PAGES and (os.cpu_count() or 1) > 1


class Job:
    """Pages handed to the helper: ``done()`` is whether it wrote them all."""

    def __init__(self, helper: Helper, blob: bytes):
        self.helper, self.ok = helper, None
        self._sent = threading.Thread(target=helper.send, args=(blob,), daemon=True)
        self._sent.start()

    def done(self) -> bool:
        self._sent.join()
        if self.ok is None:
            self.ok = self.helper.answer()
        return self.ok


class Helper:
    """One helper process for the pages of a run (a context manager: it is stopped on leaving)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.broken = False
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            self.broken = True

    def __enter__(self) -> Helper:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def submit(self, template: str, pages: list[tuple[Path, dict]]) -> Job | None:
        """Hand ``pages`` to the helper; None when it is not there (this process renders them)."""
        if self.broken or self.proc is None:
            return None
        return Job(self, pickle.dumps((template, pages), protocol=pickle.HIGHEST_PROTOCOL))

    def send(self, blob: bytes) -> None:
        try:
            self.proc.stdin.write(_LEN.pack(len(blob)))
            self.proc.stdin.write(blob)
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.broken = True

    def answer(self) -> bool:
        if self.broken:
            return False
        try:
            line = self.proc.stdout.readline()
        except (OSError, ValueError):
            line = b""
        if line.strip() != b"ok":
            self.broken = True  # died, or a page failed there: this process renders (and says why)
            return False
        return True

    def close(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def _serve() -> None:
    """The helper's loop: a job in (length, pickle), its pages rendered and written, ``ok`` out."""
    import gc

    from transforms.products._html import write_pages

    gc.disable()  # tens of thousands of small contexts: no collection is worth its time here
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    sys.stdout = sys.stderr  # nothing else may write to the answers' pipe
    while head := inp.read(_LEN.size):
        template, pages = pickle.loads(inp.read(_LEN.unpack(head)[0]))
        try:
            write_pages(template, pages)
            answer = b"ok\n"
        except Exception as exc:  # noqa: BLE001 - said to the run, which renders these pages itself
            answer = f"error {type(exc).__name__}\n".encode()
        out.write(answer)
        out.flush()


if __name__ == "__main__":
    _serve()
