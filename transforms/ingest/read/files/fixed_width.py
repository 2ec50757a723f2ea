"""Where a fixed-width file gets its columns: a text file printed in columns (a payroll register
printed to ``.txt`` / ``.prn``) cut into records of text cells by position, per a profile's
``fixed_width`` (``profile_parts.FixedWidth``).

``cut: heading``: the heading line is found among the first lines as any header is (its words
split where two spaces or more part them, ``header.find_header_of``); between two headings the
cut is placed in the blank gap where the fewest lines after the heading have text on both sides
(right-aligned amounts wider than their heading reach into the gap). ``columns``: the cuts are
the given positions. A form feed (``\\f``) starts a page; the page header, the repeated headings,
page totals and notes are then the report keys' (``report_walk``). A line whose only text lies in
the ``continued`` columns, right after a line of the same page with text elsewhere too, continues
that line: its text is added to the cells above (a name printed on two lines). On a page after the
first, the lines above the repeated heading line (the page's title, company, page number) are
the page's header: left out and counted.

A cut that splits a value (text on both sides of it: ``1,04|0.00``) or text outside every column
is never read half: the line keeps its cells here and, when it is a row of the table, it is
rejected naming the columns (``split_errors``). With ``columns`` the heading line is the one whose
headings are the columns' names, in order; it stands for them wherever it is repeated."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from transforms.ingest.read.cast.row_checks import CellError
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd

_WORDS = re.compile(r"\S+(?: \S+)*")  # a heading: words parted by single spaces


@dataclass
class Cut:
    """A fixed-width file as records, and what its cuts found."""

    records: list[tuple[int, list[str | None]]]
    found: hd.Found | None
    encoding: str
    splits: dict[int, str] = field(default_factory=dict)  # line -> what was split, in words
    continued: int = 0  # lines that continued the line above
    page_headers: int = 0  # lines of the later pages' headers (above their repeated heading)


def page_lines(text: str) -> list[tuple[int, str, bool]]:
    """(line number, text, starts a page) of every line; form feeds and carriage returns taken off."""
    out, page = [], True
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if "\f" in line:
            page, line = True, line.replace("\f", "")
        out.append((n, line.expandtabs(8).rstrip(), page))
        if line.strip():
            page = False
    return out


def headings(line: str) -> list[tuple[int, str]]:
    """(start, text) of each heading of a line: words parted by single spaces."""
    return [(m.start(), m.group(0)) for m in _WORDS.finditer(line)]


def _find_heading(profile, lines) -> tuple[int, list[tuple[int, str]]] | None:
    """(index in ``lines``, its headings) of the profile's heading line among the first lines."""
    first = [(k, n, s) for k, (n, s, _) in enumerate(lines) if s.strip()][:profile.header_within]
    recs = [(n, [t for _, t in headings(s)]) for _, n, s in first]
    found = hd.find_header_of(profile, recs)
    if found is None:
        return None
    k = first[found.index][0]
    return k, headings(lines[k][1])


def _gap_cut(lines, lo: int, hi: int) -> int:
    """The cut in the gap [lo, hi] (a cut at p parts characters p-1 and p) that the fewest lines split."""
    def splits(p: int) -> int:
        return sum(1 for s in lines if p < len(s) and p > 0 and s[p - 1] != " " and s[p] != " ")
    return min(range(lo, hi + 1), key=lambda p: (splits(p), -p))


def _bounds(spec, heads: list[tuple[int, str]] | None, body: list[str]) -> tuple[list[tuple[int, int | None]], list[str]]:
    """Each column's [start, end) and its name."""
    if spec.columns:
        return [(a - 1, b) for _, a, b in spec.columns], [n for n, _, _ in spec.columns]
    cuts = [0] + [_gap_cut(body, s + len(t), heads[i + 1][0]) for i, (s, t) in enumerate(heads[:-1])]
    return [(c, cuts[i + 1] if i + 1 < len(cuts) else None) for i, c in enumerate(cuts)], [t for _, t in heads]


def _split(line: str, bounds, names: list[str]) -> str | None:
    """What a line's cuts split (text on both sides of a cut, or outside every column), in words."""
    said = []
    for i, (a, b) in enumerate(bounds):
        if b is not None and 0 < b < len(line) and line[b - 1] != " " and line[b] != " ":
            right = next((names[j] for j, (x, _) in enumerate(bounds) if x == b), None)
            word = re.search(r"\S*$", line[:b]).group(0) + "|" + re.match(r"\S*", line[b:]).group(0)
            said.append(f"'{names[i]}'" + (f" and '{right}'" if right else " and the text after it")
                        + f" split before character {b + 1} ({word!r})")
        if i == 0 and a > 0 and line[:a].strip():
            said.append(f"text before '{names[0]}' (characters 1-{a})")
        if i and bounds[i - 1][1] is not None and bounds[i - 1][1] < a and line[bounds[i - 1][1]:a].strip():
            said.append(f"text between '{names[i - 1]}' and '{names[i]}'")
    end = bounds[-1][1]
    if end is not None and line[end:].strip() and not (line[end - 1] != " " and line[end] != " "):
        said.append(f"text after '{names[-1]}' (from character {end + 1})")  # (a split there is said above)
    return "; ".join(said) or None


