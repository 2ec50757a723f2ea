"""The one strict schema of a reference file (pydantic), read by a YAML loader that refuses
duplicate keys; a bad file is an error naming the file, the series and the entry.

See ``data/reference/README.md`` for the schema and how to add a year.
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from transforms.reference.values import (
    Citation,
    ParameterError,
    ParameterValue,
    Series,
    display_path,
)

CONFIDENCE_LABELS = ("VERIFIED", "DERIVED", "RECALLED")  # labels of legal-research.md
UNITS = ("USD/hour", "USD", "fraction", "date", "year", "index", "hours/week", "multiplier")
_KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_HREF_RE = re.compile(r"^https?://[^\s/]+\S*$")


# --------------------------------------------------------------------------- file schema (pydantic)


def strict_date(v: Any) -> date:
    """A calendar date: a YAML date or an ISO 'YYYY-MM-DD' string. No datetimes, no numbers."""
    if type(v) is date:
        return v
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v.strip()):
        try:
            return date.fromisoformat(v.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a date YYYY-MM-DD, got {v!r}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ReferenceModel(_Strict):
    title: str
    href: str
    # government | official_text | derived | secondary (values.SOURCE_WORDS): a secondary source
    # only where no government publication is known, and its title says so
    source: Literal["government", "official_text", "derived", "secondary"]

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("reference title must not be empty")
        return v.strip()

    @field_validator("href")
    @classmethod
    def _href(cls, v: str) -> str:
        if not _HREF_RE.match(v.strip()):
            raise ValueError(f"reference href must be an http(s) URL, got {v!r}")
        return v.strip()


class _ValueModel(_Strict):
    effective: date
    value: Any
    confidence: Literal["VERIFIED", "DERIVED", "RECALLED"]
    reference: _ReferenceModel
    note: str | None = None

    @field_validator("effective", mode="before")
    @classmethod
    def _eff(cls, v: Any) -> date:
        return strict_date(v)

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, v: Any) -> float | date:
        if isinstance(v, bool) or v is None:
            raise ValueError(f"value must be a number or a date, got {v!r}")
        if isinstance(v, int | float):
            f = float(v)
            if not math.isfinite(f):
                raise ValueError(f"value must be finite, got {v!r}")
            return f
        return strict_date(v)


class _SeriesModel(_Strict):
    description: str = Field(min_length=1)
    unit: Literal["USD/hour", "USD", "fraction", "date", "year", "index", "hours/week", "multiplier"]
    label: str = Field(min_length=1)
    range: tuple[float, float] | None = None
    known_through: date | None = None
    values: list[_ValueModel] = Field(min_length=1)

    @field_validator("known_through", mode="before")
    @classmethod
    def _kt(cls, v: Any) -> date | None:
        return None if v is None else strict_date(v)

    @model_validator(mode="after")
    def _check(self) -> _SeriesModel:
        problems: list[str] = []
        if self.unit == "date":
            if self.range is not None:
                problems.append("range must be omitted when unit is date")
            for i, e in enumerate(self.values):
                if not isinstance(e.value, date):
                    problems.append(
                        f"values[{i}] (effective {e.effective}): value {e.value!r} is not a date (unit is date)"
                    )
        else:
            if self.range is None:
                problems.append(f"range is required when unit is {self.unit}")
            elif self.range[0] > self.range[1]:
                problems.append(f"range {list(self.range)} is empty (low > high)")
            for i, e in enumerate(self.values):
                if not isinstance(e.value, float):
                    problems.append(
                        f"values[{i}] (effective {e.effective}): value {e.value!r} is not a number (unit is {self.unit})"
                    )
                elif self.range is not None and not (self.range[0] <= e.value <= self.range[1]):
                    problems.append(
                        f"values[{i}] (effective {e.effective}): value {e.value:g} outside range "
                        f"[{self.range[0]:g}, {self.range[1]:g}]"
                    )
        for i in range(1, len(self.values)):
            prev, cur = self.values[i - 1].effective, self.values[i].effective
            if cur == prev:
                problems.append(
                    f"values[{i}] (effective {cur}): duplicate effective date (same as values[{i - 1}])"
                )
            elif cur < prev:
                problems.append(
                    f"values[{i}] (effective {cur}): effective dates must be strictly increasing "
                    f"(values[{i - 1}] is effective {prev})"
                )
        last = self.values[-1].effective
        if self.known_through is not None and self.known_through < last:
            problems.append(
                f"known_through {self.known_through} is before the last effective date {last} (values[{len(self.values) - 1}])"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self


class _FileModel(_Strict):
    description: str = Field(min_length=1)
    series: dict[str, _SeriesModel] = Field(min_length=1)

    @field_validator("series", mode="before")
    @classmethod
    def _keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            bad = [k for k in v if not (isinstance(k, str) and _KEY_RE.match(k))]
            if bad:
                raise ValueError(f"series keys must match {_KEY_RE.pattern}: {bad!r}")
        return v


# --------------------------------------------------------------------------- YAML (no duplicate keys)


class _StrictYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader that rejects duplicate mapping keys (PyYAML silently keeps the last one); LibYAML's
    parser where PyYAML has it (the same documents, about 8 times faster: 60 ms of every run's start)."""


