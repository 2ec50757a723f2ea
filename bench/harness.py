"""The bench's harness: where things are, how a command is measured (wall time, peak RSS of the
process tree, CPU), the generated submissions it measures, and a long-running Prefect server for
``--api server``."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
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
# Held-out-like sets (issue 37 part 5): 3,000+ employers at about 1M payroll rows (the generator's
# default of 6 employees per employer gives about 2,000): 4.2 employees per employer on average,
# about 336 payroll rows each over the 3 years; 1m -> 3,030 employers, 10m -> 30,303 (in proportion)
MEAN_EMPLOYEES = 4.2
ROWS_PER_EMPLOYER = 330
GB = 1024**3
FILE_COUNTS = (1, 10, 100)  # the files check: the smallest size's payroll in this many files


def parse_size(s: str) -> tuple[str, int]:
    s = s.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1])
    rows = int(float(s[:-1]) * mult) if mult else int(s)
    return s, max(1, rows // ROWS_PER_EMPLOYER)


API_URL: dict[str, str] = {}  # set while a long-running Prefect API serves the measured runs
API_MODE = {"mode": "shared"}  # shared (the embedded default), server or ephemeral: see --api


def child_env() -> dict[str, str]:
    """The environment of a measured command: the bench's PREFECT_HOME, and the API of ``--api``
    (``shared``: none given, so the CLI uses the shared local API it starts on first use, as an
    analyst's runs do; ``ephemeral``: Prefect's temporary server per run; ``server``: one
    ``prefect server start`` of the bench)."""
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    env.pop("IMPCREDIT_API", None)
    if API_MODE["mode"] == "ephemeral":
        env["IMPCREDIT_API"] = "temporary"
    env.update(API_URL)
    env.update(
        PREFECT_HOME=str(PREFECT_HOME),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PYTHONPATH=str(REPO),
    )
    return env


RSS_CAP = {"gb": 8.0}  # --rss-cap-gb: a measured process tree above it is stopped (the machine is shared)


def _stop_tree(proc: psutil.Popen, procs: list) -> None:
    """Kill the measured command and its children of its session (the shared Prefect API a run
    may have started has a session of its own and is left running)."""
    try:
        sid = os.getsid(proc.pid)
    except OSError:
        return
    for p in reversed(procs):
        try:
            if os.getsid(p.pid) == sid:
                p.kill()
        except (OSError, psutil.Error):
            continue


def measure(cmd: list[str], log: Path, *, env: dict | None = None, interval: float = 0.05) -> dict:
    """Run cmd; wall time, peak RSS of the whole process tree (sum, polled), CPU time.

    The page cache is flushed first (``os.sync``), so no command pays for writing back what
    the one before it wrote (the floor's 10M-row file, a previous run's pages). User and system
    CPU seconds are kept apart: on this machine most of the spread between runs of the same
    code is system time. A tree whose RSS passes ``RSS_CAP`` is killed (``rss_cap_killed``: its
    return code is the kill's, so the run counts as failed).
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
        cap, capped = RSS_CAP["gb"] * GB, False
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
            if total > cap and not capped:
                capped = True
                _stop_tree(proc, procs)
                out.write(f"\nbench: killed: the process tree's RSS {total / GB:.2f} GB passed the cap of "
                          f"{RSS_CAP['gb']} GB (--rss-cap-gb)\n".encode())
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
        **({"rss_cap_killed": True, "rss_cap_gb": RSS_CAP["gb"]} if capped else {}),
    }


@contextlib.contextmanager
def side_process(code: str, args: list[str], log: Path):
    """A server beside the measured runs (``python -c code *args``, its stderr in ``log``, a session
    of its own): yields the process, whose first line on stdout is its address; stopped at the end
    (TERM, then KILL after 30 s)."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([PY, "-c", code, *args], stdout=subprocess.PIPE, stderr=err, env=child_env(), cwd=REPO,
                                text=True, start_new_session=True)
        try:
            yield proc
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


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


def generator_fingerprint() -> str:
    """sha256 of the generator's source (every module of ``transforms/synthetic/``, the declared
    totals' ``declared.py`` included): cached data made by another version is made again."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((REPO / "transforms" / "synthetic").glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def dataset(employers: int, seed: int) -> tuple[Path, dict]:
    """A generated submission folder (``MEAN_EMPLOYEES`` employees per employer on average),
    reused when the marker says same employers, mean, seed, year and generator source; its
    marker also counts the roster's declared totals (``declared_info``)."""
    d = DATA / f"gen-e{employers}-m{MEAN_EMPLOYEES}-s{seed}-t{TAX_YEAR}"
    marker = d / ".bench.json"
    gen = generator_fingerprint()
    if marker.exists():
        info = json.loads(marker.read_text())
        if (info.get("employers") == employers and info.get("seed") == seed and info.get("generator") == gen
                and info.get("mean_employees") == MEAN_EMPLOYEES):
            return d, info
    if d.exists():
        shutil.rmtree(d)
    code = textwrap.dedent(f"""
        import json, time
        from pathlib import Path
        from transforms.synthetic.generate import generate_submission
        t0 = time.perf_counter()
        s = generate_submission(Path({str(d)!r}), employers={employers}, seed={seed}, tax_year={TAX_YEAR},
                                groups_and_fiscal=False, mean_employees={MEAN_EMPLOYEES})
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
    info.update(seed=seed, tax_year=TAX_YEAR, generator=gen, mean_employees=MEAN_EMPLOYEES, declared=declared_info(d))
    marker.write_text(json.dumps(info, indent=1))
    return d, info


def declared_info(d: Path) -> dict:
    """The roster's declared totals (issue 35; the generator declares for about 80% of employers):
    roster lines and applicants, and how many of them carry any of the six declared figures."""
    import polars as pl

    from transforms.schema import DECLARED

    roster = pl.read_csv(d / "roster.csv", infer_schema=False)
    apps = pl.read_csv(d / "applications.csv", infer_schema=False).select("application_id", "employer_id").unique(
        "application_id")
    have = [c for c in DECLARED if c in roster.columns]
    any_declared = pl.any_horizontal(pl.col(c).fill_null("") != "" for c in have) if have else pl.lit(False)
    lines = roster.join(apps, on="application_id", how="left").with_columns(any_declared.alias("declared"))
    employers = lines.group_by("employer_id").agg(pl.col("declared").any())
    n, k = employers.height, int(employers.get_column("declared").sum())
    return {"roster_lines": lines.height, "lines_declaring": int(lines.get_column("declared").sum()),
            "employers": n, "employers_declaring": k, "employers_declaring_share": round(k / n, 3) if n else None}


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
