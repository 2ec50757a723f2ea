"""The impcredit benchmark: `make bench` (or `.venv/bin/python bench/run.py`).

Every number is a ratio against a floor measured in the same run on the same machine, because
timings on a shared 2-core machine are noisy. See bench/README.md for what each number means.

    python bench/run.py                    # 1M and 10M payroll rows (about 3,000 / 30,000 employers)
    python bench/run.py --sizes 1m         # one size only
    python bench/run.py --quick            # 20k and 200k rows: a smoke run of the harness (~2 min)
    python bench/run.py --keep             # keep the run outputs and workdirs under bench/data/runs
    python bench/run.py --profile          # also profile the end-to-end run at the smallest size
    python bench/run.py --repeat 5         # floor/end-to-end pairs per size (default 3; medians)

Results: rich tables on stdout and bench/results/latest.json (quick runs: bench/data/quick.json); the
targets (bench/targets.py) with their values and verdicts under ``targets``.
Generated submissions are cached in bench/data/ (gitignored) and reused for the same seed and
generator source.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import harness as h  # noqa: E402
from bench import measures, report, scale_runs, targets  # noqa: E402
from bench.startup import EMPLOYERS as STARTUP_EMPLOYERS  # noqa: E402
from bench.startup import startup  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="impcredit benchmark (see bench/README.md)")
    ap.add_argument("--sizes", default="1m,10m", help="comma-separated payroll sizes, e.g. 1m,10m or 200k")
    ap.add_argument("--quick", action="store_true", help="smoke run: 20k and 200k rows")
    ap.add_argument("--keep", action="store_true", help="keep run outputs and workdirs (bench/data/runs)")
    ap.add_argument("--seed", type=int, default=20230)
    ap.add_argument("--sample-employers", type=int, default=50, help="employers checked by the reference")
    ap.add_argument("--profile", action="store_true", help="profile the end-to-end run at the smallest size")
    ap.add_argument("--no-files-check", action="store_true", help="skip the 1, 10 and 100 files memory check")
    ap.add_argument("--no-formats", action="store_true",
                    help="skip reading a payroll report (Gusto's journal) against the canonical layout, per row")
    ap.add_argument("--no-scale-runs", action="store_true",
                    help="skip quarterly, what-if, corrected rerun and Dask at the largest size")
    ap.add_argument("--no-shaped", action="store_true",
                    help="skip the shaped data set (the same payroll as employers' systems write it: bench/shaped.py)")
    ap.add_argument("--no-s3", action="store_true",
                    help="skip the annual runs with the lake in S3 (a local moto server) at the smallest size")
    ap.add_argument(
        "--api", choices=["shared", "server", "ephemeral"], default="shared",
        help="shared (default): the embedded default of the CLI, one local API started on first use and "
        "reused (as an analyst's runs); server: one `prefect server start` of the bench; ephemeral: "
        "Prefect's temporary server in each run",
    )
    ap.add_argument("--repeat", type=int, default=3,
                    help="floor and end-to-end runs per size, in pairs; the median of each (1 with --quick)")
    ap.add_argument("--rss-cap-gb", type=float, default=8.0,
                    help="kill a measured process tree whose RSS passes this (the machine is shared; default 8)")
    ap.add_argument("--output", type=Path, help="results file (default bench/results/latest.json)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    h.API_MODE["mode"] = a.api
    h.RSS_CAP["gb"] = a.rss_cap_gb
    if a.api == "server":
        with h.PrefectServer(h.DATA / "runs") as srv:
            print(f"Prefect API {srv.url} (started in {srv.startup_s} s) serves the measured runs")
            return run(a, api={"mode": "server", "url": srv.url, "startup_s": srv.startup_s})
    return run(a, api={"mode": a.api})


def run(a: argparse.Namespace, api: dict) -> int:
    from rich.console import Console

    con = Console(width=None if sys.stdout.isatty() else 140)
    repeat = 1 if a.quick else max(1, a.repeat)
    sizes = sorted((h.parse_size(s) for s in ("20k,200k" if a.quick else a.sizes).split(",") if s.strip()),
                   key=lambda s: s[1])
    runs_dir = h.DATA / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    h.remove_run_folders(runs_dir)  # left by --keep or a crash: gone before anything is measured
    result: dict = {
        "machine": report.machine(),
        "settings": {"sizes": [s for s, _ in sizes], "seed": a.seed, "tax_year": h.TAX_YEAR, "as_of": h.AS_OF,
                     "quick": a.quick, "repeat": repeat, "prefect_api": api, "scale_runs": not a.no_scale_runs,
                     "mean_employees": h.MEAN_EMPLOYEES, "rows_per_employer": h.ROWS_PER_EMPLOYER},
        "load_avg_start": os.getloadavg(),
        "code_fingerprint_start": report.code_fingerprint(),
    }
    con.rule("impcredit benchmark")
    result["bytecode"] = compile_project()
    result["startup"] = phase_startup(con, runs_dir, a.seed, max(repeat, 3) if not a.quick else 2)
    result["sizes"] = {label: phase_size(con, a, runs_dir, label, employers, repeat) for label, employers in sizes}
    if not a.no_scale_runs:
        label = sizes[-1][0]
        result["sizes"][label]["scale_runs"] = phase_scale_runs(con, result["sizes"][label], runs_dir, label)
    if not a.no_s3:
        result["s3"] = phase_s3(con, result["sizes"][sizes[0][0]], runs_dir, sizes[0][0], repeat)
    if not a.no_files_check:
        result["files_check"] = phase_files(con, runs_dir, sizes[0], a.seed)
    if not a.no_formats:
        from bench.formats import phase_formats

        con.print("formats: the same payroll as the canonical layout and as a report, ingested alone")
        result["formats"] = phase_formats(runs_dir, rows=200_000 if a.quick else 1_000_000, repeat=1 if a.quick else 3)
    if a.profile:
        result["profile"] = phase_profile(con, runs_dir, sizes[0], a.seed)
    result["targets"] = targets.evaluate(result)
    result["ratios"] = report.ratios(result, sizes)
    result["context"] = report.context(result, sizes)
    result["load_avg_end"] = os.getloadavg()
    result["code_fingerprint_end"] = report.code_fingerprint()
    result["code_changed_during_run"] = result["code_fingerprint_end"] != result["code_fingerprint_start"]
    if result["code_changed_during_run"]:
        con.print("[bold yellow]warning:[/] transforms/ or flows/ changed during the run: sizes are not comparable")
    report.tables(con, result, sizes)
    con.print(f"load avg start {result['load_avg_start']}, end {result['load_avg_end']}")
    out = a.output or (h.DATA / "quick.json" if a.quick else h.RESULTS / "latest.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, default=str))
    tmp.replace(out)
    con.print(f"results: {out.relative_to(h.REPO) if out.is_relative_to(h.REPO) else out}")
    if not a.keep:
        h.remove_run_folders(runs_dir)
    return 0 if all(r["e2e"]["returncode"] == 0 for r in result["sizes"].values()) else 1


def compile_project() -> dict:
    """The project's modules compiled to bytecode (``__pycache__``, gitignored) before anything is
    measured, as installing a package does: with ``PYTHONDONTWRITEBYTECODE`` set (this machine's
    sessions) every measured process otherwise compiled ``transforms/`` and ``flows/`` from source
    (0.05-0.1 s of a warm 5-employer run), while the site-packages that the start-up yardstick
    imports are compiled. A source changed later is compiled again by the interpreter, as ever."""
    import compileall

    t = time.perf_counter()
    ok = all(compileall.compile_dir(h.REPO / d, quiet=1) for d in ("transforms", "flows"))
    return {"compiled": ok, "seconds": round(time.perf_counter() - t, 3),
            "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))}


def phase_startup(con, runs_dir: Path, seed: int, repeat: int) -> dict:
    con.print("start-up: 5-employer annual runs and what-ifs in the embedded default ...")
    st = startup(runs_dir, seed, repeat)
    p = st.get("parts", {})
    con.print(f"  annual: cold {st['cold_annual_s']:.2f} s (starts the shared API), warm {st['annual_s']:.2f} s "
              f"(median of {repeat}); what-if {st['whatif_s']:.2f} s")
    if "work_s" in p:
        con.print(f"  parts of a warm annual run: interpreter {p['interpreter_s']:.2f} s, imports {p['imports_s']:.2f} s, "
                  f"API {p['api_s']:.3f} s, work {p['work_s']:.2f} s, flow machinery {p['flow_machinery_s']:.2f} s")
    return st


def phase_size(con, a: argparse.Namespace, runs_dir: Path, label: str, employers: int, repeat: int) -> dict:
    con.rule(f"size {label}: {employers:,} employers")
    d, info = h.dataset(employers, a.seed)
    con.print(f"  data {d.relative_to(h.REPO)}: {info['payroll_rows']:,} rows of {info['employers']:,} employers "
              f"in {info['files']} files")
    dec = info.get("declared") or {}
    if dec:
        con.print(f"  declared totals: {dec['employers_declaring']:,} of {dec['employers']:,} employers "
                  f"({dec['employers_declaring_share']:.0%}), {dec['lines_declaring']:,} of {dec['roster_lines']:,} roster lines")
    info = {**info, **payroll_size(d)}
    r: dict = {"employers": employers, "data": info, "data_dir": str(d)}
    floors, e2es, smalls = [], [], []
    tiny, _ = h.dataset(STARTUP_EMPLOYERS, a.seed)
    for i in range(repeat):  # pairs, so that both sides of each ratio see the same moment
        floors.append(measures.floor(d, runs_dir, label))
        e2es.append(measures.end_to_end(d, runs_dir, label if i == 0 else f"{label}-{i + 1}"))  # fresh folders
        # and the warm 5-employer run, at the same moment: what the marginal target subtracts
        smalls.append(measures.end_to_end(tiny, runs_dir, f"{label}-small-{i + 1}"))
    r["floor"], r["e2e"], r["small_e2e"] = h.median_run(floors), h.median_run(e2es), h.median_run(smalls)
    e = r["e2e"]
    print_pair(con, "", floors, e2es, r)
    con.print(f"  warm 5-employer run beside them: rc {r['small_e2e']['returncode']}, {r['small_e2e']['wall_s']:.2f} s"
              f"{h.runs_note(smalls)}")
    if not a.no_shaped:
        r["shaped"] = phase_shaped(con, runs_dir, label, d, repeat, e)
    if e["returncode"] != 0:
        con.print(f"[red]  end-to-end failed:[/]\n{e.get('error', '')}")
        return r | {"e2e_per_row_s": e["wall_s"] / info["payroll_rows"], "e2e_over_floor": None,
                    "reference": measures.reference_check(d, None, a.sample_employers)}
    r["engine_core"] = ec = measures.engine_core(Path(e["work"]), runs_dir, label)
    if "seconds" in ec:
        con.print(f"  credit engine alone (best of 3): {ec['seconds']:.2f} s over {ec['payroll_rows']:,} lake rows")
    r["e2e_per_row_s"] = e["wall_s"] / info["payroll_rows"]
    r["e2e_over_floor"] = round(e["wall_s"] / r["floor"]["wall_s"], 2)
    r["reference"] = rs = measures.reference_check(d, Path(e["out"]), a.sample_employers)
    con.print(f"  reference: {rs['timed_float']['payroll_rows']:,} rows of {rs['timed_float']['employers']} employers in "
              f"{rs['timed_float']['seconds']:.2f} s; mismatches {rs.get('compare_float', {}).get('mismatches', 'n/a')} "
              f"(float) / {rs.get('compare_exact', {}).get('mismatches', 'n/a')} (exact)")
    return r


def print_pair(con, what: str, floors: list[dict], e2es: list[dict], r: dict) -> None:
    e = r["e2e"]
    con.print(f"  {what}floor: {r['floor']['wall_s']:.2f} s{h.runs_note(floors)}, {r['floor']['peak_rss_gb']:.2f} GB")
    con.print(f"  {what}end-to-end: rc {e['returncode']}, {e['wall_s']:.2f} s{h.runs_note(e2es)}, "
              f"{e['peak_rss_gb']:.2f} GB")
    if e.get("stages"):
        con.print("  its stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in e["stages"].items()))


def phase_shaped(con, runs_dir: Path, label: str, clean: Path, repeat: int, clean_e2e: dict) -> dict:
    """The shaped set (bench/shaped.py) of this size: its floor and end-to-end runs in pairs, as the
    clean set's; the outputs of its median run compared with the clean set's median run."""
    from bench.shaped import shaped

    t0 = time.perf_counter()
    d = shaped(clean)
    build_s = round(time.perf_counter() - t0, 2)
    info = shaped_info(d)
    r: dict = {"data": info, "data_dir": str(d), "ready_s": build_s}
    con.print(f"  shaped data {d.relative_to(h.REPO)} (ready in {build_s:.1f} s): {info['payroll_rows']:,} rows as "
              f"{info['lines']:,} lines, {info['bytes'] / 1e6:,.0f} MB in {info['files']} files; declared totals: "
              f"{info['declared']['employers_declaring_share']:.0%} of employers")
    floors, e2es = [], []
    for i in range(repeat):
        floors.append(measures.shaped_floor(d, runs_dir, f"{label}-shaped"))
        e2es.append(measures.end_to_end(d, runs_dir, f"{label}-shaped" if i == 0 else f"{label}-shaped-{i + 1}"))
        if e2es[-1].get("rss_cap_killed"):  # the next ones would pass the cap too
            break
    r["floor"], r["e2e"] = h.median_run(floors), h.median_run(e2es)
    print_pair(con, "shaped ", floors, e2es, r)
    e = r["e2e"]
    r["e2e_per_row_s"] = e["wall_s"] / info["payroll_rows"]
    if e["returncode"] != 0:
        con.print(f"[red]  shaped end-to-end failed:[/]\n{e.get('error', '')}")
        return r
    if r["floor"]["returncode"] != 0:
        con.print(f"[red]  shaped floor failed:[/]\n{r['floor'].get('error', '')}")
        return r
    r["e2e_over_floor"] = round(e["wall_s"] / r["floor"]["wall_s"], 2)
    if clean_e2e["returncode"] == 0:  # the same payroll: the same outputs expected
        r["outputs_vs_clean"] = cmp = scale_runs.compare_outputs(Path(e["out"]), Path(clean_e2e["out"]))
        con.print(f"  outputs against the clean set's run: {cmp['files_differing_count']} of {cmp['files_compared']:,} "
                  f"files differ" + (f" ({', '.join(cmp['files_differing'][:5])})" if cmp["files_differing"] else ""))
        for k, v in cmp.get("parquet_differences", {}).items():
            con.print(f"    {k}: {json.dumps(v.get('columns_differing', v))}")
    return r


def shaped_info(d: Path) -> dict:
    """Rows (the clean set's), files, bytes and lines of the shaped payroll, and files per layout."""
    info = json.loads((d / ".bench.json").read_text())
    layouts: dict[str, int] = {}
    for f in sorted((d / "payroll").iterdir()):
        name = next((x for x in info.get("shaped", [])[1:] if f.stem.endswith(x)), "canonical")
        layouts[name] = layouts.get(name, 0) + 1
    return {"payroll_rows": info["payroll_rows"], "employers": info["employers"], **payroll_size(d),
            "files_per_layout": layouts, "declared": h.declared_info(d)}  # its roster is the clean set's


def payroll_size(d: Path) -> dict:
    """The payroll files' count, bytes and lines (headers included)."""
    files = sorted(f for f in (d / "payroll").iterdir() if f.is_file())
    lines = 0
    for f in files:
        with open(f, "rb") as fh:
            lines += sum(buf.count(b"\n") for buf in iter(lambda fh=fh: fh.read(1 << 24), b""))
    return {"files": len(files), "bytes": sum(f.stat().st_size for f in files), "lines": lines}


def phase_s3(con, r: dict, runs_dir: Path, label: str, repeat: int) -> dict:
    """The annual run with ``--lake s3://...`` (a local moto server) against the plain run, in pairs."""
    from bench.object_store import s3_annual

    con.rule(f"the lake in S3 (moto) at {label}")
    s3 = s3_annual(Path(r["data_dir"]), runs_dir, label, repeat)
    if "s3" not in s3:
        con.print(f"[red]  S3 runs failed:[/] {s3.get('error')}")
        return s3
    p, m = s3["plain"], s3["s3"]
    con.print(f"  plain: rc {p['returncode']}, {p['wall_s']:.2f} s{h.runs_note(p['runs'])}, {p['peak_rss_gb']:.2f} GB")
    con.print(f"  --lake s3://: rc {m['returncode']}, {m['wall_s']:.2f} s{h.runs_note(m['runs'])}, "
              f"{m['peak_rss_gb']:.2f} GB; x{s3.get('s3_over_plain')} the plain run; outputs differing "
              f"{s3.get('outputs_differing')}, same lake {s3.get('same_lake')}; bucket {s3['bucket_objects']} objects")
    if m.get("stages"):
        con.print("  its stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in m["stages"].items()))
    if m["returncode"] != 0:
        con.print(f"[red]  the S3 run failed:[/]\n{m.get('error', '')}")
    return s3


def phase_scale_runs(con, r: dict, runs_dir: Path, label: str) -> dict:
    """Quarterly, what-if and a corrected rerun on the median annual run's workdir, then Dask."""
    con.rule(f"other runs at {label}")
    if r["e2e"]["returncode"] != 0:
        return {}
    src, work, out = Path(r["data_dir"]), Path(r["e2e"]["work"]), Path(r["e2e"]["out"])
    sr = {"quarterly": scale_runs.quarterly(src, work, runs_dir, label),
          "whatif": scale_runs.whatif(src, work, runs_dir, label)}
    sr["dask"] = scale_runs.dask_annual(src, out, runs_dir, label)
    sr["rerun_corrected"] = scale_runs.rerun_corrected(src, work, runs_dir, label)  # last: it changes the workdir
    for name, m in sr.items():
        note = f", same outputs: {m['same_outputs']}" if "same_outputs" in m else ""
        con.print(f"  {name}: rc {m.get('returncode')}, {m.get('wall_s', float('nan')):.2f} s, "
                  f"{m.get('peak_rss_gb', float('nan')):.2f} GB{note}")
    return sr


def phase_files(con, runs_dir: Path, size: tuple[str, int], seed: int) -> dict:
    label, employers = size
    con.rule(f"files check: {label} rows in 1, 10 and 100 files")
    src, _ = h.dataset(employers, seed)
    fc = {}
    for n in h.FILE_COUNTS:
        dn = h.resplit(src, n)
        fc[f"files{n}"] = measures.end_to_end(dn, runs_dir, f"{label}-files{n}")
        fc[f"files{n}_floor"] = measures.floor(dn, runs_dir, f"{label}-files{n}")
        con.print(f"  {n} files: {fc[f'files{n}']['wall_s']:.2f} s, {fc[f'files{n}']['peak_rss_gb']:.2f} GB "
                  f"(floor {fc[f'files{n}_floor']['peak_rss_gb']:.2f} GB)")
    return fc


def phase_profile(con, runs_dir: Path, size: tuple[str, int], seed: int) -> dict:
    from bench.profiling import profile

    label, employers = size
    con.rule(f"profile at {label}")
    src, _ = h.dataset(employers, seed)
    pr = profile(src, runs_dir, label)
    top = sum(v["seconds"] for v in pr.get("steps", {}).values() if v["depth"] == 0)
    pr["outside_steps_s"] = round(pr.get("run_s", 0) - top, 3)
    con.print(f"  process {pr['measure']['wall_s']:.2f} s: imports {pr.get('import_s')} s, CLI run {pr.get('run_s')} s of "
              f"which timed steps {top:.2f} s and outside them (Prefect flow/task machinery, CLI) {pr['outside_steps_s']:.2f} s")
    for k, v in list(pr.get("steps", {}).items())[:20]:
        con.print(f"  {v['seconds']:8.2f} s  x{v['calls']:<4} {'  ' * v['depth']}{k}")
    return pr


if __name__ == "__main__":
    raise SystemExit(main())
