"""Which row of a file is its header, and which column reaches which field of a profile.

The header is found whatever is above it (title, company, address, date range and criteria rows,
blank rows): the first row among a profile's first ``header_within`` rows whose cells reach every
field the profile requires (a two-row header, ``report.header_rows: 2``, names each column by the
group label above it and its own: "REG" above "Hours" is "REG Hours"). Columns reach fields by
meaning (``profiles.Profile.key``); two columns reaching one field is an error naming both, never
a guess (an alias reaching two fields cannot load: ``profiles``).

When no row of any profile holds a header, ``Nearest`` says which row came closest (its line, by
which profile, how many fields it reached), what is missing and what is unmatched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transforms.ingest.read.layouts import columns as cr
from transforms.ingest.read.layouts.profiles import Profile

Records = list[tuple[int, list[str | None]]]


@dataclass
class Match:
    profile: Profile
    columns: dict[str, int]  # logical field -> header position
    missing: list[str]
    unmatched: list[str]  # headers not used (non-blank)
    duplicated: list[str] = field(default_factory=list)  # fields reached by several columns
    reached_by: dict[str, list[str]] = field(default_factory=dict)  # such a field -> the headers reaching it
    header_rows: int = 1  # rows the header takes (2: a group row above the column row)
    derived: dict[str, list[str]] | None = None  # canonical column -> the fields summed (None: the profile's)
    unresolved: dict[str, str] = field(default_factory=dict)  # a field named by section or position -> why not found

    def __post_init__(self) -> None:
        if self.derived is None:
            self.derived = self.profile.derived

    @property
    def ok(self) -> bool:
        return not self.missing and not self.duplicated

    def missing_headers(self) -> list[str]:
        return [cr.describe_missing(self.profile, f) for f in self.missing]

    def with_columns(self, columns: dict[str, int]) -> Match:
        return Match(self.profile, columns, self.missing, self.unmatched, self.duplicated, self.reached_by,
                     self.header_rows, self.derived, self.unresolved)

    def twice(self) -> list[str]:
        """'gross_wages: 'Gross Pay' and 'TOTAL EARNINGS'' for each field reached twice."""
        return [f"{f}: " + " and ".join(repr(h) for h in self.reached_by.get(f, [])) for f in self.duplicated]


def two_row_headers(upper: list[str | None], lower: list[str | None]) -> tuple[list[str], list[str]]:
    """(each column named by its group label and its own, the column's own name): the upper row's
    labels carried right across blank cells (a merged cell), from a label to the next."""
    n = max(len(upper), len(lower))
    combined, own = [], []
    group = ""
    for i in range(n):
        up = (upper[i] if i < len(upper) else None) or ""
        low = (lower[i] if i < len(lower) else None) or ""
        if up.strip():
            group = up.strip()
        own.append(low.strip())
        combined.append(f"{group} {low.strip()}".strip() if low.strip() else (up.strip() or ""))
    return combined, own


def match_headers(profile: Profile, headers: list[str], own: list[str] | None = None,
                  upper: list[str | None] | None = None) -> Match:
    """The fields each header reaches. ``own``: a two-row header's lower cells, tried where the
    combined name reaches nothing ("Employer Taxes Net Pay" is "Net Pay"); ``upper``: its upper
    cells (the sections a column may be named by: ``columns.resolve_refs``)."""
    index, key = profile.alias_index(), profile.keyer()
    columns: dict[str, int] = {}
    reached: dict[str, list[tuple[int, str]]] = {}
    unmatched: list[str] = []
    unresolved: dict[str, str] = {}
    if profile.refs():  # columns named by their section or position are theirs before any alias is tried
        columns, unresolved = cr.resolve_refs(profile, headers, own, upper)
        reached = {f: [(pos, str(headers[pos] or "").strip())] for f, pos in columns.items()}
    claimed = set(columns.values())
    for pos, h in enumerate(headers):
        if pos in claimed:
            continue
        text = str(h or "").strip()
        f = index.get(key(text)) if text else None
        if f is None and own is not None and own[pos] and own[pos] != text:
            f = index.get(key(own[pos]))
        if f is None:
            if text:
                unmatched.append(text)
            continue
        reached.setdefault(f, []).append((pos, text))
        columns.setdefault(f, pos)
    duplicated = [f for f, hs in reached.items() if len(hs) > 1]
    derived, either_missing = cr.total_or_parts(profile, columns)
    missing = [f for f in profile.required_fields if f not in columns] + either_missing
    return Match(profile, columns, missing, unmatched, duplicated,
                 {f: [h for _, h in reached[f]] for f in duplicated}, 2 if own is not None else 1, derived, unresolved)


def match_row(profile: Profile, records: Records, i: int) -> Match:
    """The match of record ``i`` as the profile's header (with the row above it for a two-row header)."""
    cells = [(c or "").strip() for c in records[i][1]]
    if profile.report is not None and profile.report.header_rows == 2 and i > 0:
        combined, own = two_row_headers(records[i - 1][1], records[i][1])
        return match_headers(profile, combined, own, records[i - 1][1])
    return match_headers(profile, cells)


@dataclass
class Found:
    """A header found: the index of its (last) record, the match."""

    index: int
    match: Match

    @property
    def first(self) -> int:
        """The index of the header's first record."""
        return self.index - (self.match.header_rows - 1)


@dataclass
class Nearest:
    """The row that came closest to a header when none matched."""

    index: int  # of the records
    line: int
    match: Match
    hint: str = ""  # a profile's key that kept it from this sheet (``sheets.read``), to say with it

    @property
    def reached(self) -> int:
        return len(self.match.columns)


def find_header(records: Records, profile: Profile) -> Found | None:
    """The first record within the profile's ``header_within`` whose cells hold its columns."""
    for i in range(min(profile.header_within, len(records))):
        m = match_row(profile, records, i)
        if m.ok:
            return Found(i, m)
    return None


def _score(m: Match) -> tuple:
    return (len(m.columns) - len(m.duplicated), -len(m.missing), -len(m.unmatched))


def find_layout(candidates: list[Profile], records: Records) -> tuple[Found | None, Nearest | None]:
    """(the header of the profile that reads the records, or None; the nearest row and profile
    when none does). Several profiles whose header is found: the one reaching most fields (then
    the earlier header, then the profile's order)."""
    filled = [sum(1 for c in cells if c is not None and str(c).strip()) for _, cells in records]
    best = _find(candidates, records, filled)
    if best is not None:
        return best, None
    nearest: Nearest | None = None  # none is a header: which row came nearest, every row looked at
    for p in candidates:
        for i in range(min(p.header_within, len(records))):
            m = match_row(p, records, i)
            if m.columns and (nearest is None or _score(m) > _score(nearest.match)):
                nearest = Nearest(i, records[i][0], m)
    return None, nearest


def find_header_of(profile: Profile, records: Records) -> Found | None:
    """The header of ``profile`` among ``records`` (``find_layout`` for one profile, without the nearest)."""
    return _find([profile], records, [sum(1 for c in cells if c is not None and str(c).strip()) for _, cells in records])


def _find(candidates: list[Profile], records: Records, filled: list[int]) -> Found | None:
    """The best header found: a row (or the row above it and it) with as many filled cells as the
    profile requires fields is matched; the others cannot be its header."""
    best: Found | None = None
    for p in candidates:
        need = len(p.required_fields)
        two = p.report is not None and p.report.header_rows == 2
        for i in range(min(p.header_within, len(records))):
            if filled[i] + (filled[i - 1] if two and i > 0 else 0) < need:
                continue
            m = match_row(p, records, i)
            if m.ok:
                if best is None or (len(m.columns), -i) > (len(best.match.columns), -best.index):
                    best = Found(i, m)
                break
    return best


def short_list(items: list[str], most: int = 6) -> str:
    """At most ``most`` items, then how many more (a message stays one short line)."""
    items = [str(x) for x in items]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f" and {len(items) - most} more"


__all__ = ["Found", "Match", "Nearest", "find_header", "find_header_of", "find_layout", "match_headers", "match_row", "short_list",
           "two_row_headers"]
