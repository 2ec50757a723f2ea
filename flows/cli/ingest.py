"""``impcredit ingest``: a submission into the Parquet lake alone (profiles, validation, quarantine, Data Docs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from flows import _env
from flows.cli import common


def ingest(
    input: Annotated[Path, typer.Option("--input", help="Submission folder (canonical or vendor layouts).", metavar="DIR")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Workdir holding the Parquet lake.", metavar="DIR")] = common.DATA / "work",
    lake: Annotated[str | None, typer.Option("--lake", help=common.LAKE_HELP, metavar="DIR|URL")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Where to write rejects.csv (default: the workdir).", metavar="DIR")] = None,
    engine: Annotated[str | None, typer.Option(
        "--validation-engine", metavar="gx|polars",
        help="gx: Great Expectations Core, file by file, and its Data Docs under <out>/data_docs; "
        "polars: the same suites compiled to Polars (no Data Docs; what annual runs use). Default: gx, or polars "
        "on a Dask cluster.",
    )] = None,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
    dask_address: Annotated[str | None, typer.Option("--dask-address", help=_env.DASK_HELP, metavar="ADDRESS")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help=_env.WORKERS_HELP, metavar="N")] = None,
) -> None:
    """Ingest a submission into the Parquet lake alone: profiles, validation, quarantine."""
    cfg, layouts = common.use_profiles(profiles)
    on_cluster = bool(workers or dask_address or os.environ.get("IMPCREDIT_DASK_ADDRESS"))
    engine = engine or cfg.validation_engine or ("polars" if on_cluster else "gx")
    if engine not in ("gx", "polars"):
        common.fail(f"--validation-engine must be gx or polars, not {engine!r}")
    if not input.is_dir():
        common.fail(f"--input {input} is not a folder")
    common.local_dir(out, "--out")
    if on_cluster and engine == "gx":
        common.fail("--validation-engine gx writes Data Docs on one machine: give --validation-engine polars with "
                    "--workers or --dask-address, or run without the cluster")
    common.use_lake(workdir, lake, writes=True)
    with common.dask_cluster(workers, dask_address) as address:
        try:
            from transforms.ingest import ingest_folder
            key = _env.hash_key()
            said = _env.one_key(workdir.resolve(), ("lake",))  # before anything is read: the lake's key is this one
            if said:
                common.console.print(f"[yellow]note:[/] key: {said}", soft_wrap=True)
            with common.console.status("ingesting..."):
                docs = ((out or workdir) / "data_docs").resolve() if engine == "gx" else None
                report = ingest_folder(input.resolve(), workdir.resolve(), key, docs_dir=docs, engine=engine,
                                       cluster=_env.executor(address, cfg), key_loader=_env.hash_key, layouts=layouts,
                                       memory_up_to_bytes=cfg.ingest().scratch_in_memory_bytes, tasks=cfg.ingest_tasks)
            paths = report.write_rejects((out or workdir).resolve())
        except common.known_errors() as exc:
            common.fail(common.said(exc))
            return
    common.console.print(report.summary())
    common.console.print(f"rejects: {paths[0] if paths else 'none'}")
    if docs is not None and (docs / "index.html").is_file():
        common.console.print(f"Data Docs (Great Expectations): {docs / 'index.html'}")
    if key.is_demo:
        common.console.print("[yellow]note:[/] ssn hashes use the built-in demo key.")
