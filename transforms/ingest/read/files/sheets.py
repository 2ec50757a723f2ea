"""The sheets of a workbook: which one each layout reads, which are passed over and why, and
which hold a table of figures that no layout reads (spec section 1: nothing that looks like data
is skipped in silence). ``tables`` stages the sheets read; this module only decides.

- A profile reads the sheets its ``sheets.read`` patterns name (every sheet without them) and
  never those its ``sheets.skip`` patterns name.
- A sheet that a ``sheets.skip`` pattern names is passed over whatever it holds (the analyst said
  so), and said: the patterns of the profiles that read another sheet of the file count (of every
  candidate when none reads one).
- A sheet that no layout reads is a cover or notes sheet (passed over and said) when no row
  reaches two fields of a layout and it holds no table of figures (``figures``); one that holds a
  table of figures is an unread table (its lines rejected when other sheets are read); any other
  is a sheet with no layout (the nearest row named). A hidden sheet that no layout reads and that
  holds no table of figures is named in the notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transforms.ingest.read import figures as fg
from transforms.ingest.read import problems as pb
from transforms.ingest.read.files.workbooks import Sheet
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.reports import transpose as tp


@dataclass
class Found:
    """A sheet read by a layout: its header found among ``records`` (the sheet's lines, or its
    columns as lines for a transposed layout)."""

    sheet: Sheet
    found: hd.Found
    records: list


@dataclass
class SheetPlan:
    read: list[Found] = field(default_factory=list)
    skipped: list[tuple[Sheet, str, str]] = field(default_factory=list)  # sheet, profile, pattern
    covers: list[Sheet] = field(default_factory=list)
    hidden: list[Sheet] = field(default_factory=list)  # hidden, no layout, no table of figures
    unread: list[tuple[Sheet, hd.Nearest | None]] = field(default_factory=list)  # a table of figures
    unknown: list[tuple[Sheet, hd.Nearest | None]] = field(default_factory=list)  # a header-like row, no layout
    order: list[str] = field(default_factory=list)  # the sheets' names, in the workbook's order


def plan_sheets(sheets: list[Sheet], cands: list) -> SheetPlan:
    """What becomes of each sheet with lines (see the module's docstring)."""
    plan = SheetPlan()
    missed: list[tuple[Sheet, hd.Nearest | None]] = []
    found_of: dict[str, Found] = {}
    for sheet in sheets:
        if not sheet.records:
            continue
        plan.order.append(sheet.name)
        mine = [p for p in cands if p.takes_sheet(sheet.name)]
        found, near, records = tp.find_layout(mine, sheet.records)
        if found is None and len(mine) < len(cands):  # the nearest of every layout: one its sheets.read left out
            other, o_near, o_records = tp.find_layout(cands, sheet.records)
            near = hd.Nearest(other.index, o_records[other.index][0], other.match) if other is not None else o_near
            if near is not None and near.match.profile not in mine:
                near.hint = _left_out(near.match.profile, sheet.name)
        if found is None:
            missed.append((sheet, near))
        else:
            found_of[sheet.name] = Found(sheet, found, records)
    readers = {f.found.match.profile.name: f.found.match.profile for f in found_of.values()}
    skippers = list(readers.values()) or cands
    for sheet in sheets:
        if sheet.name not in plan.order:
            continue
        by = next(((p.name, pat) for p in skippers if (pat := p.skips_sheet(sheet.name))), None)
        if by is not None:
            plan.skipped.append((sheet, *by))
            found_of.pop(sheet.name, None)
    skipped = {s.name for s, _, _ in plan.skipped}
    plan.read = [found_of[n] for n in plan.order if n in found_of]
    for sheet, near in missed:
        if sheet.name in skipped:
            continue
        if fg.table_of_figures(sheet.records, columns=True):
            plan.unread.append((sheet, near))
        elif not sheet.visible:
            plan.hidden.append(sheet)
        elif near is None or near.reached < 2:
            plan.covers.append(sheet)
        else:
            plan.unknown.append((sheet, near))
    return plan


def unread_by(profile, sheets: list[Sheet], plan: SheetPlan) -> str | None:
    """Why ``profile`` (the agency's own) read no sheet of the workbook, sheet by sheet, in one
    line; None when it read one, or when it is no profile of this workbook (no sheet comes near
    its header, and another profile reads a sheet or it has no ``sheets.read``)."""
    if any(f.found.match.profile is profile for f in plan.read):
        return None
    read_by = {f.sheet.name: f.found.match.profile.name for f in plan.read}
    passed = {s.name: by for s, by, _ in plan.skipped}
    # its sheets.read alone makes it this workbook's profile where no profile reads a sheet
    said, own_skips = [], 0
    near_it = not plan.read and profile.sheets is not None and bool(profile.sheets.read)
    for sheet in (s for s in sheets if s.records):
        found, near, _ = tp.find_layout([profile], sheet.records)
        mine = profile.takes_sheet(sheet.name) or not plan.read  # a sheet it leaves out, another reads: not its
        near_it = near_it or (mine and (found is not None or (near is not None and near.reached >= 2)))
        if (pat := profile.skips_sheet(sheet.name)) is not None:
            why, own_skips = f"sheets.skip {pat!r} names it", own_skips + 1
        elif not profile.takes_sheet(sheet.name):
            why = "no sheets.read pattern (" + ", ".join(repr(x) for x in profile.sheets.read) + ") names it"
        elif found is not None:
            by = read_by.get(sheet.name) or passed.get(sheet.name)
            why = f"read by profile '{by}', which reaches more fields" if sheet.name in read_by else (
                f"passed over by sheets.skip of profile '{by}'")
        elif near is None:
            why = "no row holds a column of it"
        else:
            why = pb.holds(near)
        said.append(f"sheet '{sheet.name}': {why}")
    if not near_it or own_skips == len(said):  # its own skips are said with each sheet skipped
        return None
    return f"profile '{profile.name}' reads no sheet of the workbook: " + "; ".join(said)


def _left_out(profile, name: str) -> str:
    """One line naming the profile's file and key that kept it from sheet ``name``, and what to write."""
    src = profile.source or profile.name
    choice = profile.sheets
    if choice is not None and (pat := choice.skips(name)) is not None:
        return f"{src}: sheets.skip: {pat!r} names sheet '{name}': remove it if the sheet is to be read"
    pats = ", ".join(repr(p) for p in choice.read) if choice is not None else ""
    example = f"'{name.split()[0]} *'" if " " in name.strip() else repr(name)
    return f"{src}: sheets.read: no pattern ({pats}) names sheet '{name}': add its name or a pattern of it (e.g. {example})"


__all__ = ["Found", "SheetPlan", "plan_sheets", "unread_by"]
