"""Vendor profiles: how a payroll export maps onto the canonical payroll columns (data, not code).

Each ``data/vendors/*.yaml`` file is one profile, loaded through the strict schema below
(unknown keys are an error). A profile says which header names (aliases) carry each logical
field, how dates and numbers are written, which delimiters and encodings the export uses, and
which canonical columns are derived as sums (hours = regular + overtime).

Header names are *folded* before matching: case, spaces and punctuation are ignored
(``"O/T Hours"`` and ``"ot hours"`` both fold to ``"othours"``).

Two shapes of payroll export (``layout``):
- ``wide`` (default): one line per pay period (or check) of an employee, hours, wages and
  employer taxes in columns of their own (possibly summed from parts, ``derived``);
- ``long``: one line per earnings code and per employer tax code of a check (a payroll
  register or journal). ``long`` names the fields holding the code, its hours and its amount,
  and the code table: which codes carry hours, which wages, which employer taxes and which are
  ignored (employee taxes and deductions, reimbursements). Ingest sums the lines of a check into
  one canonical row (employee, check, period) and keeps every line (``payroll_lines``). A code
  in no list is a reject of its line, never guessed.

``period_from_pay_date``: the export has no period columns, only the check (pay) date and the
pay frequency; the period is derived by the named rule (see ``PeriodFromPayDate``).
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
from transforms.ingest.report_layout import ReportLayout

VENDORS_DIR = Path(__file__).resolve().parents[2] / "data" / "vendors"

DATASETS: tuple[str, ...] = tuple(schema.SUBMITTED_COLUMNS)


def fold(header: str) -> str:
    """Fold a header for matching: accents removed, lower case, letters and digits only."""
    text = unicodedata.normalize("NFKD", str(header)).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]", "", text.lower())


class NumberFormat(BaseModel):
    """How a layout writes amounts. Every layout reads what people and spreadsheets write (spec
    section 1): a ``$``, thousands separators and parentheses for a negative amount by default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thousands: str | None = ","  # e.g. "," in "1,234.56"
    decimal: Literal[".", ","] = "."
    currency: list[str] = Field(default_factory=lambda: ["$"])  # symbols stripped
    parentheses_negative: bool = True  # "(12.50)" = -12.50
    trailing_minus: bool = False  # "12.50-" = -12.50


FREQUENCIES = ("weekly", "biweekly", "semimonthly", "monthly")


