"""The bench's targets (issue 37 part 5; issue 35's reconciliation cost), restated by stage.

Each target is read from the measurements of one bench run (``readings``) and judged
(``judge``): ``met``, ``not met`` (a value past its limit, or the run it needs failed) or ``not
measured`` (the run did not measure it: why is said). A value may be given with ``not measured``
for orientation (a quick run's 200k set in place of the 1M one): it is never judged.

The data: held-out-like sets, 1M payroll rows and 3,000+ employers (``harness.MEAN_EMPLOYEES``);
every ratio's two sides are measured in the same bench run. bench/README.md says how each value is
computed. ``python bench/run.py`` prints them and writes them under ``targets`` in latest.json.
"""

from __future__ import annotations

from dataclasses import dataclass

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"
HELD_OUT_EMPLOYERS = 3_000  # the 1M set of the targets has at least this many employers
ONE_M, TEN_M = (800_000, 1_250_000), (8_000_000, 12_500_000)  # payroll rows taken as "1M" and "10M"
ROW_STAGES = ("ingest", "validate")  # read, type, validate, lake
# the stage lines that follow one another (``reconcile`` is inside ``credits``: not added again)
SEQUENTIAL_STAGES = ("ingest", "validate", "credits", "allocate", "products")


@dataclass(frozen=True)
class Target:
    key: str
    what: str
    op: str  # "<=" or "<"
    limit: float
    unit: str = " x"


TARGETS = (
    Target("row_work_over_floor", "row work (ingest + validate stages) / floor, 1M", "<=", 2.0),
    Target("documents_ms_per_file", "products stage / files it writes, 1M (all cores)", "<=", 0.25, " ms"),
    Target("marginal_over_floor", "(annual run - warm 5-employer run) / floor, 1M", "<=", 5.0),
    Target("startup_over_import", "warm 5-employer run / bare import prefect, polars, duckdb", "<=", 2.5),
    Target("time_10m_over_1m", "annual run 10M / 1M", "<=", 10.5),
    Target("dask_over_plain", "Dask annual (2 local workers) / plain annual, same size", "<=", 1.3),
    Target("dask_driver_gb", "Dask run's driver peak RSS", "<", 1.0, " GB"),
    Target("peak_rss_10m_gb", "annual run's peak RSS at 10M (clean and shaped sets)", "<=", 3.0, " GB"),
    Target("reconcile_share_pct", "reconcile stage / annual run, 1M", "<", 5.0, " %"),
)


@dataclass
class Reading:
    """A target's measurement: its value, where (``at``) and how (``detail``); ``missing``: why it
    was not measured; ``failed``: a run it needs failed (not met)."""

    value: float | None = None
    at: str = ""
    detail: str = ""
    missing: str | None = None
    failed: str | None = None


def judge(t: Target, r: Reading) -> dict:
    """The verdict on one reading."""
    if r.failed:
        verdict, why = NOT_MET, r.failed
    elif r.missing or r.value is None:
        verdict, why = NOT_MEASURED, r.missing or "no value"
    else:
        ok = r.value <= t.limit if t.op == "<=" else r.value < t.limit
        verdict, why = (MET if ok else NOT_MET), ""
    return {"what": t.what, "value": r.value, "unit": t.unit.strip(), "target": f"{t.op} {t.limit:g}{t.unit}",
            "verdict": verdict, "why": why, "at": r.at, "detail": r.detail}


def evaluate(result: dict) -> dict[str, dict]:
    """Every target's reading from a bench run's ``result`` (run.py's JSON), judged."""
    got = readings(result)
    return {t.key: judge(t, got.get(t.key, Reading(missing="not read"))) for t in TARGETS}


# --- reading the measurements -------------------------------------------------------------------

def _rows(r: dict) -> int:
    return int(r["data"]["payroll_rows"])


def _employers(r: dict) -> int:
    return int(r["data"].get("employers") or r.get("employers") or 0)


def _at(label: str, r: dict) -> str:
    return f"{label} ({_rows(r):,} rows, {_employers(r):,} employers)"


def _size(per_size: dict, rows: tuple[int, int]) -> str | None:
    return next((k for k, r in per_size.items() if rows[0] <= _rows(r) <= rows[1]), None)


