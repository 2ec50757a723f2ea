"""The employer's check as one HTML page (``templates/check.html.j2``) and as the command's lines:
printable, no script, a Content-Security-Policy that lets nothing load, every value escaped, no ssn;
each rejected value quoted as written with its characters visible, one message per problem, the
application each line gives or holds, every header and value read loosely said, dates written as an
employer reads them (``February 1, 2024``), and nothing internal (no spec section)."""

from __future__ import annotations

from pathlib import Path

MAX_SHOWN_REJECTS = 10_000  # rejected lines listed on the page (every one is counted)


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
                  dates=long_dates, applications=applications)


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
