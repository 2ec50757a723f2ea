"""The values of the reference data (``data/reference/*.yaml``): dated values with their
citations, the series they form, and the errors of a bad file or a lookup outside the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = REPO_ROOT / "data" / "reference"


class ParameterError(ValueError):
    """Invalid reference data or an invalid request to it."""


class MissingParameterError(ParameterError):
    """No value for the requested parameter and date (unknown name, before the first value,
    or after ``known_through``). The message names the parameter, the date and the file."""


# What a citation is (reference.source in data/reference/*.yaml): the publishing government's own
# page, the official text (a statute, a rule, a Federal Register notice) on another host, a value
# computed from published inputs, or a secondary source where no government publication was found
# (../shared/reference/primary-sources.md).
SOURCE_WORDS = {
    "government": "government publication",
    "official_text": "official text, third-party host",
    "derived": "derived from published inputs",
    "secondary": "SECONDARY SOURCE: no government publication found",
    "what-if": "what-if override",
}


@dataclass(frozen=True)
class Citation:
    title: str
    href: str
    source: str = "government"  # a key of SOURCE_WORDS

    @property
    def label(self) -> str:
        """The title with what kind of source it is, as ``explain`` and ``settings`` show it."""
        return f"{self.title} [{SOURCE_WORDS[self.source]}]"


WHAT_IF_CITATION = Citation(title="what-if override", href="https://impcredit.invalid/what-if", source="what-if")


@dataclass(frozen=True)
class ParameterValue:
    effective: date
    value: float | date
    confidence: str  # VERIFIED | DERIVED | RECALLED, or WHAT-IF for an override
    citation: Citation
    note: str | None = None


@dataclass(frozen=True)
class Series:
    name: str  # "<file stem>.<key>"
    file: str  # path to show in messages (relative to the repo when inside it)
    description: str
    unit: str
    label: str
    range: tuple[float, float] | None
    known_through: date | None
    values: tuple[ParameterValue, ...]

    def _dates(self) -> list[date]:
        return [v.effective for v in self.values]


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)
