"""``impcredit documents``: the PDFs a big annual run left as data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common


def documents(
    out: Annotated[Path, typer.Option("--out", help="Output folder of an annual run.", metavar="DIR")],
) -> None:
    """Render the PDFs a big annual run left as data (certificates.pdf, notices.pdf) and link
    each application's PDFs from the run page (index.html), as a run that rendered them does.

    A run of more than IMPCREDIT_PDF_MAX documents (default 1,000) writes their data instead of
    the PDFs, so that a state-wide run is not held up; this renders them (about 1.5 ms a page).

    Example: impcredit documents --out data/out/annual-2023
    """
    import json

    from transforms.outputs import sha256_file, write_json
    from transforms.products.pdf import render_pending
    from transforms.products.run_page import link_pdfs

    if not out.is_dir():
        common.fail(f"--out {out} is not a folder")
    made = render_pending(out)
    if not made:
        common.console.print(f"nothing to render in {out}: its PDFs are there already, or the run wrote none")
        return
    manifest_path = out / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        manifest.setdefault("documents", {}).update(
            {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size} for p in made})
        write_json(manifest, manifest_path)
    for p in made:
        common.console.print(f"wrote {p} ({p.stat().st_size / 2**20:,.1f} MB)")
    if link_pdfs(out):
        common.console.print(f"linked each application's PDFs from {out / 'index.html'}")
