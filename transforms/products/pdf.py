"""PDF documents an employer can file: every certificate of credit and every decision notice of a
run, one multi-page PDF per kind for printing (``certificates/certificates.pdf``,
``notices/notices.pdf``), each document on pages of its own and a bookmark (PDF outline entry) per
document, and each document's own PDF beside its HTML page (``certificates/<certificate_no>.pdf``,
``notices/<application_id>.pdf``), cut from the first at its bookmarks (pypdf).

Rendered by Typst (the ``typst`` wheel: self-contained, no system library) from the templates in
``typst/`` and the same records the HTML pages are written from, passed as JSON: submitted text
(names, ids) is placed as text and never read as Typst markup. One document per kind measured far
faster than one per certificate (about 0.25 ms a page against 6 ms a file here); Typst works
outside Python's lock, so it renders while the HTML pages are written.

Typst takes about 1.5 ms a page here (a certificate is a page, a notice one or more), and memory
grows with the document. ``DocumentOptions.pdf`` (``pdf`` in the run's settings, ``IMPCREDIT_PDF``):
- ``auto`` (default): both kinds when the run has at most ``pdf_max`` documents
  (default 1,000: a few seconds); a bigger run writes the documents' data beside their folders
  (``certificates/certificates.pdf.json``) and ``impcredit documents --out DIR`` renders them
  when wanted (a state-wide run's 27,000 documents take about 40 s on 2 cores);
- ``all``, ``certificates`` (notices as HTML only) or ``none``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from transforms import leftovers
from transforms.options import DocumentOptions

TEMPLATES = Path(__file__).resolve().parent / "typst"
KINDS = ("certificates", "notices")
MODES = ("auto", "all", "certificates", "none")


class Jobs(list):
    """The PDF jobs of a run's documents (``job``'s results, run beside the HTML pages) and the
    options they follow (``DocumentOptions``)."""

    def __init__(self, options: DocumentOptions | None = None) -> None:
        super().__init__()
        self.options = options or DocumentOptions()


def wanted(kind: str, documents: int = 0, options: DocumentOptions | None = None) -> bool:
    """Whether this kind of document is rendered as PDF by the run, for a run of ``documents``
    certificates and notices."""
    o = options or DocumentOptions()
    if o.pdf == "auto":
        return documents <= o.pdf_max
    return o.pdf == "all" or (o.pdf == "certificates" and kind == "certificates")


def deferred(kind: str, documents: int, options: DocumentOptions | None = None) -> bool:
    """Whether the run leaves this kind's PDF as data for ``impcredit documents`` (``auto`` over
    the limit)."""
    return (options or DocumentOptions()).pdf == "auto" and not wanted(kind, documents, options)


def job(kind: str, records, target: Path, *, footer: str, documents: int, names: list[str] | None = None,
        options: DocumentOptions | None = None):
    """The PDF of ``records`` (a list, or a callable giving it: built only when needed), and with
    ``names`` one PDF per record beside it (``<name>.pdf``, what an employer portal attaches): a
    job (a callable giving the paths) to run beside the HTML pages when the run renders it; its
    data written beside the folder (``<target>.json``) for ``impcredit documents`` when
    deferred; else None."""
    if wanted(kind, documents, options):
        return lambda: render_all(kind, records() if callable(records) else records, target, footer=footer, names=names)
    if deferred(kind, documents, options):
        import orjson

        target.parent.mkdir(parents=True, exist_ok=True)
        data = {"kind": kind, "footer": footer, "records": records() if callable(records) else records, "names": names}
        target.with_name(target.name + ".json").write_bytes(orjson.dumps(data))
    return None


BATCH = 250  # documents Typst renders at once: its memory grows with the document (issue 43)


def render_all(kind: str, records: list[dict], target: Path, *, footer: str, names: list[str] | None) -> list[Path]:
    """``target`` (every document) and, with ``names``, each document's own PDF. More than
    ``BATCH`` documents are rendered ``BATCH`` at a time (each batch cut into its documents), and
    the batches joined into ``target`` with their bookmarks: Typst's memory is one batch's."""
    if len(records) <= BATCH:
        path = render(kind, records, target, footer=footer)
        return [path, *(split(path, names) if names else [])]
    parts, made = [], []
    try:
        for i in range(0, len(records), BATCH):
            part = render(kind, records[i:i + BATCH], target.with_name(f".{target.stem}.part{i // BATCH}.pdf"),
                          footer=footer)
            parts.append(part)
            made += split(part, names[i:i + BATCH]) if names else []
        join(parts, target)
    finally:
        for part in parts:
            part.unlink(missing_ok=True)
    return [target, *made]


def join(parts: list[Path], target: Path) -> Path:
    """``target``: the PDFs of ``parts`` one after another, their bookmarks kept (pypdf)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for part in parts:
        writer.append(str(part), import_outline=True)
    tmp = target.with_name(f".{target.name}.tmp")
    with tmp.open("wb") as fh:
        writer.write(fh)
    os.replace(tmp, target)
    return target


def split(path: Path, names: list[str]) -> list[Path]:
    """Cut the PDF of several documents at its bookmarks (one per document, in order) into one
    PDF per document, ``<name>.pdf`` beside it (written under a temporary name, then renamed)."""
    from pypdf import PdfReader, PdfWriter

    reader = PdfReader(path)
    starts = [reader.get_destination_page_number(o) for o in reader.outline if not isinstance(o, list)]
    if len(starts) != len(names):
        raise RuntimeError(f"{path}: {len(starts)} bookmarks for {len(names)} documents")
    ends = [*starts[1:], len(reader.pages)]
    out = []
    for name, first, stop, mark in zip(names, starts, ends, reader.outline, strict=True):
        writer = PdfWriter()
        for i in range(first, stop):
            writer.add_page(reader.pages[i])
        writer.add_metadata({"/Title": str(mark.title)})
        one = path.with_name(f"{name}.pdf")
        tmp = one.with_name(f".{one.name}.tmp")
        with tmp.open("wb") as fh:
            writer.write(fh)
        os.replace(tmp, one)
        out.append(one)
    return out


def render_pending(out_dir: Path) -> list[Path]:
    """Render every ``*.pdf.json`` a run left under ``out_dir`` (``impcredit documents``); the
    data file goes once its PDF is in place."""
    made = []
    for data in sorted(Path(out_dir).glob("*/*.pdf.json")):
        d = json.loads(data.read_text(encoding="utf-8"))
        made += render_all(d["kind"], d["records"], data.with_name(data.name.removesuffix(".json")), footer=d["footer"],
                           names=d.get("names"))
        data.unlink()
    return made


def render(kind: str, records: list[dict], path: Path, *, footer: str) -> Path:
    """``path``: the PDF of ``records`` (the template's fields, every value text) by the
    ``typst/<kind>.typ`` template."""
    import typst

    path.parent.mkdir(parents=True, exist_ok=True)
    with leftovers.temp_dir("pdf") as tmp:
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
