"""``store.ordered``: the rows of several parts, each sorted by place, read back in place order a
bounded slice at a time, are exactly the parts' rows sorted; the slices respect the limit except
for a key bigger than it; a Parquet part written from it is the bytes of one written from the
sorted frame."""

from __future__ import annotations

import hypothesis.strategies as st
import polars as pl
from hypothesis import given, settings

from transforms.ingest.store import ordered as od
from transforms.ingest.store import scratch as sg

POS = ["__k0", "__kf", "__kp"]
WANT = {"v": pl.Int64, "w": pl.String, **dict.fromkeys(POS, pl.Int64)}


def _parts(tmp_path, rows: list[tuple[int, int, int]], buckets: list[int], n_parts: int, ext: str = ".arrow") -> list:
    frame = pl.DataFrame(rows, schema=POS, orient="row").unique(POS).with_columns(
        (pl.col("__kp") * 7).alias("v"), pl.col("__kf").cast(pl.String).alias("w"))
    frame = frame.with_columns(pl.Series("__b", [buckets[i % len(buckets)] % n_parts for i in range(frame.height)]))
    paths = []
    for b in range(n_parts):
        part = frame.filter(pl.col("__b") == b).drop("__b").sort(POS)
        if b == 1:
            part = part.drop("w")  # a column a part lacks is read as empty
        paths.append(tmp_path / f"p{b}{ext}")
        sg.put(part, paths[-1])
    return paths


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6), st.integers(0, 400)), min_size=1, max_size=300),
       buckets=st.lists(st.integers(0, 9), min_size=1, max_size=20), n_parts=st.integers(1, 4),
       chunk=st.integers(1, 60), ext=st.sampled_from([".arrow", ".parquet"]))
def test_the_rows_come_back_in_place_order_in_bounded_slices(tmp_path_factory, rows, buckets, n_parts, chunk, ext):
    """``ext``: staged parts as local Arrow files (ranges read by batches) or as Parquet (the
    scratch area in an object store: ranges read by Polars)."""
    tmp = tmp_path_factory.mktemp("ordered")
    paths = _parts(tmp, rows, buckets, n_parts, ext)
    want = pl.concat([sg.get(p) for p in paths], how="diagonal").select(list(WANT)).sort(POS)
    od.CHUNK_ROWS, before = chunk, od.CHUNK_ROWS
    try:
        got = od.ordered(paths, WANT, POS)
        assert got.collect(engine="streaming").equals(want.cast(WANT))
        sizes = [c.height for c in od.ordered_slices(paths, WANT, POS)]
    finally:
        od.CHUNK_ROWS = before
    assert sum(sizes) == want.height
    biggest_key = want.group_by(POS[:2]).len().get_column("len").max()
    assert max(sizes) <= max(chunk + biggest_key - 1, biggest_key)


def test_a_part_written_from_the_slices_is_the_sorted_frames_bytes(tmp_path):
    rows = [(k0, f, p) for k0 in (0, 1) for f in range(5) for p in range(0, 3000, 3)]
    paths = _parts(tmp_path, rows, [0, 1, 2, 1, 0, 2, 2], 3)
    od.CHUNK_ROWS, before = 700, od.CHUNK_ROWS
    try:
        od.ordered(paths, WANT, POS).sink_parquet(tmp_path / "a.parquet", row_group_size=2**10, statistics=True)
        assert len(list(od.ordered_slices(paths, WANT, POS))) == 10  # a slice per key (1,000 rows each)
    finally:
        od.CHUNK_ROWS = before
    pl.concat([sg.get(p) for p in paths], how="diagonal").select(list(WANT)).sort(POS).cast(WANT).lazy().sink_parquet(
        tmp_path / "b.parquet", row_group_size=2**10, statistics=True)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