def _one_m(per_size: dict) -> tuple[str | None, str | None]:
    """The 1M set's label (else the largest size's, for orientation) and why it is not the target's."""
    label = _size(per_size, ONE_M)
    if label is None:
        biggest = max(per_size, key=lambda k: _rows(per_size[k]))
        return biggest, f"no 1M set in this run (sizes {', '.join(per_size)}): the value is {biggest}'s, for orientation"
    n = _employers(per_size[label])
    if n < HELD_OUT_EMPLOYERS:
        return label, f"the 1M set has {n:,} employers, not {HELD_OUT_EMPLOYERS:,}+ (held-out-like)"
    return label, None


def _e2e_failed(r: dict) -> str | None:
    e = r["e2e"]
    if e.get("rss_cap_killed"):
        return f"the annual run was killed at the RSS cap ({e.get('rss_cap_gb')} GB)"
    return None if e["returncode"] == 0 else f"the annual run failed (rc {e['returncode']})"


def readings(result: dict) -> dict[str, Reading]:
    per_size, st = result["sizes"], result.get("startup", {})
    out: dict[str, Reading] = {"startup_over_import": _startup(st)}
    label, missing = _one_m(per_size)
    r = per_size[label]
    at, failed = _at(label, r), _e2e_failed(r)
    if r["floor"]["returncode"] != 0 and not failed:
        missing = missing or "the floor failed"
    stages, wall, floor = r["e2e"].get("stages", {}), r["e2e"]["wall_s"], r["floor"]["wall_s"]

    def reading(value, detail, why=None):
        return Reading(None if failed else value, at, detail, missing or why, failed)

    row_s = sum(stages.get(k, 0.0) for k in ROW_STAGES)
    out["row_work_over_floor"] = reading(
        round(row_s / floor, 2) if floor else None,
        f"({' + '.join(f'{k} {stages.get(k, 0.0):.1f}' for k in ROW_STAGES)}) s / floor {floor:.2f} s",
        None if any(k in stages for k in ROW_STAGES) else "no ingest or validate stage line")
    files, prod = r["e2e"].get("products_files"), stages.get("products")
    out["documents_ms_per_file"] = reading(
        round(prod * 1000 / files, 3) if files and prod is not None else None,
        f"products {prod} s / {files:,} files" if files else "", None if files else "no products stage line")
    small, which = _small_run(r, st)
    out["marginal_over_floor"] = reading(
        round((wall - small) / floor, 2) if small is not None and floor else None,
        f"({wall:.2f} - {small:.2f} {which}) s / floor {floor:.2f} s" if small is not None else "",
        None if small is not None else "no warm 5-employer run")
    rec, declared = stages.get("reconcile"), r["data"].get("declared", {})
    share = declared.get("employers_declaring_share")
    out["reconcile_share_pct"] = reading(
        round(100 * rec / wall, 1) if rec is not None else None,
        f"reconcile {rec} s (0.1 s resolution) / {wall:.2f} s" + (f"; {share:.0%} of employers declare" if share else ""),
        None if rec is not None else "no reconcile stage line (does the set declare totals?)")
    out["time_10m_over_1m"] = _scaling(per_size)
    out["peak_rss_10m_gb"] = _rss(per_size)
    out["dask_over_plain"], out["dask_driver_gb"] = _dask(result)
    return out


def _small_run(r: dict, st: dict) -> tuple[float | None, str]:
    """The start-up the marginal target subtracts: the warm 5-employer run measured beside the
    size's floor and annual run (the same moment), else the start-up phase's median."""
    small = r.get("small_e2e")
    if small and small["returncode"] == 0:
        return small["wall_s"], "5-employer run beside it"
    if st.get("ok"):
        return st["annual_s"], "startup_annual_s"
    return None, ""


def _startup(st: dict) -> Reading:
    if not st:
        return Reading(missing="no start-up phase")
    if not st.get("ok"):
        return Reading(failed="a 5-employer run failed")
    bare = st.get("bare_import_s")
    if not bare:
        return Reading(missing="the bare import was not measured (or failed)")
    return Reading(round(st["annual_s"] / bare, 2), "5 employers, warm",
                   f"{st['annual_s']:.2f} s / {bare:.2f} s (medians)")


