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
And what a header of aliases cannot say (``profile_keys``): ``sheets`` (the sheets read and
skipped by name), ``transposed`` (items down the side), a column named by its section or position,
a field from its total or its parts, ``trust_aliases`` (the unit guard's exceptions), ``units`` (hours
as hours and minutes) and ``fixed_width`` (a text printed in columns: ``files/fixed_width.py``).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from transforms import schema
from transforms.ingest.read.layouts.profile_keys import (
    MONEY_COLUMNS,
    Alias,
    ColumnRef,
    FieldSpec,
    SheetChoice,
    TotalOrParts,
    Transposed,
    unit_slip,
)
from transforms.ingest.read.layouts.profile_parts import (
    FREQUENCIES,
    USUAL_FREQUENCIES,
    FixedWidth,
    LongLayout,
    NumberFormat,
    PeriodFromPayDate,
    SplitField,
)
from transforms.ingest.read.layouts.report_layout import ReportLayout, unread_sets
from transforms.ingest.read.layouts.vocabulary import Reader, Vocabulary, load_vocabulary

DATASETS: tuple[str, ...] = tuple(schema.SUBMITTED_COLUMNS)


def fold(header: str) -> str:
    """Fold a header for exact matching: accents removed, lower case, letters and digits only."""
    text = unicodedata.normalize("NFKD", str(header)).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]", "", text.lower())


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
    # logical field -> header aliases (a header as written, or a column named by its section or
    # position: ``profile_keys.ColumnRef``), or a total column and the parts summed where the file
    # has no total (``profile_keys.TotalOrParts``)
    fields: dict[str, FieldSpec]
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
    sheets: SheetChoice | None = None  # the sheets of a workbook read and passed over, by name
    transposed: Transposed | None = None  # items down the side, a column per employee or check
    # fields whose aliases are taken as written although their words say net pay, hours for a
    # money field or money for an hours field (``profile_keys.unit_slip``)
    trust_aliases: list[str] = Field(default_factory=list)
    carry: list[str] = Field(default_factory=list)  # blank: the line above's, same employee (``cells.carried``)
    # fields of hours written as hours and minutes (``76:45``, ``[h]:mm`` cells: cast/durations.py)
    units: dict[str, Literal["h:mm"]] = Field(default_factory=dict)
    # a text file printed in fixed-width columns (``files/fixed_width.py``)
    fixed_width: FixedWidth | None = None
    _source: str = PrivateAttr(default="")
    _flat: dict | None = PrivateAttr(default=None)
    _either: dict | None = PrivateAttr(default=None)
    _refs: dict | None = PrivateAttr(default=None)
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
            for spec in (self.report.file_name, self.report.sheet_name):
                if spec is not None:
                    out |= set(re.compile(spec.pattern).groupindex)
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
        flat = self._flatten()
        names = set(flat) | self.provided
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
                if col in flat or col in self.derived:
                    raise ValueError(f"fields.{col}: comes from the layout ({self._provider(col)}), not from a column: remove it")
                continue
            if col not in flat and col not in self.derived and col not in self.context_ok:
                raise ValueError(f"fields.{col}: the canonical column {col!r} is neither a field nor derived: "
                                 f"add '{col}: [its header]' under fields")
            if col in flat and col in self.derived:
                raise ValueError(f"derived.{col}: {col!r} is both a field and derived: keep one")
        for col, parts in self.derived.items():
            if col not in canon:
                raise ValueError(f"derived.{col}: not a canonical column ({', '.join(canon)})")
            if not parts:
                raise ValueError(f"derived.{col}: no parts: list the fields summed")
            for p in parts:
                if p not in flat:
                    raise ValueError(f"derived.{col}: uses {p!r}, which is not a field: add it under fields")
        if said := unread_sets(self, [f for _, used in uses for f in used]):
            raise ValueError(said)
        for f in self.optional:
            if f not in flat:
                raise ValueError(f"optional: {f!r} is not a field")
            if f in canon and f not in self.context_ok:
                raise ValueError(f"optional: a canonical column ({f}) cannot be optional")
        for f, aliases in flat.items():
            if not aliases:
                raise ValueError(f"fields.{f}: no header alias: write the column's header, e.g. {f}: [{f.replace('_', ' ').title()}]")
        self._check_keys(flat)
        self._check_aliases()
        for enc in self.encodings:
            try:
                codecs.lookup(enc)
            except LookupError:
                raise ValueError(f"encodings: {enc!r} is not an encoding (write e.g. utf-8, cp1252)") from None
        if bad := [d for d in self.delimiters if len(d) != 1]:
            raise ValueError(f"delimiters: {bad[0]!r} is not one character")
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

    def _flatten(self) -> dict[str, list[Alias]]:
        """Every logical field and its aliases, a total-or-parts field as its total and a field per
        part given by its aliases (``<field>.parts.<n>``); ``_either``: such a field -> its parts."""
        flat: dict[str, list[Alias]] = {}
        either: dict[str, list[str]] = {}
        for f, spec in self.fields.items():
            if not isinstance(spec, TotalOrParts):
                flat[f] = list(spec)
                continue
            flat[f] = list(spec.total)
            names = []
            for i, part in enumerate(spec.parts):
                if isinstance(part, str):
                    names.append(part)
                    continue
                names.append(f"{f}.parts.{i}")
                flat[names[-1]] = list(part)
            either[f] = names
        for f, parts in either.items():
            for i, p in enumerate(parts):
                if p not in flat or p in either:
                    raise ValueError(f"fields.{f}.parts.{i}: {p!r} is not a field: write a part as the list of its "
                                     f"headers ([{p}]) or the name of another field")
        self._flat, self._either, self._refs = flat, either, None
        return flat

    @property
    def flat(self) -> dict[str, list[Alias]]:
        """Every logical field and its aliases (``_flatten``)."""
        return self._flat if self._flat is not None else self._flatten()

    @property
    def either(self) -> dict[str, list[str]]:
        """A field read from its total column, or else summed from these fields (its parts)."""
        if self._either is None:
            self._flatten()
        return self._either

    def refs(self) -> dict[str, list[ColumnRef]]:
        """The fields named by their section or position, and how."""
        if self._refs is None:
            self._refs = {f: r for f, aliases in self.flat.items() if (r := [a for a in aliases if isinstance(a, ColumnRef)])}
        return self._refs

    def _check_keys(self, flat: dict[str, list[Alias]]) -> None:
        """trust_aliases, sheets and transposed said consistently; no alias of a money field that
        says net pay or hours, none of an hours field that says money (``profile_keys.unit_slip``)."""
        for key, f in [("trust_aliases", f) for f in self.trust_aliases] + [("carry", f) for f in self.carry]:
            if f not in flat:
                raise ValueError(f"{key}: {f!r} is not a field")
        hours_fields = [f for f, kind in self._units(flat).items() if kind == "hours"]
        for f in self.units:
            if f not in hours_fields:
                raise ValueError(f"units.{f}: not a field of hours ({', '.join(hours_fields) or 'none'}): "
                                 "h:mm reads the hours, or their parts, written as hours and minutes")
        if self.transposed is not None and self.report is not None and self.report.header_rows == 2 and (
                self.transposed.label_columns != 2 or self.transposed.group_row is not None):
            raise ValueError("transposed.label_columns: a two-row header of labels is 2 label columns (a group and "
                             "its item), without group_row: write label_columns: 2")
        for f, kind in self._units(flat).items():
            if f in self.trust_aliases:
                continue
            for a in flat[f]:
                said = a if isinstance(a, str) else a.header
                if said and (slip := unit_slip(f, kind, said)):
                    raise ValueError(slip)

    def _units(self, flat: dict[str, list[Alias]]) -> dict[str, str]:
        """The fields of money and of hours (the canonical ones, their parts, a long layout's)."""
        out: dict[str, str] = {}
        for col, kind in (*((c, "money") for c in MONEY_COLUMNS), ("hours", "hours")):
            for f in [col, *self.derived.get(col, []), *self.either.get(col, [])]:
                if f in flat:
                    out[f] = kind
        if self.long is not None:
            out.setdefault(self.long.amount, "money")
            out.setdefault(self.long.hours, "hours")
        return out

    def _check_aliases(self) -> None:
        """No alias empty, and no two fields with aliases that read alike (one column would
        reach two fields)."""
        seen: dict[frozenset[str] | str, tuple[str, str]] = {}
        for f, aliases in self.flat.items():
            for a in aliases:
                if not isinstance(a, str):
                    if a.header is not None and not self.key(a.header):
                        raise ValueError(f"fields.{f}: header {a.header!r} reads as no word (punctuation only): "
                                         "write the column's header as the report prints it")
                    continue
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
            self._index = {self.key(a): f for f, aliases in self.flat.items() for a in aliases if isinstance(a, str)}
        return self._index

    @property
    def hours_fields(self) -> list[str]:
        """The fields of hours: ``hours``, its parts, a long layout's hours."""
        return [f for f, kind in self._units(self.flat).items() if kind == "hours"]

    @property
    def shaped(self) -> bool:
        """Whether the layout's lines are more than a header and rows (totals, blocks, notes,
        fields in the file name): such a file is read line by line (``report_walk.shape_report``)."""
        r = self.report
        return r is not None and bool(r.totals or r.blocks or r.notes or r.end or r.file_name or r.sheet_name or r.labels
                                      or r.header_rows > 1)

    @property
    def required_fields(self) -> list[str]:
        """The fields whose column a header must hold (a column the submission may give instead is
        still required when the profile names it, unless listed optional)."""
        either = {f for col, parts in self.either.items() for f in (col, *parts)}
        return [f for f in self.flat if f not in self.optional and f not in either]

    def takes_sheet(self, name: str) -> bool:
        """Whether the profile reads a sheet of this name (``sheets``)."""
        return self.sheets is None or (self.sheets.reads(name) and self.sheets.skips(name) is None)

    def skips_sheet(self, name: str) -> str | None:
        """The ``sheets.skip`` pattern naming the sheet, or None."""
        return self.sheets.skips(name) if self.sheets is not None else None

    @property
    def header_within(self) -> int:
        return self.report.header_within if self.report is not None else 60


__all__ = ["DATASETS", "FREQUENCIES", "FROM_CONTEXT", "LongLayout", "NumberFormat", "PeriodFromPayDate", "Profile",
           "SplitField", "USUAL_FREQUENCIES", "fold"]
