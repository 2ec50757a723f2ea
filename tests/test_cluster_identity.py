"""Identities resolved by the cluster's workers (``ingest.cluster_identity``): per chunk of the
employers, the rows read where they are resolved; together exactly ``identity.resolve``'s
result (the rows in error, the ssns filled, the unclaimed rows), on this process's threads
(``local:2``) over a real lake folder."""

from __future__ import annotations

import polars as pl
from helpers import employer_case, frames_for

from transforms.ingest.cluster_identity import resolve_on_cluster
from transforms.ingest.store.lake import scan_lake
from transforms.ingest.validate import identity


def _faulty() -> dict[str, pl.DataFrame]:
    """Five employers, one employee each: 1 carries two ssns, 2 has rows without an ssn (filled),
    3 a masked ssn of other digits, 4 no ssn anywhere (its roster line none either), 5 clean but
    for rows of an unclaimed employee without an ssn."""
    f = frames_for([employer_case(i, f"2023-02-0{i}T09:00:00") for i in range(1, 6)])
    p = f["payroll"].with_columns(pl.format("payroll-{}.csv", "employer_id").alias("source_file"))
    emp, line = pl.col("employer_id"), pl.col("source_line")
    p = p.with_columns(
        pl.when((emp == "100000001") & (line == 3)).then(pl.lit("f" * 64))
        .when((emp == "100000002") & line.is_in([2, 4])).then(None)
        .when((emp == "100000003") & (line == 5)).then(None)
        .when(emp == "100000004").then(None)
        .otherwise(pl.col("ssn_hash")).alias("ssn_hash"),
        pl.when(emp == "100000003").then(pl.when(line == 5).then(pl.lit("a" * 64)).otherwise(pl.lit("b" * 64)))
        .otherwise(pl.col("ssn_last4_hash")).alias("ssn_last4_hash"),
    )
    stray = p.filter(emp == "100000005").head(3).with_columns(
        pl.lit("X9").alias("employee_id"), pl.lit(None, dtype=pl.String).alias("ssn_hash"), (line + 100).alias("source_line"))
    f["payroll"] = pl.concat([p, stray])
    f["roster"] = f["roster"].with_columns(
        pl.when(pl.col("application_id") == "APP-2023-004").then(None).otherwise(pl.col("ssn_hash")).alias("ssn_hash"))
    return f


def _rows(ids: identity.Identities) -> tuple:
    return (ids.payroll.collect().sort("source_file", "source_line"), ids.lines, ids.rejects, ids.unclaimed_without_ssn)


def test_the_workers_chunks_give_exactly_the_whole_resolution(tmp_path):
    f = _faulty()
    part = tmp_path / "lake" / "payroll" / "year=2023"
    part.mkdir(parents=True)
    f["payroll"].write_parquet(part / "part-0.parquet")
    payroll = scan_lake(None, "payroll", lake=tmp_path / "lake")
    whole = identity.resolve(payroll, f["roster"].lazy(), f["applications"].lazy())
    assert sorted(set(whole.rejects.get_column("rule").to_list())) == ["masked_ssn_mismatch", "no_ssn", "two_ssns"]
    assert whole.unclaimed_without_ssn == 3
    filled = whole.payroll.filter(pl.col("employer_id") == "100000002").collect().get_column("ssn_hash")
    assert filled.null_count() == 0 and filled.n_unique() == 1

    on_threads = resolve_on_cluster("local:2", tmp_path / "lake", payroll, f["roster"].lazy(), f["applications"].lazy())
    for a, b in zip(_rows(whole), _rows(on_threads), strict=True):
        assert a.equals(b) if isinstance(a, pl.DataFrame) else a == b
