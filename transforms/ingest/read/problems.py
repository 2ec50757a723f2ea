"""A file or a sheet that no layout reads (``tables``): the ``Problem`` naming the row it came
closest with, by which layout (and the profile's key that kept it out, ``Nearest.hint``), what
is missing and what is unmatched: one short line, the full lists in the rejects file
(``Problem.detail``); a ``Sheet`` of a workbook whose rows are rejected as a whole."""

from __future__ import annotations

from dataclasses import dataclass

from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import columns as cr
from transforms.ingest.read.layouts import header as hd


def said_at(profile: str | None, sheet: str | None = None) -> str:
    """How a message of one table opens: the profile it comes from and the sheet, e.g.
    ``profile 'acme_register', sheet 'Payroll': `` (nothing when neither is known)."""
    parts = [f"profile '{profile}'"] if profile else []
    parts += [f"sheet '{sheet}'"] if sheet else []
    return ", ".join(parts) + ": " if parts else ""


@dataclass
class Problem:
    rule: str
    message: str  # one short line (the file's message, the run's summary)
    table: rd.RawTable | None = None  # the rows we could still split, to count and quarantine
    detail: str | None = None  # the full message, for the rejects file


@dataclass
class Sheet:
    """One table of a file that matched no profile (its rows are rejected as a whole)."""

    sheet: str | None
    problem: Problem


def no_match(dataset: str, near: hd.Nearest | None, where: str = "", hint: str = "") -> tuple[str, str]:
    """(short, full) messages of a table no layout reads: the row it came closest with."""
    if near is None:
        msg = f"no row of the {where or 'file'} is the header of a {dataset} layout (no column of any layout found)"
        return msg + (f". {hint}" if hint else ""), msg + (f". {hint}" if hint else "")
    m = near.match
    lead = (f"the header matches no known {dataset} layout; nearest: profile '{m.profile.name}', line {near.line}"
            f"{f' of {where}' if where else ''} ({len(m.columns)} of {len(m.columns) + len(m.missing)} fields)")
    short, full = [lead], [lead]
    if m.missing:
        short.append("missing column(s): " + hd.short_list(m.missing_headers()))
        full.append("missing column(s): " + ", ".join(m.missing_headers()))
    if m.duplicated:
        short.append("two columns reach one field: " + hd.short_list(m.twice(), 2))
        full.append("two columns reach one field: " + "; ".join(m.twice()))
    if m.unmatched:
        short.append("unmatched column(s): " + hd.short_list(m.unmatched))
        full.append("unmatched column(s): " + ", ".join(m.unmatched))
    # a profile's key that kept it from the file comes first: it says what to write
    keys = [h for h in (near.hint, *cr.hints(m)) if h]
    head = f"{'. '.join(keys)}. " if keys else ""
    tail = f". {hint}" if hint else ""
    return head + "; ".join(short) + tail, head + "; ".join(full) + tail


def holds(near: hd.Nearest) -> str:
    """What a profile's nearest row holds: ``line 1 holds 6 of 7 fields, missing column(s): Hours Worked``."""
    m = near.match
    return (f"line {near.line} holds {len(m.columns)} of {len(m.columns) + len(m.missing)} fields"
            + (f", missing column(s): {hd.short_list(m.missing_headers(), 3)}" if m.missing else ""))


def unknown_layout(dataset: str, cands: list, data: bytes, nearest: hd.Nearest | None,
                   own: list[hd.Nearest] | None = None) -> Problem:
    """The problem of a text file no layout reads; ``own``: the nearest rows of the agency's own
    profiles that are not the nearest of all, each said after it (``profile 'acme': line 3 holds ...``)."""
    hint = ""
    for alt in [",", ";", "\t", "|"]:
        for p in cands:
            if alt in p.delimiters:
                continue
            try:
                text, _ = rd.decode(data, list(p.encodings) + ["latin-1"])
                found, _ = hd.find_layout([p], rd.delimited_records(text, alt, limit=p.header_within))
            except rd.FileUnreadable:
                found = None
            if found is not None:
                hint = (f"The header matches the '{p.name}' layout when split on {alt!r}, but that "
                        f"layout is delimited by {' or '.join(repr(x) for x in p.delimiters)}: "
                        "export it again with that delimiter.")
                break
        if hint:
            break
    first = cands[0]
    try:
        text, _ = rd.decode(data, list(first.encodings) + ["latin-1"])
        table = rd.read_delimited(text, first.delimiters[0])
    except rd.FileUnreadable:
        table = None
    short, full = no_match(dataset, nearest, hint=hint)
    mine = "".join(f"; profile '{n.match.profile.name}': {holds(n)}" for n in own or [])
    return Problem("unknown_layout", short + mine, table, full + mine)


__all__ = ["Problem", "Sheet", "holds", "no_match", "said_at", "unknown_layout"]
