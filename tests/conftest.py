"""Shared fixtures. Prefect's home and settings are set before Prefect is first imported."""

from __future__ import annotations

import logging
import os
import tempfile

_PREFECT_HOME = tempfile.mkdtemp(prefix="impcredit-prefect-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.pop("PREFECT_API_URL", None)
# CLI runs in the tests use Prefect's test harness (its temporary server), not the shared local API
os.environ["IMPCREDIT_API"] = "temporary"

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect test server for the session (real flows, a temporary database)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="module")
def endpoint():
    """moto's S3 server in this process, on a free port of the loopback."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()