class LongLayout(BaseModel):
    """A line-per-code export: the fields holding the code, its hours and its amount, and the
    code table (codes compared case-insensitively, spaces trimmed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str  # logical field holding the earnings or tax code
    hours: str  # logical field holding the hours (read only on codes that carry hours)
    amount: str  # logical field holding the amount (read on codes that carry wages or taxes)
    hours_codes: list[str] = Field(default_factory=list)  # codes whose hours count (REG, OT, HOL ...)
    wage_codes: list[str] = Field(default_factory=list)  # codes whose amount is gross wages (REG, OT, BONUS ...)
    tax_codes: list[str] = Field(default_factory=list)  # codes whose amount is an employer payroll tax
    ignore_codes: list[str] = Field(default_factory=list)  # employee taxes, deductions, reimbursements
    # an export whose lines carry the code's type (earnings, deduction, tax, employer tax): the
    # logical field holding it and what each type counts as (then the code lists are not needed)
    type: str | None = None
    type_counts: dict[str, Literal["hours+wages", "wages", "taxes", "ignored"]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> LongLayout:
        counted = set(self.wage_codes) | set(self.tax_codes) | set(self.hours_codes)
        for name in ("hours_codes", "wage_codes", "tax_codes", "ignore_codes"):
            codes = getattr(self, name)
            if any(c != c.strip().upper() or not c for c in codes):
                raise ValueError(f"{name}: codes are written upper case, without surrounding spaces")
        if both := set(self.wage_codes) & set(self.tax_codes):
            raise ValueError(f"codes both wages and employer taxes: {sorted(both)}")
        if both := counted & set(self.ignore_codes):
            raise ValueError(f"codes both counted and ignored: {sorted(both)}")
        if (self.type is None) == bool(self.type_counts):
            raise ValueError("type and type_counts go together")
        if self.type is None and not counted:
            raise ValueError("a code table (hours_codes, wage_codes, tax_codes) or a type field is needed")
        if any(k != k.strip().upper() or not k for k in self.type_counts):
            raise ValueError("type_counts: types are written upper case, without surrounding spaces")
        return self

    def counts_as(self, code: str) -> str | None:
        """hours+wages, hours, wages, taxes, ignored, or None (not in the code table)."""
        c = code.strip().upper()
        h, w, t = c in self.hours_codes, c in self.wage_codes, c in self.tax_codes
        if h and w:
            return "hours+wages"
        if h or w or t:
            return "hours" if h else "wages" if w else "taxes"
        return "ignored" if c in self.ignore_codes else None


class PeriodFromPayDate(BaseModel):
    """The pay period derived from the check (pay) date and the pay frequency of the line.

    ``rule: period_ending_on_pay_date`` (the only rule so far), with the pay date moved back by
    ``lag_days`` first (a check paid some days after its period closes):
    weekly and biweekly: the 7 or 14 days ending on that day; semimonthly: the half month holding
    it (the 1st to the 15th, or the 16th to the month's end); monthly: the calendar month holding it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: Literal["period_ending_on_pay_date"]
    frequency: str  # logical field holding the pay frequency
    frequencies: dict[str, Literal["weekly", "biweekly", "semimonthly", "monthly"]]  # value -> frequency
    lag_days: int = Field(default=0, ge=0, le=31)

    @model_validator(mode="after")
    def _check(self) -> PeriodFromPayDate:
        if any(k != k.strip().upper() or not k for k in self.frequencies):
            raise ValueError("frequencies: values are written upper case, without surrounding spaces")
        return self


# canonical payroll columns a layout may lack: the submission (the file's folder or
# payroll/files.csv), a block header line or the file name give them (spec section 1)
FROM_CONTEXT = ("employer_id", "ssn", "period_start", "period_end", "pay_date")


class Profile(BaseModel):
    """One vendor layout of a dataset (payroll for vendors; every dataset for ``canonical``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    dataset: Literal["payroll", "applications", "roster", "certifications", "employer_rates", "control_groups",
                     "estimate_requests"]
    formats: list[Literal["csv", "xlsx"]]
    extensions: list[str] = Field(default_factory=lambda: [".csv"])
    delimiters: list[str] = Field(default_factory=lambda: [","])
    encodings: list[str] = Field(default_factory=lambda: ["utf-8"])
    date_formats: list[str] = Field(default_factory=lambda: ["%Y-%m-%d"])
    number: NumberFormat = NumberFormat()
    # Characters removed from employer ids (a FEIN written "12-3456789"), in every layout.
    employer_id_strip: str = "- "
    # logical field -> header aliases (compared folded)
    fields: dict[str, list[str]]
    # canonical column -> logical fields summed (a blank part counts 0; all blank = missing)
    derived: dict[str, list[str]] = Field(default_factory=dict)
    # logical fields that may be absent from the header (a derived part, e.g. overtime; an
    # optional canonical column such as check_id)
    optional: list[str] = Field(default_factory=list)
    layout: Literal["wide", "long"] = "wide"
    long: LongLayout | None = None  # the code fields and table of a long layout
    period_from_pay_date: PeriodFromPayDate | None = None
    report: ReportLayout | None = None  # a report: preamble, totals and block lines, file-name fields
    # the product whose documented export this profile follows (``impcredit layouts``)
    product: str = ""
    # an export with no employee id: the id is the text of these fields, joined by ", " (the
    # employee's name as the report prints it; the roster names the employee the same way)
    employee_id_from: list[str] = Field(default_factory=list)

    @property
    def provided(self) -> set[str]:
        """Canonical columns this profile's layout provides without a field of their own."""
        out: set[str] = {"employee_id"} if self.employee_id_from else set()
        if self.report is not None:
            out |= {f for b in self.report.blocks for f in b.fields}
            if self.report.file_name is not None:
                out |= set(re.compile(self.report.file_name.pattern).groupindex)
        if self.long is not None:
            out |= {"hours", "gross_wages", "employer_taxes"}
        if self.period_from_pay_date is not None:
            out |= {"period_start", "period_end"}
        return out

    @model_validator(mode="after")
    def _check(self) -> Profile:
        canon = schema.SUBMITTED_COLUMNS[self.dataset]
        if (self.layout == "long") != (self.long is not None):
            raise ValueError(f"profile {self.name}: layout long needs a 'long' section (and only it has one)")
        if self.dataset != "payroll" and (self.long is not None or self.period_from_pay_date is not None):
            raise ValueError(f"profile {self.name}: long layouts and derived periods are for payroll")
        for owner, fields in (("long", [self.long.code, self.long.hours, self.long.amount,
                                        *([self.long.type] if self.long and self.long.type else [])] if self.long else []),
                              ("period_from_pay_date", [self.period_from_pay_date.frequency] if self.period_from_pay_date else [])):
            for f in fields:
                if f not in self.fields:
                    raise ValueError(f"profile {self.name}: {owner} uses unknown field {f!r}")
        if self.period_from_pay_date is not None and ("pay_date" not in self.fields or "pay_date" in self.optional):
            raise ValueError(f"profile {self.name}: period_from_pay_date needs a required pay_date field")
        for col in canon:
            if col == "employee_id" and self.employee_id_from:
                continue
            if col in self.provided:
                if col in self.fields or col in self.derived:
                    raise ValueError(f"profile {self.name}: {col!r} comes from the layout, not from a field")
                continue
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
            if f in canon and not (self.dataset == "payroll" and f in FROM_CONTEXT):
                raise ValueError(f"profile {self.name}: a canonical column ({f}) cannot be optional")
        for f in self.employee_id_from:
            if f not in self.fields:
                raise ValueError(f"profile {self.name}: employee_id_from uses unknown field {f!r}")
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
    def shaped(self) -> bool:
        """Whether the layout's lines are more than a header and rows (totals, blocks, notes,
        fields in the file name): such a file is read line by line (``shape.shape_report``)."""
        r = self.report
        return r is not None and bool(r.totals or r.blocks or r.notes or r.file_name)

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
    cols = [*schema.SUBMITTED_COLUMNS[dataset], *schema.OPTIONAL_COLUMNS.get(dataset, [])]
    return base.model_copy(
        update={"dataset": dataset, "fields": {c: [c] for c in cols}, "derived": {},
                "optional": list(schema.OPTIONAL_COLUMNS.get(dataset, [])), "layout": "wide",
                "long": None, "period_from_pay_date": None}
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
