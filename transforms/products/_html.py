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


def render(template: str, path: Path, *, atomic: bool = True, **context) -> Path:
    """Render ``template`` to ``path``. ``atomic=False`` for pages written into a run's staging
    folder (the folder is moved into place as a whole; a rename per page is wasted work)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    html = env().get_template(template).render(**context)
    if not atomic:
        path.write_text(html, encoding="utf-8")
        return path
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, path)
    return path


PARALLEL_MIN_PAGES = 2000  # below this, starting helper processes costs more than it saves


def _render_chunk(template: str, pages: list[tuple[Path, dict]]) -> list[Path]:
    t = env().get_template(template)
    made: set[Path] = set()
    out = []
    for path, context in pages:
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_text(t.render(**context), encoding="utf-8")
        out.append(path)
    return out


def render_many(template: str, pages: list[tuple[Path, dict]], *, workers: int | None = None) -> list[Path]:
    """Many pages of one template into a staging folder (not atomically per page: the folder is
    published whole).

    From ``PARALLEL_MIN_PAGES`` pages on (20,000 notices at state scale) the pages are shared
    with ``workers - 1`` helper processes (one per CPU; jinja is pure Python, so threads would
    share one core) while this process renders its own share. Helpers are plain
    ``python -m transforms.products._html <pickle>`` processes: no multiprocessing start method,
    so nothing of the caller's ``__main__`` is re-run and no Polars/DuckDB threads are forked.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 1 or len(pages) < PARALLEL_MIN_PAGES:
        return _render_chunk(template, pages)
    import pickle
    import subprocess
    import sys
    import tempfile

    shares = [pages[i::workers] for i in range(workers)]
    procs: list[tuple[subprocess.Popen, str]] = []
    try:
        for share in shares[1:]:
            with tempfile.NamedTemporaryFile("wb", suffix=".pages", delete=False) as fh:
                pickle.dump((template, share), fh, protocol=pickle.HIGHEST_PROTOCOL)
            procs.append((subprocess.Popen([sys.executable, "-m", "transforms.products._html", fh.name],
                                           stderr=subprocess.PIPE), fh.name))
        _render_chunk(template, shares[0])
        for proc, _ in procs:
            _, err = proc.communicate()
            if proc.returncode:
                raise RuntimeError(f"rendering {template} in a helper process failed: {err.decode(errors='replace')[-2000:]}")
    finally:
        for proc, name in procs:
            if proc.poll() is None:
                proc.kill()
            Path(name).unlink(missing_ok=True)
    return [path for path, _ in pages]


def safe_filename(name: str) -> str:
    """A file name from an id: keep letters, digits, - _ . ; anything else becomes _."""
    out = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))
    return out.lstrip(".") or "_"


if __name__ == "__main__":  # a helper process of render_many
    import pickle
    import sys

    with open(sys.argv[1], "rb") as fh:
        _template, _pages = pickle.load(fh)
    _render_chunk(_template, _pages)
