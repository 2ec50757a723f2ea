"""The impcredit benchmark: `make bench` (or `.venv/bin/python bench/run.py`).

Every number is a ratio against a floor measured in the same run on the same machine, because
timings on a shared 2-core machine are noisy. See bench/README.md for what each number means.

    python bench/run.py                    # 1M and 10M payroll rows (about 2,000 / 20,000 employers)
    python bench/run.py --sizes 1m         # one size only
    python bench/run.py --quick            # 20k and 200k rows: a smoke run of the harness (~1 min)
    python bench/run.py --keep             # keep the run outputs and workdirs under bench/data/runs
    python bench/run.py --profile          # also profile the end-to-end run at the smallest size
    python bench/run.py --repeat 5         # floor/end-to-end pairs per size (default 3; medians)

Results: a rich table on stdout and bench/results/latest.json (quick runs: bench/data/quick.json).
Generated submissions are cached in bench/data/ (gitignored) and reused for the same seed and
generator source.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from importlib import metadata
from pathlib import Path

import psutil

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
RESULTS = BENCH / "results"
VENV_BIN = Path(sys.executable).parent
PY = sys.executable
IMPCREDIT = VENV_BIN / "impcredit"
PREFECT_HOME = DATA / ".prefect"

TAX_YEAR = 2023
AS_OF = "2024-07-01"
ROWS_PER_EMPLOYER = 500  # about 464 payroll rows per employer in the generator (3 years)
GB = 1024**3
FILE_COUNTS = (1, 10, 100)  # the files check: the smallest size's payroll in this many files

TARGETS = {
    "e2e_over_floor": ("<=", 3.0),
    "reference_over_e2e_per_row": (">=", 100.0),
    "time_scaling": ("<=", 11.0),  # for 10x rows; scaled with the actual row ratio
    "peak_rss_largest_gb": ("<=", 3.0),
    "peak_rss_1m_gb": ("<=", 3.0),
    "rss_100_over_10_files": ("<=", 1.25),
    # ours, beside the issue's: one file of all the rows (a bulk export) is read in pieces
    "rss_1_over_10_files": ("<=", 1.25),
    "reference_mismatches": ("<=", 0),
}

sys.path.insert(0, str(REPO))
from bench import reference as ref  # noqa: E402

# --------------------------------------------------------------------------- helpers


def parse_size(s: str) -> tuple[str, int]:
    s = s.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1])
    rows = int(float(s[:-1]) * mult) if mult else int(s)
    return s, max(1, rows // ROWS_PER_EMPLOYER)


API_URL: dict[str, str] = {}  # set while a long-running Prefect API serves the measured runs


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    env.update(API_URL)
    env.update(
        PREFECT_HOME=str(PREFECT_HOME),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PYTHONPATH=str(REPO),
    )
    return env


def measure(cmd: list[str], log: Path, *, env: dict | None = None, interval: float = 0.05) -> dict:
    """Run cmd; wall time, peak RSS of the whole process tree (sum, polled), CPU time.

    The page cache is flushed first (``os.sync``), so no command pays for writing back what
    the one before it wrote (the floor's 10M-row file, a previous run's pages). User and system
    CPU seconds are kept apart: on this machine most of the spread between runs of the same
    code is system time.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    s0 = time.perf_counter()
    os.sync()
    sync_s = time.perf_counter() - s0
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        proc = psutil.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env or child_env(), cwd=REPO
        )
        peak = peak_main = 0
        peak_procs = 1
        while proc.poll() is None:
            total = 0
            try:
                procs = [proc, *proc.children(recursive=True)]
            except psutil.NoSuchProcess:
                procs = []
            for p in procs:
                try:
                    rss = p.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
                total += rss
                if p is proc:
                    peak_main = max(peak_main, rss)
            peak = max(peak, total)
            peak_procs = max(peak_procs, len(procs))
            time.sleep(interval)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cmd": " ".join(str(c) for c in cmd),
        "returncode": proc.returncode,
        "wall_s": round(wall, 3),
        "cpu_s": round((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), 3),
        "user_s": round(ru1.ru_utime - ru0.ru_utime, 3),
        "sys_s": round(ru1.ru_stime - ru0.ru_stime, 3),
        "sync_before_s": round(sync_s, 3),
        "peak_rss_bytes": peak,
        "peak_rss_gb": round(peak / GB, 3),
        "peak_rss_main_gb": round(peak_main / GB, 3),
        "max_processes": peak_procs,
        "log": str(log.relative_to(REPO)),
    }


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


