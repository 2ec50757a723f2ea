"""The keys of a profile for the reports products write that a header of aliases cannot say
(``profiles.Profile``; README "Payroll exports as the products write them"):

- ``sheets``: the sheets of a workbook a profile reads, and those it passes over, by name
  (``SheetChoice``);
- a column named by its section or its position instead of its header alone (``ColumnRef``:
  the ``Amount`` after ``Employer Taxes``; column ``H``);
- a field given by a total column or, where the file has none, by the sum of its parts
  (``TotalOrParts``);
- ``transposed``: a table whose items run down the side, one column per employee or check
  (``Transposed``);
- the guard against a one-word slip: an alias of a money field whose words say net pay, or say
  hours, and an alias of an hours field whose words say money, is an error of the profile
  (``unit_slip``) unless the field is listed in ``trust_aliases``.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from transforms.ingest.read.layouts.vocabulary import _plain


class SheetChoice(BaseModel):
    """Which sheets of a workbook the profile reads (``read``: none named = every sheet) and
    which it passes over whatever they hold (``skip``: a summary tab, a notes tab), by name
    patterns (``*`` any text, ``?`` one character; case and surrounding spaces ignored). A skipped
    sheet is said in the file's message; a skip beats the unread-table rule (the analyst said so)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read: list[str] = Field(default_factory=list)
    skip: list[str] = Field(default_factory=list)

    @field_validator("read", "skip")
    @classmethod
    def _patterns(cls, v: list[str]) -> list[str]:
        for p in v:
            if not p.strip():
                raise ValueError("an empty sheet name pattern: write the sheet's name, or a pattern such as 'Run *'")
        return v

    @model_validator(mode="after")
    def _check(self) -> SheetChoice:
        if both := {p.strip().lower() for p in self.read} & {p.strip().lower() for p in self.skip}:
            raise ValueError(f"read and skip both name {sorted(both)}: keep each pattern in one of them")
        for r in self.read:  # a skip pattern (of '*' only) that names every sheet a read pattern names
            if lost := next((k for k in self.skip if "?" not in k and "[" not in k + r and _name_matches(k, r)), None):
                raise ValueError(f"skip {lost!r} names every sheet read {r!r} names: it would read none; "
                                 "remove one, or narrow the skip")
        return self

    def reads(self, name: str) -> bool:
        return not self.read or any(_name_matches(p, name) for p in self.read)

    def skips(self, name: str) -> str | None:
        """The skip pattern that names ``name``, or None."""
        return next((p for p in self.skip if _name_matches(p, name)), None)


def _name_matches(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name.strip().lower(), pattern.strip().lower())


_LETTERS = re.compile(r"^[A-Za-z]{1,3}$")


def column_index(column: str | int) -> int:
    """A column's position (0 for ``A`` or 1)."""
    if isinstance(column, int):
        return column - 1
    n = 0
    for ch in column.strip().upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


