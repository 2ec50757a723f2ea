"""One person, one identity (``validate.identity``) resolved by the cluster's workers: the claimed
employees' rows are read where they are resolved, a chunk of the employers per task, and the
driver gets back only the rows in error and each employee's ssn hash for its rows without one (what
``identity.resolve`` keeps of them), so that no payroll row passes through it. An employee id is
one employer's: the chunks' results together are exactly the whole's (tests/test_cluster_identity.py)."""

from __future__ import annotations

import polars as pl

from transforms import schema, storage
from transforms.ingest.store.lake import scan_lake
from transforms.ingest.validate import identity


def resolve_part(lake: storage.Location, keys: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """On a worker: ``identity.resolve_rows`` of the claimed employees ``keys`` (whole employers)
    over the lake's payroll rows of their employers."""
    employers = keys.get_column("employer_id").unique().sort().to_list()
    return identity.resolve_rows(scan_lake(None, "payroll", employer_ids=employers, lake=lake), keys)


def unclaimed_part(lake: storage.Location, keys: pl.DataFrame) -> int:
    """On a worker: ``identity.unclaimed`` over the lake's payroll."""
    return identity.unclaimed(scan_lake(None, "payroll", lake=lake), keys)


def resolve_on_cluster(address: str, lake: storage.Location, payroll: pl.LazyFrame, roster: pl.LazyFrame,
                       applications: pl.LazyFrame) -> identity.Identities:
    """``identity.resolve`` with the payroll's rows read by the workers of the cluster at
    ``address`` (``executors.Executor``: a Dask scheduler, or this process)."""
    from transforms.ingest.executors import chunks, client_for, gather

    keys = identity.claimed_keys(roster, applications)  # the roster and the applications: no payroll row
    with client_for(address) as client:
        n = max(1, len(client.scheduler_info().get("workers", {})))
        employers = keys.get_column("employer_id").unique().sort().to_list()
        chunks = [keys.filter(pl.col("employer_id").is_in(c)) for c in chunks(employers, 2 * n)]
        futures = [client.submit(unclaimed_part, lake, keys, pure=False)]
        futures += [client.submit(resolve_part, lake, c, pure=False) for c in chunks]
        got = gather(client, futures, "the identities")
    # no claimed employee: the empty frames of an empty payroll (nothing read)
    parts = got[1:] or [identity.resolve_rows(pl.LazyFrame(schema=schema.LAKE["payroll"]), keys)]
    bad, fill = pl.concat([b for b, _ in parts]), pl.concat([f for _, f in parts])
    return identity.identities(payroll, bad, fill, got[0])
