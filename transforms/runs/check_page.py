"""The employer's check as one HTML page (``templates/check.html.j2``) and as the command's lines:
printable, no script, a Content-Security-Policy that lets nothing load, every value escaped, no ssn;
each rejected value quoted as written with its characters visible, one message per problem, the
application each line gives or holds, every header and value read loosely said, dates written as an
employer reads them (``February 1, 2024``), and nothing internal (no spec section); a character's
name and a quoted value never broken across lines (``unbroken``)."""

from __future__ import annotations

import re
from pathlib import Path

MAX_SHOWN_REJECTS = 10_000  # rejected lines listed on the page (every one is counted)
# a quoted value up to this long is kept on one line; a longer one may wrap, never inside a character's name
MAX_UNBROKEN_CHARS = 40
_QUOTED = re.compile(r"\u201c[^\u201d]*\u201d")
_NAMED = re.compile(r"\[[^\[\]]+\]")  # a character named in brackets (``as_written.visible``)


def write_page(result, path: Path) -> Path:
    """``path``: the page of ``result`` (``check.CheckResult``)."""
    from transforms.products._html import render
    from transforms.products.as_written import long_dates
    from transforms.products.letter import long_instant
    from transforms.runs.record import code_version

    shown = result.rejects[:MAX_SHOWN_REJECTS]
    return render("check.html.j2", Path(path), r=result, folder=result.input_dir.resolve().name or str(result.input_dir),
                  checked_at=long_instant(result.checked_at), version=code_version(), shown_rejects=shown,
                  more_rejects=len(result.rejects) - len(shown), years=sorted({t.year for t in result.totals}),
                  dates=long_dates, applications=applications, unbroken=unbroken)


def unbroken(text) -> str:
    """``text`` escaped, each quoted value (up to ``MAX_UNBROKEN_CHARS``) and each character named
    in brackets (``[no-break space]``, ``[U+200B]``) in a ``<span class="nobreak">`` the page never
    wraps inside (``check.html.j2``)."""
    from markupsafe import Markup, escape

    def span(part: str) -> str:
        return f'<span class="nobreak">{escape(part)}</span>'

    def names(part: str) -> str:
        out, at = [], 0
        for m in _NAMED.finditer(part):
            out += [str(escape(part[at:m.start()])), span(m.group(0))]
            at = m.end()
        return "".join(out) + str(escape(part[at:]))

    text, out, at = "" if text is None else str(text), [], 0
    for m in _QUOTED.finditer(text):
        q = m.group(0)
        out += [names(text[at:m.start()]), span(q) if len(q) <= MAX_UNBROKEN_CHARS + 2 else names(q)]
        at = m.end()
    return Markup("".join(out) + names(text[at:]))


def rejected_line(r) -> str:
    """A rejected line as the command prints it: where, the value as written, one message, its application."""
    col = f", {r.column}" if r.column else ""
    value = f" {r.shown_value}" if r.value else ""
    apps = f" ({applications(r.applications)})" if r.applications else ""
    return f"{r.file} line {r.line}{col}{value}: {r.fix}{apps}"


def applications(ids, shown: int = 5) -> str:
    """``application A1``, ``applications A1, A2``, or the first ``shown`` and how many more."""
    ids = list(ids)
    head = ", ".join(ids[:shown]) + (f" and {len(ids) - shown:,} more" if len(ids) > shown else "")
    return f"application{'s' if len(ids) > 1 else ''} {head}"
