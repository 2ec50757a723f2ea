"""Environment for Prefect, set before Prefect is first imported (see stack notes).

An embedded (ephemeral) Prefect API is started in-process when PREFECT_API_URL is not set;
PREFECT_HOME defaults to ``data/.prefect`` under the repository so nothing is written to ~.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DASK_HELP = ("Run the ingest (files read, validated and written to the lake by the workers) and the "
             "per-employer-batch credit computation on this Dask scheduler (env IMPCREDIT_DASK_ADDRESS; the workers "
             "need the ssn hash key, the profiles and the input folder: README, Dask).")
WORKERS_HELP = ("Start a local Dask cluster of N worker processes (a thread each) for this command and run the ingest "
                "and the credit computation on it (as --dask-address does).")


def quiet() -> None:
    """No telemetry from a Prefect process the project starts (an offline machine logs every failed
    send): the client's (``DO_NOT_TRACK``) and the server's (``prefect.toml`` at the repository's
    root says the same for a ``prefect server start`` run there)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


_DEFAULTED: set[str] = set()  # the settings configure() chose (none was set)
HEARTBEAT_S = 60  # a deployment's flow runs' heartbeat interval (flows/zombies.py)


def for_deployment() -> None:
    """A deployment's processes (the serving process, the worker, the flow runs they start) log at
    INFO in Prefect: a flow run's logs are what its operator reads (the CLI keeps Prefect at
    WARNING and prints its own lines); their flow runs send a heartbeat every ``HEARTBEAT_S``
    seconds. Before Prefect is imported; an operator's ``PREFECT_LOGGING_LEVEL`` and heartbeat
    interval stand."""
    if "PREFECT_LOGGING_LEVEL" in _DEFAULTED:
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
    # every flow run beats (the zombie-detection automation marks one that stops Crashed:
    # flows/zombies.py), every HEARTBEAT_S seconds unless the operator set an interval
    if not os.environ.get("PREFECT_FLOWS_HEARTBEAT_FREQUENCY") and not os.environ.get("PREFECT_RUNNER_HEARTBEAT_FREQUENCY"):
        os.environ["PREFECT_FLOWS_HEARTBEAT_FREQUENCY"] = str(HEARTBEAT_S)


def configure() -> None:
    os.environ.setdefault("PREFECT_HOME", str(REPO_ROOT / "data" / ".prefect"))
    from transforms import private

    with contextlib.suppress(OSError):  # the Prefect home (its database holds the runs' records): 0700 when made here
        private.make_dir(os.environ["PREFECT_HOME"])
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    quiet()
    if "PREFECT_LOGGING_LEVEL" not in os.environ:  # the CLI prints its own lines: Prefect's quiet
        os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
        _DEFAULTED.add("PREFECT_LOGGING_LEVEL")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")  # (before Great Expectations is imported)
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    from transforms import failpoints

    failpoints.arm(os.environ.get("IMPCREDIT_FAILPOINT"))  # crash tests only


configure()


KEY_BLOCK_ENV = "IMPCREDIT_HMAC_KEY_BLOCK"


def invoked_at() -> float | None:
    """When the ``impcredit`` command started (epoch seconds; ``flows.cli.app.main`` sets
    ``IMPCREDIT_INVOKED_AT`` for the command and what it starts), or None."""
    try:
        return float(os.environ["IMPCREDIT_INVOKED_AT"])
    except (KeyError, ValueError):
        return None


def executor(dask_address: str | None, cfg=None):
    """Where a run's ingest tasks go: the Dask cluster at ``dask_address`` (watched for the settings'
    ``worker_wait_s``; its address answers within ``dask_connect_s``), else this process (None)."""
    from flows.settings import run_settings
    from transforms.ingest.executors import Executor

    if not dask_address:
        return None
    cfg = cfg or run_settings()
    return Executor(dask_address, worker_wait_s=cfg.worker_wait_s, connect_wait_s=cfg.dask_connect_s)


def dask_problem(address: str) -> str | None:
    """Why no Dask scheduler answers at ``address`` within the setting ``dask_connect_s`` (one
    line naming the address and what is there), or None when one does."""
    from flows.settings import run_settings
    from transforms.ingest.executors import ClusterError, probe

    try:
        probe(address, run_settings().dask_connect_s)
    except ClusterError as exc:
        return str(exc)
    return None


