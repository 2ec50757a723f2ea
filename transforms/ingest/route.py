"""The ingest's one route, whatever executes its tasks (``executors``: this process's threads, or
a Dask cluster's workers): the files, and the pieces of big files, are read, validated and
written to the lake by the tasks (``tasks``); the caller (the driver) plans, gathers digests,
counts and rejects, and commits the lake's manifest last.

1. tasks: the lake's parts checked against their sha256, and the submission's files hashed;
2. driver: the plan (which files are new), from names, sizes and digests;
3. map: each batch of small files, big file (its pieces in turn) or other file read, staged and
   validated; the rows that passed go to the run's scratch area (``scratch``: in memory, or
   ``<lake>/_scratch/<token>/map/<dataset>/b<partition>/f<file>``, payroll partitioned by
   employer) and its quarantined rows beside them; the driver gets each file's ``FileWork``
   without rows (counts, rejects, notes);
4. a task: a corrected file supersedes its earlier version;
5. reduce: the run-level rules of payroll per employer partition (every one is per employer or
   finer; ``tasks.reduce_payroll``), the accepted rows back to the scratch area; then one task per
   year of payroll (and of its code lines) writes the run's part of that year, its rows in one
   fixed order (``tasks.POS``: whatever the partitions, the same bytes), and one task does the
   other, small datasets, whose keys are not all per employer (``tasks.other_datasets``);
6. each file with quarantined rows or cross-row rejects gets its rejects quoted from its cells and
   its quarantine part written;
7. driver: the files' records and the manifest, with the checksums the tasks computed as they
   wrote (``commit``): nothing is read back.

The lake's parts are the same bytes on every executor, with any number of partitions (same rows,
same order, fixed row groups), so every output of a run is too. A worker that dies mid-task: Dask
runs its task again on another worker (every task writes names fixed by its input); when it
cannot, or the cluster cannot keep its workers, the run stops in one line (``executors``), nothing
committed (the manifest is written last; the next ingest removes the scratch area and the parts
no manifest lists).
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import uuid
from datetime import datetime
from pathlib import Path

import polars as pl

from transforms import failpoints, one_key, storage
from transforms.ingest import commit
from transforms.ingest import tasks as ct
from transforms.ingest.executors import Executor, Threads, chunks, client_for, gather
from transforms.ingest.plan import plan_files
from transforms.ingest.read.files import submission as sub
from transforms.ingest.report import IngestReport
from transforms.ingest.store import lake as lk
from transforms.ingest.store import lake_files
from transforms.ingest.store import lake_verify as lake_check
from transforms.ingest.store import scratch as sg
from transforms.ingest.validate import batches as bt
from transforms.ingest.validate import docs_offline
from transforms.pii import HashKey
from transforms.stages import start

SCRATCH = "_scratch"
BUCKET_BYTES = 64 * 2**20  # payroll's employer partitions: at least one per worker, and one per this much text
CALLS = {"payroll": ["xr", "again", "xn"], "roster": ["xr", "xs"]}  # the rule passes of a dataset, in order


def _remove_tree(loc) -> None:
    """The scratch area (a folder, or every object under a prefix), best effort."""
    try:
        if storage.is_remote(loc):  # the objects and the folder markers the store's client left
            if loc.is_dir():
                storage.filesystem(loc).delete_dir(loc.path)
        elif Path(loc).exists():
            shutil.rmtree(loc, ignore_errors=True)
    except OSError:
        pass


def ingest_with(executor: Executor, root: Path, workdir: Path, lake: Path, key: HashKey, now: datetime, engine: str,
                exclude: list[Path], key_loader=None, piece_bytes: int = 0, batch_bytes: int = 0, *,
                docs_dir: Path | None = None, in_memory: bool = False, layouts=None, limits=None) -> IngestReport:
    """Ingest on ``executor`` (see the module's docstring); ``piece_bytes`` and ``batch_bytes``:
    the sizes of the pieces of a big file and of a batch of small ones.

    On this process's threads (``executor.local``) the tasks get ``key`` itself and the workers'
    fail points are not armed (they would end this process); with ``in_memory``, the scratch area
    is this process's memory (``scratch.Memory``) instead of ``<lake>/_scratch``. ``docs_dir``: the
    gx engine's Data Docs (in this process only)."""
    if executor.local:
        key_loader = functools.partial(_same_key, key)
    elif docs_dir is not None or in_memory:
        raise ValueError("Data Docs and an in-memory scratch area are for the executor of this process only")
    stage = sg.Memory() if in_memory and executor.local else lake / SCRATCH / uuid.uuid4().hex[:12]
    with client_for(executor) as client:
        try:
            return _ingest(client, root, workdir, lake, key, now, engine, exclude, key_loader, stage,
                           (piece_bytes, batch_bytes), docs_dir, layouts, limits)
        finally:
            _remove_tree(lake / SCRATCH)  # the whole area (one ingest at a time: the lock): no folder marker left
            if sg.is_memory(stage):
                stage.clear()


def _same_key(key: HashKey) -> HashKey:
    return key


def _ingest(client, root: Path, workdir: Path, lake: Path, key: HashKey, now: datetime, engine: str,
            exclude: list[Path], loader, stage, sizes: tuple[int, int], docs_dir: Path | None,
            layouts=None, limits=None) -> IngestReport:
    n = max(1, len(client.scheduler_info().get("workers", {})))
    manifest = lk.load_manifest(lake)
    one_key.lake_holds(lake, manifest, key)  # another key's lake stops here, before anything is read
    rels = lake_check.to_verify(lake, manifest)
    actual: dict[str, str | None] = {}
    for got in gather(client, [client.submit(ct.part_sums, lake, c, pure=False) for c in chunks(rels, 2 * n)],
                       "the lake's check"):
        actual.update(got)
    lake_check.check(lake, manifest, actual)  # before anything is read
    lake_files.take_written(lake)
    lk.upgrade(lake, manifest)  # a lake of an older layout only (rewritten here, once)
    lk.remove_orphans(lake, manifest)
    for left in (SCRATCH, "_staging"):  # what a run that stopped left (one ingest at a time: the lock; the old name too)
        _remove_tree(lake / left)

    def digests(paths: list[Path]) -> list[tuple[str, int]]:
        parts = gather(client, [client.submit(ct.digests, c, pure=False) for c in chunks(paths, 2 * n)], "the digests")
        return [d for part in parts for d in part]

    known = manifest["files"]
    plan = plan_files(root, exclude, known, digests=digests, layouts=layouts, limits=limits)
    validating = start("validate")
    mapped = _map(client, plan, key, now, engine, stage, n, loader, *sizes, docs_dir=docs_dir)
    if docs_dir is not None:
        docs_offline.offline(docs_dir)  # pages that open with no network
    plan.todo = [m.work for m in mapped]
    works = plan.todo
    replaced, sums = _supersede(client, lake, known, works)
    reduced = _reduce(client, lake, stage, mapped)
    if sg.is_memory(stage):
        stage.drop("map/payroll/")
    run_shas = {w.sha for w in works}
    run_tag = hashlib.sha256("\n".join(sorted(run_shas)).encode()).hexdigest()
    parts_of, other = _write(client, lake, stage, mapped, reduced, works, run_tag, key, loader, sums)
    if sg.is_memory(stage):
        stage.drop("map/")
        stage.drop("accepted/")
    replaced += other.replaced
    for r in replaced:
        if r["replaced_sha256"] in known:
            known[r["replaced_sha256"]].setdefault("replaced_by", []).append(r["sha256"])
    n_accepted, ids = _accepted([*reduced, other])
    qparts, named = _finish(client, lake, stage, mapped, [*reduced, other], ids, key, loader, plan.paths, sums)
    plan.todo = [m.work for m in mapped]
    return commit.commit(lake, manifest, plan, parts_of, qparts, n_accepted, named, replaced, validating, workdir,
                         docs_dir, sums)


def _map(client, plan, key: HashKey, now: datetime, engine: str, stage, n: int, loader, piece_bytes: int,
         batch_bytes: int, *, docs_dir: Path | None = None) -> list[ct.Mapped]:
    """Every new file read, staged and validated on the workers, as ``pipeline._validate_files``
    groups them (big files in pieces, small ones in batches, the others one by one)."""
    todo, paths, sizes = plan.todo, plan.paths, plan.sizes
    simple = {w.index for w in todo if w.context is None and paths[w.index].suffix.lower() not in sub.WORKBOOK_EXT}
    big = {w.index for w in todo if engine == "polars" and sizes[w.index] > piece_bytes > 0 and w.index in simple}
    groups = [("pieces", [w]) for w in todo if w.index in big]
    one_by_one = [w for w in todo if w.index not in big]
    if engine == "polars" and batch_bytes > 0:
        batched = [w for w in one_by_one if w.index in simple]
        groups += [("batch", b) for b in bt.batches(batched, sizes, batch_bytes)]
        one_by_one = [w for w in one_by_one if w.index not in simple]
    groups += [("files", [w]) for w in one_by_one]
    payroll = sum(sizes[w.index] for w in todo if w.dataset == "payroll")
    buckets = max(n, -(-payroll // BUCKET_BYTES))  # employer partitions: a reduce holds about BUCKET_BYTES of text
    fail = failpoints.armed()
    fail = fail if fail in failpoints.WORKER_POINTS and not isinstance(client, Threads) else None
    jobs = [ct.MapJob(kind, ws, {w.index: paths[w.index] for w in ws}, {w.index: sizes[w.index] for w in ws}, now, engine,
                      key.key_id, loader, stage, buckets, piece_bytes, fail if i == 0 else None, docs_dir)
            for i, (kind, ws) in enumerate(sorted(groups, key=lambda g: g[1][0].index))]
    done = gather(client, [client.submit(ct.map_job, j, pure=False) for j in jobs], "the files' validation")
    return sorted((m for ms in done for m in ms), key=lambda m: m.work.index)


def _supersede(client, lake: Path, known: dict, works: list) -> tuple[list[dict], dict[str, str | None]]:
    """A corrected file (a new version at the path of an earlier one) supersedes it, on a worker."""
    new = {d: {w.sha: w.rel for w in works if w.dataset == d} for d in lk.BY_PATH}
    earlier = {(f.get("dataset"), f["file"]) for sha, f in known.items() if not f.get("superseded_by")}
    if not any((d, rel) in earlier for d, m in new.items() for rel in m.values()):
        return [], {}
    records, sums = gather(client, [client.submit(ct.supersede, lake, known, new, pure=False)], "the superseding")[0]
    for r in records:
        known[r["replaced_sha256"]].update(superseded_by=r["sha256"], parts=[])
    return records, dict(sums)


def _reduce(client, lake: Path, stage: Path, mapped: list[ct.Mapped]) -> list[ct.Reduced]:
    buckets: dict[int, list[str]] = {}
    for m in mapped:
        if m.work.dataset == "payroll":
            for b, rel in m.staged.items():
                buckets.setdefault(b, []).append(rel)
    jobs = [ct.ReduceJob(lake, stage, b, rels) for b, rels in sorted(buckets.items())]
    return gather(client, [client.submit(ct.reduce_payroll, j, pure=False) for j in jobs], "payroll's run-level rules")


def _write(client, lake: Path, stage: Path, mapped, reduced, works, run_tag: str, key: HashKey, loader,
           sums: dict) -> tuple[dict[str, list[str]], ct.Reduced]:
    """The run's parts: payroll's code lines and payroll one task per year, the other datasets in
    one task; each file's parts in the single-process route's order (``pipeline._store``)."""
    index, shas, rels = [w.index for w in works], [w.sha for w in works], [w.rel for w in works]
    years: list[tuple[str, object]] = []
    for dataset in ("payroll_lines", "payroll"):
        first: dict = {}
        for r in reduced:
            for y, pos in r.years.get(dataset, {}).items():
                first[y] = min(pos, first.get(y, pos))
        years += [(dataset, y) for y in sorted(first, key=first.get)]
    jobs = [ct.WriteJob(lake, stage, d, y, [r.staged[d][y] for r in reduced if y in r.staged.get(d, {})], run_tag,
                        index, shas)
            for d, y in years]
    staged: dict[str, list[str]] = {}
    for m in mapped:
        if m.work.dataset != "payroll":
            staged.setdefault(m.work.dataset, []).extend(m.staged.values())
    other = ct.OtherJob(lake, stage, staged, [rel for r in reduced for rel in r.staged.get("payroll", {}).values()], run_tag,
                        index, shas, rels, key.key_id, loader)
    futures = [client.submit(ct.write_year, j, pure=False) for j in jobs]
    futures.append(client.submit(ct.other_datasets, other, pure=False))
    *written, other_done = gather(client, futures, "the lake's parts")
    parts_of: dict[str, list[str]] = {}
    for parts, s in written:
        sums.update(s)
        for sha, ps in parts.items():
            parts_of.setdefault(sha, []).extend(ps)
    sums.update(other_done.sums)
    for parts in other_done.parts_of.values():
        for sha, ps in parts.items():
            parts_of.setdefault(sha, []).extend(ps)
    return parts_of, other_done


def _accepted(results: list[ct.Reduced]) -> tuple[dict[int, int], dict[int, dict[str, set[str]]]]:
    """Accepted lines per file (a file's payroll rows may be in several partitions) and the ids of its accepted rows."""
    n: dict[int, int] = {}
    ids: dict[int, dict[str, set[str]]] = {}
    for r in results:
        for f, c in r.accepted.items():
            n[f] = n.get(f, 0) + c
        for f, got in r.ids.items():
            for col, vals in got.items():
                ids.setdefault(f, {}).setdefault(col, set()).update(vals)
    return n, ids


def _finish(client, lake: Path, stage: Path, mapped, results, ids, key: HashKey, loader, paths,
            sums: dict) -> tuple[dict[int, str | None], dict[int, dict[str, list[str]]]]:
    """The files with quarantined rows or cross-row rejects, finished on the workers
    (``tasks.finish_file``); their quarantine parts and the ids they name (``commit.named``)."""
    hits: dict[str, list[pl.DataFrame]] = {}
    for r in results:
        for name, frame in r.hits:
            hits.setdefault(name, []).append(frame)
    by_file: dict[int, dict[str, pl.DataFrame]] = {}
    for name, frames in hits.items():
        for (f,), grp in pl.concat(frames).group_by(["__file"], maintain_order=True):
            by_file.setdefault(int(f), {})[name] = grp.sort("__order", maintain_order=True)
    jobs, todo = [], []
    for m in mapped:
        w = m.work
        mine = by_file.get(w.index, {})
        if not (m.quarantined or mine):
            continue
        calls = [mine[f"{w.dataset}:{c}"] for c in CALLS.get(w.dataset, ["xr"]) if f"{w.dataset}:{c}" in mine]
        jobs.append(ct.FinishJob(w, paths[w.index], lake, stage, m.quarantined, calls, key.key_id, loader))
        todo.append(m)
    qparts: dict[int, str | None] = {}
    named: dict[int, dict[str, list[str]]] = {}
    done = gather(client, [client.submit(ct.finish_file, j, pure=False) for j in jobs], "the rejects' quotes")
    for m, (w, qpart, q_ids, s) in zip(todo, done, strict=True):
        m.work = w
        sums.update(s)
        if qpart is None:
            continue
        qparts[w.index] = qpart
        acc = ids.get(w.index, {})
        got = {"employers": acc.get("employer_id", set()) | q_ids.get("employer_id", set()),
               "applications": acc.get("application_id", set()) | q_ids.get("application_id", set())}
        got["employers"] = {e for e in got["employers"] if re.fullmatch(r"\d{9}", e)}
        named[w.index] = {k: sorted(v) for k, v in got.items() if v} | ({"unread": w.unread} if w.unread else {})
    return qparts, named

