"""Certificates of credit, one per award > 0 (34:11-56a41(a)(4); 54:10A-5.42; 54A:4-18)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.products import pdf
from transforms.products._html import decision_date, file_names, money, render_many, without_gc
from transforms.products.award_file import award_rows
from transforms.products.pdf import text

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


BASIS = ("N.J.S.A. 34:11-56a40 (credit for employers of employees with impairments); N.J.S.A. 34:11-56a41(a)(4) "
         "(submission of certificates of credit to the Division of Taxation); {tax_statute} (the Director allows the "
         "credit in the amount certified by the Commissioner of Labor and Workforce Development).")
CARRY = ("This credit applies only for the {tax_year} {period_word} for which it is allowed. An employer shall not "
         "carry forward an unused credit; any unused amount is forfeited ({carry_cite}).")
FLOOR = {
    "CBT": ("Minimum tax. Together with any other credits, this credit may not reduce the corporation business tax "
            "liability below the statutory minimum tax of N.J.S.A. 54:10A-5(e) (N.J.S.A. 54:10A-5.42(c))."),
    "GIT": ("Not refundable. This credit may not reduce the gross income tax liability below zero (N.J.S.A. 54A:4-18(c)). "
            "No credit is allowed for wages and payroll taxes included in the calculation of any other credit claimed "
            "for a period that coincides with the taxable year (N.J.S.A. 54A:4-18(c))."),
}


def pdf_record(c: dict) -> dict:
    """A certificate's fields as the PDF template takes them (every value text)."""
    amends = c.get("amends_certificate_no") if c.get("record_type") == "AMENDMENT" else None
    return {
        "certificate_no": c["certificate_no"], "employer_name": text(c["employer_name"]), "employer_id": c["employer_id"],
        "application_id": c["application_id"], "tax_type": f"{c['tax_type']} ({c['tax_type_name']})",
        "tax_year": str(c["tax_year"]), "tax_period": f"{c['tax_year_start']} to {c['tax_year_end']}",
        "approval_year": str(c["approval_year"]), "decided_on": c["decided_on"], "amount": money(c["certified_cents"]),
        "amends": f"{amends} (change {money(c['change_cents'])})" if amends else "", "amends_no": text(amends),
        "basis": BASIS.format(**c), "carry": CARRY.format(**c), "floor": FLOOR.get(c["tax_type"], FLOOR["CBT"]),
        "submit": (f"Submit this certificate to the Division of Taxation with the return for the tax year named above "
                   f"(CBT: Form 328). Issued under run {c['run_id']}."),
    }


@without_gc
def write_certificates(
    staging_dir: Path, awards: pl.DataFrame, applications: pl.DataFrame | None = None, *, run_id: str = "",
    pdf_jobs: list | None = None, documents: int = 0,
) -> list[Path]:
    """``certificates/<certificate_no>.html`` for every award > 0 (and amendment). With
    ``pdf_jobs``, the PDF of them all (``certificates/certificates.pdf``) is appended as a job
    (a callable) for the caller to run beside the pages (``pdf.job``: a run of ``documents``)."""
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
    if pdf_jobs is not None and pages:
        job = pdf.job("certificates", lambda: [pdf_record(ctx["c"]) for _, ctx in pages],
                      Path(staging_dir) / "certificates" / "certificates.pdf", footer=f"impcredit run {run_id}",
                      documents=documents or len(pages))
        if job is not None:
            pdf_jobs.append(job)
    return render_many("certificate.html.j2", pages)

