"""The run-level rules' rejects as records (``pipeline`` and the cluster's tasks share them): a
rule's rejects with what their records need of the rows (``cross_row_hits``: no cell), quoted
from the file's cells (``quote_hits``: the file read again), the payroll sums' rules with the
lake's earlier rows (``payroll_sums``) and a summed row's reject sent to its code lines
(``to_code_lines``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.ingest.read.tables import read_tables
from transforms.ingest.validate import cross_rows as xrows
from transforms.ingest.validate.cross_rows import ORDER_BASE
from transforms.ingest.validate.masking import mask_value, short
from transforms.ingest.validate.quarantine import FileWork, lookup, quarantine_rows
from transforms.pii import HashKey
from transforms.schema import DOUBTFUL_RULES

CROSS_RULES = ("duplicate_row", "negative_net", "hourly_rate", "duplicate_key", "employee_id_is_ssn")
def doubtful_only(rules) -> bool:
    """Whether a line's reject rules (an iterable, or a ``;``-joined string) are all doubtful."""
    rules = [r for r in (rules.split(";") if isinstance(rules, str) else rules) if r]
    return bool(rules) and set(rules) <= DOUBTFUL_RULES


def unread(xr: pl.DataFrame) -> pl.DataFrame:
    """The rejects ``xr`` (``__order``, rule, ...) whose line leaves the run's rows: every line but
    those rejected only as doubtful (``schema.DOUBTFUL_RULES``: they are stored, and hold their
    applications until a release confirms them or a corrected file replaces them)."""
    if xr.height == 0:
        return xr
    doubtful = xr.group_by("__order").agg(pl.col("rule").is_in(list(DOUBTFUL_RULES)).all().alias("__d"))
    return xr.join(doubtful.filter(~pl.col("__d")), on="__order", how="semi")


def cross_row_hits(xr: pl.DataFrame, allrows: pl.DataFrame) -> pl.DataFrame:
    """The cross-row rejects ``xr`` with what the reject records need of their rows: ``__order,
    rule, column, message, __line, source_sheet, employer_id, __file`` (no cell of the row)."""
    if xr.height == 0:  # nothing to look up: the schema only
        allrows = allrows.head(0)
    info = allrows.select("__order", pl.col("source_line").alias("__line"), "source_sheet",
                          "employer_id" if "employer_id" in allrows.columns else pl.lit(None, dtype=pl.String).alias("employer_id"))
    return xr.join(info, on="__order", how="left", maintain_order="left").with_columns(
        (pl.col("__order") // ORDER_BASE).alias("__file"))


def quote_hits(hits: pl.DataFrame, by_index: dict[int, FileWork], paths: dict[int, Path], key: HashKey) -> None:
    """Reject records and quarantine rows of ``cross_row_hits``, each file read again to quote its cells."""
    for (index,), grp in hits.group_by(["__file"], maintain_order=True):
        w = by_index[index]
        # read as the first reading read it: with what the submission says of the file (its folder's
        # employer, files.csv), without which a layout that takes a field from them reads no table
        tables, _, _, _ = read_tables(w.dataset, paths[index], w.rel, key, w.context, layouts=w.layouts, limits=w.limits)
        for row in grp.iter_rows(named=True):
            st = next((t for t in tables if t.sheet == row["source_sheet"]), tables[0] if tables else None)
            header = (st.headers if st is not None else {}).get(row["column"], row["column"]) if row["column"] else None
            value = None
            if st is not None and row["column"] in st.text.columns:
                value = lookup(st.text, [row["__line"]], [row["column"]]).get(row["__line"], {}).get(row["column"])
            w.rejects.append(dict(file=w.where(row["source_sheet"]), line=row["__line"], column=header, value=short(mask_value(value)),
                                  rule=row["rule"], message=row["message"], employer_id=row["employer_id"]))
            w.rejected_lines.setdefault((row["source_sheet"], row["__line"]), []).append(row["rule"])
        for st in tables:
            lines = [ln for (s, ln), rules in w.rejected_lines.items() if s == st.sheet and rules and rules[-1] in CROSS_RULES]
            already = {q["source_line"] for q in w.quarantine if q["source_sheet"] == st.sheet}
            quarantine_rows(w, st, [ln for ln in lines if ln not in already], {}, None)


def payroll_sums(rows: pl.DataFrame, code_lines: pl.DataFrame, workdir: Path, lake: Path | None = None) -> pl.DataFrame:
    """The run-level rules over sums of payroll (``cross_rows``): ``negative_net`` (an
    employee-year nets negative) and ``hourly_rate`` (a pay period's rate is implausible), one
    reject per submitted line (a row of a line-per-code export: each of its code lines).
    Employees that break a rule on this run's rows alone are taken again with the lake's rows
    (a reversal may net against a check ingested by an earlier run); only then rejected."""
    cand = pl.concat([xrows.negative_years(rows).select("employer_id", "employee_id"),
                      xrows._period_rates(rows).select("employer_id", "employee_id")]).unique()
    if cand.height == 0:
        return pl.DataFrame(schema=xrows.CROSS_SCHEMA)
    from transforms.ingest.store.lake import scan_lake

    earlier = scan_lake(workdir, "payroll", employer_ids=cand.get_column("employer_id").unique().to_list(), lake=lake).join(
        cand.lazy(), on=["employer_id", "employee_id"], how="semi").collect()
    xn = pl.concat([xrows.negative_nets(rows, earlier), xrows.implausible_rates(rows, earlier)])
    return to_code_lines(xn, code_lines)


def to_code_lines(xn: pl.DataFrame, code_lines: pl.DataFrame) -> pl.DataFrame:
    """Rejects of canonical rows as rejects of submitted lines: a row summed from the code lines
    of a line-per-code export stands for them, the reject goes to each of them."""
    if xn.height == 0 or code_lines.height == 0:
        return xn
    row_order = pl.col("__order") - pl.col("source_line") + pl.col("row_line")  # the same file and sheet
    lines = code_lines.select(row_order.alias("__row"), "__order")
    expanded = xn.join(lines, left_on="__order", right_on="__row", how="left", suffix="_line").select(
        pl.coalesce("__order_line", "__order").alias("__order"), "rule", "column", "message")
    return expanded.cast(xrows.CROSS_SCHEMA)
