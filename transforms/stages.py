"""The run tells its story: one line per stage with its counts and elapsed time.

    with stage("credits") as s:
        ...
        s.say(f"{n:,} employee-years ({m:,} eligible)")

logs ``credits: 4,321 employee-years (1,234 eligible) (0.8 s)`` on the ``impcredit.stages``
logger. The CLI shows these lines (a live status on a terminal, plain lines in a pipe); flows
send them to Prefect's run logs as well. No Prefect here.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass

LOG = logging.getLogger("impcredit.stages")


@dataclass
class Stage:
    name: str
    started: float
    text: str = ""

    def say(self, text: str) -> None:
        self.text = text


    def done(self) -> None:
        """Log the stage's line (``stage`` does it when its block ends without an error)."""
        LOG.info("%s: %s (%.1f s)", self.name, self.text or "done", time.monotonic() - self.started)


def start(name: str) -> Stage:
    """A stage begun now; ``done()`` logs it (for a stage that spans a long function body)."""
    LOG.debug("%s ...", name)
    return Stage(name, time.monotonic())


@contextmanager
def stage(name: str):
    """Time a stage; its line is logged when the block ends without an error."""
    s = start(name)
    yield s
    s.done()