def cut(profile, text: str, encoding: str) -> Cut | None:
    """The records of ``text`` cut per the profile's ``fixed_width``; None when its heading line is not found."""
    spec = profile.fixed_width
    lines = [x for x in page_lines(text) if x[1].strip() or x[2]]
    first = 0
    heads = None
    if spec.cut == "heading":
        got = _find_heading(profile, lines)
        if got is None:
            return None
        first, heads = got
    bounds, names = _bounds(spec, heads, [s for _, s, _ in lines[first + 1:]])
    if spec.columns:  # the heading line: the line whose headings are the columns' names
        want = [n.strip().lower() for n in names]
        first = next((k for k, (_, s, _) in enumerate(lines[:4 * profile.header_within])
                      if [t.lower() for _, t in headings(s)] == want), None)
        if first is None:
            return None
    out = _walk(lines, first, bounds, names, spec)
    found = hd.find_header_of(profile, out.records[:profile.header_within + 1])
    if found is None:
        return None
    out.found, out.encoding = found, encoding
    return out


def _walk(lines, first: int, bounds, names: list[str], spec) -> Cut:
    """Every line cut (a title line above the heading kept whole, in one cell): a page's header
    (the lines above the heading repeated on a later page) left out and counted, a continued line added to the line above, the splits said."""
    heading = lines[first][1].strip()
    keep = {k.strip().lower() for k in spec.continued}
    cont = {i for i, n in enumerate(names) if n.strip().lower() in keep}
    out = Cut([], None, "")
    prev_ok = False  # the line above (same page) has text outside the continued columns
    skip_to = -1
    for k, (n, line, page) in enumerate(lines):
        if k <= skip_to or not line.strip():
            continue
        if page and k > first:  # a later page: the lines above its heading are its header
            at = next((j for j in range(k, min(k + 12, len(lines))) if lines[j][1].strip() == heading), None)
            if at is not None and at > k:
                out.page_headers += sum(1 for j in range(k, at) if lines[j][1].strip())
                skip_to = at - 1
                continue
        if k < first:  # the title lines above the heading: each one cell, as printed
            out.records.append((n, [re.sub(r" {3,}", "  ", line.strip())] + [""] * (len(bounds) - 1)))
            continue
        cells = list(names) if line.strip() == heading else [line[a:b].strip() for a, b in bounds]
        filled = {i for i, c in enumerate(cells) if c}
        why = None if line.strip() == heading else _split(line, bounds, names)
        if cont and not page and prev_ok and out.records and filled <= cont and why is None:
            last = out.records[-1][1]
            for i in sorted(filled):
                last[i] = f"{last[i]} {cells[i]}" if last[i] else cells[i]
            out.continued += 1
            prev_ok = False
            continue
        if why is not None:
            out.splits[n] = why
        out.records.append((n, cells))
        prev_ok = bool(filled - cont)
    return out


def aligned(text: str, score, within: int = 60) -> tuple[Cut, list[str]] | None:
    """A text whose lines align under a heading line (``impcredit layouts draft``): the cut at the
    line among the first ``within`` whose headings ``score`` highest (at least 3: the fields they
    reach) and the names of the columns whose text continues on the next line alone (a wrapped
    name, at least twice); None when no line scores 3."""
    from transforms.ingest.read.layouts.profile_parts import FixedWidth

    lines = [x for x in page_lines(text) if x[1].strip() or x[2]]
    scored = [(score([t for _, t in headings(s)]), -k) for k, (_, s, _) in enumerate(lines[:4 * within]) if s.strip()]
    if not scored or max(scored)[0] < 3:
        return None
    first = -max(scored)[1]
    heads = headings(lines[first][1])
    spec = FixedWidth(cut="heading")
    bounds, names = _bounds(spec, heads, [s for _, s, _ in lines[first + 1:]])
    plain = _walk(lines, first, bounds, names, spec)
    alone: dict[int, int] = {}
    for (_, above), (_, cells) in zip(plain.records, plain.records[1:], strict=False):
        filled = [i for i, c in enumerate(cells) if c]
        if len(filled) == 1 and sum(1 for c in above if c) >= 3 and not re.search(r"\d", cells[filled[0]]):
            alone[filled[0]] = alone.get(filled[0], 0) + 1
    continued = [names[i] for i, n in alone.items() if n >= 2]
    if not continued:
        return plain, []
    return _walk(lines, first, bounds, names, FixedWidth(cut="heading", continued=continued)), continued


def find(cands: list, data: bytes) -> Cut | None:
    """The cut of the fixed-width layout among ``cands`` that reaches most fields; None when none reads it."""
    best: Cut | None = None
    for p in cands:
        try:
            text, enc = rd.decode(data, p.encodings)
        except rd.FileUnreadable:
            continue
        got = cut(p, text, enc)
        if got is not None and (best is None or len(got.found.match.columns) > len(best.found.match.columns)):
            best = got
    return best


def not_found(cands: list) -> str:
    """Why no fixed-width layout among ``cands`` reads a file, in words: each one's heading line not found."""
    said = []
    for p in cands:
        where = f"{p.source}: " if p.source else f"profile '{p.name}': "
        if p.fixed_width.columns:
            names = " | ".join(n for n, _, _ in p.fixed_width.columns)
            said.append(f"{where}fixed_width.columns: no line among the first {4 * p.header_within} has the "
                        f"headings {names}")
        else:
            said.append(f"{where}fixed_width: no line among the first {p.header_within} is a heading line of "
                        "the profile's fields")
    return "; ".join(said)


def split_errors(splits: dict[int, str], rows: set[int], source_file: str) -> list[CellError]:
    """The rows of the table (``rows``: their lines) whose cuts split a value: rejected, never read half."""
    return [CellError(source_file, line, None, None, "fixed_width_split",
                      f"the columns cut a value: {why}; the line is not read (fix the columns of fixed_width)")
            for line, why in sorted(splits.items()) if line in rows]


__all__ = ["Cut", "aligned", "cut", "find", "headings", "not_found", "page_lines", "split_errors"]
