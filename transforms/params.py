"""Reference parameters: the one strict loader for ``data/reference/*.yaml``.

Every number the credit uses (minimum wages, the old-law counterfactual path, CPI-W, payroll
tax rates and bases, program constants) lives in a YAML file, one concept per series, each
dated value with its own citation (the PolicyEngine/OpenFisca style). See
``data/reference/README.md`` for the schema and how to add a year.

Public API (other modules code against exactly this)::

    p = load_parameters()                       # DEFAULT_DIR, cached per resolved dir + content
    p.value("minimum_wage.general", date(2023, 5, 1))      -> float
    p.year_value("payroll_taxes.ss_wage_base", 2023)        -> float (whole year must be covered)
    p.date_value("program.application_deadline_general")    -> date
    p.schedule(name, start, end)  -> [(piece_start, piece_end, value), ...] covering [start, end]
    p.citation(name, on)          -> Citation(title, href)
    p.series_names(), p.files, p.version, p.with_overrides({...})
    derive_counterfactual(cpi, start_year, start_value, end_year, overrides=None)

A lookup outside what the data covers (before the first effective date, after ``known_through``,
or an unknown name) raises :class:`MissingParameterError`, never a silent zero.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "DEFAULT_DIR",
    "WHAT_IF_CITATION",
    "Citation",
    "MissingParameterError",
    "ParameterError",
    "ParameterValue",
    "Parameters",
    "Series",
    "derive_counterfactual",
    "load_parameters",
]

_REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = _REPO_ROOT / "data" / "reference"

CONFIDENCE_LABELS = ("VERIFIED", "DERIVED", "RECALLED")  # labels of legal-research.md
UNITS = ("USD/hour", "USD", "fraction", "date", "year", "index", "hours/week", "multiplier")
_KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_HREF_RE = re.compile(r"^https?://[^\s/]+\S*$")
_OPEN_START = date(1900, 1, 1)  # effective date of a whole-series what-if override


# --------------------------------------------------------------------------- errors, citation


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


# --------------------------------------------------------------------------- file schema (pydantic)


def _strict_date(v: Any) -> date:
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
        return _strict_date(v)

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
        return _strict_date(v)


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
        return None if v is None else _strict_date(v)

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


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (PyYAML silently keeps the last one)."""


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


# --------------------------------------------------------------------------- runtime objects


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


