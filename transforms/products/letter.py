"""What every document an employer receives shares (certificates of credit, decision notices): the
issuing agency's letterhead and contact (``data/agency.yaml``), the employer's block (name, FEIN
written NN-NNNNNNN, mailing address when the application gives one), the tax period in the words of
its tax (privilege period, taxable year), and the filing instructions of its tax type. No run id,
spec section or register number: those stay in the manifest and ``explain``."""

from __future__ import annotations

import datetime as dt

from transforms.products.agency import Agency, load_agency


def fein(employer_id: str | None) -> str:
    """A 9-digit employer id as the FEIN is printed (``12-3456789``); anything else as given."""
    v = employer_id or ""
    return f"{v[:2]}-{v[2:]}" if len(v) == 9 and v.isdigit() else v


def long_date(d: dt.date | str | None) -> str:
    """``January 1, 2023`` (empty for none): the one way a date is written wherever an employer
    reads it (notices, certificates, the check page; HTML and PDF alike)."""
    if d is None or d == "":
        return ""
    day = dt.date.fromisoformat(d[:10]) if isinstance(d, str) else d
    if isinstance(day, dt.datetime):
        day = day.date()
    return f"{day.strftime('%B')} {day.day}, {day.year}"


def long_instant(instant: dt.datetime | None) -> str:
    """An instant (aware, or naive UTC) as an employer reads it, in New Jersey local time:
    ``February 1, 2024, 9:00 a.m. (New Jersey time)``."""
    from zoneinfo import ZoneInfo

    if instant is None:
        return ""
    aware = instant if instant.tzinfo else instant.replace(tzinfo=dt.UTC)
    local = aware.astimezone(ZoneInfo("America/New_York"))
    hour = local.hour % 12 or 12
    return f"{long_date(local.date())}, {hour}:{local.minute:02d} {'a.m.' if local.hour < 12 else 'p.m.'} (New Jersey time)"


def address_lines(address: str | None) -> list[str]:
    """The application's ``employer_address`` (lines separated by ``;``) as lines."""
    return [p.strip() for p in (address or "").split(";") if p.strip()]


def letterhead(agency: Agency | None = None) -> dict:
    """The agency block every employer document opens with, and the contact it ends with."""
    a = agency or load_agency()
    return {
        "agency_name": a.agency.name, "agency_program": a.agency.program, "agency_address": list(a.agency.address),
        "agency_contact": a.contact(), "official_name": a.certifying_official.name,
        "official_title": a.certifying_official.title, "appeal_text": a.appeal.text, "appeal_citation": a.appeal.citation,
    }


def tax_period(agency: Agency | None, tax_type: str | None, start, end) -> dict:
    """The tax period in the words of its tax: ``period_label`` (Privilege period / Taxable
    year), ``period`` (January 1, 2023 to December 31, 2023) and the filing instructions."""
    f = (agency or load_agency()).filing_for(tax_type)
    return {"tax_type_title": f.title, "period_word": f.period_word,
            "period_label": f.period_word[:1].upper() + f.period_word[1:],
            "period": f"{long_date(start)} to {long_date(end)}", "filing_instructions": f.instructions,
            "filing_citation": f.citation}
