"""The lake verifies itself (spec section 1: decisions are final, so a value the lake no longer
holds as it was written must stop the run, never pay a different amount).

Every part's sha256 is recorded in the manifest (``checksums``: part -> sha256) when an ingest
writes it, and every recorded part is checked at the start of the next ingest, before anything
is read: a part changed on disk (a flipped bit, a truncated write) or missing stops the run with
``LakeDamaged``, naming the part and the way back. ``repair`` takes the damaged parts out with
every file that had rows in them (its rows in other parts too, so nothing counts twice) and
records those files as owed (``reingest``): the next ingest reads them again from the
submission, and stops, naming them, while one is not there. A manifest that cannot be read is
named, never echoed (``lake.load_manifest``). The digest of the checksums (``lake_digest``) goes into each run's record.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms import schema, storage
from transforms.ingest.store.lake import LakeDamaged, _parts, _rewrite
from transforms.ingest.store.lake_files import intend, intended, take_written

CHUNK = 1 << 20


@dataclass(frozen=True)
class Damage:
    part: str  # relative to the lake
    problem: str  # "changed" or "missing"
    files: tuple[str, ...]  # the submitted files with rows in the part


def sha256_file(path: Path) -> str:
    """The sha256 of a part's bytes as the store holds them (an object is read back whole)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def listed_parts(manifest: dict) -> dict[str, list[str]]:
    """part -> the files (path as submitted) whose rows it holds."""
    out: dict[str, list[str]] = {}
    for f in manifest["files"].values():
        for p in [*(f.get("parts") or []), *([f["quarantine"]] if f.get("quarantine") else [])]:
            out.setdefault(p, []).append(f["file"])
    return out


def to_verify(lake: Path, manifest: dict) -> list[str]:
    """The recorded parts ``verify`` reads (those an ingest that crashed was rewriting are not damage)."""
    files_of = listed_parts(manifest)
    noted = intended(lake)
    return [rel for rel in sorted(manifest.get("checksums") or {}) if rel in files_of and rel not in noted]


def part_sums(lake: Path, rels: list[str]) -> dict[str, str | None]:
    """The sha256 of each part as the store holds it now (None: gone)."""
    return {rel: sha256_file(lake / rel) if (lake / rel).is_file() else None for rel in rels}


def verify(lake: Path, manifest: dict, actual: dict[str, str | None] | None = None) -> list[Damage]:
    """Each recorded part whose bytes are not those written, or that is gone. ``actual``: the
    parts' sha256 as ``part_sums`` gives them, computed elsewhere (the workers of a cluster)."""
    files_of = listed_parts(manifest)
    damage = []
    for rel in to_verify(lake, manifest):
        want = manifest["checksums"][rel]
        got = actual[rel] if actual is not None else part_sums(lake, [rel])[rel]
        problem = "missing" if got is None else ("changed" if got != want else None)
        if problem:
            damage.append(Damage(rel, problem, tuple(sorted(set(files_of[rel])))))
    return damage


def check(lake: Path, manifest: dict, actual: dict[str, str | None] | None = None) -> None:
    """``LakeDamaged`` when a recorded part is damaged; and the owed files (``reingest``) of an
    earlier repair stay owed until an ingest reads them."""
    damage = verify(lake, manifest, actual)
    if damage:
        raise LakeDamaged(describe(lake, damage))


def describe(lake: Path, damage: list[Damage]) -> str:
    lines = [f"the lake {lake} does not hold what it wrote ({len(damage)} part(s)):"]
    lines += [f"  {d.part}: {d.problem} (rows of {', '.join(d.files[:5])}{' ...' if len(d.files) > 5 else ''})"
              for d in damage[:20]]
    lines.append("Recover: impcredit lake verify --workdir <workdir> --repair takes them out with the files they "
                 "hold, then run again with those files in the submission: they are ingested again (the ledger "
                 "keeps every decision; nothing is decided on what was left)")
    return "\n".join(lines)


def owed(manifest: dict) -> dict[str, str]:
    """sha256 -> path of the files a repair took out and no ingest has read again."""
    return {sha: rel for sha, rel in (manifest.get("reingest") or {}).items() if sha not in manifest["files"]}


def refresh(lake: Path, manifest: dict, written_sums: dict[str, str | None] | None = None) -> None:
    """Record the checksum of every listed part written since the last refresh (``lake.WRITTEN``)
    or never recorded; forget parts no longer listed; forget owed files read again.
    ``written_sums``: parts other processes wrote (the workers of a cluster), with their sha256
    as written (``lake_files.take_sums``): recorded without reading them."""
    sums = dict(manifest.get("checksums") or {})
    given = {rel: s for rel, s in (written_sums or {}).items() if s}
    written = take_written(lake) | intended(lake) | set(written_sums or {})
    gone = {rel for rel in written if not (lake / rel).is_file()}  # deleted by this ingest (a replaced file's rows)
    for f in manifest["files"].values():
        if f.get("parts") and gone & set(f["parts"]):
            f["parts"] = [p for p in f["parts"] if p not in gone]
    listed = listed_parts(manifest)
    for rel in listed:
        path = lake / rel
        if rel in given and rel in written:
            sums[rel] = given[rel]
        elif path.is_file() and (rel not in sums or rel in written):
            sums[rel] = sha256_file(path)
    manifest["checksums"] = {rel: s for rel, s in sorted(sums.items()) if rel in listed}
    left = owed(manifest)
    if left:
        manifest["reingest"] = left
    else:
        manifest.pop("reingest", None)


def lake_digest(manifest: dict) -> str:
    """One sha256 over every part's checksum: what the lake held when a run read it."""
    text = json.dumps(manifest.get("checksums") or {}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def repair(lake: Path, manifest: dict, damage: list[Damage]) -> list[str]:
    """Take the damaged parts out, and every file with rows in them: its rows leave every other
    part too, its manifest entry goes and it is owed (``reingest``). Returns the files taken out."""
    bad = {d.part for d in damage}
    gone = {sha: f for sha, f in manifest["files"].items()
            if bad & {*(f.get("parts") or []), *([f["quarantine"]] if f.get("quarantine") else [])}}
    for rel in bad:
        intend(lake, lake / rel)
        (lake / rel).unlink(missing_ok=True)
    shas = list(gone)
    for dataset in [*schema.LAKE, "quarantine"]:
        col = "file_sha256" if dataset == "quarantine" else "_file_sha256"
        for path in _parts(lake, dataset):
            rel = path.relative_to(lake).as_posix()
            if rel in bad:
                continue
            frame = storage.read_parquet(path)
            keep = frame.filter(~pl.col(col).is_in(shas))
            if keep.height == frame.height:
                continue
            _rewrite(lake, path, keep)
    for sha, f in gone.items():
        del manifest["files"][sha]
        manifest.setdefault("reingest", {})[sha] = f["file"]
    return sorted(f["file"] for f in gone.values())
