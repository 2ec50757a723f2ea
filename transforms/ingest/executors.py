"""Where the ingest's tasks run, chosen at the edge (the command line, a flow): this process's
threads (``Threads``: a ``ThreadPoolExecutor`` behind the four calls of Dask's client the route
uses) or the workers of a Dask cluster (``Executor.address``). The route (``ingest.route``) and the
tasks (``ingest.tasks``) are the same whichever it is.

On a cluster, a task's failure is the project's own error (``ClusterError``, one line): a worker
that died again and again (Dask's ``KilledWorker``), the scheduler gone, and a cluster that cannot
keep its workers: no task finished for ``worker_wait_s`` seconds while its workers were lost or
none was left, and the run ends by itself instead of waiting for ever. Nothing is committed then
(the lake's manifest is written last). A local cluster (``local_cluster``) whose workers die while
it starts is started again a bounded number of times, then the run goes on with the threads.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

LOCAL = "local"  # ``Executor("local:N")``: this process's threads, the scratch area on disk
WORKER_WAIT_S = 120.0  # default: how long a cluster may go without finishing a task while it loses its workers
CONNECT_WAIT_S = 10.0  # default: how long a scheduler's address may take to answer as a Dask scheduler
POLL_S = 1.0
START_TRIES = 3  # a local cluster whose workers die while it starts: started this many times, then the threads


class ClusterError(RuntimeError):
    """The cluster cannot be reached, or could not finish: one line; nothing was committed."""


@dataclass(frozen=True)
class Executor:
    """Where the tasks run: ``address`` None (this process's threads, ``tasks`` at a time), ``"local"``
    or ``"local:N"`` (the same, the scratch area on disk), or a Dask scheduler's address."""

    address: str | None = None
    tasks: int = 2
    worker_wait_s: float = WORKER_WAIT_S
    connect_wait_s: float = CONNECT_WAIT_S

    @classmethod
    def of(cls, spec: Executor | str | None, **kw) -> Executor:
        return spec if isinstance(spec, Executor) else cls(spec or None, **kw)

    @property
    def local(self) -> bool:
        """This process's threads (no Dask)."""
        return self.address is None or is_local(self.address)

    @property
    def threads(self) -> int:
        if self.address and is_local(self.address):
            return int(self.address.partition(":")[2] or 2)
        return self.tasks

    def __str__(self) -> str:
        return self.address or f"{LOCAL}:{self.tasks}"


def is_local(address: str) -> bool:
    """``local`` or ``local:N``: this process's threads, no Dask."""
    return address == LOCAL or address.startswith(LOCAL + ":")


class Threads:
    """``submit``/``gather``/``scheduler_info``/``close`` of ``distributed.Client`` over ``workers``
    threads of this process; a task's exception is raised by ``gather`` as it is."""

    def __init__(self, workers: int = 2) -> None:
        self.workers = max(1, int(workers))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ingest-local")

    def submit(self, fn, *args, pure: bool = False, **kwargs) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def gather(self, futures: list[Future]) -> list:
        return [f.result() for f in futures]

    def scheduler_info(self) -> dict:
        return {"workers": {f"local-{i}": {"nthreads": 1} for i in range(self.workers)}}

    def close(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=True)


def probe(address: str, wait_s: float = CONNECT_WAIT_S) -> None:
    """``ClusterError`` (one line naming the address and what was found there) unless a Dask
    scheduler answers Dask's handshake at ``address`` within ``wait_s`` seconds: Dask's own
    handshake has no deadline, so an HTTP port (the dashboard's) or a port that accepts and never
    answers would keep a run waiting for ever. Addresses of other schemes than tcp are left to Dask."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect as dask_connect

    scheme, sep, rest = address.partition("://")
    if sep and scheme != "tcp":
        return
    host, _, port = (rest if sep else address).rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--dask-address {address} is not a Dask scheduler's address (tcp://HOST:PORT)")

    host = host.strip("[]")
    try:  # refused, unknown host: said at once
        socket.create_connection((host, int(port)), timeout=wait_s).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {_unreachable(host, exc, wait_s)}; {_WAY_ON}") from None

    async def handshake() -> None:
        comm = await asyncio.wait_for(dask_connect(f"tcp://{host}:{port}", timeout=wait_s), wait_s)
        await comm.close()

    with ThreadPoolExecutor(1, thread_name_prefix="dask-probe") as pool:  # its own event loop, whatever runs here
        try:
            return pool.submit(asyncio.run, handshake()).result()
        except (OSError, TimeoutError):
            found = _found_at(host, int(port), wait_s)
    raise ClusterError(f"cannot reach the Dask scheduler at {address}: {found}; {_WAY_ON}")


_WAY_ON = "start it, or correct --dask-address (tcp://HOST:PORT: the scheduler's port, usually 8786)"


def _unreachable(host: str, exc: OSError, wait_s: float) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens there (connection refused)"
    if isinstance(exc, socket.gaierror):
        return f"the host {host!r} is unknown"
    if isinstance(exc, TimeoutError):
        return f"no answer to a connection in {wait_s:g} s (the setting dask_connect_s)"
    return f"cannot connect ({exc.strerror or type(exc).__name__})"


def _found_at(host: str, port: int, wait_s: float) -> str:
    """What answers at ``host:port`` (it accepts connections), after Dask's handshake failed there."""
    try:
        with socket.create_connection((host, port), timeout=min(wait_s, 3.0)) as sock:
            sock.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
            reply = sock.recv(64)
    except TimeoutError:
        return f"a port that accepts connections but answers nothing (waited {wait_s:g} s: the setting dask_connect_s)"
    except OSError as err:
        return f"a port that accepts connections, then fails ({err.strerror or type(err).__name__})"
    if reply.startswith(b"HTTP/"):
        status = reply.splitlines()[0].decode(errors="replace")
        return f"an HTTP server ({status}; a dashboard?), not a Dask scheduler"
    if reply:
        return f"a server that is not a Dask scheduler (it said {reply[:32]!r})"
    return "a port that accepts connections and closes them without a word"


def connect(address: str, wait_s: float = CONNECT_WAIT_S):
    from distributed import Client

    probe(address, wait_s)
    try:
        client = Client(address, timeout=20, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address} ({type(exc).__name__}): start it, or "
                           "correct --dask-address (tcp://HOST:PORT)") from None
    client.impcredit_wait_s = WORKER_WAIT_S
    return client


