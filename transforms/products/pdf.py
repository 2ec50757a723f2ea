"""PDF documents an employer can file: every certificate of credit and every decision notice of a
run, one multi-page PDF per kind (``certificates/certificates.pdf``, ``notices/notices.pdf``),
each document on pages of its own and a bookmark (PDF outline entry) per document.

Rendered by Typst (the ``typst`` wheel: self-contained, no system library) from the templates in
``typst/`` and the same records the HTML pages are written from, passed as JSON: submitted text
(names, ids) is placed as text and never read as Typst markup. One document per kind measured far
faster than one per certificate (about 0.25 ms a page against 6 ms a file here); Typst works
outside Python's lock, so it renders while the HTML pages are written.

``IMPCREDIT_PDF``: ``all`` (default), ``certificates`` (notices as HTML only) or ``none``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "typst"
KINDS = ("certificates", "notices")


def wanted(kind: str) -> bool:
    """Whether this kind of document is rendered as PDF (``IMPCREDIT_PDF``)."""
    mode = os.environ.get("IMPCREDIT_PDF", "all")
    if mode not in ("all", "certificates", "none"):
        raise ValueError(f"IMPCREDIT_PDF must be all, certificates or none, not {mode!r}")
    return mode == "all" or (mode == "certificates" and kind == "certificates")


def render(kind: str, records: list[dict], path: Path, *, footer: str) -> Path:
    """``path``: the PDF of ``records`` (the template's fields, every value text) by the
    ``typst/<kind>.typ`` template."""
    import typst

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="impcredit-pdf-") as tmp:
        root = Path(tmp)
        shutil.copy(TEMPLATES / f"{kind}.typ", root / "main.typ")
        (root / "data.json").write_text(json.dumps({kind: records, "footer": footer}, ensure_ascii=False), encoding="utf-8")
        tmp_pdf = path.with_name(f".{path.name}.tmp")
        typst.compile(str(root / "main.typ"), output=str(tmp_pdf), root=str(root), ignore_system_fonts=True)
        os.replace(tmp_pdf, path)
    return path


def text(v) -> str:
    """A value as the templates take it: text, empty for none."""
    return "" if v is None else str(v)
