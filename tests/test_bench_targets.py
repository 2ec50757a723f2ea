"""The bench's verdicts (bench/targets.py) on made-up measurements: no benchmark is run."""

from __future__ import annotations

from bench.targets import MET, NOT_MEASURED, NOT_MET, TARGETS, Reading, Target, evaluate, judge


def _size(rows: int, employers: int, wall: float, floor: float, stages: dict, *, files: int | None = None,
          peak_gb: float = 0.5, rc: int = 0) -> dict:
    return {"employers": employers, "data": {"payroll_rows": rows, "employers": employers,
                                             "declared": {"employers_declaring_share": 0.8}},
            "floor": {"returncode": 0, "wall_s": floor, "peak_rss_gb": 0.3},
            "e2e": {"returncode": rc, "wall_s": wall, "peak_rss_gb": peak_gb, "stages": stages, "products_files": files}}


def _result(**sizes: dict) -> dict:
    return {"settings": {"scale_runs": False}, "sizes": sizes,
            "startup": {"ok": True, "annual_s": 2.7, "bare_import_s": 1.2}}


STAGES_1M = {"ingest": 0.2, "validate": 1.4, "credits": 0.6, "reconcile": 0.2, "allocate": 0.1, "products": 2.0}


def test_judge_met_missed_and_not_measured():
    le2 = Target("x", "a ratio", "<=", 2.0)
    assert judge(le2, Reading(1.5))["verdict"] == MET
    assert judge(le2, Reading(2.0))["verdict"] == MET  # the limit itself meets "<="
    missed = judge(le2, Reading(2.01))
    assert missed["verdict"] == NOT_MET and missed["target"] == "<= 2 x"
    lt1 = Target("y", "memory", "<", 1.0, " GB")
    assert judge(lt1, Reading(1.0))["verdict"] == NOT_MET  # "<" is strict
    none = judge(le2, Reading(missing="no 10M run"))
    assert none["verdict"] == NOT_MEASURED and none["why"] == "no 10M run" and none["value"] is None
    # a value given for orientation only (another size) is never judged, however good it is
    assert judge(le2, Reading(0.1, missing="no 1M set"))["verdict"] == NOT_MEASURED
    # a run the target needs failed: not met, with the reason
    failed = judge(le2, Reading(failed="the annual run failed (rc 1)"))
    assert failed["verdict"] == NOT_MET and "failed" in failed["why"]


def test_evaluate_made_up_bench_run():
    result = _result(**{"1m": _size(1_020_000, 3_030, 6.0, 1.0, STAGES_1M, files=10_000)})
    got = evaluate(result)
    assert list(got) == [t.key for t in TARGETS]
    # row work: (0.2 + 1.4) / 1.0 = 1.6 <= 2
    assert got["row_work_over_floor"]["value"] == 1.6 and got["row_work_over_floor"]["verdict"] == MET
    # documents: 2.0 s / 10,000 files = 0.2 ms <= 0.25
    assert got["documents_ms_per_file"]["value"] == 0.2 and got["documents_ms_per_file"]["verdict"] == MET
    # marginal: (6.0 - 2.7) / 1.0 = 3.3 <= 5
    assert got["marginal_over_floor"]["verdict"] == MET
    # start-up: 2.7 / 1.2 = 2.25 <= 2.5
    assert got["startup_over_import"]["value"] == 2.25 and got["startup_over_import"]["verdict"] == MET
    # reconcile: 0.2 / 6.0 = 3.3% < 5%
    assert got["reconcile_share_pct"]["value"] == 3.3 and got["reconcile_share_pct"]["verdict"] == MET
    # no 10M run and no Dask run: not measured, and said why
    assert got["time_10m_over_1m"]["verdict"] == NOT_MEASURED and "10M" in got["time_10m_over_1m"]["why"]
    assert got["peak_rss_10m_gb"]["verdict"] == NOT_MEASURED
    assert got["dask_over_plain"]["verdict"] == NOT_MEASURED and "--no-scale-runs" in got["dask_over_plain"]["why"]


