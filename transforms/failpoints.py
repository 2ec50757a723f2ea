"""Named points where a run can be killed on purpose, to test crash safety (SIGKILL, no cleanup).

``IMPCREDIT_FAILPOINT=<name>`` kills the process with SIGKILL when it reaches that point. Unset
(always, outside tests), :func:`hit` does nothing.
"""

from __future__ import annotations

import os
import signal

POINTS = ("staged", "computed", "outputs_written", "committed", "published_partly")


def hit(name: str) -> None:
    if os.environ.get("IMPCREDIT_FAILPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
