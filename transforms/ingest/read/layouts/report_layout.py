"""The report section of a vendor profile (``profiles.Profile.report``): where a report's header
is, its totals lines, block header lines, note lines and the fields its file name carries. Read
by ``transforms.ingest.read.reports.report_walk``.

Every pattern is a Python regular expression, compiled when the profile is loaded (a bad one
stops the run naming the file and the key)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from transforms import schema


def check_pattern(value: str) -> str:
    """A pattern that compiles, else a one-line error saying what to write."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"bad pattern {value!r} ({exc}); write a Python regular expression, "
                         r"e.g. 'totals?' or 'check date:?\s*(\S+)'") from None
    return value


class TotalsLine(BaseModel):
    """Lines of a report that total the lines above them (skipped, counted and checked): a line
    whose first non-blank cell matches ``label`` (case-insensitive, whole cell); ``first: false``:
    any cell of the line (``Company Total`` under the employee number, beside a department)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str  # a regex, e.g. "totals?" or "payroll totals"
    # the logical fields compared with the sum of the data lines it totals (empty: not checked)
    checks: list[str] = Field(default_factory=list)
    # which lines it totals: those since the last totals line or block header (``since_last``), the
    # block's (``block``), or the file's (``file``)
    scope: Literal["since_last", "block", "file"] = "since_last"
    first: bool = True

    @field_validator("label")
    @classmethod
    def _pattern_ok(cls, v: str) -> str:
        return check_pattern(v)


class BlockLine(BaseModel):
    """A line that sets fields for the data lines below it (a payroll's period, its pay day, the
    employee whose rows follow): a cell of it matches ``label`` (case-insensitive, whole cell);
    the value is the rest of that cell after the label (``Check Date: 01/06/2023``) or else the
    next non-blank cell, and ``value`` splits it, one group per field (dates in the layout's date
    formats). Named groups of ``label`` itself set the fields they name (a group header line
    ``Employee: 1001 - Rivera, Ana`` as ``employee:\\s*(?P<employee_id>\\d+) - (?P<employee_name>.+)``).
    ``alone``: the line holds no other non-blank cell (so a data row whose first cell looks alike
    is never taken for it). ``first``: the label is the line's first non-blank cell (else any cell)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    fields: list[str] = Field(default_factory=list)  # canonical columns or logical fields
    value: str = r"(.+)"
    alone: bool = False
    first: bool = True

    @field_validator("label", "value")
    @classmethod
    def _pattern_ok(cls, v: str) -> str:
        return check_pattern(v)

    @model_validator(mode="after")
    def _reads(self) -> BlockLine:
        """A block that could only read nothing (no label, no field, fewer groups than fields) is
        an error of the profile, never a file whose fields are all empty."""
        if not self.label.strip():
            raise ValueError("label: empty: write the label the line prints, e.g. 'check date'")
        if not self.sets:
            raise ValueError("sets no field: write fields: [its field] (e.g. [pay_date]) or name a group of label")
        wanted = [f for f in self.fields if f not in self.named]
        if len(wanted) > 1 and re.compile(self.value).groups < len(wanted):
            raise ValueError(f"value: '{self.value}' has {re.compile(self.value).groups} group(s) for the "
                             f"{len(wanted)} fields {', '.join(wanted)}: write a group per field, "
                             r"e.g. '(\S+)\s*-\s*(\S+)'")
        return self

    @property
    def named(self) -> list[str]:
        return list(re.compile(self.label).groupindex)

    @property
    def sets(self) -> list[str]:
        """Every field the line sets."""
        return [*self.named, *(f for f in self.fields if f not in self.named)]


