"""One key for a lake and its ledger (spec section 8): the fingerprint each records, compared before a command reads.

The lake's ``_manifest.json`` (``key_fingerprint``, written by the ingest: ``lake_holds``) and the
ledger (table ``key_fingerprint``, ``ledger_schema`` 6) record the ``HashKey.fingerprint`` of the
key they were written with: the HMAC of a fixed label under the key, never the key. A command with
another key stops before it reads either (``KeyChanged``, one line naming
``IMPCREDIT_HMAC_KEY_FILE`` and the two ways on): rows hashed under two keys are never compared.

A workdir written before fingerprints (none recorded) is judged by what its ledger says of its
runs' keys (each run's ``key_source``: the demo key, or a configured one): runs under the demo key
and a configured key mean a lake that may hold rows under both (refused); runs under the demo key
alone refuse a real key as a recorded demo fingerprint would. Otherwise the first command that
writes records the key's fingerprint and says so once. Two configured keys used before this change
leave nothing that tells them apart: that mix is not detected.
"""

from __future__ import annotations

import json
from pathlib import Path

from transforms.pii import HashKey, KeyError_, demo_key

LEDGER = "impcredit.duckdb"
FIELD = "key_fingerprint"  # the lake manifest's
WAY_ON = ("set IMPCREDIT_HMAC_KEY_FILE to the key they were written with, or keep this key and start a new workdir and "
          "lake (--workdir, and --lake or IMPCREDIT_LAKE if set) that reads the submissions kept again")
NEW_WORKDIR = ("start a new workdir and lake (--workdir, and --lake or IMPCREDIT_LAKE if set) that reads the submissions "
               "kept again under one key (IMPCREDIT_HMAC_KEY_FILE)")


class KeyChanged(KeyError_):
    """The workdir's lake or ledger was written with another ssn hash key (or with two)."""


def _name(fingerprint: str) -> str:
    return ("the built-in demo key" if fingerprint == demo_key().fingerprint
            else f"another ssn hash key (fingerprint {fingerprint[:12]})")


def _ours(key: HashKey) -> str:
    return "the built-in demo key" if key.is_demo else f"a configured key (fingerprint {key.fingerprint[:12]})"


def refusal(what: str, recorded: str, key: HashKey) -> KeyChanged:
    return KeyChanged(f"{what} was written with {_name(recorded)} and this command has {_ours(key)}: rows hashed under "
                      f"two keys are never compared; {WAY_ON}")


def lake_holds(lake, manifest: dict, key: HashKey) -> None:
    """The lake's manifest records ``key``'s fingerprint from now on; ``KeyChanged`` when it
    recorded another (call before anything of the lake is read)."""
    recorded = manifest.get(FIELD)
    if recorded and recorded != key.fingerprint:
        raise refusal(f"the lake {lake}", recorded, key)
    manifest[FIELD] = key.fingerprint


def _lake(lake) -> tuple[str | None, bool]:
    """The lake's recorded fingerprint and whether it holds any file."""
    from transforms.ingest.store.lake import load_manifest

    manifest = load_manifest(lake)
    return manifest.get(FIELD), bool(manifest["files"])


def _ledger(path: Path) -> tuple[str | None, set[str]]:
    """The ledger's recorded fingerprint, and the kinds of key (``demo``, ``configured``) its runs
    before the fingerprint say they used."""
    import duckdb

    from transforms.award import ledger

    if not path.exists():
        return None, set()
    con = ledger.connect(path, read_only=True)
    try:
        try:
            row = con.sql("SELECT fingerprint FROM key_fingerprint ORDER BY recorded_at LIMIT 1").fetchall()
        except duckdb.CatalogException:  # a ledger of schema 5 or before: no fingerprint yet
            row = []
        if row:
            return row[0][0], set()
        sources = set()
        for (text,) in con.sql("SELECT summary_json FROM runs WHERE kind IN ('annual', 'quarterly')").fetchall():
            source = str(json.loads(text or "{}").get("key_source") or "")
            if source:
                sources.add("demo" if source == "demo" else "configured")
        n_runs = con.sql("SELECT count(*) FROM runs").fetchall()[0][0]
        return None, sources | ({"runs"} if n_runs else set())
    finally:
        con.close()


def _record_ledger(path: Path, key: HashKey, note: str) -> None:
    from transforms.award import ledger

    con = ledger.connect(path)
    try:
        con.execute("INSERT INTO key_fingerprint SELECT $f, now()::TIMESTAMP, $n WHERE NOT EXISTS "
                    "(SELECT 1 FROM key_fingerprint)", {"f": key.fingerprint, "n": note})
    finally:
        con.close()


def check(workdir: Path, lake, key: HashKey, *, records: tuple[str, ...] = (), ledger: bool = True) -> str | None:
    """Before a command reads the workdir's ledger or its lake: ``KeyChanged`` when either was
    written with another key than ``key`` (or, before fingerprints, with two). ``records``: what
    the command writes, ``"ledger"`` (recorded here when it has no fingerprint yet) and ``"lake"``
    (recorded by its ingest, ``lake_holds``); ``ledger``: False to look at the lake alone (a
    command's first check, before it waits for the workdir). Returns what to say once: a workdir
    written before fingerprints takes this key's from now on (else None)."""
    path = Path(workdir) / LEDGER
    lake_fp, lake_files = _lake(lake)
    ledger_fp, before = _ledger(path) if ledger else (None, set())
    for what, recorded in ((f"the lake {lake}", lake_fp), (f"the ledger {path}", ledger_fp)):
        if recorded and recorded != key.fingerprint:
            raise refusal(what, recorded, key)
    if {"demo", "configured"} <= before:
        raise KeyChanged(f"the ledger {path} records runs under the built-in demo key and under a configured key, made "
                         f"before keys were fingerprinted: its lake {lake} may hold rows hashed under both, which are "
                         f"never compared; {NEW_WORKDIR}")
    if "demo" in before and not key.is_demo:
        raise refusal(f"the ledger {path} (its runs before keys were fingerprinted)", demo_key().fingerprint, key)
    if "configured" in before and key.is_demo:
        raise KeyChanged(f"the ledger {path} records runs under a configured ssn hash key and this command has the "
                         f"built-in demo key: rows hashed under two keys are never compared; {WAY_ON}")
    old = [w for w, fp, held, kind in ((f"the lake {lake}", lake_fp, lake_files, "lake"),
                                        (f"the ledger {path}", ledger_fp, before, "ledger"))
           if held and not fp and kind in records]
    if "ledger" in records and not ledger_fp:
        _record_ledger(path, key, "taken by a workdir written before fingerprints" if old else "the first run")
    if not old:
        return None
    return (f"{' and '.join(old)} {'were' if len(old) > 1 else 'was'} written before keys were fingerprinted: from now "
            f"on {'they record' if len(old) > 1 else 'it records'} this command's key ({_ours(key)}) and a command "
            "with another key is refused (what was written before must be under this key: it cannot be checked)")
