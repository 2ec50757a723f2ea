"""``impcredit settings``: every setting and legal parameter, with values, defaults and citations."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli import common, listing

SETTINGS_KEYS = ["section", "name", "group", "values", "default", "value", "unit", "effective", "source", "citation",
                 "citation_url", "meaning"]


def settings(
    parameters: Annotated[bool, typer.Option("--parameters/--no-parameters", help="List the legal parameters too.")] = True,
    format: listing.Format = "table",
) -> None:
    """Every setting and legal parameter: values, defaults, dated values and citations.

    What `whatif --set NAME=VALUE` and `whatif --param NAME[@YYYY-MM-DD]=VALUE` accept. csv and json
    give the three lists as one, each row with its section: setting, deployment or parameter.

    Examples: impcredit settings; impcredit whatif --input data/sample --tax-year 2023 --set overtime=premium;
    impcredit settings --format csv > settings.csv
    """
    rows = _settings() + _deployment() + (_parameters() if parameters else [])
    if listing.machine(format, SETTINGS_KEYS, rows):
        return
    Col, out = listing.Col, common.console

    def section(name: str) -> list[dict]:
        return [r for r in rows if r["section"] == name]

    listing.print_table(out, listing.table(
        [Col("setting", "name"), Col("values", text=lambda r: " | ".join(r["values"])), Col("default"), Col("meaning")],
        section("setting"), title="Settings (whatif --set NAME=VALUE; annual --policy, --cap)", box=None,
        pad_edge=False, title_justify="left"))
    listing.print_table(out, listing.table(
        [Col("setting", "name"), Col("value"), Col("from", "source")], section("deployment"),
        title="Run settings (a command's option, then impcredit.toml, then IMPCREDIT_<NAME>)", box=None, pad_edge=False,
        title_justify="left"))
    if not parameters:
        return
    shown, last = [], None
    for r in section("parameter"):  # a series' name on its first dated value only
        shown.append({**r, "name": r["name"] if r["name"] != last else ""})
        last = r["name"]
    listing.print_table(out, listing.table(
        [Col("parameter", "name"), Col("effective"), Col("value", text=_value), Col("citation")], shown,
        title="Parameters (whatif --param NAME=VALUE, or NAME@YYYY-MM-DD=VALUE for one dated value)", box=None,
        pad_edge=False, title_justify="left"))


def _value(r: dict) -> str:
    v = r["value"]
    text = v if isinstance(v, str) else f"{v:g}"
    return f"{text} {r['unit'] if r['unit'] != 'date' else ''}".strip()


def _settings() -> list[dict]:
    from transforms.settings import SETTING_HELP, setting_fields

    return [{"section": "setting", "name": name, "group": group, "values": list(choices), "default": default,
             "meaning": SETTING_HELP.get(name, "")} for name, group, choices, default in setting_fields()]


def _deployment() -> list[dict]:
    """The run's operational settings (``flows.settings.RunSettings``) with where each comes from."""
    from flows.settings import HELP, RunSettings, run_settings, where

    try:
        got = run_settings()
    except ValueError as exc:
        return [{"section": "deployment", "name": "(settings)", "value": str(exc).splitlines()[0], "source": ""}]
    return [{"section": "deployment", "name": name, "value": "" if getattr(got, name) is None else str(getattr(got, name)),
             "source": where(name), "meaning": HELP.get(name, "")} for name in RunSettings.model_fields]


def _parameters() -> list[dict]:
    from transforms.reference.parameters import load_parameters

    params = load_parameters()
    out = []
    for name in params.series_names():
        s = params.series(name)
        for v in s.values:
            value = v.value.isoformat() if hasattr(v.value, "isoformat") else (
                int(v.value) if float(v.value).is_integer() else v.value)
            out.append({"section": "parameter", "name": name, "value": value, "unit": s.unit,
                        "effective": v.effective, "citation": v.citation.label, "citation_url": v.citation.href,
                        "meaning": s.label})
    return out
