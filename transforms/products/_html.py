"""Shared HTML rendering for the products: a jinja2 environment over ``templates/`` and
formatting helpers. HTML only (no PDF engine is a dependency): every page has print CSS and is
printable to PDF from a browser."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

TEMPLATES = Path(__file__).resolve().parent / "templates"


def money(cents: int | None) -> str:
    """Integer cents as ``$1,234.56`` (exact; no float)."""
    if cents is None:
        return ""
    cents = int(cents)
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100:,}.{cents % 100:02d}"


def num2(x: float | None) -> str:
    return "" if x is None else f"{x:,.2f}"


@lru_cache(maxsize=1)
def env() -> Environment:
    e = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    e.filters["money"] = money
    e.filters["num2"] = num2
    return e


def render(template: str, path: Path, **context) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    html = env().get_template(template).render(**context)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, path)
    return path


def safe_filename(name: str) -> str:
    """A file name from an id: keep letters, digits, - _ . ; anything else becomes _."""
    out = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))
    return out.lstrip(".") or "_"
