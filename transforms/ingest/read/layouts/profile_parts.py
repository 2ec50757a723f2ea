"""The smaller sections of a vendor profile (``profiles.Profile``): how it writes numbers, a
line-per-code layout and its code table, a period derived from the pay date, a column holding two
fields."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from transforms.ingest.read.layouts.report_layout import check_pattern


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


class FixedWidth(BaseModel):
    """A text file printed in fixed-width columns (a payroll register printed to ``.txt`` /
    ``.prn``), cut into cells by position (``files/fixed_width.py``): ``cut: heading`` at the
    heading line's columns (a cut in the blank gap between two headings), or ``columns`` at given
    positions (``[name, start, end]``: characters counted from 1, both ends included). A line whose
    only text lies in the ``continued`` columns (headers as printed), right after a line of the same
    page with text in other columns too, continues that line (a name printed on two lines)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cut: Literal["heading"] | None = None
    columns: list[tuple[str, int, int]] = Field(default_factory=list)
    continued: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> FixedWidth:
        if (self.cut is None) == (not self.columns):
            raise ValueError("fixed_width: write either cut: heading (columns cut at the heading line's) or "
                             "columns: [[name, start, end], ...] (positions from 1), one of the two")
        end = 0
        for name, start, stop in self.columns:
            if not 1 <= start <= stop or start <= end:
                raise ValueError(f"fixed_width.columns: {name!r} ({start}-{stop}): columns run left to right, "
                                 "each from a start to an end at or after it (characters counted from 1)")
            end = stop
        return self


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


__all__ = ["FREQUENCIES", "USUAL_FREQUENCIES", "LongLayout", "NumberFormat", "PeriodFromPayDate", "SplitField"]