@contextlib.contextmanager
def client_for(spec: Executor | str | None):
    """A client of the executor (``Threads`` for this process), closed after."""
    ex = Executor.of(spec)
    client = Threads(ex.threads) if ex.local else connect(ex.address, ex.connect_wait_s)
    if not ex.local:
        client.impcredit_wait_s = ex.worker_wait_s
    stopping = False
    try:
        yield client
    except Exception:
        raise
    except BaseException:  # SIGTERM (Prefect's TerminationSignal), Ctrl-C: the process is ending
        stopping = True
        raise
    finally:
        with contextlib.suppress(Exception):  # a cluster already gone: nothing more to close
            if stopping and isinstance(client, Threads):
                # the tasks under way are not waited for (a read ends with the process, nothing is
                # committed: issue 43, SIGTERM stops a read within seconds); the queued ones cancelled
                client.close(wait=False)
            else:
                client.close()


def run_on_worker(spec: Executor | str | None, fn, *args, what: str | None = None):
    """``fn(*args)`` on a worker of the executor (``what`` it does, for a failure's line)."""
    with client_for(spec) as client:
        return gather(client, [client.submit(fn, *args, pure=False)], what or f"running {fn.__name__}")[0]


@contextlib.contextmanager
def local_cluster(workers: int, say, tries: int = START_TRIES):
    """The scheduler's address of a local cluster of ``workers`` processes (a thread each), stopped
    after; None (this process's threads) when its workers died while it started ``tries`` times
    (Dask's "Nanny failed to start"). ``say`` gets one line when a start failed (what happened and
    what the run goes on with). Dask's own logs are silenced: a lost worker is said by the run."""
    from distributed import LocalCluster

    failed: list[str] = []
    for _ in range(tries):
        try:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.CRITICAL)
            break
        except (RuntimeError, OSError, TimeoutError) as exc:
            failed.append(str(exc).splitlines()[0].rstrip(".") if str(exc) else type(exc).__name__)
    else:
        say(f"dask: the local cluster's workers died while starting ({tries} tries; {failed[-1]}): the run goes on "
            "with this process's threads")
        yield None
        return
    if failed:
        say(f"dask: the local cluster's workers died while starting ({len(failed)} of {len(failed) + 1} tries; "
            f"{failed[-1]}): started again, the run goes on with its {workers} workers")
    with cluster:
        yield cluster.scheduler_address


