"""Products of an approving annual run: the award file for the Division of Taxation,
certificates of credit, decision notices, the cap-sufficiency and biennial reports, and the
per-employee-year ``explain`` receipt.

HTML products are plain HTML with print CSS (no PDF engine is a dependency): print them, or
print to PDF from a browser.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path

import polars as pl

from transforms.options import DocumentOptions
from transforms.products import pdf, render_helper
from transforms.products.award_file import (
    AWARD_FILE_SCHEMA_VERSION,
    certificate_no,
    write_award_file,
)
from transforms.products.certificates import write_certificates
from transforms.products.notices import REASONS, write_notices


def write_products(
    staging_dir: Path,
    *,
    con,
    awards: pl.DataFrame,
    employee_years: pl.DataFrame,
    rejects: pl.DataFrame,
    run_id: str,
    tax_year: int,
    approval_year: int,
    cap_cents: int,
    history: pl.DataFrame | None = None,
    held: pl.DataFrame | None = None,
    members: pl.DataFrame | None = None,
    addresses: dict[str, str] | None = None,
    named_by: dict[str, str] | None = None,
    findings: list | None = None,
    params=None,
    freed: dict | None = None,
    options: DocumentOptions | None = None,
    confirmed: pl.DataFrame | None = None,
) -> list[Path]:
    """Write the award file, certificates, notices and reports under ``staging_dir``.

    ``awards``: the run's decisions (``transforms.award.ledger.DECISION_COLUMNS``, money in cents);
    ``employee_years``: the credit result's employee frame (all quantities); ``rejects``: the
    rejected input cells (an ``employer_id`` column, when present, attributes them to notices);
    ``con``: the ledger connection (history for the reports; this run's ``awards`` are laid over
    it since the products are written before the ledger commits). ``history``: the ledger rows of
    these applications with this run's new ones (``ledger.ROW_COLUMNS``), for the award file's
    amendment rows and the amended certificates; without it every award is a first award.
    ``held``: the held applications and the rejected lines that hold them (``award.held``).
    ``members``: each person's rows by member of the group (``CreditResult.members``);
    ``addresses``: application id -> the employer's mailing address (the employer documents);
    ``named_by``: employer id -> the product whose report names employees instead of an id (notices).
    ``findings``: the ledger's audit findings (spec section 9a), with ``params`` their penalty
    multipliers: ``taxation/recapture.csv`` (written when a finding concerns an application of the
    run) and each notice's block of its findings; ``freed``: the cap findings freed
    (``finding_documents.freed_cap``), in the cap-sufficiency report. ``options``: the PDFs and the
    helper process (``transforms.options.DocumentOptions``). ``confirmed``: what the releases this run
    decides take as read (the notices list it). Long because it takes every input of the documents
    and hands each to its writer.
    """
    from transforms.award.ledger import caps
    from transforms.products.finding_documents import (
        ledger_recapture,
        notice_blocks,
        write_recapture,
    )
    from transforms.products.reports import write_reports

    staging_dir = Path(staging_dir)
    rows = history if history is not None else awards
    write_award_file(staging_dir, rows, awards, run_id, tax_year, approval_year)
    t = staging_dir / "taxation"
    files = [t / "award_file.csv", t / "award_file.parquet", t / "award_manifest.json"]
    recapture = ledger_recapture(con, findings, awards, params) if findings else None
    if recapture is not None:
        write_recapture(recapture, t / "recapture.csv")
        files.append(t / "recapture.csv")
    blocks = notice_blocks(con, findings, awards, params) if findings else {}
    caps_now = {**caps(con), approval_year: cap_cents}  # the caps stated (read before the reports' thread takes con)
    # the reports (charts, queries of ``con``) are drawn in a second thread while this one writes the pages (mostly
    # the file system's time; nothing else uses ``con`` meanwhile), and the PDFs (Typst renders outside Python's lock)
    options = options or DocumentOptions()
    jobs = pdf.Jobs(options)
    documents = int((rows.get_column("awarded_cents") > 0).sum()) + awards.height  # certificates and notices
    # many pages: a helper process renders half of them (``render_helper``; the same files)
    with (render_helper.Helper() if render_helper.wanted(documents, options.render_helper) else nullcontext()) as helper, \
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="reports") as pool:
        reports = pool.submit(write_reports, staging_dir, con, employee_years, cap_cents, approval_year, awards=awards,
                              freed=freed)
        files += write_certificates(staging_dir, rows, awards, run_id=run_id, pdf_jobs=jobs, documents=documents,
                                    addresses=addresses, helper=helper)
        pdfs = [pool.submit(job) for job in jobs[:1]]
        files += write_notices(staging_dir, awards, employee_years, rejects, run_id=run_id, pdf_jobs=jobs,
                               documents=documents, held=held, history=history, members=members, addresses=addresses,
                               named_by=named_by, findings=blocks, helper=helper,
                               caps=caps_now, confirmed=confirmed, lines_per_file=options.notice_lines)
        pdfs += [pool.submit(job) for job in jobs[len(pdfs):]]
        files += reports.result()  # (on an error above, leaving the block still waits for it)
        files += [p for f in pdfs for p in f.result()]
    return files


def write_index(staging_dir: Path, summary, *, decided_at: str, awards: pl.DataFrame | None = None,
                history: pl.DataFrame | None = None, held: pl.DataFrame | None = None,
                rejects: pl.DataFrame | None = None, freed: dict | None = None, input_files: list | None = None,
                audit: dict[str, str] | None = None) -> Path:
    """``index.html``: the run page (``run_page.write_run_page``); ``history`` names each
    application's certificate now (an amended one's latest); ``audit``: what findings did to each
    application (``finding_documents.audit_notes``)."""
    from transforms.products.notices import _certificates
    from transforms.products.run_page import write_run_page

    certs: dict[str, str] = {}
    if awards is not None:
        certs = {a: certificate_no(y, a) for a, y, c in awards.select("application_id", "approval_year", "awarded_cents").iter_rows()
                 if c > 0}
        certs.update({a: c["certificate_no"] for a, c in _certificates(history, awards).items()})
    return write_run_page(staging_dir, summary, decided_at=decided_at, awards=awards, certificates=certs, held=held,
                          rejects=rejects, freed=freed, input_files=input_files, audit=audit)


__all__ = [
    "AWARD_FILE_SCHEMA_VERSION",
    "REASONS",
    "certificate_no",
    "write_award_file",
    "write_index",
    "write_certificates",
    "write_notices",
    "write_products",
    "write_reports",
]


def __getattr__(name: str):
    if name == "write_reports":
        from transforms.products.reports import write_reports

        return write_reports
    raise AttributeError(name)
