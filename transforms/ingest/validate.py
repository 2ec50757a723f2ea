"""Validation of staged tables against the Great Expectations suites in ``expectations/*.json``.

One suite per dataset, each expectation tagged in its ``meta`` with the reject ``rule``, the
submitted ``column`` to report, a ``message`` and a ``severity``: ``file`` (the whole file is
rejected: most values of a column are empty or of the wrong type) or ``row``. Failures come
back keyed by the ``__line`` index column, so every failed cell is mapped to its file, line and
column. The suite files are the one statement of the rules; two engines evaluate them:

- ``run_suite`` (engine ``gx``): GX Core on pandas (``to_pandas()``, numpy dtypes; GX has no
  polars engine), with ``unexpected_index_column_names``; writes Data Docs when asked. The
  ephemeral GX context is created once per process (a few seconds) and shared.
- ``run_suite_polars`` (engine ``polars``, the default for runs): the same suite JSON compiled
  to Polars expressions (``compile_suite``), one vectorised pass, GX never imported; it returns
  exactly what ``run_suite`` returns (failures, order, lines, percentages), which
  ``tests/test_validate_engines.py`` checks against real GX validations. An expectation type or
  argument it does not know is an error, never skipped. About 150 times faster than GX at 1M
  rows (0.06 s against 8.8 s, plus 2.5 s of GX start-up).

The ssn never reaches either engine: only its hash. After validation, on the rows that passed,
the cross-row rules run over the whole run (``transforms.ingest.cross_rows``).
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

EXPECTATIONS_DIR = Path(__file__).resolve().parents[2] / "expectations"

_lock = threading.Lock()
_STATE: dict = {}


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


def _quiet_gx() -> None:
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")


def gx_state() -> dict:
    """The shared ephemeral context with one validation definition per dataset."""
    with _lock:
        if _STATE:
            return _STATE
        _quiet_gx()
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        _quiet_gx()
        ctx = gx.get_context(mode="ephemeral")
        ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        source = ctx.data_sources.add_pandas("impcredit_ingest")
        vds = {}
        for dataset in ("payroll", "applications", "roster", "certifications", "employer_rates"):
            doc = load_suite_json(dataset)
            wanted = len(doc["expectations"])
            suite = gx.ExpectationSuite(name=doc["name"], expectations=doc["expectations"], meta=doc.get("meta") or {})
            if len(suite.expectations) != wanted:
                raise RuntimeError(
                    f"expectations/{dataset}.json: {wanted} expectations in the file but "
                    f"{len(suite.expectations)} loaded (an unknown expectation type is dropped by GX)"
                )
            suite = ctx.suites.add(suite)
            asset = source.add_dataframe_asset(dataset)
            batch = asset.add_batch_definition_whole_dataframe(f"{dataset}_whole")
            vds[dataset] = ctx.validation_definitions.add(
                gx.ValidationDefinition(name=f"{dataset}_staged", data=batch, suite=suite)
            )
        _STATE.update(gx=gx, ctx=ctx, vds=vds, sites={}, checkpoints={})
        return _STATE


RESULT_FORMAT = {"result_format": "COMPLETE", "unexpected_index_column_names": ["__line"],
                 "return_unexpected_index_query": False}


def _checkpoint(state: dict, dataset: str, docs_dir: Path):
    gx = state["gx"]
    ctx = state["ctx"]
    site = state["sites"].get(str(docs_dir))
    if site is None:
        site = f"site{len(state['sites']) + 1}"
        ctx.add_data_docs_site(site, {
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        })
        state["sites"][str(docs_dir)] = site
    key = (dataset, site)
    cp = state["checkpoints"].get(key)
    if cp is None:
        cp = ctx.checkpoints.add(gx.Checkpoint(
            name=f"{dataset}_{site}",
            validation_definitions=[state["vds"][dataset]],
            actions=[gx.checkpoint.UpdateDataDocsAction(name="data_docs", site_names=[site])],
            result_format=RESULT_FORMAT,
        ))
        state["checkpoints"][key] = cp
    return cp


def helper_columns(dataset: str, staged: pl.DataFrame, text: pl.DataFrame, now: datetime) -> pl.DataFrame:
    """The staged columns GX checks, plus helper columns for rules across columns."""
    f = staged.drop("source_file", "source_sheet", "source_line")
    if dataset == "payroll":
        days = (pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1
        f = f.with_columns(days.alias("__period_days")).with_columns(
            pl.when(pl.col("__period_days") >= 1).then(pl.col("hours") / pl.col("__period_days")).alias("__hours_per_day"),
        )
    elif dataset == "applications":
        f = f.with_columns(
            ((pl.col("received_at") - pl.lit(now).cast(pl.Datetime("us", "UTC"))).dt.total_microseconds() / 1e6)
            .alias("__received_after_now_s")
        )
    elif dataset == "certifications":
        raw_blank = text.get_column("valid_to").str.strip_chars().fill_null("").eq("")
        f = f.with_columns(
            (raw_blank | pl.col("valid_to").is_not_null()).alias("__valid_to_ok"),
            (pl.col("valid_to") - pl.col("valid_from")).dt.total_days().alias("__validity_days"),
        )
    elif dataset == "employer_rates":
        f = f.with_columns(
            ((pl.col("rate_year_start").dt.month() == 7) & (pl.col("rate_year_start").dt.day() == 1)).alias("__july_first")
        )
    return f


# GX's Data Docs write unexpected values into HTML unescaped: before a validation that writes
# them, markup characters of text cells become look-alikes, one character for one, so that no
# expectation of the suites (null checks, sets without them, regexes of digits, control
# characters and lengths) changes its result, while a name such as "<script>..." cannot run
_DOCS_LOOKALIKE = {"<": "\u2039", ">": "\u203a", "&": "\uff06", '"': "\uff02", "'": "\uff07"}


def docs_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``< > & " '`` in its text columns replaced by look-alikes (``_DOCS_LOOKALIKE``)."""
    text = [c for c, t in frame.schema.items() if t == pl.String]
    return frame.with_columns(
        pl.col(c).str.replace_many(list(_DOCS_LOOKALIKE), list(_DOCS_LOOKALIKE.values())) for c in text)


