"""Shared HTML rendering for the products: a jinja2 environment over ``templates/`` and
formatting helpers. HTML only (no PDF engine is a dependency): every page has print CSS and is
printable to PDF from a browser."""

from __future__ import annotations

import functools
import gc
import os
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from transforms.outputs import xml_safe

TEMPLATES = Path(__file__).resolve().parent / "templates"


def money(cents: int | None) -> str:
    """Integer cents as ``$1,234.56`` (exact; no float)."""
    if cents is None:
        return ""
    cents = int(cents)
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100:,}.{cents % 100:02d}"


def nj_local(instant) -> str:
    """An instant (aware, or naive UTC) in New Jersey local time: ``2024-02-01 09:00 EST``."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    if instant is None:
        return ""
    aware = instant if instant.tzinfo else instant.replace(tzinfo=dt.UTC)
    return aware.astimezone(ZoneInfo("America/New_York")).strftime("%Y-%m-%d %H:%M %Z")


@lru_cache(maxsize=1024)
def decision_date(run_id: str | None) -> str:
    """The New Jersey date a run decided, read from its id (``<kind>-<year>-<UTC stamp>-<hash>``):
    the same on every rerun that keeps the decision."""
    import datetime as dt
    import re

    m = re.search(r"-(\d{8}T\d{6})\d*Z-", run_id or "")
    if not m:
        return ""
    stamp = dt.datetime.strptime(m.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
    return nj_local(stamp)[:10]


def num2(x: float | None) -> str:
    return "" if x is None else f"{x:,.2f}"


def _printable(v):
    """A value as a page shows it: what cannot be printed replaced (markup stays markup)."""
    if type(v) is str:  # most values: checked first (Markup is a str too)
        return xml_safe(v)
    if isinstance(v, Markup):
        return Markup(xml_safe(str(v)))
    return xml_safe(v) if isinstance(v, str) else v


@lru_cache(maxsize=1)
def env() -> Environment:
    e = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # what cannot be printed never reaches a page (input rejects it first: spec section 1)
        finalize=_printable,
        auto_reload=False,  # the templates do not change under a run: no stat of each one per page
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


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many small objects (page contexts)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_gc(fn):
    """Decorator: run ``fn`` with the garbage collector paused (see ``gc_paused``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with gc_paused():
            return fn(*args, **kwargs)

    return wrapper


def render_many(template: str, pages: list[tuple[Path, dict]], helper=None) -> list[Path]:
    """Many pages of one template into a staging folder: one template lookup, one mkdir per
    folder, no rename per page (the staging folder is published whole), and the cyclic garbage
    collector paused (tens of thousands of small context dicts otherwise trigger full
    collections over everything the process holds). With ``helper`` (``render_helper.Helper``),
    the second half of the pages is rendered and written by that process while this one does
    the first: the same files (20,000 notices of the bench's 10M rows: rendering 3.2 s and
    creating the files 1.8 s in one process)."""
    job = None
    if helper is not None and len(pages) > 1:
        half = len(pages) // 2
        for folder in {path.parent for path, _ in pages}:  # the folders exist before either writes
            folder.mkdir(parents=True, exist_ok=True)
        job = helper.submit(template, pages[half:])
        mine = pages[:half] if job is not None else pages
    else:
        mine = pages
    write_pages(template, mine)
    if job is not None and not job.done():
        write_pages(template, pages[half:])  # the helper failed: the same pages, written here
    return [path for path, _ in pages]


def write_pages(template: str, pages: list[tuple[Path, dict]]) -> None:
    """Render and write ``pages`` (path, context) of one template, the collector paused."""
    t = env().get_template(template)
    made: set[Path] = set()
    with gc_paused():
        for path, context in pages:
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            path.write_text(t.render(**context), encoding="utf-8")


MAX_NAME = 100  # characters of a file name made from an id (file systems allow 255 bytes)


class OutputCollision(ValueError):
    """Two outputs would be written to one file name; nothing is written."""


def safe_filename(name: str) -> str:
    """A file name from an id (spec section 1, "ids are text"): ASCII letters, digits and
    ``- _ .`` are kept, anything else becomes ``_``; where that changed the id (or it is longer
    than ``MAX_NAME``), ``-`` and a short hash of the original id are appended, so two ids never
    share a name (``X/1`` is ``X_1-<hash>``, ``X_1`` stays ``X_1``)."""
    name = str(name)
    out = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "_" for ch in name).lstrip(".") or "_"
    if out != name or len(out) > MAX_NAME:
        out = f"{out[:MAX_NAME - 11]}-{_short_hash(name)}"
    return out


def _short_hash(name: str) -> str:
    import hashlib

    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]


def file_names(ids: list[str], what: str) -> dict[str, str]:
    """``safe_filename`` of each distinct id, checked: two ids that would still meet in one file
    name are ``OutputCollision`` before anything is written. (Names are compared exactly, as
    this system's file systems do: a certificate number never changes once issued.)"""
    names = {i: safe_filename(i) for i in dict.fromkeys(ids)}
    seen: dict[str, str] = {}
    for i, n in names.items():
        if n in seen:
            raise OutputCollision(f"{what} {seen[n]!r} and {i!r} would be written to the same file {n!r}; "
                                  "nothing was written")
        seen[n] = i
    return names
