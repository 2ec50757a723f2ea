"""Environment for Prefect, set before Prefect is first imported (see stack notes).

An embedded (ephemeral) Prefect API is started in-process when PREFECT_API_URL is not set;
PREFECT_HOME defaults to ``data/.prefect`` under the repository so nothing is written to ~.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DASK_HELP = "Run the per-employer-batch credit computation on this Dask scheduler (env IMPCREDIT_DASK_ADDRESS)."


def configure() -> None:
    os.environ.setdefault("PREFECT_HOME", str(REPO_ROOT / "data" / ".prefect"))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)


configure()


KEY_BLOCK_ENV = "IMPCREDIT_HMAC_KEY_BLOCK"


def name_flow_run(run_id: str) -> str | None:
    """Name the current flow run by impcredit's run id (known once the inputs are hashed), so the
    Prefect UI and API list runs as the ledger does; returns the flow run's id."""
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    if not flow_run.id:
        return None
    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run(flow_run.id, name=run_id)
    except Exception:  # a name is a convenience: never a reason for a run to fail
        logging.getLogger("impcredit").debug("could not rename flow run %s", flow_run.id, exc_info=True)
    return str(flow_run.id)


def forward_stage_lines() -> None:
    """The run's stage lines (``transforms.stages``) go to the flow run's logs in Prefect (the
    API only: the CLI prints them itself)."""
    from prefect.logging.handlers import APILogHandler

    log = logging.getLogger("impcredit.stages")
    if not any(isinstance(h, APILogHandler) for h in log.handlers):
        log.addHandler(APILogHandler())
        log.setLevel(logging.INFO)


def hash_key():
    """The ssn hash key, read where it is used (a task), never passed as a parameter.

    ``IMPCREDIT_HMAC_KEY_BLOCK=<name>``: a Prefect Secret block of a configured server holds it;
    otherwise ``transforms.pii.load_key`` (environment, key file, or the demo key).
    """
    from transforms.pii import HashKey, KeyError_, load_key

    block = os.environ.get(KEY_BLOCK_ENV)
    if not block:
        return load_key()
    from prefect.blocks.system import Secret

    try:
        value = Secret.load(block).get()
    except (ValueError, RuntimeError) as exc:
        raise KeyError_(f"cannot load the Prefect Secret block {block!r} holding the ssn hash key: {exc}") from None
    key = str(value).encode()
    if len(key) < 32:
        raise KeyError_("the ssn hash key must be at least 32 characters long")
    return HashKey(key, f"block:{block}")
