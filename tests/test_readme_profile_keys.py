"""The manual names every key of a profile (issue 42 part 5): each key the shipped profiles
(``data/vendors/*.yaml``) use, at its place in the schema (``report.blocks.alone``,
``period_from_pay_date.lag_days``), is a key of the README's example profile, and every key the
schema knows is there too; the README lists the canonical fields a profile may name."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import yaml
from pydantic import BaseModel

from transforms import schema
from transforms.ingest.read.layouts.profiles import Profile

ROOT = Path(__file__).resolve().parents[1]
SECTION = "#### Every key of a profile, with an example"


def _models(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def _keys(model: type[BaseModel], node, path: str, out: set[str]) -> set[str]:
    """The schema's keys ``node`` uses, as dotted paths; a mapping whose keys are data (field names,
    a frequency's codes) is walked through its values."""
    if not isinstance(node, dict):
        return out
    for k, v in node.items():
        if k not in model.model_fields:
            continue
        here = f"{path}{k}"
        out.add(here)
        for m in _models(model.model_fields[k].annotation):
            items = v if isinstance(v, list) else [v] if isinstance(v, dict) and set(v) & set(m.model_fields) else (
                list(v.values()) if isinstance(v, dict) else [])
            items = [x for item in items for x in (item if isinstance(item, list) else [item])]  # a field's aliases
            for item in items:
                _keys(m, item, here + ".", out)
    return out


def _all_keys(model: type[BaseModel], path: str = "") -> set[str]:
    out: set[str] = set()
    for k, f in model.model_fields.items():
        out.add(f"{path}{k}")
        for m in _models(f.annotation):
            out |= _all_keys(m, f"{path}{k}.")
    return out


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    return text[start:text.index("\n### ", start)]


def _documented() -> set[str]:
    out: set[str] = set()
    for block in re.findall(r"```yaml\n(.*?)```", _section(), re.S):
        _keys(Profile, yaml.safe_load(block), "", out)
    return out


def test_every_key_a_shipped_profile_uses_is_in_the_readme():
    used: dict[str, str] = {}
    for path in sorted((ROOT / "data" / "vendors").glob("*.yaml")):
        if path.name != "vocabulary.yaml":
            for k in _keys(Profile, yaml.safe_load(path.read_text(encoding="utf-8")), "", set()):
                used.setdefault(k, path.name)
    assert {"derived", "report.blocks.alone", "report.header_within", "period_from_pay_date.lag_days",
            "period_from_pay_date.frequencies", "period_from_pay_date.frequency"} <= set(used)
    missing = {k: f for k, f in used.items() if k not in _documented()}
    assert not missing, f"keys shipped profiles use and the README's example does not show: {missing}"


def test_every_key_of_the_schema_is_in_the_readme():
    # the shipped vocabulary's own key; a column by section or position inside a total or a part
    # (``{header, section}``, ``{column}`` wherever an alias goes: shown once, under fields)
    ignored = {"vocabulary.filler"} | {f"fields.{tp}.{k}" for tp in ("total", "parts") for k in ("header", "section", "column")}
    missing = sorted(_all_keys(Profile) - _documented() - ignored)
    assert not missing, f"keys of the schema the README's example does not show: {missing}"


def test_the_readme_lists_the_fields_a_profile_may_name():
    listed = _section().split("**The fields a profile may name.**", 1)[1]
    for col in [*schema.SUBMITTED_COLUMNS["payroll"], *schema.OPTIONAL_COLUMNS["payroll"]]:
        assert f"`{col}`" in listed, col
