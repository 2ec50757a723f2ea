"""``impcredit lake verify``: check every part of the Parquet lake against the checksum recorded
when it was written; ``--repair`` takes damaged parts out with the files they hold, for the next
run to ingest again from the submission."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common, listing

LAKE_KEYS = ["lake", "parts", "intact", "lake_sha256", "damaged", "repaired_files", "owed"]

lake_app = typer.Typer(help="The Parquet lake: verify what it holds against what it wrote.", no_args_is_help=True)


@lake_app.command("verify")
def verify(
    workdir: Annotated[Path, typer.Option("--workdir", help="Workdir holding the Parquet lake.", metavar="DIR")] = common.DATA / "work",
    lake_at: Annotated[str | None, typer.Option("--lake", help=common.LAKE_HELP, metavar="DIR|URL")] = None,
    repair: Annotated[bool, typer.Option("--repair", help="Take damaged parts out, with every file that has rows in "
                                         "them; the next run ingests those files again (they must be in its submission).")] = False,
    format: listing.Format = "table",
) -> None:
    """Check every lake part against its recorded sha256 (read back from the store). Exit 0: intact; 1: damaged (named).

    csv and json: one record (the lake, its parts, intact or not, the lake's sha256, the damaged
    parts with the files they hold, the files a repair took out and those owed to a next run).

    Example: impcredit lake verify --workdir data/work
    """
    from filelock import FileLock

    from transforms.ingest.store import lake as lk
    from transforms.ingest.store import lake_verify as lake_check

    lake = common.use_lake(workdir, lake_at, writes=False)
    if not (lake / lk.MANIFEST).is_file():
        common.fail(f"{lake}: no lake here (no {lk.MANIFEST}); is --workdir (or --lake) right?")
    files: list[str] = []
    with FileLock(lk.lock_path(lake, workdir.resolve())):
        try:
            manifest = lk.load_manifest(lake)
        except lk.LakeDamaged as exc:
            common.err.print(f"[bold red]damaged:[/] {exc}")
            raise typer.Exit(1) from None
        damage = lake_check.verify(lake, manifest)
        n = len(lake_check.listed_parts(manifest))
        if damage and repair:
            files = lake_check.repair(lake, manifest, damage)
            lake_check.refresh(lake, manifest)
            lk.save_manifest(lake, manifest)
        owed = lake_check.owed(manifest)
    record = {"lake": str(lake), "parts": n, "intact": not damage, "lake_sha256": lake_check.lake_digest(manifest),
              "damaged": [{"part": d.part, "problem": d.problem, "files": list(d.files)} for d in damage],
              "repaired_files": files, "owed": sorted(owed.values())}
    if listing.machine(format, LAKE_KEYS, record):
        raise typer.Exit(1 if damage and not repair else 0)
    if not damage:
        common.console.print(f"lake {lake}: {n:,} parts, every one as written (sha256 {record['lake_sha256'][:16]})",
                             soft_wrap=True)
        if owed:
            common.console.print(f"[yellow]owed:[/] {len(owed)} file(s) taken out by a repair, to be ingested again: "
                                 + ", ".join(record["owed"][:10]), soft_wrap=True)
        return
    if not repair:
        common.err.print(f"[bold red]damaged:[/] {lake_check.describe(lake, damage)}")
        raise typer.Exit(1)
    common.console.print(f"repaired: {len(damage)} damaged part(s) taken out with the rows of {len(files)} file(s):")
    for f in files[:50]:
        common.console.print(f"  {f}", soft_wrap=True)
    common.console.print("Run again with these files in the submission: they are ingested again; until then a run "
                         "stops naming them.")
