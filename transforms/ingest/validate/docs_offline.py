"""Great Expectations Data Docs that open with no network (issue 23). GX writes pages that load
Bootstrap, jQuery, Vega and Font Awesome from CDNs, an index whose table is built by those scripts
(blank offline), status icons that are font glyphs, and "Data asset: None" for a dataframe batch.
After a run's validations this rewrites the site: no external script, stylesheet or image (a small
inline stylesheet instead), the icons as text (pass, FAIL), the data asset named (dataset and
file), and an index of plain HTML: one row per validation with its dataset, file, result and link,
and the expectation suites."""

from __future__ import annotations

import html
import re
from pathlib import Path

_EXTERNAL = [
    re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.I),
    re.compile(r"<link[^>]*\bhref=\"https?://[^\"]*\"[^>]*/?>", re.I),
]
_FOOTER = re.compile(r"<footer\b.*?</footer>", re.I | re.S)  # GX's newsletter link
_REMOTE_IMG = re.compile(r"(<img[^>]*\bsrc=\")https?://[^\"]*(\")", re.I)
_OK = re.compile(r"<i class=\"fas fa-check-circle[^\"]*\"[^>]*>\s*</i>")
_BAD = re.compile(r"<i class=\"fas fa-(?:times|exclamation)(?:-circle)?[^\"]*\"[^>]*>\s*</i>")
_ICON = re.compile(r"<i class=\"fas? [^\"]*\"[^>]*>\s*</i>")
STYLE = """<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#111} table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top} .ok{color:#176f2c;font-weight:bold}
.bad{color:#b00020;font-weight:bold} nav,.navbar,.sticky,.modal{display:none}
</style>"""


def _status(text: str) -> str:
    return "FAIL" if _BAD.search(text) else "pass"


def offline(docs_dir: Path) -> Path | None:
    """Rewrite the Data Docs site at ``docs_dir`` to need no network (see the module); its index."""
    docs_dir = Path(docs_dir)
    if not docs_dir.is_dir():
        return None
    rows = []
    for page in sorted(docs_dir.rglob("*.html")):
        rel = page.relative_to(docs_dir)
        if rel.as_posix() == "index.html":
            continue
        text = page.read_text(encoding="utf-8")
        status = _status(text)
        if rel.parts[0] == "validations" and len(rel.parts) >= 3:
            dataset, run = rel.parts[1], rel.parts[2]
            file = run.replace("__", "/")  # the file's path, its "/" written "__" (gx.run_suite)
            text = text.replace("Data asset: None", f"Data asset: {html.escape(dataset)}, file {html.escape(file)}")
            rows.append((dataset, file, rel.parts[3] if len(rel.parts) > 4 else "", status, rel.as_posix()))
        for pattern in _EXTERNAL:
            text = pattern.sub("", text)
        text = _FOOTER.sub("", text)
        text = _REMOTE_IMG.sub(lambda m: m.group(1) + "data:," + m.group(2), text)
        text = _OK.sub('<span class="ok">pass</span>', text)
        text = _BAD.sub('<span class="bad">FAIL</span>', text)
        text = _ICON.sub("", text)
        text = text.replace("</head>", STYLE + "</head>", 1)
        page.write_text(text, encoding="utf-8")
    return _index(docs_dir, rows)


def _index(docs_dir: Path, rows: list[tuple]) -> Path:
    suites = sorted(p.relative_to(docs_dir).as_posix() for p in (docs_dir / "expectations").glob("*.html"))
    body = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Data Docs: validations</title>",
            STYLE, "</head><body><h1>Validation results (Great Expectations)</h1>",
            f"<p>{len(rows)} validations, {sum(r[3] == 'FAIL' for r in rows)} with failed expectations. "
            "Each page lists every expectation of the layer's suite and its result.</p>",
            "<table id=\"validations\"><tr><th>Dataset</th><th>File</th><th>Validated at</th><th>Result</th></tr>"]
    for dataset, file, at, status, href in sorted(rows):
        cls = "bad" if status == "FAIL" else "ok"
        body.append(f"<tr><td>{html.escape(dataset)}</td><td><a href=\"{html.escape(href)}\">{html.escape(file)}</a></td>"
                    f"<td>{html.escape(at)}</td><td class=\"{cls}\">{status}</td></tr>")
    body.append("</table><h2>Expectation suites</h2><ul>")
    body += [f"<li><a href=\"{html.escape(s)}\">{html.escape(Path(s).stem)}</a></li>" for s in suites]
    body.append("</ul></body></html>\n")
    index = docs_dir / "index.html"
    index.write_text("\n".join(body), encoding="utf-8")
    return index
