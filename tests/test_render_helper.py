"""The helper process for a run's many pages (``products.render_helper``): the notices it renders
are the very files this process renders, and a helper that dies or cannot start loses no page."""

from __future__ import annotations

import subprocess

import polars as pl
import pytest

from tests.test_products import ledger_awards, run_scenario
from transforms.products import render_helper
from transforms.products.notices import write_notices

COPIES = 200  # the scenario's five applications 200 times over (a helper is given explicitly here)


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    r = run_scenario(tmp_path_factory.mktemp("helper"))
    awards, emp = ledger_awards(r["workdir"]), r["result"].employees
    suffix = lambda i: pl.col("application_id") + f"-{i:03d}"  # noqa: E731
    awards = pl.concat([awards.with_columns(suffix(i)) for i in range(COPIES)])
    emp = pl.concat([emp.with_columns(suffix(i)) for i in range(COPIES)])
    return {"awards": awards, "employees": emp, "rejects": r["rejects"], "run_id": r["run_id"]}


def notices(many, folder, helper=None) -> dict[str, bytes]:
    paths = write_notices(folder, many["awards"], many["employees"], many["rejects"], run_id=many["run_id"], helper=helper)
    assert len(paths) == many["awards"].height
    return {p.name: p.read_bytes() for p in sorted((folder / "notices").iterdir())}


def test_the_helper_writes_the_same_notices(many, tmp_path):
    alone = notices(many, tmp_path / "alone")
    with render_helper.Helper() as helper:
        shared = notices(many, tmp_path / "shared", helper)
        assert not helper.broken  # it answered: it wrote its half
    assert len(alone) == many["awards"].height
    assert shared == alone
    assert b"Decision notice: application" in alone[sorted(alone)[-1]]


def test_a_helper_that_died_or_never_started_loses_no_page(many, tmp_path, monkeypatch):
    alone = notices(many, tmp_path / "alone")
    with render_helper.Helper() as helper:
        helper.proc.kill()
        helper.proc.wait()
        assert notices(many, tmp_path / "died", helper) == alone
        assert helper.broken

    def no_process(*a, **k):
        raise OSError("cannot start")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    with render_helper.Helper() as helper:
        assert helper.broken
        assert notices(many, tmp_path / "none", helper) == alone


def test_when_a_run_starts_a_helper(monkeypatch):
    assert render_helper.wanted(render_helper.MIN_PAGES) is ((__import__("os").cpu_count() or 1) > 1)
    assert not render_helper.wanted(render_helper.MIN_PAGES - 1)
    assert not render_helper.wanted(10**6, allowed=False)  # render_helper = false in the run's settings
    # the setting at the edge: IMPCREDIT_RENDER_HELPER=0 (or impcredit.toml), a bad value in one line
    from flows.settings import run_settings

    monkeypatch.setenv("IMPCREDIT_RENDER_HELPER", "0")
    assert run_settings().documents().render_helper is False
    monkeypatch.setenv("IMPCREDIT_RENDER_HELPER", "maybe")
    with pytest.raises(ValueError, match="setting render_helper .*IMPCREDIT_RENDER_HELPER"):
        run_settings()
