"""Vendor profiles: how a payroll export maps onto the canonical payroll columns (data, not code).

Each ``*.yaml`` file of the shipped ``data/vendors/`` and of an agency's own profiles folder
(``--profiles DIR``, ``IMPCREDIT_PROFILES``; ``profile_files``) is one profile, loaded through the
strict schema below (an unknown key, a bad pattern or an ambiguous mapping is an error naming the
file and the key). A profile says which header names (aliases) carry each logical field, how
dates and numbers are written, which delimiters and encodings the export uses, and which
canonical columns are derived as sums (hours = regular + overtime).

Headers are matched by meaning (``match: words``, the default): a header and an alias reach the
same field when they read as the same set of words through the vocabulary
(``data/vendors/vocabulary.yaml`` and the profile's own ``vocabulary``): ``Soc Sec ER Amt`` is
``Employer Social Security Tax``. The canonical layout matches its column names as written
(``match: exact``: case, spaces and punctuation ignored).

Two shapes of payroll export (``layout``):
- ``wide`` (default): one line per pay period (or check) of an employee, hours, wages and
  employer taxes in columns of their own (possibly summed from parts, ``derived``);
- ``long``: one line per earnings code and per employer tax code of a check (a payroll
  register or journal). ``long`` names the fields holding the code, its hours and its amount,
  and the code table. Ingest sums the lines of a check into one canonical row and keeps every
  line (``payroll_lines``). A code in no list is a reject of its line, never guessed.

What real reports do besides: ``split`` (one column holding two fields: a pay period printed as
``12/24/2022 - 01/06/2023``), ``report`` (title rows, a two-row header, totals, block lines such
as ``Check Date: 01/06/2023`` or the employee named above their rows, notes, fields in the file
name: ``report_layout``), ``period_from_pay_date`` (only check dates: the period from the pay
date and the pay frequency of the line or, where the report has none, of the file, stated in
``payroll/files.csv``), ``employee_id_from`` (no employee id: the printed name is the id).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from transforms import schema
from transforms.ingest.read.report_layout import ReportLayout, check_pattern
from transforms.ingest.read.vocabulary import Reader, Vocabulary, load_vocabulary

DATASETS: tuple[str, ...] = tuple(schema.SUBMITTED_COLUMNS)


def fold(header: str) -> str:
    """Fold a header for exact matching: accents removed, lower case, letters and digits only."""
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
    # a blank amount or hours cell: a missing value (a reject of the row), or 0 (a register whose
    # lines each carry only some of the columns: an earnings line, a tax line)
    blank: Literal["missing", "zero"] = "missing"


FREQUENCIES = ("weekly", "biweekly", "semimonthly", "monthly")
# how reports write the four frequencies (a profile's ``frequencies`` adds its own codes)
USUAL_FREQUENCIES = {"WEEKLY": "weekly", "BIWEEKLY": "biweekly", "BI-WEEKLY": "biweekly", "SEMIMONTHLY": "semimonthly",
                     "SEMI-MONTHLY": "semimonthly", "MONTHLY": "monthly"}


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
                raise ValueError(f"long.{name}: codes are written upper case, without surrounding spaces")
        if both := set(self.wage_codes) & set(self.tax_codes):
            raise ValueError(f"long: codes both wages and employer taxes: {sorted(both)}; list each in one of wage_codes, tax_codes")
        if both := counted & set(self.ignore_codes):
            raise ValueError(f"long.ignore_codes: codes both counted and ignored: {sorted(both)}; list each once")
        if (self.type is None) == bool(self.type_counts):
            raise ValueError("long: type and type_counts go together (write both, or neither and a code table)")
        if self.type is None and not counted:
            raise ValueError("long: a code table (hours_codes, wage_codes, tax_codes) or a type field is needed")
        if any(k != k.strip().upper() or not k for k in self.type_counts):
            raise ValueError("long.type_counts: types are written upper case, without surrounding spaces")
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
    """The pay period derived from the check (pay) date and the pay frequency.

    ``rule: period_ending_on_pay_date`` (the only rule so far), with the pay date moved back by
    ``lag_days`` first (a check paid some days after its period closes): weekly and biweekly: the
    7 or 14 days ending on that day; semimonthly: the half month holding it (the 1st to the 15th,
    or the 16th to the month's end); monthly: the calendar month holding it.
    ``frequency``: the logical field holding each line's pay frequency; absent when the report
    has none (a report with only check dates): then the submission states it per file in
    ``payroll/files.csv`` (``pay_frequency``, and ``pay_lag_days`` where it differs from
    ``lag_days``), and a file without it is a reject saying so.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: Literal["period_ending_on_pay_date"]
    frequency: str | None = None
    frequencies: dict[str, Literal["weekly", "biweekly", "semimonthly", "monthly"]] = Field(default_factory=dict)
    lag_days: int = Field(default=0, ge=0, le=31)

    @model_validator(mode="after")
    def _check(self) -> PeriodFromPayDate:
        if any(k != k.strip().upper() or not k for k in self.frequencies):
            raise ValueError("period_from_pay_date.frequencies: values are written upper case, without surrounding spaces")
        return self

    @property
    def codes(self) -> dict[str, str]:
        """Every way of writing a frequency this rule reads (the usual words and its own codes)."""
        return {**USUAL_FREQUENCIES, **{f.upper(): f for f in FREQUENCIES}, **self.frequencies}


class SplitField(BaseModel):
    """One column holding two fields or more (a pay period printed ``12/24/2022 - 01/06/2023``):
    ``pattern`` has one group per field of ``into``, in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    into: list[str] = Field(min_length=2)
    pattern: str = r"\s*(\S+)\s*-\s*(\S+)\s*"

    @model_validator(mode="after")
    def _check(self) -> SplitField:
        check_pattern(self.pattern)
        if re.compile(self.pattern).groups != len(self.into):
            raise ValueError(f"pattern {self.pattern!r} has {re.compile(self.pattern).groups} group(s) for "
                             f"{len(self.into)} field(s) ({', '.join(self.into)}): write one group per field")
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
                     "estimate_requests"] = "payroll"
    formats: list[Literal["csv", "xlsx"]] = Field(default_factory=lambda: ["csv", "xlsx"])
    extensions: list[str] = Field(default_factory=lambda: [".csv", ".xlsx", ".xls"])
    delimiters: list[str] = Field(default_factory=lambda: [","])
    encodings: list[str] = Field(default_factory=lambda: ["utf-8", "cp1252"])
    date_formats: list[str] = Field(default_factory=lambda: ["%m/%d/%Y"])
    number: NumberFormat = NumberFormat()
    # Characters removed from employer ids (a FEIN written "12-3456789"), in every layout.
    employer_id_strip: str = "- "
    # how headers are compared with the aliases: by meaning (the vocabulary) or as written
    match: Literal["words", "exact"] = "words"
    vocabulary: Vocabulary | None = None  # phrases and words of this product's reports
    # logical field -> header aliases
    fields: dict[str, list[str]]
    # canonical column -> logical fields summed (a blank part counts 0; all blank = missing)
    derived: dict[str, list[str]] = Field(default_factory=dict)
    # logical fields that may be absent from the header (a derived part, e.g. overtime; an
    # optional canonical column such as check_id)
    optional: list[str] = Field(default_factory=list)
    split: dict[str, SplitField] = Field(default_factory=dict)  # logical field -> the fields it holds
    layout: Literal["wide", "long"] = "wide"
    long: LongLayout | None = None  # the code fields and table of a long layout
    period_from_pay_date: PeriodFromPayDate | None = None
    report: ReportLayout | None = None  # a report: preamble, totals and block lines, file-name fields
    # the product whose documented export this profile follows (``impcredit layouts``)
    product: str = ""
    # an export with no employee id: the id is the text of these fields, joined by ", " (the
    # employee's name as the report prints it; the roster names the employee the same way)
    employee_id_from: list[str] = Field(default_factory=list)
    _source: str = PrivateAttr(default="")
    _index: dict | None = PrivateAttr(default=None)
    _base: Vocabulary | None = PrivateAttr(default=None)  # the vocabulary in effect (shipped + agency)
    _reader: Reader | None = PrivateAttr(default=None)

    @property
    def source(self) -> str:
        """Where the profile comes from (its file)."""
        return self._source

    @property
    def provided(self) -> set[str]:
        """Columns and fields this profile's layout provides without a header of their own."""
        out: set[str] = {"employee_id"} if self.employee_id_from else set()
        if self.report is not None:
            out |= {f for b in self.report.blocks for f in b.sets} | {v.field for v in self.report.labels}
            if self.report.file_name is not None:
                out |= set(re.compile(self.report.file_name.pattern).groupindex)
        if self.long is not None:
            out |= {"hours", "gross_wages", "employer_taxes"}
        if self.period_from_pay_date is not None:
            out |= {"period_start", "period_end"}
        for s in self.split.values():
            out |= set(s.into)
        return out

    @property
    def context_ok(self) -> set[str]:
        """Canonical columns the submission may give instead of the file (payroll: its folder,
        ``payroll/files.csv``, the roster)."""
        return set(FROM_CONTEXT) if self.dataset == "payroll" else set()

    @model_validator(mode="after")
    def _check(self) -> Profile:
        canon = schema.SUBMITTED_COLUMNS[self.dataset]
        if (self.layout == "long") != (self.long is not None):
            raise ValueError("layout: a long layout needs a 'long' section (and only it has one)")
        if self.dataset != "payroll" and (self.long is not None or self.period_from_pay_date is not None):
            raise ValueError("dataset: long layouts and derived periods are for payroll")
        names = set(self.fields) | self.provided
        uses = [("long", [self.long.code, self.long.hours, self.long.amount, *([self.long.type] if self.long.type else [])]
                 if self.long else []),
                ("period_from_pay_date.frequency", [self.period_from_pay_date.frequency]
                 if self.period_from_pay_date and self.period_from_pay_date.frequency else []),
                ("employee_id_from", self.employee_id_from), ("split", list(self.split))]
        for owner, used in uses:
            for f in used:
                if f not in names:
                    raise ValueError(f"{owner}: uses {f!r}, which is not a field: add it under fields with its header(s)")
        if self.period_from_pay_date is not None and "pay_date" not in names:
            raise ValueError("period_from_pay_date: needs a pay_date field (the check date) under fields")
        for col in canon:
            if col == "employee_id" and self.employee_id_from:
                continue
            if col in self.provided:
                if col in self.fields or col in self.derived:
                    raise ValueError(f"fields.{col}: comes from the layout ({self._provider(col)}), not from a column: remove it")
                continue
            if col not in self.fields and col not in self.derived and col not in self.context_ok:
                raise ValueError(f"fields.{col}: the canonical column {col!r} is neither a field nor derived: "
                                 f"add '{col}: [its header]' under fields")
            if col in self.fields and col in self.derived:
                raise ValueError(f"derived.{col}: {col!r} is both a field and derived: keep one")
        for col, parts in self.derived.items():
            if col not in canon:
                raise ValueError(f"derived.{col}: not a canonical column ({', '.join(canon)})")
            if not parts:
                raise ValueError(f"derived.{col}: no parts: list the fields summed")
            for p in parts:
                if p not in self.fields:
                    raise ValueError(f"derived.{col}: uses {p!r}, which is not a field: add it under fields")
        for f in self.optional:
            if f not in self.fields:
                raise ValueError(f"optional: {f!r} is not a field")
            if f in canon and f not in self.context_ok:
                raise ValueError(f"optional: a canonical column ({f}) cannot be optional")
        for f, aliases in self.fields.items():
            if not aliases:
                raise ValueError(f"fields.{f}: no header alias: write the column's header, e.g. {f}: [{f.replace('_', ' ').title()}]")
        self._check_aliases()
        for enc in self.encodings:
            try:
                codecs.lookup(enc)
            except LookupError:
                raise ValueError(f"encodings: {enc!r} is not an encoding (write e.g. utf-8, cp1252)") from None
        for d in self.delimiters:
            if len(d) != 1:
                raise ValueError(f"delimiters: {d!r} is not one character")
        return self

    def _provider(self, col: str) -> str:
        if col in {f for s in self.split.values() for f in s.into}:
            return "split"
        if self.long is not None and col in ("hours", "gross_wages", "employer_taxes"):
            return "long"
        if self.period_from_pay_date is not None and col in ("period_start", "period_end"):
            return "period_from_pay_date"
        return "report"

    def with_vocabulary(self, base: Vocabulary) -> Profile:
        """This profile read with ``base`` as its shared vocabulary (the agency's words added),
        its aliases checked again under it."""
        self._base, self._index, self._reader = base, None, None
        self._check_aliases()
        return self

    def _check_aliases(self) -> None:
        """No alias empty, and no two fields with aliases that read alike (one column would
        reach two fields)."""
        seen: dict[frozenset[str] | str, tuple[str, str]] = {}
        for f, aliases in self.fields.items():
            for a in aliases:
                k = self.key(a)
                if not k:
                    raise ValueError(f"fields.{f}: alias {a!r} reads as no word (punctuation only): "
                                     "write the column's header as the report prints it")
                other = seen.setdefault(k, (f, a))
                if other[0] != f:
                    words = "{" + ", ".join(sorted(k)) + "}" if isinstance(k, frozenset) else repr(k)
                    raise ValueError(f"fields.{f}: alias {a!r} reads as {words}, as fields.{other[0]}'s {other[1]!r} "
                                     "does: one column would reach two fields; remove one or write the header in full")

    # --- matching ---------------------------------------------------------------------------------

    def words(self) -> Reader:
        """The vocabulary this profile reads headers with (shared + its own)."""
        if self._reader is None:
            self._reader = (self._base or load_vocabulary()).merged(self.vocabulary).reader()
        return self._reader

    def key(self, header: str) -> frozenset[str] | str:
        """What a header is compared by: its words (``match: words``) or its folded text."""
        return self.keyer()(header)

    def keyer(self):
        """``key`` as a plain function (for the many headers of a file's first lines)."""
        return self.words().words if self.match == "words" else fold

    def alias_index(self) -> dict[frozenset[str] | str, str]:
        """Each alias's key -> its field (computed once)."""
        if self._index is None:
            self._index = {self.key(a): f for f, aliases in self.fields.items() for a in aliases}
        return self._index

    @property
    def shaped(self) -> bool:
        """Whether the layout's lines are more than a header and rows (totals, blocks, notes,
        fields in the file name): such a file is read line by line (``shape.shape_report``)."""
        r = self.report
        return r is not None and bool(r.totals or r.blocks or r.notes or r.end or r.file_name or r.labels or r.header_rows > 1)

    @property
    def required_fields(self) -> list[str]:
        """The fields whose column a header must hold (a column the submission may give instead is
        still required when the profile names it, unless listed optional)."""
        return [f for f in self.fields if f not in self.optional]

    @property
    def header_within(self) -> int:
        return self.report.header_within if self.report is not None else 60


__all__ = ["DATASETS", "FREQUENCIES", "FROM_CONTEXT", "LongLayout", "NumberFormat", "PeriodFromPayDate", "Profile",
           "SplitField", "fold"]