def _construct_mapping_no_dups(loader: _StrictYamlLoader, node: yaml.MappingNode) -> dict:
    loader.flatten_mapping(node)
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=True)


_StrictYamlLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping_no_dups
)


def format_validation_error(display: str, stem: str, raw: Any, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        loc = list(e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        parts: list[str] = []
        if len(loc) >= 2 and loc[0] == "series":
            key = loc[1]
            parts.append(f"series {stem}.{key}")
            rest = loc[2:]
            if len(rest) >= 2 and rest[0] == "values" and isinstance(rest[1], int):
                idx = rest[1]
                eff = None
                with contextlib.suppress(Exception):  # best effort, for the message only
                    eff = raw["series"][key]["values"][idx].get("effective")
                parts.append(f"values[{idx}]" + (f" (effective {eff})" if eff is not None else ""))
                rest = rest[2:]
            if rest:
                parts.append(".".join(str(x) for x in rest))
        elif loc:
            parts.append(".".join(str(x) for x in loc))
        where = ", ".join(parts) if parts else "(top level)"
        lines.append(f"  - {where}: {msg}")
    return f"{display}: invalid parameter file\n" + "\n".join(lines)


def parse_file(path: Path, data: bytes) -> dict[str, Series]:
    display = display_path(path)
    stem = path.stem
    if not _KEY_RE.match(stem):
        raise ParameterError(
            f"{display}: file name must match {_KEY_RE.pattern} (it prefixes every series name)"
        )
    try:
        raw = yaml.load(data.decode("utf-8"), Loader=_StrictYamlLoader)  # noqa: S506 - SafeLoader subclass
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ParameterError(f"{display}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ParameterError(
            f"{display}: top level must be a mapping with 'description' and 'series'"
        )
    try:
        model = _FileModel.model_validate(raw)
    except ValidationError as exc:
        raise ParameterError(format_validation_error(display, stem, raw, exc)) from None
    out: dict[str, Series] = {}
    for key, sm in model.series.items():
        name = f"{stem}.{key}"
        out[name] = Series(
            name=name,
            file=display,
            description=sm.description,
            unit=sm.unit,
            label=sm.label,
            range=sm.range,
            known_through=sm.known_through,
            values=tuple(
                ParameterValue(
                    effective=v.effective,
                    value=v.value,
                    confidence=v.confidence,
                    citation=Citation(title=v.reference.title, href=v.reference.href, source=v.reference.source),
                    note=v.note,
                )
                for v in sm.values
            ),
        )
    return out