def stage(input_dir: Path, workdir: Path, cfg, *, data_docs: bool = False, dask_address: str | None = None,
          out_dir=None):
    """The run's inputs staged through the ingest (``runs.inputs.stage_inputs``) with the settings
    ``cfg`` (``flows.settings.RunSettings``): its profiles, its ingest options; on a Dask cluster each
    worker reads the ssn hash key itself (``hash_key``). The key is read here, where it is used.
    What killed runs left (temporary folders, unfinished uploads under the lake and ``out_dir``) is
    removed first."""
    import datetime as dt

    from transforms import leftovers, storage
    from transforms.ingest.read.layouts.profile_files import load_profiles
    from transforms.ingest.store.location import lake_dir
    from transforms.runs import annual as steps

    said = leftovers.clean([lake_dir(workdir), *([storage.location(out_dir)] if out_dir is not None else [])],
                           dt.datetime.now(dt.UTC))
    if said:
        logging.getLogger("impcredit.stages").info("cleanup: %s", said)

    on_cluster = {"cluster": executor(dask_address, cfg), "key_loader": hash_key} if dask_address else {}
    return steps.stage_inputs(input_dir, workdir, hash_key(), data_docs=data_docs, layouts=load_profiles(cfg.profiles),
                               options=cfg.ingest(), **on_cluster)


def one_key(workdir: Path, records: tuple[str, ...] = (), *, ledger: bool = True) -> str | None:
    """Before a command reads the workdir (its ledger, its lake): the key is the one they were
    written with (``transforms.one_key.check``; ``KeyChanged``, one line, when not); ``records``:
    what the command writes (``"ledger"``, ``"lake"``); ``ledger``: False to look at the lake
    alone, a command's first look before its flow starts (none with a Secret block: the flow reads
    it on its API). What a workdir written before fingerprints takes is said once (a stage line),
    and returned."""
    from transforms import one_key as ok
    from transforms.ingest.store.location import lake_dir

    if not ledger and os.environ.get(KEY_BLOCK_ENV):
        return None

    said = ok.check(Path(workdir), lake_dir(workdir), hash_key(), records=records, ledger=ledger)
    if said:
        logging.getLogger("impcredit.stages").warning("key: %s", said)
    return said


def run_tags(run_id: str) -> list[str]:
    """The tags of a flow run: ``impcredit``, its kind and its tax year (``annual``, ``tax-year-2023``)."""
    parts = run_id.split("-")
    year = next((p for p in parts[1:] if len(p) == 4 and p.isdigit()), None)
    return ["impcredit", parts[0]] + ([f"tax-year-{year}"] if year and parts[0] != "backfill" else [])


def name_flow_run(run_id: str) -> str | None:
    """Name the current flow run by impcredit's run id (known once the inputs are hashed) and tag it
    (``run_tags``), so the Prefect UI and API list runs as the ledger does; the flow run's id."""
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    if not flow_run.id:
        return None
    try:
        with get_client(sync_client=True) as client:
            tags = sorted({*(flow_run.tags or []), *run_tags(run_id)})
            client.update_flow_run(flow_run.id, name=run_id, tags=tags)
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


def load_key(env=None):
    """The ssn hash key of the environment ``env`` (default this process's): ``IMPCREDIT_HMAC_KEY``
    (the key itself) or ``IMPCREDIT_HMAC_KEY_FILE`` (a file holding it, readable by its owner
    alone), else the built-in demo key. ``IMPCREDIT_REQUIRE_KEY=1`` refuses the demo key, and the
    demo key's text given as the key (``pii.key_of``)."""
    from transforms.pii import KeyError_, demo_key, key_of

    env = os.environ if env is None else env
    if env.get("IMPCREDIT_HMAC_KEY"):
        key = key_of(env["IMPCREDIT_HMAC_KEY"].encode(), "env")
    elif env.get("IMPCREDIT_HMAC_KEY_FILE"):
        key = key_of(read_key_file(Path(env["IMPCREDIT_HMAC_KEY_FILE"])), f"file:{env['IMPCREDIT_HMAC_KEY_FILE']}")
    else:
        key = demo_key()
    if key.is_demo and env.get("IMPCREDIT_REQUIRE_KEY") == "1":
        given = env.get("IMPCREDIT_HMAC_KEY") or env.get("IMPCREDIT_HMAC_KEY_FILE")
        raise KeyError_("no ssn hash key" + (" (the built-in demo key's text was given as the key)" if given else "")
                        + ": set IMPCREDIT_HMAC_KEY or IMPCREDIT_HMAC_KEY_FILE (IMPCREDIT_REQUIRE_KEY=1 forbids the "
                        "built-in demo key)")
    return key


