"""What the bench measures at each size: the floor, an end-to-end annual run, the credit engine
alone and the row-by-row reference (see bench/README.md)."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import textwrap
from pathlib import Path

from bench import reference as ref
from bench.harness import AS_OF, IMPCREDIT, PY, REPO, TAX_YEAR, measure, tail


def annual_argv(input_dir: Path, runs_dir: Path, name: str) -> tuple[Path, Path, list[str]]:
    """Fresh ``<name>-out`` / ``<name>-work`` folders and the ``annual`` arguments using them."""
    out, work = runs_dir / f"{name}-out", runs_dir / f"{name}-work"
    for d in (out, work):
        if d.exists():
            shutil.rmtree(d)
    argv = ["annual", "--input", str(input_dir), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF,
            "--out", str(out), "--workdir", str(work)]
    return out, work, argv


STAGE_LINE = re.compile(r" impcredit (?P<name>[a-z][a-z -]*): .*\((?P<s>\d+(?:\.\d+)?) s\)\s*$")


STAGE_TEXT = re.compile(r" impcredit (?P<name>[a-z][a-z -]*): (?P<text>.*) \(\d+(?:\.\d+)? s\)\s*$")
PRODUCTS_FILES = re.compile(r"^(?P<n>[\d,]+) files\b")


def stage_seconds(log: Path) -> dict[str, float]:
    """The seconds of each stage line a run printed (``transforms.stages``; 0.1 s resolution).
    The ``reconcile`` line's seconds are inside ``credits``' (the comparison runs in the engine)."""
    out: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = STAGE_LINE.search(line)
        if m:
            out[m["name"]] = round(out.get(m["name"], 0.0) + float(m["s"]), 1)
    return out


STAGE_AT = re.compile(r"^(?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) impcredit (?P<name>[a-z][a-z -]*): .*\((?P<s>\d+(?:\.\d+)?) s\)\s*$")


def stage_gaps(log: Path) -> dict[str, float]:
    """The time between one stage line's end and the next one's start (``"validate -> credits"``:
    what no stage line covers in between, e.g. the identities resolved after the ingest). The
    lines' times are whole seconds: each gap is good to about 1 s. ``reconcile`` is left out
    (inside ``credits``)."""
    ends: list[tuple[str, float, float]] = []
    for line in log.read_text(errors="replace").splitlines():
        m = STAGE_AT.match(line)
        if m and m["name"] != "reconcile":
            end = dt.datetime.fromisoformat(m["at"]).timestamp()
            ends.append((m["name"], end - float(m["s"]), end))
    return {f"{a[0]} -> {b[0]}": round(max(b[1] - a[2], 0.0), 1) for a, b in zip(ends, ends[1:], strict=False)}


def products_files(log: Path) -> int | None:
    """The files the ``products`` stage line says it wrote (``N files (award file, ...)``)."""
    n = None
    for line in log.read_text(errors="replace").splitlines():
        m = STAGE_TEXT.search(line)
        if m and m["name"] == "products" and (f := PRODUCTS_FILES.match(m["text"])):
            n = (n or 0) + int(f["n"].replace(",", ""))
    return n


def end_to_end(input_dir: Path, runs_dir: Path, name: str, *, extra: list[str] | None = None,
               env: dict | None = None) -> dict:
    """The annual run into fresh folders (``extra``: more arguments, e.g. ``--lake``)."""
    out, work, argv = annual_argv(input_dir, runs_dir, name)
    m = measure([str(IMPCREDIT), *argv, *(extra or [])], runs_dir / f"{name}.log", env=env)
    m["out"] = str(out)
    m["work"] = str(work)
    m["stages"] = stage_seconds(REPO / m["log"])
    m["products_files"] = products_files(REPO / m["log"])
    m["stage_gaps"] = stage_gaps(REPO / m["log"])
    if m["returncode"] != 0:
        m["error"] = tail(REPO / m["log"])
    return m


FLOOR = textwrap.dedent("""
    import sys, glob, polars as pl
    files = sorted(glob.glob(sys.argv[1] + "/payroll/*.csv"))
    pl.scan_csv(files).sink_parquet(sys.argv[2])