def chunks(items: list, n: int) -> list[list]:
    n = max(1, min(n, len(items)))
    size = -(-len(items) // n) if items else 0
    return [items[i:i + size] for i in range(0, len(items), size)] if items else []


def gather(client, futures: list, what: str) -> list:
    """The results of ``futures``, in order. On a cluster: watched while they run (see the module)."""
    if isinstance(client, Threads):
        return client.gather(futures)
    try:
        watch(client, futures, what, getattr(client, "impcredit_wait_s", WORKER_WAIT_S))
        return client.gather(futures)
    except ClusterError:
        raise
    except Exception as exc:
        if not lost_workers(exc):
            raise
        raise ClusterError(f"the run on the Dask cluster stopped while {what}: {cluster_failure(exc)}; nothing was "
                           "committed (the lake is as it was; the next run removes what this one staged): check the "
                           "workers' memory and logs, then run again") from None


def lost_workers(exc: BaseException) -> bool:
    """Whether ``exc`` is the cluster's own failure (a worker killed again and again, a closed
    connection, a cancelled future) rather than the task's."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return isinstance(exc, KilledWorker | CommClosedError | FutureCancelledError)


def cluster_failure(exc: BaseException) -> str:
    from distributed.scheduler import KilledWorker

    if isinstance(exc, KilledWorker):
        return "the workers running it died again and again"
    return f"the cluster lost the work ({type(exc).__name__})"


def watch(client, futures: list, what: str, wait_s: float) -> None:
    """Wait for ``futures``; raise ``ClusterError`` when for ``wait_s`` seconds no task finished while
    the cluster had no worker or lost some (it cannot keep its workers). A slow task on workers that
    stay up is waited for."""
    seen: set[str] = set()
    gone: set[str] = set()
    last, last_done, lost = time.monotonic(), 0, False
    while True:
        done = sum(1 for f in futures if f.done())
        if done == len(futures):
            return
        now = time.monotonic()
        if done > last_done:
            last, last_done, lost = now, done, False
        try:
            workers = set(client.scheduler_info(n_workers=-1).get("workers", {}))
        except Exception:  # the scheduler itself is gone
            workers = set()
        lost = lost or bool(seen - workers)
        gone |= seen - workers
        seen |= workers
        if (lost or not workers) and now - last > wait_s:
            for f in futures:
                with contextlib.suppress(Exception):
                    f.cancel()
            state = "no worker left" if not workers else "its workers dying as they start"
            died = f"{len(gone)} seen to die, " if gone else ""
            raise ClusterError(
                f"the Dask cluster could not keep its workers ({died}{state}; no task finished for {wait_s:g} s) while "
                f"{what}: the run stopped, nothing was committed; check the workers (memory, logs, the scheduler at "
                f"{client.scheduler.address if getattr(client, 'scheduler', None) else 'its address'}), then run "
                "again (the wait is the setting worker_wait_s)")
        time.sleep(POLL_S)