class ColumnRef(BaseModel):
    """A column named by more than its header: ``section`` (the column whose header reads as
    ``header`` that comes first after the cell reading as ``section`` on the header line, or under
    it on a two-row header: the ``Amount`` after ``Employer Taxes``), or ``column`` (its position:
    a letter, ``H``, or a number from 1, counted from the first cell of the line as read; in a
    transposed table, the position of the table's row)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    header: str | None = None
    section: str | None = None
    column: str | int | None = None

    @model_validator(mode="after")
    def _check(self) -> ColumnRef:
        if (self.section is None) == (self.column is None):
            raise ValueError("a column is named by its section (with its header: {header: Amount, section: "
                             "Employer Taxes}) or by its position ({column: H}): write one of them")
        if self.section is not None and not (self.header or "").strip():
            raise ValueError(f"section {self.section!r}: write the header of the column under it too "
                             f"({{header: Amount, section: {self.section}}})")
        if self.section is not None and not _plain(self.section):
            raise ValueError(f"section {self.section!r} reads as no word: write it as the report prints it")
        if isinstance(self.column, int) and self.column < 1:
            raise ValueError(f"column {self.column}: positions count from 1 (or write a letter: A, B, ...)")
        if isinstance(self.column, str) and not _LETTERS.match(self.column.strip()):
            raise ValueError(f"column {self.column!r}: write a column letter (A to XFD) or a number from 1")
        return self

    def describe(self) -> str:
        """How the column is named, for messages: ``'Amount' after 'Employer Taxes'``, ``column H``."""
        if self.column is not None:
            return f"column {self.column}"
        return f"{self.header!r} after {self.section!r}"

    @property
    def position(self) -> int | None:
        return column_index(self.column) if self.column is not None else None


def _tagged(choices: dict[str, type], pick) -> object:
    """A union validated by the one branch ``pick`` names (its errors only, not every branch's);
    the tags start with ``~`` (``profile_files`` leaves them out of the key it names)."""
    return Annotated[Annotated[tuple(choices.values())[0], Tag(tuple(choices)[0])]
                     | Annotated[tuple(choices.values())[1], Tag(tuple(choices)[1])], Discriminator(pick)]


# a header as written, or a column named by its section or position
Alias = _tagged({"~alias": str, "~ref": ColumnRef}, lambda v: "~ref" if isinstance(v, dict | ColumnRef) else "~alias")


class TotalOrParts(BaseModel):
    """A field read from its total column where the file has one, else as the sum of its parts
    (each part a list of aliases, or the name of another field): one profile reads a report
    printing either (``employer_taxes: {total: [Total Employer Taxes], parts: [[ER Social
    Security], [ER Medicare], [ER FUTA], [ER SUI]]}``). Without the total, every part is required
    but those listed in ``optional`` (by the part's field name) ."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total: list[Alias] = Field(min_length=1)
    parts: list[_tagged({"~aliases": list[Alias], "~field": str},
                        lambda v: "~field" if isinstance(v, str) else "~aliases")] = Field(min_length=1)


class Transposed(BaseModel):
    """A table whose items run down the side and that has one column per employee or check (the
    employee's id or name, the period, the pay date or the check in rows at the top, each named in
    the label column): read as if each of its columns were a line (the labels its header).
    ``label_columns``: the columns at the left that name each row: a row's label is its first
    non-blank cell among them (an outline: ``Employer Taxes`` in A, ``Medicare Company`` in B), or,
    with 2 and ``report.header_rows: 2``, a group carried down over blank cells above the item.
    ``group_row``: the table's row (from 1) that names each employee or check across the top when
    each has several columns (``Hours``, ``Rate``, the amount): the columns from one name up to the
    next are one line, the name its first cell (``{column: 1}``); each cell is named by its row's
    label and its column's heading in ``heading_row`` (``Total Gross Pay Hours``), or, where that
    heading is empty or holds a digit (a date), by its place in the group (``Total Gross Pay +4``:
    four columns right of the name). A row with a label and no value
    (``Employer Taxes`` above its items) is a section: ``{header: Social Security, section:
    Employer Taxes}`` names the row under it. A row with values and no label (the employees' names
    across the top) is named by its position, ``{column: 2}`` (the table's rows counted from its
    first). Lines above the table (no value beside the labels) stay its preamble; a block line
    among them (``report.blocks``: ``Pay Date: 01/06/2023``) sets its field for every column."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label_columns: int = Field(default=1, ge=1, le=10)
    group_row: int | None = Field(default=None, ge=1)
    heading_row: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _check(self) -> Transposed:
        if self.heading_row is not None and self.group_row is None:
            raise ValueError("heading_row names the columns of a group: write group_row too (the row naming each "
                             "employee or check across the top)")
        if self.group_row is not None and self.heading_row is None:
            raise ValueError("group_row names each employee or check across the top; its columns are named by "
                             "the row of headings under it: write heading_row too (without it no cell is named "
                             "and nothing is read)")
        if self.group_row is not None and self.group_row == self.heading_row:
            raise ValueError("group_row and heading_row are two rows: the names above, the headings under them")
        return self


# a field's aliases, or its total column and its parts
FieldSpec = _tagged({"~aliases": list[Alias], "~total_or_parts": TotalOrParts},
                    lambda v: "~total_or_parts" if isinstance(v, dict | TotalOrParts) else "~aliases")

MONEY_COLUMNS = ("gross_wages", "employer_taxes")
HOURS_WORDS = {"hours", "hour", "hrs", "hr"}
MONEY_WORDS = {"amount", "amt", "pay", "paid", "wage", "wages", "earnings", "earning", "dollars", "dollar", "usd",
               "gross", "net", "tax", "taxes", "salary", "cost", "$", "rate", "current"}
NET_WORDS = {"net"}


def unit_slip(field: str, kind: Literal["money", "hours"], alias: str) -> str | None:
    """What is wrong with an alias of a money or an hours field whose words say something else
    (``None``: nothing): net pay for a money field, hours for a money field, money for hours."""
    words = set(re.split(r"[\s/]+", _plain(alias.replace("$", " $ ")))) - {""}
    if "$" in alias:
        words.add("$")
    if kind == "money" and words & NET_WORDS and "gross" not in words:
        return (f"fields.{field}: alias {alias!r} says net pay, and {field} is before any deduction: "
                f"write the header of the {_what(field)} (or list {field} under trust_aliases if this report "
                "prints it so)")
    if kind == "money" and words & HOURS_WORDS and not words & MONEY_WORDS:
        return (f"fields.{field}: alias {alias!r} says hours, and {field} is money: write the header of the "
                f"{_what(field)} (or list {field} under trust_aliases if this report prints it so)")
    if kind == "hours" and words & MONEY_WORDS and not words & HOURS_WORDS:
        return (f"fields.{field}: alias {alias!r} says money, and {field} is hours: write the header of the "
                f"hours column (or list {field} under trust_aliases if this report prints it so)")
    return None


def _what(field: str) -> str:
    return {"gross_wages": "gross pay column", "employer_taxes": "employer taxes column"}.get(field, "amount column")


__all__ = ["Alias", "ColumnRef", "FieldSpec", "MONEY_COLUMNS", "SheetChoice", "TotalOrParts", "Transposed", "column_index",
           "unit_slip"]
