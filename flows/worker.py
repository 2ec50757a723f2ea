"""Prefect's process worker for the deployments of ``prefect.yaml``, stopping on one SIGTERM.

    .venv/bin/python -m flows.worker --pool impcredit [any option of `prefect worker start`]

It is ``prefect worker start`` (the same options) with two differences:

- one SIGTERM stops it. Prefect's worker turns its first SIGTERM into a SIGINT to itself and
  expects that SIGINT to raise ``KeyboardInterrupt``; a process started in the background by a
  non-interactive shell (``cmd &`` in a script) inherits SIGINT *ignored*, so that SIGINT does
  nothing and only a second SIGTERM (forwarded as SIGKILL) ends it. Here SIGINT gets Python's
  default handler back before Prefect's CLI starts, so the first SIGTERM stops the worker as
  Ctrl-C does (and, as with Ctrl-C, the flow runs it started stop with it: stop it between runs);
- it refuses to start while the deployments ``flows/serve.py`` serves are active (their
  schedules would run twice: docs/scheduling.md);
- it makes sure the server has the zombie-detection automation (``flows.zombies``): a flow run
  whose worker died is marked Crashed once its heartbeats stop, not left Running.

The flow runs it starts inherit its environment: ``IMPCREDIT_INPUT``, ``IMPCREDIT_WORKDIR``,
``IMPCREDIT_OUT``, ``IMPCREDIT_HMAC_KEY_FILE``, ... are read by each run when it starts.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # flows.serve sets the project's Prefect environment (flows._env) before Prefect is imported
    from flows import serve

    clash = serve.active_elsewhere("worker")
    if clash:
        print(clash, file=sys.stderr)
        return 2
    from flows import zombies

    print(zombies.ensure(), file=sys.stderr)  # a run whose worker dies is marked Crashed, not left Running
    from prefect.cli import app

    sys.argv = ["prefect", "worker", "start", *argv]
    return app()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