# --------------------------------------------------------------------------- data


def generator_fingerprint() -> str:
    """sha256 of the generator's source: cached data made by another version is made again."""
    import hashlib

    h = hashlib.sha256()
    for name in ("generate", "knobs", "population", "records"):
        h.update((REPO / "transforms" / "synthetic" / f"{name}.py").read_bytes())
    return h.hexdigest()[:16]


def dataset(employers: int, seed: int) -> tuple[Path, dict]:
    """A generated submission folder, reused when the marker says same employers, seed, year
    and generator source."""
    d = DATA / f"gen-e{employers}-s{seed}-t{TAX_YEAR}"
    marker = d / ".bench.json"
    gen = generator_fingerprint()
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("employers") == employers and info.get("seed") == seed and info.get("generator") == gen:
            return d, info
    if d.exists():
        shutil.rmtree(d)
    code = textwrap.dedent(f"""
        import json, time
        from pathlib import Path
        from transforms.synthetic.generate import generate_submission
        t0 = time.perf_counter()
        s = generate_submission(Path({str(d)!r}), employers={employers}, seed={seed}, tax_year={TAX_YEAR})
        print(json.dumps({{"employers": s.employers, "payroll_rows": s.payroll_rows, "files": s.files,
                          "employees": s.employees, "applications": s.applications, "rostered": s.rostered,
                          "generate_s": round(time.perf_counter() - t0, 2)}}))
    """)
    out = subprocess.run(
        [PY, "-c", code], capture_output=True, text=True, cwd=REPO, env=child_env()
    )
    if out.returncode != 0:
        raise SystemExit(f"generating {d} failed:\n{out.stderr[-3000:]}")
    info = json.loads(out.stdout.strip().splitlines()[-1])
    info.update(seed=seed, tax_year=TAX_YEAR, generator=gen)
    marker.write_text(json.dumps(info, indent=1))
    return d, info


def resplit(src: Path, n_files: int) -> Path:
    """The same submission with its payroll split into n_files files (employer boundaries)."""
    d = src.parent / f"{src.name}-files{n_files}"
    marker = d / ".bench.json"
    src_marker = json.loads((src / ".bench.json").read_text())
    if marker.exists() and json.loads(marker.read_text()).get("source") == src_marker:
        return d
    if d.exists():
        shutil.rmtree(d)
    (d / "payroll").mkdir(parents=True)
    for f in src.glob("*.csv"):
        shutil.copy2(f, d / f.name)
    code = textwrap.dedent(f"""
        import polars as pl
        from pathlib import Path
        src, dst, n = Path({str(src)!r}), Path({str(d)!r}), {n_files}
        files = sorted((src / "payroll").glob("*.csv"))
        df = pl.concat([pl.read_csv(f, infer_schema=False) for f in files])
        order = df.select(pl.col("employer_id").unique(maintain_order=True)).with_row_index("rank")
        m = order.height
        df = df.join(order, on="employer_id", how="left", maintain_order="left")
        for i in range(n):
            part = df.filter((pl.col("rank") * n // m) == i).drop("rank")
            part.write_csv(dst / "payroll" / f"payroll_{{i + 1:04d}}.csv")
    """)
    out = subprocess.run(
        [PY, "-c", code], capture_output=True, text=True, cwd=REPO, env=child_env()
    )
    if out.returncode != 0:
        raise SystemExit(f"re-splitting {src} into {n_files} files failed:\n{out.stderr[-3000:]}")
    marker.write_text(json.dumps({"source": src_marker, "files": n_files}))
    return d


# --------------------------------------------------------------------------- measurements