""")


def floor(input_dir: Path, runs_dir: Path, name: str) -> dict:
    target = runs_dir / f"{name}-floor.parquet"
    m = measure([PY, "-c", FLOOR, str(input_dir), str(target)], runs_dir / f"{name}-floor.log")
    if target.exists():
        m["parquet_bytes"] = target.stat().st_size
        target.unlink()
    return m


# The shaped set's floor: its files have four layouts (their own columns), so each file is its own
# scan and Parquet file, in one process; every cell read as text (the spreadsheet's ssn column
# holds dashed and bare ssns: Polars' inference from the first rows fails on it, and inferring
# from whole files reads each twice: 11 s against 1.5-3 s at 1M rows).
SHAPED_FLOOR = textwrap.dedent("""
    import sys, glob, polars as pl
    from pathlib import Path
    out = Path(sys.argv[2])
    out.mkdir()
    for i, f in enumerate(sorted(glob.glob(sys.argv[1] + "/payroll/*.*"))):
        sep = "|" if f.endswith(".txt") else ","
        pl.scan_csv(f, separator=sep, infer_schema=False).sink_parquet(out / f"part-{i:05d}.parquet")
""")


def shaped_floor(input_dir: Path, runs_dir: Path, name: str) -> dict:
    """Bare Polars over the shaped files: per file ``scan_csv`` (``|`` for the PEO's ``.txt``,
    ``,`` otherwise) into a Parquet file of its own, all files in one subprocess."""
    target = runs_dir / f"{name}-floor-parquet"
    shutil.rmtree(target, ignore_errors=True)
    m = measure([PY, "-c", SHAPED_FLOOR, str(input_dir), str(target)], runs_dir / f"{name}-floor.log")
    if target.exists():
        m["parquet_bytes"] = sum(f.stat().st_size for f in target.iterdir())
        shutil.rmtree(target)
    if m["returncode"] != 0:
        m["error"] = tail(REPO / m["log"])
    return m


ENGINE_CORE = textwrap.dedent("""
    import datetime as dt, json, sys, time
    from pathlib import Path
    import polars as pl
    from transforms.runs.annual import compute
    from transforms.ingest.store.lake import scan_lake
    from transforms.reference.parameters import load_parameters
    from transforms.schema import STAGED
    from transforms.settings import Settings
    wd, tax_year, as_of = Path(sys.argv[1]), int(sys.argv[2]), dt.date.fromisoformat(sys.argv[3])
    params, best = load_parameters(), None
    for _ in range(3):
        frames = {n: scan_lake(wd, n) for n in STAGED}
        t = time.perf_counter()
        res = compute(frames, tax_year, as_of, params, Settings())
        best = min(best or 1e9, time.perf_counter() - t)
    rows = scan_lake(wd, "payroll").select(pl.len()).collect().item()
    print(json.dumps({"seconds": best, "payroll_rows": rows, "employee_years": res.employees.height}))
""")


def engine_core(work: Path, runs_dir: Path, name: str) -> dict:
    """The credit engine alone (spec 3-6, vectorised) over the lake the end-to-end run wrote:
    the like-for-like counterpart of the row-by-row reference (best of 3, per lake row)."""
    m = measure([PY, "-c", ENGINE_CORE, str(work), str(TAX_YEAR), AS_OF], runs_dir / f"{name}-engine-core.log")
    try:
        inner = json.loads((REPO / m["log"]).read_text().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {**m, "error": tail(REPO / m["log"])}
    return {**m, **inner, "s_per_row": inner["seconds"] / max(inner["payroll_rows"], 1)}


def reference_check(input_dir: Path, engine_out: Path | None, n_employers: int) -> dict:
    files, emps = ref.sample_employers(input_dir, n_employers)
    as_of = dt.date.fromisoformat(AS_OF)
    res, stats = ref.reference_credits(
        input_dir, TAX_YEAR, as_of, employers=emps, payroll_files=files
    )
    stats["s_per_row"] = stats["seconds"] / max(stats["payroll_rows"], 1)
    out: dict = {"timed_float": stats}
    if engine_out is not None and (engine_out / "employee_credits.csv").exists():
        exact, xstats = ref.reference_credits(
            input_dir, TAX_YEAR, as_of, employers=emps, payroll_files=files, exact=True
        )
        out["exact_seconds"] = round(xstats["seconds"], 3)
        out["compare_float"] = ref.compare(res, engine_out / "employee_credits.csv", emps, exact)
        out["compare_exact"] = ref.compare(exact, engine_out / "employee_credits.csv", emps)
    return out