def test_evaluate_missed_targets_and_the_sets_that_are_not_the_targets():
    slow = dict(STAGES_1M, validate=3.0, reconcile=0.5)
    result = _result(**{"1m": _size(1_000_000, 3_100, 8.0, 1.0, slow, files=4_000),
                        "10m": _size(10_000_000, 31_000, 90.0, 9.0, slow, files=40_000, peak_gb=3.4)})
    got = evaluate(result)
    assert got["row_work_over_floor"]["verdict"] == NOT_MET  # 3.2 x
    assert got["documents_ms_per_file"]["value"] == 0.5 and got["documents_ms_per_file"]["verdict"] == NOT_MET
    assert got["reconcile_share_pct"]["value"] == 6.2 and got["reconcile_share_pct"]["verdict"] == NOT_MET
    assert got["time_10m_over_1m"]["value"] == 11.25 and got["time_10m_over_1m"]["verdict"] == NOT_MET
    assert got["peak_rss_10m_gb"]["value"] == 3.4 and got["peak_rss_10m_gb"]["verdict"] == NOT_MET
    # a 1M set of too few employers is not the targets' data: not measured
    few = evaluate(_result(**{"1m": _size(1_000_000, 2_000, 6.0, 1.0, STAGES_1M, files=10_000)}))
    assert few["row_work_over_floor"]["verdict"] == NOT_MEASURED and "2,000 employers" in few["row_work_over_floor"]["why"]
    # a quick run (200k): values for orientation, never a verdict
    quick = evaluate(_result(**{"20k": _size(20_000, 61, 3.0, 0.2, STAGES_1M, files=300),
                                "200k": _size(200_000, 606, 4.0, 0.3, STAGES_1M, files=3_000)}))
    assert quick["row_work_over_floor"]["value"] is not None
    assert all(v["verdict"] == NOT_MEASURED for k, v in quick.items() if k != "startup_over_import")
    # the annual run failed: not met, not "not measured"
    failed = evaluate(_result(**{"1m": _size(1_000_000, 3_100, 8.0, 1.0, {}, rc=1)}))
    assert failed["marginal_over_floor"]["verdict"] == NOT_MET and "failed" in failed["marginal_over_floor"]["why"]


def test_the_stage_lines_of_a_made_up_log(tmp_path):
    """What the bench reads from a run's log: each stage's seconds, the products line's files and
    the gaps between lines (whole-second times)."""
    from bench.measures import products_files, stage_gaps, stage_seconds

    log = tmp_path / "run.log"
    log.write_text(
        "2026-12-05T11:10:53 impcredit ingest: 66 files, 71.4 MB read and hashed (0.2 s)\n"
        "2026-12-05T11:11:00 impcredit validate: 66 new files: 1,068,143 rows read (7.0 s)\n"
        "2026-12-05T11:11:05 impcredit credits: 3,577 employee-years (1,245 eligible), 3,036 applications (2.0 s)\n"
        "2026-12-05T11:11:05 impcredit reconcile: 17,034 declared figures of 2,839 persons compared (1.2 s)\n"
        "2026-12-05T11:11:12 impcredit products: 4,043 files (award file, certificates, notices, reports) (6.0 s)\n"
        "│ Total time   25.3 s │\n")
    assert stage_seconds(log) == {"ingest": 0.2, "validate": 7.0, "credits": 2.0, "reconcile": 1.2, "products": 6.0}
    assert products_files(log) == 4_043
    assert stage_gaps(log) == {"ingest -> validate": 0.0, "validate -> credits": 3.0, "credits -> products": 1.0}


def test_the_marginal_subtracts_the_small_run_beside_the_pair():
    """The warm 5-employer run measured beside the 1M pair (the same moment) is what the marginal
    target subtracts; the start-up phase's median only when there is none."""
    size = _size(1_000_000, 3_100, 6.0, 1.0, STAGES_1M, files=10_000)
    assert evaluate(_result(**{"1m": size}))["marginal_over_floor"]["value"] == 3.3  # (6.0 - 2.7) / 1.0
    size["small_e2e"] = {"returncode": 0, "wall_s": 3.0}
    got = evaluate(_result(**{"1m": size}))["marginal_over_floor"]
    assert got["value"] == 3.0 and "beside" in got["detail"]
