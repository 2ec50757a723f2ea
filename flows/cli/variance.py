"""``impcredit variance``: each application's final credit against its quarterly projections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common


def signed(dollars: float) -> str:
    """A variance in words: ``$499.82 below the projection``, never ``$-499.82``."""
    if round(dollars, 2) == 0:
        return "$0.00 (final equals the projection)"
    return f"${abs(dollars):,.2f} {'above' if dollars > 0 else 'below'} the projection"


def variance(
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year.", metavar="YEAR")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/quarterly/<year>).", metavar="DIR")] = None,
) -> None:
    """variance.csv: each application's final credit (annual run) against its quarterly projections."""
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    try:
        import polars as pl

        from transforms.runs.quarterly import variance_report

        path = variance_report(workdir.resolve(), (out or common.DATA / "out" / "quarterly" / str(tax_year)).resolve(), tax_year)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    if path is None:
        common.fail(f"no annual run of tax year {tax_year} in {workdir}; run `impcredit annual` first")
        return
    frame = pl.read_csv(path, infer_schema=False)
    money = [col for col in frame.columns if col.startswith(("projected_q", "variance_q")) or col in ("final_credit", "awarded")]
    frame = frame.with_columns(pl.col(money).cast(pl.Float64))  # an empty column is still money, not text
    qcols = [col for col in frame.columns if col.startswith("projected_q")]
    rows = [("Tax year", str(tax_year)), ("Applications", f"{frame.height:,}"),
            ("Final credits", f"${frame['final_credit'].fill_null(0).sum():,.2f}")]
    for col in qcols:
        qn = col.removeprefix("projected_q")
        projected = frame.filter(pl.col(col).is_not_null())
        if projected.height == 0:
            rows.append((f"Q{qn} projected / variance", "no projection"))
            continue
        rows.append((f"Q{qn} projected ({projected.height} applications)", f"${projected[col].sum():,.2f}"))
        rows.append((f"Q{qn} variance (final - projected)", signed(projected["variance_q" + qn].fill_null(0).sum())))
    rows.append(("Report", common.Whole(path)))
    common.panel("impcredit variance", rows)
