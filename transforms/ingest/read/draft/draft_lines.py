"""What ``draft`` guesses of a report's lines beyond its header (``draft.draft_profile``): the
label columns and the groups of columns of a transposed table, the employee named on a line of its
own above their lines (a block per paycheck), the line from which on the report is its
summary; a text printed in columns, an hours column written as hours and minutes."""

from __future__ import annotations

import re

from transforms.ingest.read import figures as fg
from transforms.ingest.read.cast.durations import CLOCK
from transforms.ingest.read.files import fixed_width as fw

Records = list[tuple[int, list[str | None]]]


def label_columns(records: Records) -> int:
    """The columns at the left that hold no figure on any line (a transposed table's labels, an
    outline over several columns), at least 1, at most 6."""
    n = 0
    while n < 6 and not any(n < len(cells) and fg.figure(cells[n]) for _, cells in records):
        n += 1
    return max(n, 1)


def groups(body: Records, n: int) -> tuple[int | None, int | None]:
    """(1, 2) when the table's first row names a group of columns each (an employee's Hours, Rate
    and amount) and its second row heads them; else (None, None)."""
    if len(body) < 3:
        return None, None
    names = [j for j, c in enumerate(body[0][1]) if j >= n and c and c.strip() and not fg.figure(c)]
    heads = [j for j, c in enumerate(body[1][1]) if j >= n and c and c.strip()]
    figured = {j for _, cells in body[2:] for j, c in enumerate(cells) if j >= n and fg.figure(c)}
    if len(names) >= 1 and len(figured) > len(names) and len(heads) > len(names) and set(names) <= set(heads):
        return 1, 2
    return None, None


def employee_lines(d, header: list[str], rows: Records) -> set[str]:
    """The employee named on a line of their own above their lines (a block per paycheck: the name
    alone in the employee column, that column blank on the lines of figures): a block line setting
    the field for the lines below (``report.blocks``); the names so found."""
    name = next((f for f in ("employee_name", "employee_id") if isinstance(d.fields.get(f), str)), None)
    if name is None or d.transposed:
        return set()
    k = header.index(d.fields[name])
    figured = [cells for _, cells in rows if any(fg.figure(c) for c in cells if c)]
    blank = sum(1 for cells in figured if not (k < len(cells) and cells[k] and cells[k].strip()))
    alone = {cells[k].strip() for _, cells in rows if k < len(cells) and cells[k] and cells[k].strip()
             and not fg.figure(cells[k]) and sum(1 for c in cells if c and c.strip()) == 1}
    if not alone or blank * 2 <= len(figured):
        return set()
    comma = r"[^,\d]+, [^,\d]+"
    pattern = comma if all(re.fullmatch(comma, a) for a in alone) else r"\D+" if name == "employee_name" else r"\S+"
    d.fields.pop(name)
    d.employee_block = f"(?P<{name}>{pattern})"
    d.guessed.append(f"the employee is named on a line of its own above their lines ('{sorted(alone)[0]}'): a block "
                     "line; check no other line holds a name alone")
    return alone


def summary_end(d, rows: Records, alone: set[str]) -> None:
    """A totals line after which no employee is named but lines of figures go on (the payroll's
    totals by code, then its total): the report's summary from it on (``report.end``)."""
    for label, scope, first in list(d.totals):
        hits = [i for i, (_, cells) in enumerate(rows) if any(c and re.fullmatch(label, c.strip(), re.I) for c in cells)]
        after = rows[hits[0] + 1:] if hits else []  # the report's rows end at its first such line
        named = any(c and c.strip() in alone for _, cells in after for c in cells)
        if after and not named and any(fg.figure(c) for _, cells in after for c in cells if c):
            d.totals.remove((label, scope, first))
            d.end.append(label)
            d.guessed.append(f"from the line '{label}' on, the report's summary (report.end): check no payroll line follows")
            return


__all__ = ["employee_lines", "groups", "label_columns", "summary_end"]


def printed(text: str, records, reached) -> tuple[list, list[str]] | None:
    """(records, continued columns) of a text printed in columns (``fixed_width.aligned``), when
    its heading line reaches more fields (``reached``: a line's cells -> the fields) than any line
    of ``records`` (the text read as delimited) does; else None."""
    by_delimiter = max((len(reached(c)) for _, c in records[:60]), default=0)
    got = fw.aligned(text, lambda cells: len(reached(cells)))
    if got is not None and max(len(reached(c)) for _, c in got[0].records[:60]) > by_delimiter:
        return got[0].records, got[1]
    return None


def clock(values: list[str]) -> bool:
    """Most of a column's filled cells written as hours and minutes (``44:30``, ``44:30:00``)."""
    filled = [v for v in values if v and v.strip()]
    return bool(filled) and sum(1 for v in filled if re.match(CLOCK, v)) * 2 > len(filled)


def rule_note(d, below) -> None:
    """A rule under the headings of a printed report (``------``): a note line."""
    rules = [c for _, cells in below if (c := next((x for x in cells if x), None)) and re.fullmatch(r"[-=_]{3,}", c)]
    if rules and not any(re.fullmatch(n, rules[0]) for n in d.notes):
        d.notes.append("[-=_]+")
