"""The validation suites (``expectations/<dataset>.json``, GX Core 1.x format) as data: read,
checked and compiled for the Polars engine (``compile_suite``), with Python's regexes translated
to Polars' syntax. An expectation type or argument the Polars engine does not know is an error,
never skipped.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import polars as pl

EXPECTATIONS_DIR = Path(__file__).resolve().parents[3] / "expectations"


@dataclass
class Failure:
    rule: str
    column: str  # canonical column reported
    message: str
    severity: str  # "row" | "file"
    lines: list[int]
    unexpected_percent: float


def load_suite_json(dataset: str, directory: Path | None = None) -> dict:
    path = (directory or EXPECTATIONS_DIR) / f"{dataset}.json"
    return json.loads(path.read_text(encoding="utf-8"))


# --- the same suites evaluated with polars (no GX import) ------------------------------------
#
# GX (pandas engine) semantics replicated here, from great_expectations 1.24.1:
# - missing = ``Series.isnull()``: null, and NaN of float columns. Non-null expectations count
#   missing cells over all rows; the others evaluate only non-missing cells
#   (``filter_column_isnull``) and ``mostly`` / ``unexpected_percent`` are relative to them.
# - regexes: ``column.astype(str).str.contains(regex)``, i.e. ``re.search``; translated from
#   Python ``re`` to the Rust syntax of polars (``$`` also matches before a final newline...).
# - between: ``min <= v <= max`` (strict_* make it ``<``), either bound may be absent.
# - in_set: ``Series.isin(value_set)``.
# - results come grouped by column (first appearance), suite order within a column.

INDEX_COLUMN = "__line"
_BASE_KWARGS = frozenset({"column", "mostly", "result_format", "meta", "notes"})
_TYPE_KWARGS: dict[str, frozenset[str]] = {
    "expect_column_values_to_not_be_null": frozenset(),
    "expect_column_values_to_match_regex": frozenset({"regex"}),
    "expect_column_values_to_not_match_regex": frozenset({"regex"}),
    "expect_column_values_to_be_between": frozenset({"min_value", "max_value", "strict_min", "strict_max"}),
    "expect_column_values_to_be_in_set": frozenset({"value_set"}),
}
_ENTRY_KEYS = frozenset({"type", "kwargs", "meta", "notes", "id"})
_POLARS_SUITES: dict[tuple[str, str], tuple[SuiteCheck, ...]] = {}
_polars_lock = threading.Lock()


class SuiteError(ValueError):
    """A suite the polars engine cannot evaluate exactly as GX would (names file and expectation)."""


@dataclass(frozen=True)
class SuiteCheck:
    """One compiled expectation of a suite."""

    type: str
    column: str
    mostly: float
    rule: str
    report_column: str
    message: str
    severity: str
    where: str  # "expectations/payroll.json #7 (expect_...)" for error messages
    regex: str | None = None  # already translated to the polars (Rust) syntax
    min_value: float | int | None = None
    max_value: float | int | None = None
    strict_min: bool = False
    strict_max: bool = False
    value_set: tuple = ()


def number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_PY_SPACE = r"\s\x1c-\x1f"  # Python's \s (str.isspace) = Rust's \s plus the four separators
_PY_WORD = r"\p{L}\p{N}_"  # Python's \w (str.isalnum or _)


def python_regex_to_polars(regex: str) -> str:
    """Translate a Python ``re`` pattern so that polars' ``str.contains`` finds what ``re.search`` finds.

    ``$`` and ``\\Z``, ``\\s``/``\\w`` (and negations), literal ``[ & ~`` in classes, escaped
    punctuation. Raises ``ValueError`` on what cannot be translated (``\\b``, verbose mode...).
    """
    out: list[str] = []
    i, n = 0, len(regex)

    def escaped(c: str, in_class: bool) -> str:
        if c == "s":
            return _PY_SPACE if in_class else f"[{_PY_SPACE}]"
        if c == "S":
            return f"[^{_PY_SPACE}]"
        if c == "w":
            return _PY_WORD if in_class else f"[{_PY_WORD}]"
        if c == "W":
            return f"[^{_PY_WORD}]"
        if c == "b" and in_class:
            return r"\x08"
        if c in "bB":
            raise ValueError(f"\\{c} (word boundary) differs between Python and polars")
        if c == "Z" and not in_class:
            return r"\z"
        if not c.isalnum():
            return f"\\x{{{ord(c):X}}}"
        return "\\" + c

    while i < n:
        ch = regex[i]
        if ch == "\\":
            if i + 1 >= n:
                raise ValueError("trailing backslash")
            out.append(escaped(regex[i + 1], False))
            i += 2
        elif ch == "$":
            out.append(r"(?:$|\n\z)")
            i += 1
        elif ch == "(" and regex.startswith("(?", i):
            m = re.match(r"\(\?([aiLmsux-]+)[:)]", regex[i:])
            if m and set(m.group(1)) & set("aiLx"):
                raise ValueError(f"inline flags {m.group(1)!r} are not supported")
            out.append("(")
            i += 1
        elif ch == "[":
            j = i + 1
            parts = ["["]
            if regex.startswith("^", j):
                parts.append("^")
                j += 1
            if regex.startswith("]", j):
                parts.append(r"\]")
                j += 1
            while j < n and regex[j] != "]":
                c = regex[j]
                if c == "\\":
                    if j + 1 >= n:
                        raise ValueError("trailing backslash")
                    parts.append(escaped(regex[j + 1], True))
                    j += 2
                    continue
                if regex.startswith("--", j):
                    raise ValueError("'--' in a character class is ambiguous")
                parts.append("\\" + c if c in "[&~" else c)
                j += 1
            if j >= n:
                raise ValueError("unterminated character class")
            out.append("".join(parts) + "]")
            i = j + 1
        else:
            out.append(ch)
            i += 1
    translated = "".join(out)
    pl.Series([""], dtype=pl.String).str.contains(translated)  # raises if polars rejects it
    return translated


def _compile_entry(entry: object, where: str) -> SuiteCheck:
    if not isinstance(entry, dict):
        raise SuiteError(f"{where}: not an object")
    typ = entry.get("type")
    where = f"{where} ({typ})"
    if typ not in _TYPE_KWARGS:
        raise SuiteError(f"{where}: expectation type not supported by the polars engine")
    if unknown := set(entry) - _ENTRY_KEYS:
        raise SuiteError(f"{where}: unknown key(s) {sorted(unknown)}")
    kwargs = entry.get("kwargs") or {}
    meta = entry.get("meta") or {}
    if not isinstance(kwargs, dict) or not isinstance(meta, dict):
        raise SuiteError(f"{where}: kwargs and meta must be objects")
    if unknown := set(kwargs) - _BASE_KWARGS - _TYPE_KWARGS[typ]:
        raise SuiteError(f"{where}: unknown kwarg(s) {sorted(unknown)}")
    column = kwargs.get("column")
    if not isinstance(column, str) or not column:
        raise SuiteError(f"{where}: kwarg 'column' must be a non-empty string")
    mostly = kwargs.get("mostly", 1)
    if not number(mostly) or not 0 <= mostly <= 1:
        raise SuiteError(f"{where}: mostly must be a number between 0 and 1, not {mostly!r}")
    extra: dict = {}
    if typ in ("expect_column_values_to_match_regex", "expect_column_values_to_not_match_regex"):
        regex = kwargs.get("regex")
        if not isinstance(regex, str):
            raise SuiteError(f"{where}: kwarg 'regex' must be a string")
        try:
            extra["regex"] = python_regex_to_polars(regex)
        except Exception as e:
            raise SuiteError(f"{where}: regex {regex!r} cannot be evaluated like Python re: {e}") from e
    elif typ == "expect_column_values_to_be_between":
        lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
        if lo is None and hi is None:
            raise SuiteError(f"{where}: min_value and max_value cannot both be absent")
        for name, v in (("min_value", lo), ("max_value", hi)):
            if v is not None and not number(v):
                raise SuiteError(f"{where}: {name} must be a number, not {v!r}")
        if lo is not None and hi is not None and lo > hi:
            raise SuiteError(f"{where}: min_value is greater than max_value")
        for name in ("strict_min", "strict_max"):
            if not isinstance(kwargs.get(name, False), bool):
                raise SuiteError(f"{where}: {name} must be true or false")
        extra.update(min_value=lo, max_value=hi, strict_min=kwargs.get("strict_min", False),
                     strict_max=kwargs.get("strict_max", False))
    elif typ == "expect_column_values_to_be_in_set":
        vs = kwargs.get("value_set")
        if not isinstance(vs, list) or not all(isinstance(v, str | int | float) for v in vs):
            raise SuiteError(f"{where}: value_set must be a list of strings, numbers or booleans")
        extra["value_set"] = tuple(vs)
    return SuiteCheck(
        type=typ, column=column, mostly=float(mostly), rule=meta.get("rule", typ),
        report_column=meta.get("column", column), message=meta.get("message", typ),
        severity=meta.get("severity", "row"), where=where, **extra,
    )


def compile_suite(dataset: str, directory: Path | None = None) -> tuple[SuiteCheck, ...]:
    """The dataset's suite JSON compiled for :func:`run_suite_polars`, cached per file (thread-safe)."""
    path = (directory or EXPECTATIONS_DIR) / f"{dataset}.json"
    key = (dataset, str(path.resolve()))
    with _polars_lock:
        hit = _POLARS_SUITES.get(key)
        if hit is not None:
            return hit
        doc = load_suite_json(dataset, directory)
        entries = doc.get("expectations") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise SuiteError(f"{path}: no 'expectations' list")
        compiled = [_compile_entry(e, f"{path} expectation #{i + 1}") for i, e in enumerate(entries)]
        # GX evaluates (and reports) the suite grouped by column, in order of first appearance
        # (Validator.process_expectations_for_validation); within a column, in suite order.
        by_column: dict[str, list[SuiteCheck]] = {}
        for ck in compiled:
            by_column.setdefault(ck.column, []).append(ck)
        checks = tuple(ck for group in by_column.values() for ck in group)
        _POLARS_SUITES[key] = checks
        return checks
