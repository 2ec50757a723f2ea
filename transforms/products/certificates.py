"""Certificates of credit, one per award > 0 (34:11-56a41(a)(4); 54:10A-5.42; 54A:4-18)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.products import pdf
from transforms.products._html import decision_date, file_names, money, render_many, without_gc
from transforms.products.agency import Agency, load_agency
from transforms.products.award_file import award_rows
from transforms.products.letter import address_lines, fein, letterhead, long_date, tax_period
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
CARRY = ("This credit applies only for the {period_word} for which it is allowed. An employer shall not "
         "carry forward an unused credit; any unused amount is forfeited ({carry_cite}).")
FLOOR = {
    "CBT": ("Minimum tax. Together with any other credits, this credit may not reduce the corporation business tax "
            "liability below the statutory minimum tax of N.J.S.A. 54:10A-5(e) (N.J.S.A. 54:10A-5.42(c))."),
    "GIT": ("Not refundable. This credit may not reduce the gross income tax liability below zero (N.J.S.A. 54A:4-18(c)). "
            "No credit is allowed for wages and payroll taxes included in the calculation of any other credit claimed "
            "for a period that coincides with the taxable year (N.J.S.A. 54A:4-18(c))."),
}


def record(row: dict, agency: Agency, addresses: dict[str, str] | None = None, superseded: dict | None = None,
           replaces: str | None = None) -> dict:
    """A certificate as every value of it is printed (the HTML page and the PDF take the same
    record): the agency's letterhead, the employer's block, the tax period in its tax's words,
    the amount (for an amended certificate the amount before and after), the statutory basis,
    the filing instructions of its tax type and the certifying official. ``superseded``: the
    certificate that replaced this one and the date (``superseded_by``): it is marked so. ``replaces``:
    the certificate this one replaces (the one before it in its application's chain; the award file's
    ``amends_certificate_no`` names the first)."""
    tt = TAX_TYPES.get(row["tax_type"], TAX_TYPES["CBT"])
    amended = row.get("record_type") == "AMENDMENT"
    after = int(row["certified_cents"])
    period = tax_period(agency, row["tax_type"], row["tax_year_start"], row["tax_year_end"])
    fields = {**row, **tt, "period_word": period["period_word"]}
    return {
        **letterhead(agency), **period,
        "certificate_no": row["certificate_no"], "application_id": text(row["application_id"]),
        "employer_name": text(row["employer_name"]), "fein": fein(row["employer_id"]),
        "employer_address": address_lines((addresses or {}).get(row["application_id"])),
        "tax_type": row["tax_type"] or "CBT", "tax_year": str(row["tax_year"]), "approval_year": str(row["approval_year"]),
        "decided_on": long_date(decision_date(row.get("run_id"))), "amount": money(after),
        "amended": amended, "amends_no": text(replaces or row.get("amends_certificate_no")) if amended else "",
        "before": money(after - int(row.get("change_cents") or 0)) if amended else "",
        "change": money(row.get("change_cents")) if amended else "",
        "basis": BASIS.format(**fields), "carry": CARRY.format(**fields), "floor": FLOOR.get(row["tax_type"], FLOOR["CBT"]),
        "superseded_by": (superseded or {}).get("no", ""), "superseded_on": (superseded or {}).get("on", ""),
    }


def _chain_key(certificate: str) -> int:
    """A certificate's place in its application's chain: 0 the first, n its amendment ``-A<n>``."""
    head, _, n = certificate.rpartition("-A")
    return int(n) if head and n.isdigit() else 0


def superseded_by(rows: pl.DataFrame, run_id: str = "") -> dict[str, dict]:
    """certificate number -> {no, on}: the certificate of the same application that replaced it
    (the next of its chain) and the date of that decision."""
    out: dict[str, dict] = {}
    rows = rows.filter(pl.len().over("application_id") > 1)  # a lone certificate is superseded by none
    for _, grp in rows.group_by("application_id", maintain_order=True):
        chain = sorted(grp.select("certificate_no", pl.col("run_id") if "run_id" in grp.columns else pl.lit(None))
                       .iter_rows(), key=lambda r: _chain_key(r[0]))
        for (cert, _), (nxt, nxt_run) in zip(chain, chain[1:], strict=False):
            out[cert] = {"no": nxt, "on": long_date(decision_date(nxt_run or run_id))}
    return out


@without_gc
def write_certificates(
    staging_dir: Path, awards: pl.DataFrame, applications: pl.DataFrame | None = None, *, run_id: str = "",
    pdf_jobs: list | None = None, documents: int = 0, addresses: dict[str, str] | None = None,
    only: set[str] | None = None, helper=None,
) -> list[Path]:
    """``certificates/<certificate_no>.html`` for every award > 0 (and amendment). With
    ``pdf_jobs``, the PDF of them all (``certificates/certificates.pdf``) and one per certificate
    (``certificates/<certificate_no>.pdf``) are appended as a job (a callable) for the caller to
    run beside the pages (``pdf.job``: a run of ``documents``). ``addresses``: application id ->
    the employer's mailing address (``;`` between lines). ``only``: the certificate numbers to write
    (an audit finding's amended certificates) and those they replace, else all. A certificate a
    later one of its application replaced is marked superseded (by which, since when)."""
    pages = []
    agency = load_agency()
    rows = award_rows(awards, applications)
    replaced = superseded_by(rows, run_id)
    previous = {new["no"]: old for old, new in replaced.items()}
    if only is not None:  # and the certificates they replace, marked superseded
        wanted = set(only) | {old for old, new in replaced.items() if new["no"] in only}
        rows = rows.filter(pl.col("certificate_no").is_in(sorted(wanted)))
    names = file_names(rows.get_column("certificate_no").to_list(), "certificates")
    for row in rows.iter_rows(named=True):
        c = record({**row, "run_id": row.get("run_id") or run_id}, agency, addresses, replaced.get(row["certificate_no"]),
                   previous.get(row["certificate_no"]))
        path = Path(staging_dir) / "certificates" / f"{names[row['certificate_no']]}.html"
        pages.append((path, {"c": c}))
    if pdf_jobs is not None and pages:
        job = pdf.job("certificates", lambda: [ctx["c"] for _, ctx in pages],
                      Path(staging_dir) / "certificates" / "certificates.pdf", footer=agency.agency.name,
                      documents=documents or len(pages), names=[p.stem for p, _ in pages],
                      options=getattr(pdf_jobs, "options", None))
        if job is not None:
            pdf_jobs.append(job)
    return render_many("certificate.html.j2", pages, helper)