def run_suite(dataset: str, frame: pl.DataFrame, *, run_name: str, docs_dir: Path | None) -> list[Failure]:
    """Validate ``frame`` (with ``__line``) against the dataset's suite; failures by line. With
    ``docs_dir``, the Data Docs are written from ``docs_safe(frame)`` (the same failures)."""
    state = gx_state()
    from great_expectations.core.run_identifier import RunIdentifier

    pdf = (docs_safe(frame) if docs_dir is not None else frame).to_pandas()
    params = {"dataframe": pdf}
    if docs_dir is not None:
        Path(docs_dir).mkdir(parents=True, exist_ok=True)
        cp = _checkpoint(state, dataset, Path(docs_dir))
        safe = re.sub(r"[/\\]", "__", run_name)
        res = cp.run(batch_parameters=params, run_id=RunIdentifier(run_name=safe))
        results = [r for vr in res.run_results.values() for r in vr.results]
    else:
        vr = state["vds"][dataset].run(batch_parameters=params, result_format=RESULT_FORMAT)
        results = list(vr.results)
    failures: list[Failure] = []
    for r in results:
        cfg = r.expectation_config
        meta = cfg.meta or {}
        if r.exception_info and r.exception_info.get("raised_exception"):
            raise RuntimeError(f"GX could not evaluate {cfg.type} on {dataset}: {r.exception_info.get('exception_message')}")
        if r.success and meta.get("severity") == "file":
            continue
        lines = [int(d["__line"]) for d in (r.result.get("unexpected_index_list") or [])]
        if not lines and r.success:
            continue
        failures.append(Failure(
            rule=meta.get("rule", cfg.type), column=meta.get("column", cfg.kwargs.get("column")),
            message=meta.get("message", cfg.type), severity=meta.get("severity", "row"), lines=lines,
            unexpected_percent=float(r.result.get("unexpected_percent") or 0.0),
        ))
    return failures


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


def _number(value: object) -> bool:
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
    if not _number(mostly) or not 0 <= mostly <= 1:
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
            if v is not None and not _number(v):
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


def _missing(column: str, dtype: pl.DataType) -> pl.Expr:
    col = pl.col(column)
    return col.is_null() | col.is_nan().fill_null(False) if dtype.is_float() else col.is_null()


def _in_set(check: SuiteCheck, dtype: pl.DataType) -> pl.Expr:
    col, vs = pl.col(check.column), check.value_set
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        allowed = [v for v in vs if isinstance(v, str)]
        return col.cast(pl.String).is_in(allowed) if allowed else pl.lit(False)
    if dtype == pl.Boolean and all(isinstance(v, bool) for v in vs):
        return col.is_in(list(set(vs))) if vs else pl.lit(False)
    if (dtype.is_integer() or dtype.is_float()) and all(_number(v) for v in vs):
        if dtype.is_float():
            return col.is_in([float(v) for v in vs])
        return col.is_in([int(v) for v in vs if float(v).is_integer()])
    raise SuiteError(f"{check.where}: value_set {list(vs)!r} on a {dtype} column is not supported")


def _holds(check: SuiteCheck, dtype: pl.DataType) -> pl.Expr:
    """True where a non-missing value meets the expectation."""
    col = pl.col(check.column)
    if dtype == pl.Null:  # every value is missing: nothing is evaluated
        return pl.lit(True)
    if check.regex is not None:
        if not (dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)):
            raise SuiteError(f"{check.where}: regex on a {dtype} column (GX: astype(str)) is not supported")
        found = col.cast(pl.String).str.contains(check.regex)
        return found if check.type == "expect_column_values_to_match_regex" else ~found
    if check.type == "expect_column_values_to_be_between":
        if not (dtype.is_integer() or dtype.is_float()):
            raise SuiteError(f"{check.where}: between on a {dtype} column is not supported")
        ok = pl.lit(True)
        if check.min_value is not None:
            ok = ok & (col > check.min_value if check.strict_min else col >= check.min_value)
        if check.max_value is not None:
            ok = ok & (col < check.max_value if check.strict_max else col <= check.max_value)
        return ok
    return _in_set(check, dtype)