class PrefectServer:
    """A long-running Prefect API for the measured runs (as deployed: schedules need one anyway),
    so each run does not pay the temporary server's start-up (about 7 s here)."""

    def __init__(self, runs_dir: Path):
        import socket

        with socket.socket() as s_:
            s_.bind(("127.0.0.1", 0))
            self.port = s_.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/api"
        self.log = runs_dir / "prefect-server.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> PrefectServer:
        import urllib.request

        env = child_env()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True,
        )
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 180:
            if self.proc.poll() is not None:
                raise SystemExit(f"prefect server exited early; see {self.log}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"prefect server did not answer in 180 s; see {self.log}")
        self.startup_s = round(time.perf_counter() - t0, 2)
        API_URL["PREFECT_API_URL"] = self.url
        return self

    def __exit__(self, *exc) -> None:
        API_URL.clear()
        if self.proc is not None and self.proc.poll() is None:
            import signal

            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


PREFECT_NOOP = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    import flows._env  # noqa: F401  (the project's Prefect settings)
    from prefect import flow
    t1 = time.perf_counter()
    @flow(name="bench-noop")
    def noop():
        return 1
    noop()
    t2 = time.perf_counter()
    import flows.annual  # noqa: F401  (everything the CLI imports for an annual run)
    t3 = time.perf_counter()
    print(json.dumps({"import_prefect_s": t1 - t0, "noop_flow_s": t2 - t1, "import_annual_s": t3 - t2}))
""")


def prefect_startup(runs_dir: Path) -> dict:
    """The constant: Prefect import + ephemeral API start + one trivial flow, in a fresh process."""
    cold = not (PREFECT_HOME / "prefect.db").exists()
    out = {}
    for i in range(2):
        m = measure([PY, "-c", PREFECT_NOOP], runs_dir / f"prefect-noop-{i}.log")
        try:
            inner = json.loads((REPO / m["log"]).read_text().strip().splitlines()[-1])
        except (ValueError, IndexError):
            inner = {}
        key = "cold" if (i == 0 and cold) else f"warm{i}"
        out[key] = {**m, **{k: round(v, 3) for k, v in inner.items()}}
    return out


def annual_argv(input_dir: Path, runs_dir: Path, name: str) -> tuple[Path, Path, list[str]]:
    """Fresh ``<name>-out`` / ``<name>-work`` folders and the ``annual`` arguments using them."""
    out, work = runs_dir / f"{name}-out", runs_dir / f"{name}-work"
    for d in (out, work):
        if d.exists():
            shutil.rmtree(d)
    argv = ["annual", "--input", str(input_dir), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF,
            "--out", str(out), "--workdir", str(work)]
    return out, work, argv


def median_run(runs: list[dict]) -> dict:
    """The run with the median wall time (the upper one of an even count); a failed run wins, so
    that it is seen. Its peak RSS is the largest of all runs; every run is listed in ``runs``."""
    failed = [m for m in runs if m["returncode"] != 0]
    chosen = dict(failed[0] if failed else sorted(runs, key=lambda m: m["wall_s"])[len(runs) // 2])
    peak = max(m["peak_rss_bytes"] for m in runs)
    chosen.update(peak_rss_bytes=peak, peak_rss_gb=round(peak / GB, 3),
                  runs=[{k: m.get(k) for k in ("wall_s", "cpu_s", "user_s", "sys_s", "peak_rss_gb")} for m in runs])
    return chosen


def runs_note(runs: list[dict]) -> str:
    walls = ", ".join(f"{m['wall_s']:.2f}" for m in runs)
    return "" if len(runs) < 2 else f" (median of {walls})"


def end_to_end(input_dir: Path, runs_dir: Path, name: str) -> dict:
    out, work, argv = annual_argv(input_dir, runs_dir, name)
    m = measure([str(IMPCREDIT), *argv], runs_dir / f"{name}.log")
    m["out"] = str(out)
    m["work"] = str(work)
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


ENGINE_CORE = textwrap.dedent("""
    import datetime as dt, json, sys, time
    from pathlib import Path
    import polars as pl
    from transforms.runs.annual import compute
    from transforms.ingest.lake import scan_lake
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


# --------------------------------------------------------------------------- profile


PROFILE_DRIVER = textwrap.dedent("""
    # Times the steps of an annual run (wrapping functions at run time; no project file changes),
    # and keeps a cProfile of the whole command.
    import cProfile, functools, importlib, json, sys, time, threading
    T0 = time.perf_counter()
    timings = []
    out_json, prof_path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    import flows._env  # noqa
    T_IMPORT0 = time.perf_counter()
    import flows.cli, flows.annual, transforms.runs.annual  # noqa
    T_IMPORT = time.perf_counter() - T_IMPORT0
    depth = threading.local()

    def wrap(modname, attr):
        try:
            mod = importlib.import_module(modname)
        except Exception:
            return
        obj, name = mod, attr
        if "." in attr:
            cls, name = attr.split(".")
            obj = getattr(mod, cls, None)
            if obj is None:
                return
        fn = getattr(obj, name, None)
        if fn is None or getattr(fn, "__bench__", False):
            return
        label = f"{modname}.{attr}"
        @functools.wraps(fn)
        def timed(*a, **k):
            d = getattr(depth, "d", 0)
            depth.d = d + 1
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                depth.d = d
                timings.append({"step": label, "depth": d, "seconds": time.perf_counter() - t,
                                "start": t - T0})
        timed.__bench__ = True
        setattr(obj, name, timed)

    for spec in [
        "transforms.runs.annual:stage_inputs", "transforms.runs.annual:stage_submission", "transforms.runs.inputs:input_file_records",
        "transforms.runs.annual:load_lake", "transforms.runs.annual:compute", "transforms.runs.annual:compute_credits",
        "transforms.runs.annual:decide_and_commit", "transforms.runs.annual:decide_against_ledger",
        "transforms.runs.annual:write_outputs", "transforms.runs.annual:code_version", "transforms.runs.annual:write_csv",
        "transforms.runs.annual:employee_output", "transforms.runs.annual:run_record",
        "transforms.award.ledger:commit_run", "transforms.award.ledger:connect",
        "transforms.outputs:StagedOutputs.publish",
        "transforms.runs.annual:ingest_folder", "transforms.ingest:ingest_folder",
        "transforms.ingest.tables:read_tables", "transforms.ingest.files:validate_table",
        "transforms.ingest.tables:stage_table", "transforms.ingest.tables:discover",
        "transforms.ingest.staging:stage_table", "transforms.runs.annual:clean_stale_staging",
        "transforms.ingest.pipeline:cross_row_rejects", "transforms.ingest.files:masked_ssns",
        "transforms.ingest.staging:hash_ssn_column",
        "transforms.products:write_products", "transforms.products:write_award_file",
        "transforms.products:write_certificates", "transforms.products:write_notices",
        "transforms.products.reports:write_reports",
    ]:
        m, a = spec.split(":")
        wrap(m, a)
    for modname in ("transforms.ingest.validate", "transforms.ingest.lake", "transforms.ingest.readers"):
        try:
            mod = importlib.import_module(modname)
        except Exception:
            continue
        for a in dir(mod):
            f = getattr(mod, a)
            if callable(f) and not a.startswith("_") and getattr(f, "__module__", "") == modname \\
                    and not isinstance(f, type):
                wrap(modname, a)
    sys.argv = ["impcredit", *argv]
    prof = cProfile.Profile()
    rc = 0
    T_RUN0 = time.perf_counter()
    try:
        prof.enable()
        flows.cli.main()
    except SystemExit as e:
        rc = e.code or 0
    finally:
        prof.disable()
        prof.dump_stats(prof_path)
        json.dump({"import_s": T_IMPORT, "run_s": time.perf_counter() - T_RUN0, "total_s": time.perf_counter() - T0,
                   "steps": timings, "rc": rc}, open(out_json, "w"), indent=1)
""")


def profile(input_dir: Path, runs_dir: Path, name: str) -> dict:
    import pstats

    out, work, argv = annual_argv(input_dir, runs_dir, f"{name}-profile")
    tj, prof = runs_dir / f"{name}-profile-steps.json", runs_dir / f"{name}.prof"
    m = measure(
        [PY, "-c", PROFILE_DRIVER, str(tj), str(prof), *argv], runs_dir / f"{name}-profile.log"
    )
    res = {"measure": m}
    if tj.exists():
        steps = json.loads(tj.read_text())
        agg: dict[str, dict] = {}
        for s in steps["steps"]:
            a = agg.setdefault(s["step"], {"seconds": 0.0, "calls": 0, "depth": s["depth"]})
            a["seconds"] += s["seconds"]
            a["calls"] += 1
            a["depth"] = min(a["depth"], s["depth"])
        res["import_s"] = round(steps["import_s"], 3)
        res["run_s"] = round(steps["run_s"], 3)
        res["steps"] = {
            k: {**v, "seconds": round(v["seconds"], 3)}
            for k, v in sorted(agg.items(), key=lambda kv: -kv[1]["seconds"])
        }
    if prof.exists():
        st = pstats.Stats(str(prof))
        rows = []
        for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
            rows.append(
                {
                    "func": f"{Path(file).name}:{line}:{func}",
                    "file": file,
                    "ncalls": nc,
                    "tottime": round(tt, 3),
                    "cumtime": round(ct, 3),
                }
            )
        res["cprofile_top_cumulative_project"] = sorted(
            [
                r
                for r in rows
                if str(REPO / "transforms") in r["file"] or str(REPO / "flows") in r["file"]
            ],
            key=lambda r: -r["cumtime"],
        )[:30]
        res["cprofile_top_tottime"] = sorted(rows, key=lambda r: -r["tottime"])[:25]
        res["cprofile_file"] = str(prof.relative_to(REPO))
    return res


# --------------------------------------------------------------------------- report


def machine() -> dict:
    def v(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_count_physical": psutil.cpu_count(logical=False),
        "memory_gb": round(psutil.virtual_memory().total / GB, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        **{
            p: v(p)
            for p in ("polars", "duckdb", "pyarrow", "prefect", "great-expectations", "impcredit")
        },
        "git_head": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "git_dirty_files": len(
            subprocess.run(
                ["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True, text=True
            ).stdout.splitlines()
        ),
    }


def code_fingerprint() -> str:
    """sha256 of every .py file under transforms/ and flows/ (other people edit them meanwhile)."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted([*(REPO / "transforms").rglob("*.py"), *(REPO / "flows").rglob("*.py")]):
        h.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def verdict(name: str, value) -> str:
    if value is None:
        return "n/a"
    op, target = TARGETS[name]
    ok = value <= target if op == "<=" else value >= target
    return "pass" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="impcredit benchmark (see bench/README.md)")
    ap.add_argument(
        "--sizes", default="1m,10m", help="comma-separated payroll sizes, e.g. 1m,10m or 200k"
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: 20k and 200k rows")
    ap.add_argument(
        "--keep", action="store_true", help="keep run outputs and workdirs (bench/data/runs)"
    )
    ap.add_argument("--seed", type=int, default=20230)
    ap.add_argument(
        "--sample-employers", type=int, default=50, help="employers checked by the reference"
    )
    ap.add_argument(
        "--profile", action="store_true", help="profile the end-to-end run at the smallest size"
    )
    ap.add_argument(
        "--no-files-check", action="store_true", help="skip the 10 vs 100 files memory check"
    )
    ap.add_argument(
        "--api", choices=["server", "ephemeral"], default="server",
        help="server: the measured runs use one long-running Prefect API (as deployed); "
        "ephemeral: each run starts Prefect's temporary server",
    )
    ap.add_argument(
        "--repeat", type=int, default=3,
        help="floor and end-to-end runs per size, in pairs; the median of each is reported (1 with --quick)",
    )
    ap.add_argument("--output", type=Path, help="results file (default bench/results/latest.json)")
    a = ap.parse_args(argv)
    if a.api == "server":
        with PrefectServer(DATA / "runs") as srv:
            print(f"Prefect API {srv.url} (started in {srv.startup_s} s) serves the measured runs")
            return _main(a, api={"mode": "server", "url": srv.url, "startup_s": srv.startup_s})
    return _main(a, api={"mode": "ephemeral"})


def _main(a: argparse.Namespace, api: dict) -> int:

    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 140)
    repeat = 1 if a.quick else max(1, a.repeat)
    sizes = [parse_size(s) for s in ("20k,200k" if a.quick else a.sizes).split(",") if s.strip()]
    sizes.sort(key=lambda s: s[1])
    runs_dir = DATA / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    remove_run_folders(runs_dir)  # left by --keep or a crash: gone before anything is measured
    result: dict = {
        "machine": machine(),
        "settings": {
            "sizes": [s for s, _ in sizes],
            "seed": a.seed,
            "tax_year": TAX_YEAR,
            "as_of": AS_OF,
            "quick": a.quick,
            "repeat": repeat,
            "prefect_api": api,
        },
        "load_avg_start": os.getloadavg(),
        "code_fingerprint_start": code_fingerprint(),
    }

    con.rule("impcredit benchmark")
    con.print("Prefect start-up constant (trivial flow in a fresh process)...")
    result["prefect_startup"] = prefect_startup(runs_dir)
    ps = result["prefect_startup"]
    warm = ps.get("warm1", {})
    con.print(
        f"  {json.dumps({k: {kk: vv for kk, vv in v.items() if kk.endswith('_s')} for k, v in ps.items()})}"
    )

    per_size: dict[str, dict] = {}
    for label, employers in sizes:
        con.rule(f"size {label}: {employers:,} employers")
        d, info = dataset(employers, a.seed)
        con.print(
            f"  data {d.relative_to(REPO)}: {info['payroll_rows']:,} rows in {info['files']} files"
        )
        r: dict = {"employers": employers, "data": info}
        floors, e2es = [], []
        for i in range(repeat):  # pairs, so that both sides of each ratio see the same moment
            floors.append(floor(d, runs_dir, label))
            # each run writes fresh folders (see remove_run_folders)
            e2es.append(end_to_end(d, runs_dir, label if i == 0 else f"{label}-{i + 1}"))
        r["floor"], r["e2e"] = median_run(floors), median_run(e2es)
        con.print(f"  floor: {r['floor']['wall_s']:.2f} s{runs_note(floors)}, {r['floor']['peak_rss_gb']:.2f} GB")
        e = r["e2e"]
        con.print(
            f"  end-to-end: rc {e['returncode']}, {e['wall_s']:.2f} s{runs_note(e2es)}, {e['peak_rss_gb']:.2f} GB"
        )
        if e["returncode"] != 0:
            con.print(f"[red]  end-to-end failed:[/]\n{e.get('error', '')}")
        if e["returncode"] == 0:
            r["engine_core"] = engine_core(Path(e["work"]), runs_dir, label)
            ec = r["engine_core"]
            if "seconds" in ec:
                con.print(f"  credit engine alone (best of 3): {ec['seconds']:.2f} s over {ec['payroll_rows']:,} lake rows")
        r["e2e_per_row_s"] = e["wall_s"] / info["payroll_rows"]
        r["e2e_minus_prefect_per_row_s"] = (
            max(e["wall_s"] - warm.get("wall_s", 0.0), 0) / info["payroll_rows"]
        )
        r["e2e_over_floor"] = round(e["wall_s"] / r["floor"]["wall_s"], 2)
        r["reference"] = reference_check(
            d, Path(e["out"]) if e["returncode"] == 0 else None, a.sample_employers
        )
        rs = r["reference"]
        con.print(
            f"  reference: {rs['timed_float']['payroll_rows']:,} rows of {rs['timed_float']['employers']} "
            f"employers in {rs['timed_float']['seconds']:.2f} s; mismatches "
            f"{rs.get('compare_float', {}).get('mismatches', 'n/a')} (float) / "
            f"{rs.get('compare_exact', {}).get('mismatches', 'n/a')} (exact)"
        )
        per_size[label] = r
    result["sizes"] = per_size

    small_label, small_emp = sizes[0]
    if not a.no_files_check:
        con.rule(f"files check: {small_label} rows in 1, 10 and 100 files")
        src, _ = dataset(small_emp, a.seed)
        fc = {}
        for n in FILE_COUNTS:
            dn = resplit(src, n)
            fc[f"files{n}"] = end_to_end(dn, runs_dir, f"{small_label}-files{n}")
            fc[f"files{n}_floor"] = floor(dn, runs_dir, f"{small_label}-files{n}")
            con.print(
                f"  {n} files: {fc[f'files{n}']['wall_s']:.2f} s, {fc[f'files{n}']['peak_rss_gb']:.2f} GB "
                f"(floor {fc[f'files{n}_floor']['peak_rss_gb']:.2f} GB)"
            )
        result["files_check"] = fc

    if a.profile:
        con.rule(f"profile at {small_label}")
        src, _ = dataset(small_emp, a.seed)
        result["profile"] = profile(src, runs_dir, small_label)
        pr = result["profile"]
        top = sum(v["seconds"] for v in pr.get("steps", {}).values() if v["depth"] == 0)
        pr["outside_steps_s"] = round(pr.get("run_s", 0) - top, 3)
        con.print(
            f"  process {pr['measure']['wall_s']:.2f} s: imports {pr.get('import_s')} s, CLI run {pr.get('run_s')} s "
            f"of which timed steps {top:.2f} s and outside them (Prefect flow/task machinery, CLI) "
            f"{pr['outside_steps_s']:.2f} s"
        )
        for k, v in list(pr.get("steps", {}).items())[:20]:
            con.print(f"  {v['seconds']:8.2f} s  x{v['calls']:<4} {'  ' * v['depth']}{k}")

    # ---- ratios
    big_label, _ = sizes[-1]
    big, small = per_size[big_label], per_size[small_label]
    ok_e2e = all(per_size[s]["e2e"]["returncode"] == 0 for s in per_size)
    ref_per_row = big["reference"]["timed_float"]["s_per_row"]
    row_ratio = big["data"]["payroll_rows"] / small["data"]["payroll_rows"]
    ratios = {
        "e2e_over_floor": big["e2e_over_floor"] if ok_e2e else None,
        "reference_over_e2e_per_row": round(ref_per_row / big["e2e_per_row_s"], 2)
        if ok_e2e
        else None,
        "time_scaling": round(big["e2e"]["wall_s"] / small["e2e"]["wall_s"], 2)
        if ok_e2e and len(sizes) > 1
        else None,
        "peak_rss_largest_gb": big["e2e"]["peak_rss_gb"] if ok_e2e else None,
        "peak_rss_1m_gb": per_size["1m"]["e2e"]["peak_rss_gb"]
        if "1m" in per_size and ok_e2e
        else None,
        "rss_100_over_10_files": None,
        "rss_1_over_10_files": None,
        "reference_mismatches": None,
    }
    if "files_check" in result and all(
        result["files_check"][f"files{n}"]["returncode"] == 0 for n in FILE_COUNTS
    ):
        fc = result["files_check"]
        for n in (100, 1):
            ratios[f"rss_{n}_over_10_files"] = round(
                fc[f"files{n}"]["peak_rss_bytes"] / fc["files10"]["peak_rss_bytes"], 3
            )
    mism = [per_size[s]["reference"].get("compare_float", {}).get("mismatches") for s in per_size]
    if all(m is not None for m in mism):
        ratios["reference_mismatches"] = sum(mism)
    targets = dict(TARGETS)
    targets["time_scaling"] = ("<=", round(1.1 * row_ratio, 2))
    result["row_ratio_largest_over_smallest"] = round(row_ratio, 3)
    result["ratios"] = {
        k: {
            "value": v,
            "target": f"{targets[k][0]} {targets[k][1]}",
            "result": "n/a"
            if v is None
            else (
                "pass"
                if (v <= targets[k][1] if targets[k][0] == "<=" else v >= targets[k][1])
                else "FAIL"
            ),
        }
        for k, v in ratios.items()
    }
    # extra context
    result["context"] = {
        "e2e_over_floor_minus_prefect_constant": {
            s: round(
                max(per_size[s]["e2e"]["wall_s"] - warm.get("wall_s", 0.0), 0)
                / per_size[s]["floor"]["wall_s"],
                2,
            )
            for s in per_size
        },
        "time_scaling_minus_prefect_constant": round(
            (big["e2e"]["wall_s"] - warm.get("wall_s", 0))
            / max(small["e2e"]["wall_s"] - warm.get("wall_s", 0), 1e-9),
            2,
        )
        if len(sizes) > 1
        else None,
        "reference_us_per_row": round(ref_per_row * 1e6, 2),
        "engine_core_us_per_row": {
            s: round(per_size[s]["engine_core"]["s_per_row"] * 1e6, 4)
            for s in per_size if "s_per_row" in per_size[s].get("engine_core", {})
        },
        # the row-by-row reference against the vectorised credit engine alone (not the target's
        # end-to-end comparison, which no pipeline that reads the files can meet: bench/README.md)
        "reference_over_engine_core_per_row": round(
            ref_per_row / big["engine_core"]["s_per_row"], 1
        ) if "s_per_row" in big.get("engine_core", {}) else None,
        "e2e_us_per_row": {s: round(per_size[s]["e2e_per_row_s"] * 1e6, 3) for s in per_size},
        "prefect_constant_s": warm.get("wall_s"),
    }
    result["load_avg_end"] = os.getloadavg()
    result["code_fingerprint_end"] = code_fingerprint()
    result["code_changed_during_run"] = (
        result["code_fingerprint_end"] != result["code_fingerprint_start"]
    )
    if result["code_changed_during_run"]:
        con.print(
            "[bold yellow]warning:[/] transforms/ or flows/ changed during the run: sizes are not comparable"
        )

    t = Table(
        title=f"impcredit benchmark ({', '.join(s for s, _ in sizes)}; {result['machine']['cpu_count']} cpus)"
    )
    for c in ("metric", "value", "target", "result"):
        t.add_column(c, justify="left" if c == "metric" else "right")
    for k, v in result["ratios"].items():
        style = {"pass": "green", "FAIL": "bold red"}.get(v["result"], "yellow")
        t.add_row(
            k,
            "n/a" if v["value"] is None else str(v["value"]),
            v["target"],
            f"[{style}]{v['result']}[/]",
        )
    con.print(t)
    t2 = Table(title="raw numbers")
    for c in (
        "size",
        "rows",
        "files",
        "e2e s",
        "e2e GB",
        "floor s",
        "floor GB",
        "e2e µs/row",
        "ref µs/row",
        "mismatches",
    ):
        t2.add_column(c, justify="right")
    for s, r in per_size.items():
        t2.add_row(
            s,
            f"{r['data']['payroll_rows']:,}",
            str(r["data"]["files"]),
            f"{r['e2e']['wall_s']:.2f}",
            f"{r['e2e']['peak_rss_gb']:.2f}",
            f"{r['floor']['wall_s']:.2f}",
            f"{r['floor']['peak_rss_gb']:.2f}",
            f"{r['e2e_per_row_s'] * 1e6:.3f}",
            f"{r['reference']['timed_float']['s_per_row'] * 1e6:.2f}",
            str(r["reference"].get("compare_float", {}).get("mismatches", "n/a")),
        )
    con.print(t2)
    ctx = result["context"]
    if ctx.get("reference_over_engine_core_per_row") is not None:
        con.print(
            f"credit engine alone: {ctx['engine_core_us_per_row']} us per lake row; the reference is "
            f"{ctx['reference_over_engine_core_per_row']}x slower per row (context, not a target)"
        )
    con.print(
        f"Prefect constant (warm, trivial flow process): {warm.get('wall_s')} s; "
        f"load avg start {result['load_avg_start']}, end {result['load_avg_end']}"
    )

    out = a.output or (DATA / "quick.json" if a.quick else RESULTS / "latest.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, default=str))
    tmp.replace(out)
    con.print(f"results: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    if not a.keep:
        remove_run_folders(runs_dir)
    return 0 if ok_e2e else 1


def remove_run_folders(runs_dir: Path) -> None:
    """Delete the runs' ``*-out`` / ``*-work`` folders, then flush.

    Never between measured runs: a run that starts right after a large deletion (a run's 30,000
    files) pays for it in system time, more with every repetition (10M, three runs in a row
    reusing one folder: 4.8, 13.7, 18.5 CPU-seconds of system time; 1M: 1.6-1.7 s with fresh
    folders against 1.8-3.7 s after deleting the last run's; ext4 mounted with discard here).
    So every repetition writes fresh folders, deleted here at the start and the end of a bench.
    """
    for p in [*runs_dir.glob("*-out"), *runs_dir.glob("*-work")]:
        shutil.rmtree(p, ignore_errors=True)
    os.sync()


if __name__ == "__main__":
    raise SystemExit(main())
