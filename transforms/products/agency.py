"""The issuing agency as every employer document shows it (``data/agency.yaml``): its name and
address, a contact, the certifying official, the appeal rights with their citation, and the
filing instructions by tax type. One strict schema (an unknown key is an error)."""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

AGENCY_FILE = Path(__file__).resolve().parents[2] / "data" / "agency.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Office(_Strict):
    name: str = Field(min_length=1)
    program: str = Field(min_length=1)
    address: list[str] = Field(min_length=1)
    phone: str = ""
    email: str = ""
    website: str = ""


class Official(_Strict):
    name: str = ""
    title: str = Field(min_length=1)
    signature_image: str | None = None


class Appeal(_Strict):
    text: str = Field(min_length=1)
    citation: str = Field(min_length=1)


class Resubmission(_Strict):
    """What a held application's notice says: where corrected files go, and within how many days."""

    where: str = Field(min_length=1)
    reply_days: int = Field(gt=0, le=365)


class Filing(_Strict):
    title: str = Field(min_length=1)
    period_word: str = Field(min_length=1)
    instructions: str = Field(min_length=1)
    citation: str = Field(min_length=1)


class Agency(_Strict):
    agency: Office
    certifying_official: Official
    appeal: Appeal
    resubmission: Resubmission
    filing: dict[str, Filing]
    sha256: str = ""

    def filing_for(self, tax_type: str | None) -> Filing:
        """The filing instructions of ``tax_type`` (CBT when unknown)."""
        return self.filing.get(tax_type or "CBT") or self.filing["CBT"]

    def contact(self) -> str:
        """One line: telephone, e-mail and website, those set."""
        return " | ".join(v for v in (self.agency.phone, self.agency.email, self.agency.website) if v)

    def reply_by(self, notice_date: dt.date) -> dt.date:
        """The date corrected files are asked for by: the reply period after the notice's date."""
        return notice_date + dt.timedelta(days=self.resubmission.reply_days)

    def signature_path(self) -> Path | None:
        img = self.certifying_official.signature_image
        return (AGENCY_FILE.parent / img) if img else None


@lru_cache(maxsize=4)
def load_agency(path: Path = AGENCY_FILE) -> Agency:
    """``data/agency.yaml``, validated; a missing CBT or GIT filing entry is an error."""
    raw = path.read_bytes()
    agency = Agency.model_validate({**yaml.safe_load(raw), "sha256": hashlib.sha256(raw).hexdigest()})
    missing = {"CBT", "GIT"} - set(agency.filing)
    if missing:
        raise ValueError(f"{path}: filing instructions missing for {', '.join(sorted(missing))}")
    return agency
