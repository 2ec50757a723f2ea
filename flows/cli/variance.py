"""``impcredit variance``: each employer's final credit against its quarterly projections (spec section 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common, listing


def signed(dollars: float) -> str:
    """A variance in words: ``$499.82 below the projection``, never ``$-499.82``."""
    if round(dollars, 2) == 0:
        return "$0.00 (final equals the projection)"
    return f"${abs(dollars):,.2f} {'above' if dollars > 0 else 'below'} the projection"


def _amount(key: str):
    return lambda r: "" if r.get(key) is None else f"{r[key]:,.2f}"


def _panel(tax_year: int, records: list[dict], quarters: list[str], path: Path) -> None:
    """The totals: employers by status, final credits, and per quarter the projections and the
    variance of the employers that have both (never a variance where one of them is missing)."""
    from transforms.runs.variance import COMPARED, NO_FINAL, NO_PROJECTION

    count = {s: sum(r["status"] == s for r in records) for s in (COMPARED, NO_FINAL, NO_PROJECTION)}
    rows = [("Tax year", str(tax_year)),
            ("Employers", f"{len(records):,}: " + ", ".join(f"{s} {n:,}" for s, n in count.items())),
            ("Final credits", f"${sum(r['final_credit'] or 0 for r in records):,.2f}")]
    for qn in quarters:
        projected = [r for r in records if r[f"projected_q{qn}"] is not None]
        if not projected:
            rows.append((f"Q{qn} projected / variance", "no projection"))
            continue
        rows.append((f"Q{qn} projected ({len(projected):,} employers)", f"${sum(r[f'projected_q{qn}'] for r in projected):,.2f}"))
        both = [r for r in projected if r[f"variance_q{qn}"] is not None]
        rows.append((f"Q{qn} variance (final - projected, {len(both):,} employers with both)",
                     signed(float(sum(r[f"variance_q{qn}"] for r in both))) if both
                     else "none: no employer projected has a final credit yet"))
    rows.append(("Report", common.Whole(path)))
    common.panel("impcredit variance", rows)


def variance(
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year.", metavar="YEAR")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Ledger (DuckDB) and Parquet lake.", metavar="DIR")] = common.DATA / "work",
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default data/out/quarterly/<year>).", metavar="DIR")] = None,
    format: listing.Format = "table",
) -> None:
    """variance.csv: each employer's final credit (annual run) beside its quarterly projections.

    An estimate request and the application that follows it meet by employer and tax year. A
    projection with no final credit yet, or a final credit with no projection, says so (status)
    and has no variance. Example: impcredit variance --tax-year 2025 --format csv > variance.csv
    """
    common.local_dir(workdir, "--workdir", ledger=True)
    common.local_dir(out, "--out")
    try:
        import polars as pl

        from transforms.runs.variance import variance_report

        path = variance_report(workdir.resolve(), (out or common.DATA / "out" / "quarterly" / str(tax_year)).resolve(), tax_year)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    if path is None:
        common.fail(f"no annual run of tax year {tax_year} in {workdir}; run `impcredit annual` first")
        return
    frame = pl.read_csv(path, infer_schema=False)
    money = [c for c in frame.columns if c.startswith(("projected_q", "variance_q")) or c in ("final_credit", "awarded")]
    records = frame.with_columns(pl.col("tax_year").cast(pl.Int32)).to_dicts()
    for r in records:
        r.update({c: listing.money(None if r[c] is None else float(r[c])) for c in money})
    quarters = [c.removeprefix("projected_q") for c in frame.columns if c.startswith("projected_q")]
    if listing.machine(format, frame.columns, records):
        return
    _panel(tax_year, records, quarters, path)
    Col = listing.Col
    cols = [Col("employer", "employer_id", no_wrap=True), Col("status", no_wrap=True),
            Col("estimated", "estimated_ids"), Col("application", "application_ids"),
            Col("final credit", text=_amount("final_credit"), justify="right", no_wrap=True)]
    for qn in quarters:
        cols += [Col(f"Q{qn} projected", text=_amount(f"projected_q{qn}"), justify="right", no_wrap=True),
                 Col(f"Q{qn} variance", text=_amount(f"variance_q{qn}"), justify="right", no_wrap=True)]
    listing.print_table(common.console, listing.table(cols, records, title=f"variance, tax year {tax_year}"))
