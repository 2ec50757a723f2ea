"""A file's employers and why none of its lines was read (spec section 7): the employer its folder or
``payroll/files.csv`` gives and the EINs its disputed lines print, beside those its readable lines name."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transforms.ingest.validate.quarantine import FileWork

_NINE = re.compile(r"^\d{9}$")
_FEIN = re.compile(r"^\d{2}-?\d{7}$")


def context_employers(w: FileWork) -> set[str]:
    """The employers a file names outside its readable lines: the one its folder or files.csv gives
    (``FileWork.context``; a workbook's sheets', ``sheet`` in files.csv) and the EIN each line that disagrees with it prints (a PEO prints its own)."""
    out = set(w.context.employers()) if w.context is not None else set()
    out |= {q["printed_employer"] for q in w.quarantine if q.get("printed_employer")}
    return {e for e in out if _NINE.match(e)}


def folder_employer(rel: str) -> str | None:
    """The employer a payroll file's folder is named by (``payroll/123456789/...``), as
    ``context.contexts`` reads it: for a lake written before the manifest kept the context."""
    parts = PurePosixPath(rel).parts
    found = [p.replace("-", "") for p in parts[1:-1] if _FEIN.match(p)]
    return found[-1] if found and parts[0] == "payroll" else None


def unread_reason(w: FileWork) -> str | None:
    """Why no line of a file was read, said once for the file (``None`` where some line was read):
    every line's EIN disagrees with the folder's or files.csv's, a column missing from every line,
    or each line's own problem."""
    lines = {(q.get("source_sheet"), q.get("source_line")) for q in w.quarantine if q.get("source_line") is not None}
    if not w.quarantine or w.rows_read <= 0 or len(lines) < w.rows_read:
        return None
    rules = {q.get("rules") or "" for q in w.quarantine}
    given = w.context.get("employer_id") if w.context is not None else None
    printed = sorted({q["printed_employer"] for q in w.quarantine if q.get("printed_employer")})
    if rules == {"context_mismatch"} and given and all(q.get("printed_employer") for q in w.quarantine):
        source = getattr(w.context, "source", "")
        whose = f"the folder's {given}" if source.startswith("folder") else f"the {given} {source or 'the context'} gives"
        eins = " and ".join(_fein(e) for e in printed)
        return f"every line's EIN {eins} disagrees with {whose} (a PEO prints its own EIN); no line was read"
    if rules == {"field_count"}:
        said = sorted({r["message"] for r in w.rejects if r.get("rule") == "field_count" and r.get("message")})
        how = f": every line has {said[0]}" if len(said) == 1 else ""
        return f"a column missing from every line{how}; no line was read"
    return f"no line of the file could be read ({len(lines):,} lines; each one's problem is in rejects.csv)"


def _fein(e: str) -> str:
    return f"{e[:2]}-{e[2:]}" if _NINE.match(e) else e
