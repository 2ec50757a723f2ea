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


@dataclass(frozen=True)
class Citation:
    title: str
    href: str


WHAT_IF_CITATION = Citation(title="what-if override", href="https://impcredit.invalid/what-if")


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
