"""Validate many small files at once: consecutive files of one dataset that pass as they are
are staged and validated together, with exactly the file-by-file result (see ``validate_batch``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from transforms.ingest.read.cast.canonical import StagedTable, stage_table
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.tables import read_simple_many
from transforms.ingest.validate import engines as va
from transforms.ingest.validate.cross_rows import ORDER_BASE
from transforms.ingest.validate.files import COMPACT, suite_frame
from transforms.ingest.validate.masking import maskable, masked_ssns
from transforms.ingest.validate.quarantine import FileWork
from transforms.pii import HashKey


def batches(todo: list[FileWork], sizes: dict[int, int], limit: int) -> list[list[FileWork]]:
    """Consecutive files of one dataset, up to ``limit`` bytes of text each (a bigger file alone)."""
    out: list[list[FileWork]] = []
    size = 0
    for w in todo:
        if out and out[-1][0].dataset == w.dataset and size + sizes[w.index] <= limit:
            out[-1].append(w)
            size += sizes[w.index]
        else:
            out.append([w])
            size = sizes[w.index]
    return out


def validate_batch(batch: list[FileWork], paths: dict[int, Path], key: HashKey, now: datetime) -> list[FileWork]:
    """Stage and validate the files of ``batch`` that pass as they are, together; return the others.

    A file passes as it is when the Polars reader maps it exactly (``read_simple``), no row is
    rejected before validation (``structural_errors``), no expectation finds any of its rows
    unexpected (``validate.unexpected_rows``: every expectation tests one row, so many files can
    be tested at once), and no cell would be masked as an ssn before validation (tested against
    the ssns of the whole batch, a superset of the file's own). Such a file gets exactly what the
    file-by-file route gives it: every row passes; the per-call cost of about 40 small Polars
    queries is paid once per batch instead of once per file. Every other file (a reject, a
    workbook, a quote or delimiter inside quotes...) is returned to go the file-by-file route,
    which words its rejects; it has been read twice, which costs little next to the work saved
    on the others.
    """
    groups: dict[tuple, list[tuple[FileWork, rd.RawTable, hd.Match, list[str]]]] = {}
    rest: list[FileWork] = []
    read = read_simple_many(batch[0].dataset, [paths[w.index] for w in batch], batch[0].layouts,  # a batch is of one dataset
                            batch[0].limits.max_line_bytes)
    for w, got in zip(batch, read, strict=True):
        if got is None:
            rest.append(w)
            continue
        table, m, notes = got
        layout = (w.dataset, m.profile.name, tuple(table.headers), table.delimiter, tuple(sorted(m.columns.items())))
        groups.setdefault(layout, []).append((w, table, m, notes))
    for group in groups.values():
        dataset, table0, m0 = group[0][0].dataset, group[0][1], group[0][2]
        raw = rd.RawTable(table0.headers, table0.header_line, pl.concat(
            [t.frame.with_columns(pl.col("__line") + w.index * ORDER_BASE) for w, t, _, _ in group], how="vertical", rechunk=False,
        ), [], delimiter=table0.delimiter)
        st = stage_table(dataset, m0, raw, key, group[0][0].rel)  # __line = file index * ORDER_BASE + line
        frame = st.staged
        hit = flagged(st, suite_frame(dataset, frame, st.text, now))
        dirty = set((frame.get_column("__line").filter(hit) // ORDER_BASE).unique().to_list())
        if any(e.line is None for e in st.structural):
            dirty = {w.index for w, _, _, _ in group}
        dirty |= {e.line // ORDER_BASE for e in st.structural if e.line is not None}
        file_of = (pl.col("source_line") // ORDER_BASE).replace_strict(
            [w.index for w, _, _, _ in group], [w.rel for w, _, _, _ in group], return_dtype=pl.Categorical)
        passed = frame.drop("__line").with_columns(
            pl.col("source_line") % ORDER_BASE, pl.col("source_line").alias("__order"), file_of.alias("source_file"),
            *[pl.col(c).cast(pl.Categorical) for c in COMPACT if c in frame.columns and c != "source_file"],
        ).select(*[c for c in frame.columns if c != "__line"], "__order")
        offset = 0
        for w, t, m, notes in group:
            n = t.frame.height
            if w.index in dirty:
                rest.append(w)
            else:
                w.profile, w.rows_read = m.profile.name, n
                w.notes += notes
                w.passed.append(passed.slice(offset, n))
            offset += n
    return rest


def flagged(st: StagedTable, gx_frame: pl.DataFrame) -> pl.Series:
    """True for each row that some expectation finds unexpected or that has a cell masking
    would change (one of ``st.ssn_digits``, or a dashed ssn pattern)."""
    flagged = va.unexpected_rows(st.dataset, gx_frame)
    for c, digits in maskable(gx_frame, st.ssn_digits):
        v = gx_frame.get_column(c)
        masked = masked_ssns(v, digits)
        if masked is not v:
            flagged = flagged | masked.ne_missing(v)
    return flagged
