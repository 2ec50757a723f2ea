"""Start-up: what an analyst waits for on a small run (issue 14, target 1).

A 5-employer annual run and a 5-employer what-if through the CLI in the embedded default (no
server started by hand: the CLI's shared local Prefect API, ``flows.api``). The first annual run
finds no API and starts it (``cold``); the next ones reuse it (``warm``, the target: their
median). The warm annual run is taken apart in a process that does its steps one by one:

- ``interpreter_s``: ``python -c pass``;
- ``imports_s``: what the CLI imports before a run (typer, rich, the command modules) and what
  the run imports after the API is found (Prefect, the flow, Polars, DuckDB...);
- ``api_s``: ``flows.api.ensure_api()`` finding the running API;
- ``work_s``: the run's steps called directly (stage, compute, decide, write, commit), no Prefect;
- ``flow_machinery_s``: the rest of the CLI run's wall time (Prefect's flow and task runs, their
  state changes on the API, the flow run's name and artifact, the CLI's summary).

And the yardstick of the start-up target (issue 37 part 5: the warm run within 2.5 x it):
``bare_import_s``, the median wall of ``python -c "import prefect, polars, duckdb"`` (a process
of its own, measured like the runs, each right after a warm annual run: the files are in the page
cache for both).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import textwrap
from pathlib import Path

from bench.harness import AS_OF, IMPCREDIT, PY, REPO, TAX_YEAR, child_env, dataset, measure, tail

EMPLOYERS = 5
BARE_IMPORT = "import prefect, polars, duckdb"

PARTS = textwrap.dedent("""
    import datetime as dt, json, sys, time
    from pathlib import Path
    t0 = time.perf_counter()
    import flows.cli.app  # noqa: F401  (what the CLI imports before a run)
    t1 = time.perf_counter()
    from flows import api
    api.ensure_api()
    t2 = time.perf_counter()
    import flows.annual, flows.fanout  # noqa: F401  (what a run imports once the API is found)
    from flows._env import hash_key
    from transforms.reference.parameters import load_parameters
    from transforms.runs import annual as steps
    from transforms.settings import Settings
    t3 = time.perf_counter()
    src, root = Path(sys.argv[1]), Path(sys.argv[2])
    params, settings, as_of = load_parameters(), Settings(), dt.date.fromisoformat(sys.argv[3])
    staged = steps.stage_inputs(src, root / "work", hash_key())
    result = steps.compute(staged.frames, int(sys.argv[4]), as_of, params, settings)
    run_id = steps.new_run_id("annual", int(sys.argv[4]), staged.inputs_sha256)
    steps.decide_and_commit(steps.RunContext(workdir=root / "work", out_dir=root / "out", run_id=run_id, kind="annual",
                            tax_year=int(sys.argv[4]), as_of=as_of, params=params, settings=settings, staged=staged,
                            result=result, started_at=dt.datetime.now(dt.UTC)))
    t4 = time.perf_counter()
    print(json.dumps({"cli_imports_s": t1 - t0, "api_s": t2 - t1, "run_imports_s": t3 - t2, "work_s": t4 - t3}))
""")


def _cli(argv: list[str], runs_dir: Path, name: str) -> dict:
    m = measure([str(IMPCREDIT), *argv], runs_dir / f"{name}.log")
    if m["returncode"] != 0:
        m["error"] = tail(REPO / m["log"])
    return m


def _annual(src: Path, runs_dir: Path, name: str) -> tuple[dict, Path]:
    work = runs_dir / f"{name}-work"
    argv = ["annual", "--input", str(src), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF,
            "--out", str(runs_dir / f"{name}-out"), "--workdir", str(work)]
    return _cli(argv, runs_dir, name), work


def _parts(src: Path, runs_dir: Path, i: int) -> dict:
    m = measure([PY, "-c", PARTS, str(src), str(runs_dir / f"startup-parts-{i}"), AS_OF, str(TAX_YEAR)],
                runs_dir / f"startup-parts-{i}.log")
    try:
        return {**json.loads((REPO / m["log"]).read_text().strip().splitlines()[-1]), "wall_s": m["wall_s"]}
    except (ValueError, IndexError):
        return {"error": tail(REPO / m["log"])}


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def startup(runs_dir: Path, seed: int, repeat: int) -> dict:
    """Cold and warm 5-employer annual runs, warm what-ifs, and the parts of a warm annual run."""
    src, info = dataset(EMPLOYERS, seed)
    subprocess.run([str(IMPCREDIT), "api", "stop"], env=child_env(), cwd=REPO, capture_output=True)
    cold, work = _annual(src, runs_dir, "startup-annual-cold")
    annual, bare = [], []
    for i in range(repeat):  # in pairs with the bare import, so that both see the same moment
        annual.append(_annual(src, runs_dir, f"startup-annual-{i}")[0])
        bare.append(measure([PY, "-c", BARE_IMPORT], runs_dir / f"startup-bare-import-{i}.log"))
    whatif = [_cli(["whatif", "--input", str(src), "--tax-year", str(TAX_YEAR), "--as-of", AS_OF, "--workdir", str(work),
                    "--out", str(runs_dir / f"startup-whatif-{i}-out"), "--set", "overtime=premium"],
                   runs_dir, f"startup-whatif-{i}") for i in range(repeat)]
    interpreter = [measure([PY, "-c", "pass"], runs_dir / "startup-python.log")["wall_s"] for _ in range(repeat)]
    parts = [_parts(src, runs_dir, i) for i in range(repeat)]
    out = {"employers": EMPLOYERS, "payroll_rows": info["payroll_rows"], "cold_annual": cold,
           "annual_runs": annual, "whatif_runs": whatif,
           "annual_s": _median([m["wall_s"] for m in annual]), "whatif_s": _median([m["wall_s"] for m in whatif]),
           "cold_annual_s": cold["wall_s"], "bare_import": BARE_IMPORT,
           "bare_import_runs": [m["wall_s"] for m in bare],
           "bare_import_s": _median([m["wall_s"] for m in bare]) if all(m["returncode"] == 0 for m in bare) else None,
           "ok": all(m["returncode"] == 0 for m in [cold, *annual, *whatif]) and all("error" not in p for p in parts)}
    if all("error" not in p for p in parts):
        med = {k: _median([p[k] for p in parts]) for k in ("cli_imports_s", "api_s", "run_imports_s", "work_s")}
        interp = _median(interpreter)
        accounted = interp + med["cli_imports_s"] + med["api_s"] + med["run_imports_s"] + med["work_s"]
        out["parts"] = {
            "interpreter_s": interp,
            "imports_s": round(med["cli_imports_s"] + med["run_imports_s"], 3),
            "api_s": med["api_s"],
            "work_s": med["work_s"],
            "flow_machinery_s": round(max(out["annual_s"] - accounted, 0.0), 3),
            "detail": {**med, "runs": parts},
        }
    else:
        out["parts"] = {"error": next(p["error"] for p in parts if "error" in p)}
    return out