def _display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(_REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _as_date(on: Any, what: str) -> date:
    if type(on) is date:
        return on
    if isinstance(on, date):  # datetime -> its calendar date
        return on.date()  # type: ignore[union-attr]
    raise TypeError(f"{what} must be a datetime.date, got {on!r}")


class Parameters:
    """An immutable set of reference series. Build with :func:`load_parameters`."""

    def __init__(
        self,
        series: Mapping[str, Series],
        files: Mapping[str, str],
        version: str,
        directory: Path,
        overrides: Mapping[str, float | date] | None = None,
    ) -> None:
        self._series = dict(series)
        self._files = dict(files)
        self._version = version
        self._directory = directory
        self._overrides = dict(overrides or {})

    # -- identity -----------------------------------------------------------------------------
    @property
    def files(self) -> dict[str, str]:
        """File name -> sha256 (hex) of the file bytes."""
        return dict(self._files)

    @property
    def version(self) -> str:
        """First 16 hex of sha256 over the sorted (file name, sha) pairs; changed by overrides."""
        return self._version

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def overrides(self) -> dict[str, float | date]:
        """The what-if overrides applied (all layers), for manifests."""
        return dict(self._overrides)

    def __repr__(self) -> str:
        extra = f", {len(self._overrides)} overrides" if self._overrides else ""
        return f"Parameters(version={self._version!r}, {len(self._series)} series, dir={str(self._directory)!r}{extra})"

    # -- lookups ------------------------------------------------------------------------------
    def series_names(self) -> list[str]:
        return sorted(self._series)

    def series(self, name: str) -> Series:
        """The whole series (metadata and every dated value)."""
        s = self._series.get(name)
        if s is None:
            raise MissingParameterError(self._unknown_message(name))
        return s

    def entries(self, name: str) -> tuple[ParameterValue, ...]:
        return self.series(name).values

    def _unknown_message(self, name: str) -> str:
        stem = name.split(".", 1)[0]
        path = self._directory / f"{stem}.yaml"
        where = (
            _display_path(path) if path.exists() else f"a file in {_display_path(self._directory)}"
        )
        return f"unknown parameter {name!r}; add it to {where} (known: {', '.join(self.series_names())})"

    def _entry(self, name: str, on: date) -> ParameterValue:
        s = self.series(name)
        on = _as_date(on, "date")
        first = s.values[0].effective
        if on < first:
            raise MissingParameterError(
                f"{name} has no value for {on} (first value effective {first}); add it to {s.file}"
            )
        if s.known_through is not None and on > s.known_through:
            raise MissingParameterError(
                f"{name} has no value for {on} (known through {s.known_through}); add it to {s.file}"
            )
        return s.values[bisect_right(s._dates(), on) - 1]

    def _numeric(self, name: str) -> Series:
        s = self.series(name)
        if s.unit == "date":
            raise ParameterError(f"{name} is a date series (unit: date); use date_value()")
        return s

    def value(self, name: str, on: date) -> float:
        """The value in effect on that day."""
        self._numeric(name)
        return float(self._entry(name, on).value)  # type: ignore[arg-type]

    def year_value(self, name: str, year: int) -> float:
        """The value in effect on January 1 of ``year``; the whole year must be covered."""
        s = self._numeric(name)
        if isinstance(year, bool) or not isinstance(year, int):
            raise TypeError(f"year must be an int, got {year!r}")
        jan1, dec31 = date(year, 1, 1), date(year, 12, 31)
        if s.known_through is not None and dec31 > s.known_through:
            raise MissingParameterError(
                f"{name} has no value for the whole of {year} (known through {s.known_through}); add it to {s.file}"
            )
        return float(self._entry(name, jan1).value)  # type: ignore[arg-type]

    def date_value(self, name: str, on: date | None = None) -> date:
        """For a ``unit: date`` series: the latest value, or the one in effect on ``on``."""
        s = self.series(name)
        if s.unit != "date":
            raise ParameterError(f"{name} is not a date series (unit: {s.unit}); use value()")
        e = s.values[-1] if on is None else self._entry(name, on)
        return e.value  # type: ignore[return-value]

    def schedule(self, name: str, start: date, end: date) -> list[tuple[date, date, float]]:
        """Contiguous inclusive pieces (piece_start, piece_end, value) covering [start, end]."""
        s = self._numeric(name)
        start, end = _as_date(start, "start"), _as_date(end, "end")
        if end < start:
            raise ParameterError(f"{name}: schedule end {end} is before start {start}")
        self._entry(name, start)
        self._entry(name, end)  # both ends must be covered
        dates = s._dates()
        i = bisect_right(dates, start) - 1
        pieces: list[tuple[date, date, float]] = []
        cur = start
        while True:
            nxt = s.values[i + 1].effective if i + 1 < len(s.values) else None
            if nxt is None or nxt > end:
                pieces.append((cur, end, float(s.values[i].value)))  # type: ignore[arg-type]
                return pieces
            pieces.append((cur, nxt - timedelta(days=1), float(s.values[i].value)))  # type: ignore[arg-type]
            cur, i = nxt, i + 1

    def citation(self, name: str, on: date) -> Citation:
        """Citation of the value used on that day."""
        return self._entry(name, on).citation

    def values_by_year(self, name: str) -> dict[int, float]:
        """{year of effective date: value}, for series with one value per year (e.g. CPI-W August)."""
        s = self._numeric(name)
        out: dict[int, float] = {}
        for e in s.values:
            if e.effective.year in out:
                raise ParameterError(
                    f"{name} has more than one value in {e.effective.year}; values_by_year needs one per year"
                )
            out[e.effective.year] = float(e.value)  # type: ignore[arg-type]
        return out

    # -- what-if ------------------------------------------------------------------------------
    def with_overrides(self, overrides: Mapping[str, float | date]) -> Parameters:
        """A new Parameters with what-if values; ``self`` is unchanged.

        ``"name"`` replaces the whole series with one open-ended value effective 1900-01-01;
        ``"name@YYYY-MM-DD"`` replaces or inserts the value effective that day (and, if that day
        is after ``known_through``, extends ``known_through`` to December 31 of its year).
        Overridden values cite :data:`WHAT_IF_CITATION`. The version changes.
        """
        if not overrides:
            return self
        parsed: list[tuple[int, str, date | None, str, float | date]] = []
        for key in sorted(overrides):
            if not isinstance(key, str):
                raise ParameterError(f"override key must be a string, got {key!r}")
            name, _, at = key.partition("@")
            s = self.series(name)
            on = None
            if at:
                try:
                    on = _strict_date(at)
                except ValueError:
                    raise ParameterError(f"override {key!r}: expected name@YYYY-MM-DD") from None
            v = self._check_override_value(key, s, overrides[key])
            parsed.append((0 if on is None else 1, name, on, key, v))
        series = dict(self._series)
        for _, name, on, _key, v in sorted(
            parsed, key=lambda t: (t[0], t[3])
        ):  # whole-series first
            s = series[name]
            pv = ParameterValue(
                effective=on or _OPEN_START,
                value=v,
                confidence="WHAT-IF",
                citation=WHAT_IF_CITATION,
            )
            if on is None:
                series[name] = replace(s, values=(pv,), known_through=None)
            else:
                vals = [e for e in s.values if e.effective != on] + [pv]
                vals.sort(key=lambda e: e.effective)
                kt = s.known_through
                if kt is not None and on > kt:
                    kt = date(on.year, 12, 31)
                series[name] = replace(s, values=tuple(vals), known_through=kt)
        canon = json.dumps(
            {
                "base": self._version,
                "overrides": [[k, _canon(overrides[k])] for k in sorted(overrides)],
            },
            sort_keys=True,
        )
        version = hashlib.sha256(canon.encode()).hexdigest()[:16]
        return Parameters(
            series, self._files, version, self._directory, {**self._overrides, **overrides}
        )

    @staticmethod
    def _check_override_value(key: str, s: Series, v: Any) -> float | date:
        if s.unit == "date":
            try:
                return _strict_date(v)
            except ValueError:
                raise ParameterError(
                    f"override {key!r}: {s.name} is a date series; got {v!r}"
                ) from None
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(float(v)):
            raise ParameterError(f"override {key!r}: expected a finite number, got {v!r}")
        lo, hi = s.range  # type: ignore[misc]
        if not lo <= float(v) <= hi:
            raise ParameterError(
                f"override {key!r}: value {v} outside the range [{lo:g}, {hi:g}] of {s.name} ({s.file})"
            )
        return float(v)


def _canon(v: Any) -> str:
    return v.isoformat() if isinstance(v, date) else repr(float(v))


# --------------------------------------------------------------------------- loading


_cache: dict[str, tuple[str, Parameters]] = {}
_cache_lock = threading.Lock()


def _format_validation_error(display: str, stem: str, raw: Any, err: ValidationError) -> str:
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


def _parse_file(path: Path, data: bytes) -> dict[str, Series]:
    display = _display_path(path)
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
        raise ParameterError(_format_validation_error(display, stem, raw, exc)) from None
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
                    citation=Citation(title=v.reference.title, href=v.reference.href),
                    note=v.note,
                )
                for v in sm.values
            ),
        )
    return out


