"""Certificates of credit, one per award > 0 (34:11-56a41(a)(4); 54:10A-5.42; 54A:4-18)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.products._html import decision_date, file_names, render_many, without_gc
from transforms.products.award_file import award_rows

TAX_TYPES = {
    "CBT": {
        "tax_type_name": "Corporation Business Tax",
        "tax_statute": "N.J.S.A. 54:10A-5.42(a)",
        "carry_cite": "N.J.S.A. 54:10A-5.42(b)",
        "period_word": "privilege period",
    },
    "GIT": {
        "tax_type_name": "Gross Income Tax",
        "tax_statute": "N.J.S.A. 54A:4-18(a)",
        "carry_cite": "N.J.S.A. 54A:4-18(b)",
        "period_word": "taxable year",
    },
}


@without_gc
def write_certificates(
    staging_dir: Path, awards: pl.DataFrame, applications: pl.DataFrame | None = None, *, run_id: str = ""
) -> list[Path]:
    """``certificates/<certificate_no>.html`` for every award > 0."""
    pages = []
    rows = award_rows(awards, applications)
    names = file_names(rows.get_column("certificate_no").to_list(), "certificates")
    for row in rows.iter_rows(named=True):
        tt = TAX_TYPES.get(row["tax_type"], TAX_TYPES["GIT"] if row["tax_type"] == "GIT" else TAX_TYPES["CBT"])
        c = {
            **row,
            **tt,
            "tax_year_start": row["tax_year_start"].isoformat(),
            "tax_year_end": row["tax_year_end"].isoformat(),
            "run_id": row.get("run_id") or run_id,
            "decided_on": decision_date(row.get("run_id") or run_id),
        }
        path = Path(staging_dir) / "certificates" / f"{names[row['certificate_no']]}.html"
        pages.append((path, {"c": c}))
    return render_many("certificate.html.j2", pages)

