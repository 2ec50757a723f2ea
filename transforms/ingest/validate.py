"""Validation of staged tables: Great Expectations suites (``expectations/*.json``) on pandas.

One suite per dataset, each expectation tagged in its ``meta`` with the reject ``rule``, the
submitted ``column`` to report, a ``message`` and a ``severity``: ``file`` (the whole file is
rejected: most values of a column are empty or of the wrong type) or ``row``. Failures come
back keyed by the ``__line`` index column (``unexpected_index_column_names``), so every failed
cell is mapped to its file, line and column.

GX has no polars engine: the staged frame (plus helper columns such as hours per day) is
converted with ``to_pandas()`` (numpy dtypes). The ssn never reaches GX: only its hash.

The ephemeral GX context is created once per process (a few seconds) and shared.
After GX, on the rows that passed, two cross-row rules run in polars: exact duplicates and
overlapping periods of one employee (payroll) / duplicate keys (other datasets).
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
            pl.when((pl.col("hours") > 0) & (pl.col("gross_wages") >= 0))
            .then(pl.col("gross_wages") / pl.col("hours")).alias("__hourly_rate"),
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


def run_suite(dataset: str, frame: pl.DataFrame, *, run_name: str, docs_dir: Path | None) -> list[Failure]:
    """Validate ``frame`` (with ``__line``) against the dataset's suite; failures by line."""
    state = gx_state()
    from great_expectations.core.run_identifier import RunIdentifier

    pdf = frame.to_pandas()
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


# --- cross-row rules (polars), on the rows that passed the suite ---------------------------

PAYROLL_VALUE_COLS = ["employer_id", "employee_id", "ssn_hash", "period_start", "period_end",
                      "hours", "gross_wages", "employer_taxes"]

UNIQUE_KEYS = {
    "applications": ["application_id"],
    "roster": ["application_id", "employee_id"],
    "certifications": ["certification_id"],
    "employer_rates": ["employer_id", "rate_year_start"],
}


def cross_row_rejects(dataset: str, rows: pl.DataFrame) -> pl.DataFrame:
    """Exact duplicates (the later copy) and overlapping periods / conflicting keys (all rows).

    ``rows``: staged rows of the run that passed the suite, with ``__order`` (file order, line).
    Returns ``__order, rule, column, message``.
    """
    out_schema = {"__order": pl.Int64, "rule": pl.String, "column": pl.String, "message": pl.String}
    if rows.height == 0:
        return pl.DataFrame(schema=out_schema)
    from transforms import schema

    values = [c for c in schema.STAGED[dataset] if c not in schema.LINEAGE]
    rows = rows.sort("__order")
    where = pl.format("line {} of {}", pl.col("source_line"), pl.col("source_file"))
    first = rows.with_columns(where.first().over(values, mapping_strategy="group_to_rows").alias("__first"))
    dup = first.filter(~pl.struct(values).is_first_distinct()).select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of {}", pl.col("__first")).alias("message"),
    )
    rest = rows.filter(pl.struct(values).is_first_distinct())
    if dataset == "payroll":
        g = ["employer_id", "employee_id"]
        r = rest.sort([*g, "period_start", "period_end", "__order"]).with_columns(
            pl.col("period_end").cum_max().shift(1).over(g).alias("__prev_end")
        ).with_columns(
            (pl.col("period_start") <= pl.col("__prev_end")).fill_null(False).alias("__ov")
        ).with_columns((~pl.col("__ov")).cum_sum().over(g).alias("__cluster"))
        r = r.with_columns(pl.len().over([*g, "__cluster"]).alias("__n"))
        lines = r.filter(pl.col("__n") > 1).group_by([*g, "__cluster"]).agg(
            pl.format("{}:{}", pl.col("source_file"), pl.col("source_line")).head(5).str.join(", ").alias("__where")
        )
        bad = r.filter(pl.col("__n") > 1).join(lines, on=[*g, "__cluster"], how="left")
        ov = bad.select(
            "__order", pl.lit("overlapping_period").alias("rule"), pl.lit("period_start").alias("column"),
            pl.format("period {} to {} of employee {} overlaps another period of the same employee (lines {})",
                      pl.col("period_start"), pl.col("period_end"), pl.col("employee_id"), pl.col("__where")).alias("message"),
        )
        return pl.concat([dup, ov]).cast(out_schema)
    key = UNIQUE_KEYS[dataset]
    conflict = rest.filter(pl.len().over(key) > 1).select(
        "__order", pl.lit("duplicate_key").alias("rule"), pl.lit(key[-1]).alias("column"),
        pl.format("{} appears more than once with different values", pl.lit(" + ".join(key))).alias("message"),
    )
    return pl.concat([dup, conflict]).cast(out_schema)