class LabelledValue(BaseModel):
    """A value printed beside its label on a line of a group of data lines (a check's block in a
    payroll register: ``Emp Id 1002`` in one cell, or ``Chk Date`` with ``01/13/2022`` in the next
    cell), which holds for every line of the group. A group ends at a totals line, a block line or
    a header; a cell matching ``label`` (case-insensitive) anywhere on the group's lines (or only in
    the columns named by ``columns``) gives the field: the label's first group when it has one (a
    cell that is its own label: the employee's id alone under the name, ``(\d+)``), else the rest
    of the cell after the label, else the next cell, read by ``value``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    field: str  # a canonical column or a logical field
    value: str = r"(.+)"
    columns: list[str] = Field(default_factory=list)  # header names (as written) the label may be in

    @field_validator("label", "value")
    @classmethod
    def _pattern_ok(cls, v: str) -> str:
        return check_pattern(v)


class FileNameFields(BaseModel):
    """Fields of every line taken from the file's name (``pattern``: a regex searched in the name,
    with named groups ``period_start``, ``period_end``, ``pay_date``), dates in ``date_format``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    date_format: str = "%m%d%Y"

    @field_validator("pattern")
    @classmethod
    def _pattern_ok(cls, v: str) -> str:
        if not re.compile(check_pattern(v)).groupindex:  # it would read nothing
            raise ValueError(f"'{v}' names no group: name each field it reads, e.g. "
                             r"'(?P<period_end>\d{8})' (period_start, period_end or pay_date)")
        return v


class ReportLayout(BaseModel):
    """A report rather than a table: title and address lines above the header (the preamble),
    totals lines, block header lines, fields in the file name. Every line is accounted for: a
    data row, a totals, block, repeated-header or preamble line, or a reject."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    header_within: int = Field(default=60, ge=1, le=1000)  # the header is among the first lines
    # a header of two rows: a group row ("REG", "OT", "Employer Taxes", a label over several
    # columns, carried right across the blank cells of a merged cell) above the column row
    # ("Hours", "Amount"); each column is named by both ("REG Hours")
    header_rows: Literal[1, 2] = 1
    totals: list[TotalsLine] = Field(default_factory=list)
    blocks: list[BlockLine] = Field(default_factory=list)
    labels: list[LabelledValue] = Field(default_factory=list)
    file_name: FileNameFields | None = None
    # fields of every line taken from the sheet's name (a tab per pay run: "Jan 13, 22", "Run 2023-01-06")
    sheet_name: FileNameFields | None = None
    # lines skipped as notes (a report's footer: "Confidential", "Page 1 of 3"): a regex of the
    # first non-blank cell
    notes: list[str] = Field(default_factory=list)
    # a line that ends the report's rows ("Report Totals" above a summary by code): it and every
    # line after it are the report's summary, skipped and counted (a regex of the first non-blank cell)
    end: list[str] = Field(default_factory=list)

    @field_validator("notes", "end")
    @classmethod
    def _notes(cls, v: list[str]) -> list[str]:
        return [check_pattern(p) for p in v]


def unread_sets(profile, uses: list[str]) -> str | None:
    """The first field a block or a labelled value of ``profile`` sets that nothing reads (not a
    canonical column, nor a field of a derived sum, a total's parts or ``uses``: the fields its
    splits, ids and long layout read): the key and why, or None."""
    report = profile.report
    read = {*schema.SUBMITTED_COLUMNS[profile.dataset], *schema.OPTIONAL_COLUMNS.get(profile.dataset, []), *uses,
            *(f for parts in (*profile.derived.values(), *profile.either.values()) for f in parts),
            *(["pay_date"] if profile.period_from_pay_date is not None else [])}
    for i, b in enumerate(report.blocks if report is not None else []):
        if lost := [f for f in b.fields if f not in read and f not in b.named]:  # a label's group may name more
            return (f"report.blocks.{i}.fields: sets {lost[0]!r}, which nothing reads: write a canonical column "
                    "(e.g. pay_date, period_start) or a field that derived or a total's parts use")
    for i, v in enumerate(report.labels if report is not None else []):
        if v.field not in read:
            return (f"report.labels.{i}.field: {v.field!r} is read by nothing: write a canonical column "
                    "(e.g. pay_date, employee_id) or a field that derived or a total's parts use")
    return None


__all__ = ["BlockLine", "FileNameFields", "LabelledValue", "ReportLayout", "TotalsLine", "check_pattern",
           "unread_sets"]
