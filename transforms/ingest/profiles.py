"""Vendor profiles: how a payroll export maps onto the canonical payroll columns (data, not code).

Each ``data/vendors/*.yaml`` file is one profile, loaded through the strict schema below
(unknown keys are an error). A profile says which header names (aliases) carry each logical
field, how dates and numbers are written, which delimiters and encodings the export uses, and
which canonical columns are derived as sums (hours = regular + overtime).

Header names are *folded* before matching: case, spaces and punctuation are ignored
(``"O/T Hours"`` and ``"ot hours"`` both fold to ``"othours"``).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from transforms import schema

VENDORS_DIR = Path(__file__).resolve().parents[2] / "data" / "vendors"

DATASETS: tuple[str, ...] = tuple(schema.SUBMITTED_COLUMNS)


def fold(header: str) -> str:
    """Fold a header for matching: accents removed, lower case, letters and digits only."""
    text = unicodedata.normalize("NFKD", str(header)).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]", "", text.lower())


class NumberFormat(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    thousands: str | None = None  # e.g. "," in "1,234.56"
    decimal: Literal[".", ","] = "."
    currency: list[str] = Field(default_factory=list)  # symbols stripped, e.g. ["$"]
    parentheses_negative: bool = False  # "(12.50)" = -12.50
    trailing_minus: bool = False  # "12.50-" = -12.50


class Profile(BaseModel):
    """One vendor layout of a dataset (payroll for vendors; every dataset for ``canonical``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    dataset: Literal["payroll", "applications", "roster", "certifications", "employer_rates"]
    formats: list[Literal["csv", "xlsx"]]
    extensions: list[str] = Field(default_factory=lambda: [".csv"])
    delimiters: list[str] = Field(default_factory=lambda: [","])
    encodings: list[str] = Field(default_factory=lambda: ["utf-8"])
    date_formats: list[str] = Field(default_factory=lambda: ["%Y-%m-%d"])
    number: NumberFormat = NumberFormat()
    # Characters removed from employer ids (a FEIN written "12-3456789").
    employer_id_strip: str = ""
    # logical field -> header aliases (compared folded)
    fields: dict[str, list[str]]
    # canonical column -> logical fields summed (a blank part counts 0; all blank = missing)
    derived: dict[str, list[str]] = Field(default_factory=dict)
    # logical fields that may be absent from the header (a derived part, e.g. overtime)
    optional: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Profile:
        canon = schema.SUBMITTED_COLUMNS[self.dataset]
        for col in canon:
            if col not in self.fields and col not in self.derived:
                raise ValueError(f"profile {self.name}: canonical column {col!r} is neither a field nor derived")
            if col in self.fields and col in self.derived:
                raise ValueError(f"profile {self.name}: {col!r} is both a field and derived")
        for col, parts in self.derived.items():
            if col not in canon:
                raise ValueError(f"profile {self.name}: derived {col!r} is not a canonical column")
            if not parts:
                raise ValueError(f"profile {self.name}: derived {col!r} has no parts")
            for p in parts:
                if p not in self.fields:
                    raise ValueError(f"profile {self.name}: derived {col!r} uses unknown field {p!r}")
        for f in self.optional:
            if f not in self.fields:
                raise ValueError(f"profile {self.name}: optional {f!r} is not a field")
            if f in canon:
                raise ValueError(f"profile {self.name}: a canonical column ({f}) cannot be optional")
        for f, aliases in self.fields.items():
            if not aliases:
                raise ValueError(f"profile {self.name}: field {f!r} has no header alias")
        folded: dict[str, str] = {}
        for f, aliases in self.fields.items():
            for a in aliases:
                k = fold(a)
                if not k:
                    raise ValueError(f"profile {self.name}: alias {a!r} folds to nothing")
                if folded.setdefault(k, f) != f:
                    raise ValueError(f"profile {self.name}: alias {a!r} is used by {folded[k]!r} and {f!r}")
        for enc in self.encodings:
            codecs.lookup(enc)
        for d in self.delimiters:
            if len(d) != 1:
                raise ValueError(f"profile {self.name}: delimiter {d!r} is not one character")
        return self

    @property
    def required_fields(self) -> list[str]:
        return [f for f in self.fields if f not in self.optional]

    def alias_index(self) -> dict[str, str]:
        return {fold(a): f for f, aliases in self.fields.items() for a in aliases}


@lru_cache(maxsize=4)
def load_profiles(directory: Path | None = None) -> tuple[Profile, ...]:
    """All payroll profiles (vendor YAML files), ``canonical`` first."""
    d = Path(directory) if directory else VENDORS_DIR
    profiles = []
    for path in sorted(d.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            profiles.append(Profile.model_validate(data))
        except Exception as exc:
            raise ValueError(f"{path}: invalid vendor profile: {exc}") from None
    names = [p.name for p in profiles]
    if len(set(names)) != len(names):
        raise ValueError(f"{d}: duplicate profile names {names}")
    if "canonical" not in names:
        raise ValueError(f"{d}: the canonical profile (canonical.yaml) is missing")
    profiles.sort(key=lambda p: (p.name != "canonical", p.name))
    return tuple(profiles)


@lru_cache(maxsize=8)
def canonical_profile(dataset: str) -> Profile:
    """The canonical CSV layout of ``dataset`` (payroll: canonical.yaml; others: the schema)."""
    base = next(p for p in load_profiles() if p.name == "canonical")
    if dataset == "payroll":
        return base
    cols = schema.SUBMITTED_COLUMNS[dataset]
    return base.model_copy(
        update={"dataset": dataset, "fields": {c: [c] for c in cols}, "derived": {}, "optional": []}
    )


def profiles_for(dataset: str, fmt: str) -> list[Profile]:
    if dataset != "payroll":
        return [canonical_profile(dataset)] if fmt == "csv" else []
    return [p for p in load_profiles() if fmt in p.formats]


@dataclass
class Match:
    profile: Profile
    columns: dict[str, int]  # logical field -> header position
    missing: list[str]
    unmatched: list[str]  # headers not used (non-blank)
    duplicated: list[str] = field(default_factory=list)  # fields matched by several headers

    @property
    def ok(self) -> bool:
        return not self.missing and not self.duplicated

    def missing_headers(self) -> list[str]:
        return [self.profile.fields[f][0] for f in self.missing]


def match_headers(profile: Profile, headers: list[str]) -> Match:
    index = profile.alias_index()
    columns: dict[str, int] = {}
    unmatched: list[str] = []
    duplicated: list[str] = []
    for pos, h in enumerate(headers):
        f = index.get(fold(h))
        if f is None:
            if str(h).strip():
                unmatched.append(str(h))
        elif f in columns:
            duplicated.append(f)
        else:
            columns[f] = pos
    missing = [f for f in profile.required_fields if f not in columns]
    return Match(profile, columns, missing, unmatched, duplicated)


def best_match(candidates: list[Profile], headers: list[str]) -> tuple[Match | None, Match | None]:
    """(the matching profile, or None; the nearest profile when none matches)."""
    matches = [match_headers(p, headers) for p in candidates]
    ok = [m for m in matches if m.ok]
    if ok:
        ok.sort(key=lambda m: (-len(m.columns), len(m.unmatched)))
        return ok[0], None
    if not matches:
        return None, None
    near = sorted(matches, key=lambda m: (len(m.missing) + len(m.duplicated), -len(m.columns)))
    return None, near[0]
