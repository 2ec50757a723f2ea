"""The ``gx`` validation engine: Great Expectations Core on pandas, with Data Docs when asked.

GX has no Polars engine: a frame goes ``to_pandas()`` (numpy dtypes) with
``unexpected_index_column_names``. The ephemeral GX context is created once per process (a few
seconds) and shared; GX is imported only when this engine runs.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import polars as pl

from transforms import schema
from transforms.ingest.validate.suites import Failure, load_suite_json

_lock = threading.Lock()
_STATE: dict = {}


def _quiet_gx() -> None:
    logging.getLogger("great_expectations").setLevel(logging.WARNING)


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
        for dataset in schema.STAGED:
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
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(Path(docs_dir).resolve())},
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
