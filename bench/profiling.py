"""``--profile``: the steps of an annual run timed (functions wrapped at run time, no project file
changed) and a cProfile of the whole command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from bench.harness import PY, REPO, measure
from bench.measures import annual_argv

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
        "transforms.runs.annual:stage_inputs", "transforms.runs.inputs:input_file_records",
        "transforms.runs.annual:load_lake", "transforms.runs.annual:compute", "transforms.runs.annual:compute_credits",
        "transforms.runs.annual:decide_and_commit", "transforms.runs.annual:decide",
        "transforms.runs.annual:write_outputs", "transforms.runs.annual:code_version", "transforms.runs.annual:write_csv",
        "transforms.runs.annual:employee_output", "transforms.runs.annual:run_record",
        "transforms.award.ledger:commit_run", "transforms.award.ledger:connect",
        "transforms.outputs:PendingOutputs.publish",
        "transforms.runs.annual:ingest_folder", "transforms.ingest:ingest_folder",
        "transforms.ingest.read.tables:read_tables", "transforms.ingest.validate.files:validate_table",
        "transforms.ingest.read.tables:stage_table", "transforms.ingest.read.tables:discover",
        "transforms.ingest.read.cast.canonical:stage_table", "transforms.runs.annual:clean_stale_staging",
        "transforms.ingest.pipeline:cross_row_rejects", "transforms.ingest.validate.files:masked_ssns",
        "transforms.ingest.read.cast.canonical:hash_ssn_column",
        "transforms.products:write_products", "transforms.products:write_award_file",
        "transforms.products:write_certificates", "transforms.products:write_notices",
        "transforms.products.reports:write_reports",
    ]:
        m, a = spec.split(":")
        wrap(m, a)
    for modname in ("transforms.ingest.validate.engines", "transforms.ingest.store.lake", "transforms.ingest.read.files.readers"):
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