def read_key_file(path: Path) -> bytes:
    """The key file's text (stripped): refused when others than its owner may read or write it
    (issue 43: with the key, every hashed ssn is recovered by trying the 10^9 numbers)."""
    import stat

    from transforms.pii import KeyError_

    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise KeyError_(f"the ssn hash key file {path} (IMPCREDIT_HMAC_KEY_FILE) is open to other accounts (mode "
                            f"{mode:04o}): make it its owner's alone, chmod 600 {path}")
        return path.read_bytes().strip()
    except OSError as exc:
        raise KeyError_(f"cannot read the ssn hash key file {path}: {exc.strerror}") from None


def hash_key():
    """The ssn hash key, read where it is used (a task, a Dask worker), never passed as a parameter.

    ``IMPCREDIT_HMAC_KEY_BLOCK=<name>``: a Prefect Secret block of a configured server holds it;
    otherwise ``load_key`` (environment, key file, or the demo key).
    """
    from transforms.pii import KeyError_, key_of

    block = os.environ.get(KEY_BLOCK_ENV)
    if not block:
        return load_key()
    from prefect.blocks.system import Secret

    try:
        value = Secret.load(block).get()
    except (ValueError, RuntimeError) as exc:
        raise KeyError_(f"cannot load the Prefect Secret block {block!r} holding the ssn hash key: {exc}") from None
    return key_of(str(value).encode(), f"block:{block}")


DEMO_KEY_REFUSED = ("no ssn hash key: a deployment refuses the built-in demo key; set IMPCREDIT_HMAC_KEY_FILE to a file "
                    "holding the key (at least 32 characters, outside the repository) in the environment of the worker "
                    "or the serving process")


def require_real_key() -> None:
    """A deployment (served, or run by a worker) hashes ssns with a real key, never the built-in
    demo key: the key is loaded (and dropped: the staging task reads it again where it is used) to
    see where it comes from. ``KeyError_``: the demo key (``DEMO_KEY_REFUSED``), or a key file that
    cannot be read or is too short."""
    from transforms.pii import KeyError_

    if hash_key().is_demo:
        raise KeyError_(DEMO_KEY_REFUSED)


def outputs_markdown(title: str, summary, lines: list[str]) -> str:
    """A run's Prefect artifact: its id, what it decided and links to its outputs (file URLs of the
    run page, award file, manifest and the rest of what it wrote)."""
    from pathlib import Path

    from transforms import storage

    md = [f"## {title}", "", f"Run `{summary.run_id}`", ""] + [f"- {x}" for x in lines] + ["", "### Outputs", ""]
    names = ("index.html", "awards.csv", "held.csv", "changes.csv", "estimates.csv", "diff.csv", "manifest.json")
    if storage.is_url(summary.out_dir):  # an object store: its URLs, as the run wrote them
        written = {str(p) for p in summary.outputs}
        md += [f"- {n}: `{summary.out_dir}/{n}`" for n in names if f"{summary.out_dir}/{n}" in written]
        md.append(f"- the output folder: `{summary.out_dir}` ({len(summary.outputs)} files)")
        return "\n".join(md) + "\n"
    out = Path(summary.out_dir)
    first = [n for n in names if (out / n).is_file()]
    md += [f"- [{n}]({(out / n).as_uri()})" for n in first]
    md.append(f"- [the output folder]({out.as_uri()}) ({len(summary.outputs)} files)")
    return "\n".join(md) + "\n"