def _unexpected(dataset: str, checks: tuple[SuiteCheck, ...], schema_: pl.Schema) -> list[tuple[SuiteCheck, pl.Expr, pl.Expr]]:
    """(check, missing, unexpected) per check: the cells GX counts as missing, and the rows it
    lists as unexpected (missing ones for not-null checks, else failing non-missing ones)."""
    out = []
    for ck in checks:
        if ck.column not in schema_:
            raise SuiteError(f"{ck.where}: column {ck.column!r} is not in the {dataset} frame")
        missing = _missing(ck.column, schema_[ck.column])
        bad = missing if ck.type == "expect_column_values_to_not_be_null" else (
            ~missing & ~_holds(ck, schema_[ck.column]).fill_null(True))
        out.append((ck, missing, bad))
    return out


def unexpected_rows(dataset: str, frame: pl.DataFrame) -> pl.Series:
    """True for each row that some expectation of the suite lists as unexpected, whatever its
    ``mostly``. A file none of whose rows is unexpected passes the suite (``run_suite_polars``
    returns no failure), and every expectation is a test of one row, so this can be evaluated
    over many files at once: ``ingest_folder`` uses it to find the files that pass as they are."""
    checks = compile_suite(dataset)
    bad = [b for _, _, b in _unexpected(dataset, checks, frame.schema)]
    if not bad:
        return pl.Series("unexpected", [False] * frame.height, dtype=pl.Boolean)
    return frame.select(pl.any_horizontal(bad).alias("unexpected")).to_series()


def run_suite_polars(dataset: str, frame: pl.DataFrame) -> list[Failure]:
    """What :func:`run_suite` returns, computed with vectorised polars (one select, no GX)."""
    checks = compile_suite(dataset)
    schema_ = frame.schema
    if INDEX_COLUMN not in schema_:
        raise ValueError(f"run_suite_polars({dataset!r}): the frame has no {INDEX_COLUMN} column")
    exprs: list[pl.Expr] = []
    for i, (_, missing, bad) in enumerate(_unexpected(dataset, checks, schema_)):
        exprs += [missing.sum().alias(f"m{i}"), pl.col(INDEX_COLUMN).filter(bad).implode().alias(f"l{i}")]
    row = frame.lazy().select(exprs).collect().row(0) if exprs else ()
    total = frame.height
    failures: list[Failure] = []
    for i, ck in enumerate(checks):
        n_missing, lines = int(row[2 * i]), list(row[2 * i + 1])
        success, percent = _outcome(ck, total, n_missing, len(lines))
        if (success and ck.severity == "file") or (success and not lines):
            continue
        failures.append(Failure(rule=ck.rule, column=ck.report_column, message=ck.message,
                                severity=ck.severity, lines=lines,
                                unexpected_percent=float(percent or 0.0)))
    return failures


def _outcome(ck: SuiteCheck, total: int, n_missing: int, unexpected: int) -> tuple[bool, float | None]:
    """(success, unexpected percent) of one expectation over ``total`` rows."""
    if ck.type == "expect_column_values_to_not_be_null":  # over all rows
        success = total == 0 or (total - unexpected) / total >= ck.mostly
        return success, (unexpected / total * 100 if total else None)
    # over the non-missing values (ColumnMapExpectation._validate, _format_map_output)
    nonnull = total - n_missing
    success = total == 0 or nonnull == 0 or (float(nonnull) - float(unexpected)) / float(nonnull) >= ck.mostly
    return success, (unexpected / nonnull * 100 if total and nonnull else None)


def file_tally(dataset: str, frame: pl.DataFrame) -> list[tuple[int, int, int]]:
    """(rows, missing, unexpected) of each file-severity expectation over ``frame``.

    A big file is validated in pieces (``pipeline._validate_in_pieces``): its row expectations
    are decided piece by piece (each tests one row), its file expectations once, on the sums
    of the pieces' tallies (``file_failures``)."""
    checks = [ck for ck in compile_suite(dataset) if ck.severity == "file"]
    if not checks:
        return []
    exprs: list[pl.Expr] = []
    for i, (_, missing, bad) in enumerate(_unexpected(dataset, tuple(checks), frame.schema)):
        exprs += [missing.sum().alias(f"m{i}"), bad.sum().alias(f"u{i}")]
    row = frame.select(exprs).row(0)
    return [(frame.height, int(row[2 * i]), int(row[2 * i + 1])) for i in range(len(checks))]


def file_failures(dataset: str, tally: list[tuple[int, int, int]]) -> list[Failure]:
    """The file-severity failures of a file whose ``file_tally`` (summed over its pieces) is ``tally``."""
    checks = [ck for ck in compile_suite(dataset) if ck.severity == "file"]
    out = []
    for ck, (total, n_missing, unexpected) in zip(checks, tally, strict=True):
        success, percent = _outcome(ck, total, n_missing, unexpected)
        if not success:
            out.append(Failure(rule=ck.rule, column=ck.report_column, message=ck.message, severity="file",
                               lines=[], unexpected_percent=float(percent or 0.0)))
    return out
