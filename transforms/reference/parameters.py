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

import hashlib
import json
import math
import threading
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from transforms.reference.counterfactual import derive_counterfactual
from transforms.reference.schema import parse_file, strict_date
from transforms.reference.values import (
    DEFAULT_DIR,
    WHAT_IF_CITATION,
    Citation,
    MissingParameterError,
    ParameterError,
    ParameterValue,
    Series,
    display_path,
)

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

_OPEN_START = date(1900, 1, 1)  # effective date of a whole-series what-if override


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
            display_path(path) if path.exists() else f"a file in {display_path(self._directory)}"
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
                    on = strict_date(at)
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
                return strict_date(v)
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
        raise ParameterError(f"{display_path(d)}: use the .yaml extension, found {yml}")
    paths = sorted(d.glob("*.yaml"))
    if not paths:
        raise ParameterError(f"{display_path(d)}: no *.yaml parameter files")
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
        series.update(parse_file(p, blobs[p.name]))
    params = Parameters(series, files, version, d)
    with _cache_lock:
        _cache[key] = (version, params)
    return params
