"""The report section of a vendor profile (``profiles.Profile.report``): where a report's header
is, its totals lines, block header lines, note lines and the fields its file name carries. Read
by ``transforms.ingest.shape``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TotalsLine(BaseModel):
    """Lines of a report that total the lines above them (skipped, counted and checked): a line
    whose first non-blank cell matches ``label`` (case-insensitive, whole cell)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str  # a regex, e.g. "totals?" or "payroll totals"
    # the logical fields compared with the sum of the data lines it totals (empty: not checked)
    checks: list[str] = Field(default_factory=list)
    # which lines it totals: those since the last totals line or block header (``since_last``), the
    # block's (``block``), or the file's (``file``)
    scope: Literal["since_last", "block", "file"] = "since_last"


class BlockLine(BaseModel):
    """A line that sets fields for the data lines below it (a payroll's period, its pay day):
    its first non-blank cell matches ``label``; the next non-blank cell matches ``value``, one
    group per field (dates in the layout's date formats)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    fields: list[Literal["period_start", "period_end", "pay_date", "employer_id", "check_id"]]
    value: str = r"(.+)"


class FileNameFields(BaseModel):
    """Fields of every line taken from the file's name (``pattern``: a regex searched in the name,
    with named groups ``period_start``, ``period_end``, ``pay_date``), dates in ``date_format``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    date_format: str = "%m%d%Y"


class ReportLayout(BaseModel):
    """A report rather than a table: title and address lines above the header (the preamble),
    totals lines, block header lines, fields in the file name. Every line is accounted for: a
    data row, a totals, block, repeated-header or preamble line, or a reject."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    header_within: int = Field(default=60, ge=1, le=1000)  # the header is among the first lines
    totals: list[TotalsLine] = Field(default_factory=list)
    blocks: list[BlockLine] = Field(default_factory=list)
    file_name: FileNameFields | None = None
    # lines skipped as notes (a report's footer: "Confidential", "Page 1 of 3"): a regex of the
    # first non-blank cell
    notes: list[str] = Field(default_factory=list)


__all__ = ["BlockLine", "FileNameFields", "ReportLayout", "TotalsLine"]
