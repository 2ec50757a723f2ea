"""The files of an ingest, before any is read: discovered, hashed, and set aside when not read
(a symbolic link, an unreadable or unknown file, content already in the lake or earlier in the
run); ``payroll/files.csv`` and each payroll file's folder give the files their context
(``context.contexts``), which is part of a file's identity for the duplicate test."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.files import submission as sub
from transforms.ingest.read.files.line_limits import Limits
from transforms.ingest.read.layouts import profile_files
from transforms.ingest.report import FileRecord
from transforms.ingest.validate.quarantine import FileWork
from transforms.stages import stage

FILE_WORKERS = 2


def _digest(path: Path) -> tuple[str, int]:
    """(sha256, size) of a file's bytes; ("", -1) when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return "", -1
    return hashlib.sha256(data).hexdigest(), len(data)


@dataclass
class Plan:
    """The files of a run: what is said without reading them (``records``, ``rejects``) and the
    new ones to read (``todo``, with their paths and sizes by file index)."""

    records: list[FileRecord] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)
    todo: list[FileWork] = field(default_factory=list)
    paths: dict[int, Path] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)

    def reject(self, rel: str, dataset: str | None, sha: str, rule: str, msg: str) -> None:
        self.records.append(FileRecord(rel, dataset, None, sha, 0, 0, 0, "rejected", msg))
        self.rejects.append(dict(file=rel, line=None, column=None, value=None, rule=rule, message=msg, employer_id=None))


def plan_files(root: Path, exclude: list[Path], known: dict, digests=None,
               layouts: profile_files.Layouts | None = None, limits: Limits | None = None) -> Plan:
    """Discover and hash the files; set aside what is not read (links, unreadable or unknown
    files, content already in the lake or earlier in this run). ``digests``: (sha256, size) of
    each path of a list, computed elsewhere (the workers of a cluster); default two threads here."""
    plan = Plan()
    seen: dict[str, str] = {}
    entries = sub.discover(root, exclude=exclude)
    for e in entries:  # not read at all: a symbolic link, a folder named like a data file
        if e.kind != "file":
            plan.reject(e.rel, e.dataset, "", *sub.KIND_MESSAGES[e.kind])
    found = [(e.dataset, e.path) for e in entries if e.kind == "file"]
    with stage("ingest") as st_ingest:
        if digests is None:
            with ThreadPoolExecutor(max_workers=FILE_WORKERS, thread_name_prefix="digest") as pool:
                sums = list(pool.map(_digest, [path for _, path in found]))  # hashlib releases the GIL
        else:
            sums = list(digests([path for _, path in found]))
        st_ingest.say(f"{len(found):,} files, {sum(max(s, 0) for _, s in sums) / 2**20:,.1f} MB read and hashed")
    rels = [path.relative_to(root).as_posix() for _, path in found]
    context_of, manifest_errors = ctx.contexts(root, [r for (d, _), r in zip(found, rels, strict=True) if d == "payroll"])
    reports = [p for p in (layouts or profile_files.load_profiles()) if p.report is not None]
    for index, ((dataset, path), (sha, size)) in enumerate(zip(found, sums, strict=True)):
        rel = rels[index]
        if rel == sub.PAYROLL_MANIFEST:
            _plan_manifest(plan, rel, sha, manifest_errors, len(context_of))
            continue
        if size < 0:
            plan.reject(rel, dataset, "", *(sub.file_problem(sub.Entry(dataset, path, rel)) or ("unreadable", "cannot be read")))
            continue
        context = context_of.get(rel)
        # what a line takes from outside its file (folder, files.csv, file name) is part of it
        # (spec section 1): the same bytes under another employer or period are another file
        outside = ";".join(filter(None, [context.key if context else "", ctx.file_name_key(rel, reports)]))
        if outside:
            sha = hashlib.sha256(f"{sha}\n{outside}".encode()).hexdigest()
        if dataset is None:
            plan.reject(rel, None, sha, "unknown_file", "not part of the submission layout (payroll/*.csv|.txt|.prn|.xlsx, "
                        "applications.csv, roster.csv, certifications.csv, employer_rates.csv)")
            continue
        in_lake = sha in known and not known[sha].get("superseded_by")  # a superseded version sent again adds again
        if in_lake or sha in seen:
            first = known[sha]["file"] if in_lake else seen[sha]
            when = f" on {known[sha]['ingested_at'][:10]}" if in_lake else " earlier in this run"
            plan.records.append(FileRecord(rel, dataset, known.get(sha, {}).get("profile"), sha, 0, 0, 0, "duplicate",
                                           f"same content as {first}, ingested{when}: nothing added"))
            continue
        seen[sha] = rel
        plan.todo.append(FileWork(index, rel, dataset, sha, context=context, layouts=layouts, limits=limits or Limits()))
        plan.paths[index] = path
        plan.sizes[index] = size
    return plan


def _plan_manifest(plan: Plan, rel: str, sha: str, errors: list, described: int) -> None:
    """``payroll/files.csv``, the payroll files' context: said in the report, never read as
    payroll; a line that cannot be read stops the run (it names a file's employer)."""
    if errors:
        msg = "; ".join(f"line {e.line}: {e.message}" for e in errors)
        plan.reject(rel, "payroll", sha, "manifest_error", f"payroll/files.csv cannot be used: {msg}")
        return
    plan.records.append(FileRecord(rel, None, None, sha, 0, 0, 0, "accepted",
                                   f"the context of {described} payroll file(s) (employer, period, pay date, layout)"))
