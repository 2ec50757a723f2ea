"""``report_frame._first_cells``: each line's first non-blank cell and where it is, blank lines
left out, equal to the plain reading (every cell stripped, the first filled one taken) on any
lines, including lines whose first cells are blank or spaces and a table of one column."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.ingest.read.reports.report_frame import _first_cells

CELL = st.one_of(st.none(), st.sampled_from(["", " ", "  \t", "a", " b ", "Total", "1,234.50"]))


def plain(frame: pl.DataFrame, width: int) -> list[tuple]:
    out = []
    for row in frame.iter_rows(named=True):
        for i in range(width):
            v = row[f"c{i}"]
            if v is not None and v.strip():
                out.append((row["__line"], i, v.strip()))
                break
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda w: st.tuples(st.just(w), st.lists(st.lists(CELL, min_size=w, max_size=w),
                                                                            max_size=30))))
def test_first_cells_are_the_plain_readings(case):
    width, rows = case
    frame = pl.DataFrame({f"c{i}": [r[i] for r in rows] for i in range(width)}, schema=dict.fromkeys(
        (f"c{i}" for i in range(width)), pl.String)).with_row_index("__line").with_columns(pl.col("__line").cast(pl.Int64))
    got = _first_cells(frame.lazy(), width).collect()
    assert got.schema["__pos"] == pl.Int32
    assert list(zip(got.get_column("__line"), got.get_column("__pos"), got.get_column("__first"), strict=True)) == plain(frame, width)