def _scaling(per_size: dict) -> Reading:
    one, ten = _size(per_size, ONE_M), _size(per_size, TEN_M)
    pair, missing = (one, ten), None
    if one is None or ten is None:
        by_rows = sorted(per_size, key=lambda k: _rows(per_size[k]))
        pair = (by_rows[0], by_rows[-1])
        missing = f"no {'10M' if one else '1M'} run (sizes {', '.join(per_size)})"
        if len(by_rows) > 1 and 9.5 <= _rows(per_size[pair[1]]) / _rows(per_size[pair[0]]) <= 10.5:
            missing += f": the value is {pair[1]} / {pair[0]}, for orientation"
        else:
            return Reading(missing=missing)
    a, b = per_size[pair[0]], per_size[pair[1]]
    failed = _e2e_failed(a) or _e2e_failed(b)
    value = None if failed else round(b["e2e"]["wall_s"] / a["e2e"]["wall_s"], 2)
    return Reading(value, f"{pair[1]} / {pair[0]}", f"{b['e2e']['wall_s']:.2f} s / {a['e2e']['wall_s']:.2f} s "
                   f"({_rows(b) / _rows(a):.2f} x the rows)", missing, failed)


def _rss(per_size: dict) -> Reading:
    label = _size(per_size, TEN_M)
    missing = None
    if label is None:
        label = max(per_size, key=lambda k: _rows(per_size[k]))
        missing = f"no 10M run (sizes {', '.join(per_size)}): the value is {label}'s, for orientation"
    sets = {"clean": per_size[label], **({"shaped": per_size[label]["shaped"]} if "shaped" in per_size[label] else {})}
    failed = next((f"{name}: {f}" for name, r in sets.items() if (f := _e2e_failed(r))), None)
    peaks = {name: r["e2e"]["peak_rss_gb"] for name, r in sets.items()}
    return Reading(None if failed else max(peaks.values()), _at(label, per_size[label]),
                   ", ".join(f"{k} {v:.2f} GB" for k, v in peaks.items()), missing, failed)


def _dask(result: dict) -> tuple[Reading, Reading]:
    per_size = result["sizes"]
    label = next((k for k, r in per_size.items() if r.get("scale_runs")), None)
    if label is None:
        why = ("scale runs skipped (--no-scale-runs)" if result.get("settings", {}).get("scale_runs") is False
               else "no Dask run in this bench run")
        return Reading(missing=why), Reading(missing=why)
    r = per_size[label]
    d = r["scale_runs"].get("dask") or {}
    at = _at(label, r)
    missing = None if _rows(r) >= ONE_M[0] else f"measured at {label} only: the target is at 1M rows or more"
    if d.get("returncode") != 0:
        failed = "the Dask run failed" + (f" (rc {d['returncode']})" if "returncode" in d else "")
        return Reading(at=at, failed=failed), Reading(at=at, failed=failed)
    failed = _e2e_failed(r)
    plain = r["e2e"]["wall_s"]
    ratio = Reading(None if failed else round(d["wall_s"] / plain, 2), at,
                    f"{d['wall_s']:.2f} s / {plain:.2f} s", missing, failed)
    driver = Reading(d["peak_rss_gb"], at, f"the CLI's process tree (the workers apart); cluster up in "
                     f"{d.get('cluster_start_s', float('nan')):.1f} s, not counted", missing)
    return ratio, driver


def table(con, targets: dict[str, dict]) -> None:
    """The targets as a rich table: value, target, verdict, and how (or why not measured)."""
    from rich.table import Table

    t = Table(title="targets (issue 37 part 5, issue 35): on held-out-like data, against the floor of the same run")
    for c in ("target", "at", "value", "limit", "verdict", "how / why not"):
        t.add_column(c, justify="right" if c in ("value", "limit") else "left", overflow="fold")
    for key, v in targets.items():
        style = {MET: "green", NOT_MET: "bold red"}.get(v["verdict"], "yellow")
        value = "n/a" if v["value"] is None else f"{v['value']:g}{(' ' + v['unit']) if v['unit'] else ''}"
        how = v["detail"] + (f" [yellow]({v['why']})[/]" if v["why"] else "")
        t.add_row(f"{key}\n[dim]{v['what']}[/]", v["at"], value, v["target"], f"[{style}]{v['verdict']}[/]", how)
    con.print(t)
