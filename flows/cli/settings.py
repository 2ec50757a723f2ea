"""``impcredit settings``: every setting and legal parameter, with values, defaults and citations."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from flows.cli import common


def settings(
    parameters: Annotated[bool, typer.Option("--parameters/--no-parameters", help="List the legal parameters too.")] = True,
) -> None:
    """Every setting and legal parameter: values, defaults, dated values and citations.

    What `whatif --set NAME=VALUE` and `whatif --param NAME[@YYYY-MM-DD]=VALUE` accept.

    Examples: impcredit settings; impcredit whatif --input data/sample --tax-year 2023 --set overtime=premium
    """
    from transforms.reference.parameters import load_parameters
    from transforms.settings import SETTING_HELP, setting_fields

    t = Table(title="Settings (whatif --set NAME=VALUE; annual --policy, --cap)", box=None, pad_edge=False,
              title_justify="left")
    for col in ("setting", "values", "default", "meaning"):
        t.add_column(col, overflow="fold")
    for name, _, choices, default in setting_fields():
        t.add_row(name, " | ".join(choices), default, SETTING_HELP.get(name, ""))
    common.console.print(t)
    from transforms.deployment import deployment, where

    d = Table(title="Deployment (IMPCREDIT_<NAME>, or impcredit.toml; a command's option first)", box=None,
              pad_edge=False, title_justify="left")
    for col in ("setting", "value", "from"):
        d.add_column(col, overflow="fold")
    try:
        got = deployment()
        d.add_row("profiles", Text(str(got.profiles or "")), where("profiles"))
        if "lake" in type(got).model_fields:
            d.add_row("lake", Text(str(getattr(got, "lake", None) or "")), where("lake"))
    except ValueError as exc:
        d.add_row("profiles", Text(str(exc).splitlines()[0]), where("profiles"))
    common.console.print(d)
    if not parameters:
        return
    params = load_parameters()
    p = Table(title="Parameters (whatif --param NAME=VALUE, or NAME@YYYY-MM-DD=VALUE for one dated value)", box=None,
              pad_edge=False, title_justify="left")
    for col in ("parameter", "effective", "value", "citation"):
        p.add_column(col, overflow="fold")
    for name in params.series_names():
        s = params.series(name)
        for i, v in enumerate(s.values):
            value = v.value.isoformat() if hasattr(v.value, "isoformat") else f"{v.value:g}"
            p.add_row(name if i == 0 else "", v.effective.isoformat(), f"{value} {s.unit if s.unit != 'date' else ''}".strip(),
                      Text(v.citation.label))  # text, not markup: the label ends in [...]
    common.console.print(p)
