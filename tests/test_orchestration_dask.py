"""The per-employer-batch fan-out on a real Dask cluster (prefect_dask.DaskTaskRunner)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from helpers import employer_case

from tests.test_orchestration import KEY, PARAMS, submission  # noqa: F401  (fixture)
from transforms.settings import Settings


@pytest.mark.slow
def test_quarterly_fans_out_per_employer_batch_on_a_dask_cluster(prefect_harness, submission, tmp_path):  # noqa: F811
    from distributed import LocalCluster

    from flows.fanout import with_task_runner
    from flows.quarterly import quarterly_flow

    cases = [employer_case(i, f"2023-02-0{i}T09:00:00", hours=90 + 5 * i) for i in range(1, 6)]
    inp = submission(cases)
    kwargs = dict(input_dir=inp, tax_year=2023, quarter=2, as_of=dt.date(2023, 7, 15), params=PARAMS,
                  settings=Settings())
    local = quarterly_flow(out_dir=tmp_path / "local", workdir=tmp_path / "w1", batches=1, **kwargs)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        on_dask = with_task_runner(quarterly_flow, cluster.scheduler_address)
        assert type(on_dask.task_runner).__name__ == "DaskTaskRunner"
        remote = on_dask(out_dir=tmp_path / "dask", workdir=tmp_path / "w2", batches=3, **kwargs)
    assert remote.projected_total == local.projected_total > 0
    a = pl.read_csv(tmp_path / "local" / "estimates.csv")
    b = pl.read_csv(tmp_path / "dask" / "estimates.csv")
    assert a.equals(b)


@pytest.mark.slow
def test_annual_fans_out_per_employer_batch_on_a_dask_cluster(prefect_harness, submission, tmp_path):  # noqa: F811
    from distributed import LocalCluster

    from flows.annual import annual_flow
    from flows.fanout import with_task_runner

    cases = [employer_case(i, f"2023-02-0{i}T09:00:00", hours=90 + 5 * i) for i in range(1, 6)]
    inp = submission(cases)
    kwargs = dict(input_dir=inp, tax_year=2023, as_of=dt.date(2024, 7, 1), params=PARAMS, settings=Settings())
    annual_flow(out_dir=tmp_path / "local", workdir=tmp_path / "w1", batches=1, **kwargs)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        remote = with_task_runner(annual_flow, cluster.scheduler_address)(
            out_dir=tmp_path / "dask", workdir=tmp_path / "w2", batches=3, **kwargs
        )
    assert remote.applications == 5
    for name in ("awards.csv", "employee_credits.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