def load_parameters(directory: str | Path | None = None) -> Parameters:
    """Load and validate every ``*.yaml`` in ``directory`` (default :data:`DEFAULT_DIR`).

    Cached per resolved directory and file contents (an edited file is re-read).
    Raises :class:`ParameterError` naming the file, series and entry on any schema problem.
    """
    d = Path(directory if directory is not None else DEFAULT_DIR).resolve()
    if not d.is_dir():
        raise ParameterError(f"parameter directory {d} does not exist")
    yml = sorted(p.name for p in d.glob("*.yml"))
    if yml:
        raise ParameterError(f"{_display_path(d)}: use the .yaml extension, found {yml}")
    paths = sorted(d.glob("*.yaml"))
    if not paths:
        raise ParameterError(f"{_display_path(d)}: no *.yaml parameter files")
    blobs = {p.name: p.read_bytes() for p in paths}
    files = {n: hashlib.sha256(b).hexdigest() for n, b in blobs.items()}
    version = hashlib.sha256(
        "".join(f"{n}\0{files[n]}\n" for n in sorted(files)).encode()
    ).hexdigest()[:16]
    key = str(d)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
    series: dict[str, Series] = {}
    for p in paths:
        series.update(_parse_file(p, blobs[p.name]))
    params = Parameters(series, files, version, d)
    with _cache_lock:
        _cache[key] = (version, params)
    return params


# --------------------------------------------------------------------------- old-law derivation


def derive_counterfactual(
    cpi: Mapping[int, float],
    start_year: int,
    start_value: float,
    end_year: int,
    overrides: Mapping[int, float] | None = None,
) -> dict[int, float]:
    """The old-law (N.J. Const. Art. I par. 23, N.J.A.C. 12:56-3.1(b)) minimum wage path.

    ``cpi`` is keyed by the year of its August (CWUR0000SA0). The rate in effect on January 1
    of ``y > start_year`` is ``rate[y-1] + max(0, round_half_up_cent(rate[y-1] * (cpi[y-1] /
    cpi[y-2] - 1)))``. An override replaces the computed value for its year and the path
    continues from it. Returns ``{start_year: start_value, ..., end_year: ...}``.
    """
    if end_year < start_year:
        raise ParameterError(
            f"derive_counterfactual: end_year {end_year} is before start_year {start_year}"
        )
    ov = dict(overrides or {})
    cent = Decimal("0.01")
    rate = Decimal(repr(float(ov.get(start_year, start_value))))
    out = {start_year: float(rate)}
    for y in range(start_year + 1, end_year + 1):
        if y in ov:
            rate = Decimal(repr(float(ov[y])))
        else:
            for yr in (y - 1, y - 2):
                if yr not in cpi:
                    raise MissingParameterError(
                        f"counterfactual.cpi_w_august has no value for August {yr} (needed for the "
                        f"{y}-01-01 old-law rate); add it to data/reference/counterfactual.yaml"
                    )
            prev, cur = Decimal(repr(float(cpi[y - 2]))), Decimal(repr(float(cpi[y - 1])))
            if prev <= 0 or cur <= 0:
                raise ParameterError(
                    f"derive_counterfactual: CPI values must be positive (Aug {y - 2}, Aug {y - 1})"
                )
            inc = (rate * (cur / prev - 1)).quantize(cent, rounding=ROUND_HALF_UP)
            rate = rate + max(inc, Decimal(0))
        out[y] = float(rate)
    return out
