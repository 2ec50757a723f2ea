"""Columns a header of aliases cannot name (``profile_keys.ColumnRef``): by their section (the
``Amount`` after ``Employer Taxes`` on a header whose sections repeat names: ``Earnings | Hours |
Amount | Deductions | Amount | Taxes | Amount | Employer Taxes | Amount``), or by their position;
and a field given by its total column or by the sum of its parts (``profile_keys.TotalOrParts``),
whichever the file has. Read by ``header.match_headers``."""

from __future__ import annotations

from transforms.ingest.read.layouts.profile_keys import ColumnRef


def resolve_refs(profile, headers: list[str], own: list[str] | None,
                 upper: list[str | None] | None) -> tuple[dict[str, int], dict[str, str]]:
    """(field -> the column its ``ColumnRef`` names, field -> why none was found) on a header line.
    ``headers``: each column's name (a two-row header's combined); ``own``: a two-row header's
    lower cells; ``upper``: its upper cells (the sections over the columns)."""
    key = profile.keyer()
    lower = [(h or "").strip() for h in (own if own is not None else headers)]
    lower_keys = [key(h) if h else None for h in lower]
    upper_keys = [key(c.strip()) if c and c.strip() else None for c in (upper or [])]
    found: dict[str, int] = {}
    why: dict[str, str] = {}
    for f, refs in profile.refs().items():
        for ref in refs:
            pos = _position(ref, lower, lower_keys, upper_keys, key)
            if pos is not None and pos not in found.values():
                found[f] = pos
                break
        else:
            why[f] = _why_not(refs[0], lower, lower_keys, upper_keys, key)
    return found, why


def _position(ref: ColumnRef, lower: list[str], lower_keys, upper_keys, key) -> int | None:
    if ref.position is not None:  # a column by its place, whether or not it has a header
        return ref.position if ref.position < len(lower) else None
    section, header = key(ref.section), key(ref.header)
    # a section above the columns (a two-row header): the first column under it, at or after it
    for s, k in enumerate(upper_keys):
        if k == section:
            hit = next((c for c in range(s, len(lower)) if lower_keys[c] == header), None)
            if hit is not None and _same_section(upper_keys, s, hit):
                return hit
    # a section on the header line itself: the first such column after it
    for s, k in enumerate(lower_keys):
        if k == section:
            hit = next((c for c in range(s + 1, len(lower)) if lower_keys[c] == header), None)
            if hit is not None:
                return hit
    return None


def _same_section(upper_keys, s: int, c: int) -> bool:
    """Whether column ``c`` is still under the section label at ``s`` (no other label between)."""
    return all(k is None for k in upper_keys[s + 1:c + 1])


def _why_not(ref: ColumnRef, lower: list[str], lower_keys, upper_keys, key) -> str:
    if ref.position is not None:
        return f"column {ref.column} is beyond the header's {len(lower)} column(s)"
    section = key(ref.section)
    if section not in lower_keys and section not in upper_keys:
        return f"section {ref.section!r} is on no cell of the header"
    return f"no column {ref.header!r} after section {ref.section!r}"


def total_or_parts(profile, columns: dict[str, int]) -> tuple[dict[str, list[str]], list[str]]:
    """(the fields summed from parts: the profile's ``derived`` and each total-or-parts field whose
    total the header lacks, with the parts it has; the total-or-parts fields with neither their
    total nor every part that is not optional)."""
    if not profile.either:
        return profile.derived, []
    derived = dict(profile.derived)
    missing = []
    for col, parts in profile.either.items():
        if col in columns:
            continue
        have = [p for p in parts if p in columns]
        if have and all(p in columns or p in profile.optional for p in parts):
            derived[col] = have
        else:
            missing.append(col)
    return derived, missing


def hints(match) -> list[str]:
    """For each missing field named by a section or a position that the header does not have: one
    line naming the profile's file, the key and what to write."""
    src = match.profile.source or match.profile.name
    out = []
    for f, why in match.unresolved.items():
        if f in match.missing or any(f in parts for col, parts in match.profile.either.items() if col in match.missing):
            what = ("write the section as the header prints it" if "section" in why
                    else "write the header of the column under it as printed" if "after" in why
                    else "write the column's letter or number on this header")
            out.append(f"{src}: fields.{f}: {why}; {what}")
    return out


def describe_missing(profile, f: str) -> str:
    """How a missing field is named in a message: its first alias, a column by its section or
    position, a total or its parts."""
    aliases = profile.flat.get(f) or [f]
    first = aliases[0]
    text = first.describe() if isinstance(first, ColumnRef) else first
    if f in profile.either:
        parts = [profile.flat[p][0] for p in profile.either[f]]
        said = [p.describe() if isinstance(p, ColumnRef) else p for p in parts]
        return f"{text} (or its parts: {' + '.join(said)})"
    return text


__all__ = ["describe_missing", "hints", "resolve_refs", "total_or_parts"]
