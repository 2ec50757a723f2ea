"""Read: the files of a submission as tables of text cells, each matched to a layout and staged
(``canonical.stage_table``).

A delimited file's first lines and each sheet of a workbook are searched for the row that is the
header of a layout (``header.find_layout``: whatever is above it is the preamble, counted and
reported); a table whose header is its first line and that Polars maps exactly takes the fast
route (``simple``), every other is read record by record (a report's lines by
``report_walk.shape_report``). A file or sheet that no layout reads is a problem naming the row it came
closest with, by which layout, what is missing and what is unmatched: one short line, the full
lists in the rejects file (``Problem.detail``). A sheet with no header row and no figures (a
report's cover or notes sheet beside the data) is skipped and said.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms import schema
from transforms.ingest.read import figures as fg
from transforms.ingest.read import problems as pb
from transforms.ingest.read.cast.canonical import (
    NULLABLE,
    CellError,
    Staged,
    StagedTable,
    SubmissionError,
    stage_table,
)
from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.files import fixed_width as fw
from transforms.ingest.read.files import header_first as simple
from transforms.ingest.read.files import line_limits as ll
from transforms.ingest.read.files import quotes
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files import sheets as shp
from transforms.ingest.read.files import submission as sub
from transforms.ingest.read.files import workbooks as wbk
from transforms.ingest.read.files.arrow_csv import read_delimited_arrow
from transforms.ingest.read.files.context import FileContext
from transforms.ingest.read.files.header_first import Piece, pieces, read_simple, read_simple_many
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts import profile_files as pfiles
from transforms.ingest.read.layouts import profiles as pf
from transforms.ingest.read.problems import Problem, Sheet
from transforms.ingest.read.reports import report_frame as rf
from transforms.ingest.read.reports import report_lines as ln
from transforms.ingest.read.reports import report_walk as sh
from transforms.ingest.read.reports import transpose as tp
from transforms.ingest.read.reports.report_frame import STAGED_SUMS
from transforms.pii import HashKey


def discover(root: Path, exclude: list[Path] | None = None) -> list[tuple[str | None, Path]]:
    """Every regular file of the folder with its dataset (None: not part of the layout); the
    entries that are not regular files (symbolic links, folders named like data files) are
    left out here: ``submission.discover`` lists them."""
    return [(e.dataset, e.path) for e in sub.discover(root, exclude) if e.kind == "file"]


def read_tables(dataset: str, path: Path, rel: str, key: HashKey, context: FileContext | None = None, *,
                layouts: pfiles.Layouts | None = None, limits: ll.Limits | None = None
                ) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """(staged tables, whole-file problem, sheets that matched nothing, notes). ``context``: what
    the submission says of the file outside its rows (``context.contexts``); ``layouts``: the
    profiles in effect (``profile_files.load_profiles``; None: the shipped ones); ``limits``: what
    one file may hold (``line_limits.Limits``): a header line over the limit refuses the file, a
    longer data line is rejected (``line_too_long``) and left out of what the parsers see."""
    limits = limits or ll.Limits()
    if path.suffix.lower() in wbk.WORKBOOK_EXT:
        if path.suffix.lower() != ".xls" and (said := ll.sheet_too_large(path, limits.max_sheet_mb)) is not None:
            return [], Problem("sheet_too_large", said), [], []
        return _read_workbook(dataset, path, rel, key, context, [], layouts)
    long = ll.long_lines(path, limits.max_line_bytes)
    if long.header:
        return [], Problem("line_too_long", f"{long.message(long.lines[0][0])}, and no layout reads a file "
                                            "whose header is that long"), [], []
    got = _read_text(dataset, path, rel, key, context, ll.read_blanked(path, long) if long.lines else path.read_bytes(),
                     layouts)
    if long.lines and got[0]:
        got[0][0].structural += [CellError(rel, line, None, None, "line_too_long", long.message(line))
                                 for line, _, _ in long.lines]
    return got


def _read_text(dataset: str, path: Path, rel: str, key: HashKey, context: FileContext | None, data: bytes,
               layouts: pfiles.Layouts | None) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """``read_tables`` of a delimited file's bytes (its long lines blanked)."""
    notes: list[str] = []
    ext = path.suffix.lower()
    kind = sub.sniff(data[:sub.SNIFF_BYTES], ext)
    if kind is not None:  # compressed, binary, UTF-16 without a BOM: said, never echoed
        return [], Problem(*kind), [], notes
    if not data or data.isspace():
        return [], Problem("empty_file", "the file is empty"), [], notes
    cands = _candidates(dataset, "csv", context, ext, layouts)
    if not cands:
        return [], Problem("unknown_layout", f"no {dataset} layout is a {ext} file"), [], notes
    fixed = [p for p in cands if p.fixed_width is not None]  # a file printed in columns: cut by position
    if fixed and (cut := fw.find(fixed, data)) is not None:
        return _read_fixed(dataset, cut, rel, key, context, notes)
    cands = [p for p in cands if p.fixed_width is None]
    if not cands:
        return [], Problem("unknown_layout", f"no {dataset} layout reads the file: {fw.not_found(fixed)}"), [], notes
    turned = [p for p in cands if p.transposed is not None]  # read from every line, once nothing else reads the file
    cands = [p for p in cands if p.transposed is None]
    first, _ = simple.first_line_layout(cands, data) if cands else (None, None)
    if first is not None and not first[0].profile.shaped:
        return _read_header_first(dataset, data, first, rel, key, context, notes)
    found = _find_in_text(cands, data) if cands else Problem("unknown_layout", f"no {dataset} layout reads the file")
    if isinstance(found, Problem) and turned and (got := tp.find_in_text(turned, data)) is not None:
        records, hit, delim = got
        return _stage_records(dataset, records, hit, rel, key, context, notes, delimiter=delim)
    if isinstance(found, Problem):
        return [], found, [], notes
    text, head, hit, enc, delim = found
    notes += [f"read as {enc}"] if enc not in ("utf-8", "utf-8-sig") else []
    text, open_lines = quotes.open_quotes(text, delim, head[hit.index][1])  # passed over below, rejected here
    if hit.match.profile.shaped:  # a report: its lines walked as one frame where that gives the same
        width = max(len(cells) for _, cells in head)
        frame = rf.frame_of(text, delim, width, data if enc in ("utf-8", "utf-8-sig") and not open_lines else None)
        if frame is not None and frame.height > hit.index and frame["__line"][hit.index] == head[hit.index][0]:
            got = rf.walk(frame, hit, head, rel, None, delim)
            if got is not None:
                (table, m), shape = got
                unread = _unread_above(head, hit, shape, None, delim)
                staged, problem, bad, notes = _finish_shaped(dataset, table, m, shape, rel, key, context, notes)
                return _with_unread(staged, open_lines, rel), problem, bad + unread, notes
    staged, problem, bad, notes = _stage_records(dataset, rd.delimited_records(text, delim), hit, rel, key, context, notes,
                                                 delimiter=delim)
    return _with_unread(staged, open_lines, rel), problem, bad, notes


def _read_fixed(dataset: str, cut: fw.Cut, rel: str, key: HashKey, context: FileContext | None, notes: list[str]):
    """A fixed-width file's records (``fixed_width.cut``) read as a report's; a row whose cuts split
    a value is rejected."""
    notes += [f"read as {cut.encoding}"] if cut.encoding not in ("utf-8", "utf-8-sig") else []
    notes += [f"{cut.continued} continued line(s)"] if cut.continued else []
    notes += [f"{cut.page_headers} page header line(s)"] if cut.page_headers else []
    staged, problem, bad, notes = _stage_records(dataset, cut.records, cut.found, rel, key, context, notes)
    for st in staged:
        st.structural += fw.split_errors(cut.splits, set(st.staged.get_column("__line").to_list()), rel)
    return staged, problem, bad, notes


def _read_header_first(dataset: str, data: bytes, first: tuple[hd.Match, str], rel: str, key: HashKey,
                       context: FileContext | None, notes: list[str]):
    """A table whose header is its first line: Polars' reader when exact, else the csv module."""
    m, delim = first
    fast = rd.read_delimited_fast(data, delim, list(m.profile.encodings))
    if fast is not None:
        table, enc = fast
    else:
        try:
            text, enc = rd.decode(data, m.profile.encodings)
            # a spreadsheet's CSV (quoted cells holding the delimiter) by Arrow's reader when exact
            table = read_delimited_arrow(data, text, enc, delim) or rd.read_delimited(text, delim)
        except rd.FileUnreadable as exc:
            return [], Problem(exc.rule, exc.message), [], notes
    m = hd.match_headers(m.profile, table.headers)
    if not m.ok:
        short, full = pb.no_match(dataset, hd.Nearest(0, table.header_line, m))
        return [], Problem("unknown_layout", short, detail=full), [], notes
    notes += simple.table_notes(table, enc, m)
    staged, problem, bad, notes = _finish_table(dataset, table, m, rel, key, context, notes, sh.Shape())
    return _with_unread(staged, table.unread, rel), problem, bad, notes


def _with_unread(staged: list[StagedTable], unread: dict[int, tuple[str, list[str]]], rel: str) -> list[StagedTable]:
    """The lines a quote left open would carry into one cell (``quotes.unread_lines``) as lines of
    the first table that are not read: rejected one by one (``open_quote``), named by line."""
    if unread and staged:
        st = staged[0]
        for line, (message, cells) in sorted(unread.items()):
            st.ragged.append((line, cells))
            st.structural.append(CellError(rel, line, None, None, "open_quote", message))
    return staged


def _candidates(dataset: str, fmt: str, context: FileContext | None, ext: str | None = None,
                layouts: pfiles.Layouts | None = None) -> list[pf.Profile]:
    """The layouts a file may be: of its format (and extension), or the one files.csv names."""
    cands = [p for p in pfiles.profiles_for(dataset, fmt, layouts) if ext is None or ext in p.extensions]
    if context is not None and context.layout:
        cands = [p for p in cands if p.name == context.layout]
    return cands


def _find_in_text(cands: list[pf.Profile], data: bytes):
    """(text, its first records, the header found, encoding, delimiter) of the layout whose header
    is among the file's first lines, or the ``Problem`` naming the nearest row and layout."""
    by_text: dict[tuple[str, str], tuple[list, str, str] | None] = {}  # (encodings, delimiter) -> head
    best: tuple[hd.Found, str, str, str] | None = None  # found, encoding, delimiter, text
    nearest: hd.Nearest | None = None
    for p in cands:
        for d in p.delimiters:
            k = ("|".join(p.encodings), d)
            if k not in by_text:
                try:
                    text, enc = rd.decode(data, p.encodings)
                    limit = max(c.header_within for c in cands) + 1
                    by_text[k] = (rd.delimited_records(_prefix(text), d, limit=limit), enc, text)
                except rd.FileUnreadable:
                    by_text[k] = None
            if by_text[k] is None:
                continue
            head, enc, text = by_text[k]
            found = hd.find_header_of(p, head)
            if found is not None and (best is None or len(found.match.columns) > len(best[0].match.columns)):
                best = (found, enc, d, text)
    if best is None:  # which row came nearest, by which layout: every row of every reading looked at
        own: dict[str, hd.Nearest] = {}  # the agency's profiles' own nearest rows, said too
        for p in cands:
            for d in p.delimiters:
                got = by_text.get(("|".join(p.encodings), d))
                near = hd.find_layout([p], got[0])[1] if got is not None else None
                if near is not None and (nearest is None or hd._score(near.match) > hd._score(nearest.match)):
                    nearest = near
                if near is not None and near.reached >= 2 and pfiles.origin(p) != "shipped" and (
                        p.name not in own or hd._score(near.match) > hd._score(own[p.name].match)):
                    own[p.name] = near
        return pb.unknown_layout(cands[0].dataset, cands, data, nearest,
                                 [n for n in own.values() if nearest is None or n.match.profile is not nearest.match.profile])
    found, enc, d, text = best
    head = by_text[("|".join(next(p for p in cands if p.name == found.match.profile.name).encodings), d)][0]
    return text, head, found, enc, d


def _prefix(text: str, chars: int = 1 << 20) -> str:
    """The first lines of a text (its first MB, cut at a line's end): where a header is searched."""
    if len(text) <= chars:
        return text
    cut = text.rfind("\n", 0, chars)
    return text[:cut + 1] if cut > 0 else text


def _read_workbook(dataset: str, path: Path, rel: str, key: HashKey, context: FileContext | None,
                   notes: list[str], layouts: pfiles.Layouts | None = None
                   ) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """Every sheet of a workbook that has a layout, its header found as in a text file; what
    becomes of the others is ``sheets.plan_sheets``'s: a sheet skipped by name, a cover or notes
    sheet, a hidden sheet are said; a table of figures no layout reads is an unread table (its
    lines rejected: the file is not read whole) beside the sheets read, and a sheet no layout reads
    when none is read."""
    try:
        sheets = wbk.read_workbook(path)
    except rd.FileUnreadable as exc:
        return [], Problem(exc.rule, exc.message), [], notes
    if not any(s.records for s in sheets):
        return [], Problem("empty_file", "the workbook has no sheet with a header row"), [], notes
    cands = _candidates(dataset, "xlsx", context, None, layouts)
    plan = shp.plan_sheets(sheets, cands)
    # the agency's own profiles that read nothing here: why, sheet by sheet (never only a shipped one's word)
    notes += [said for p in cands if pfiles.origin(p) != "shipped" and (said := shp.unread_by(p, sheets, plan))]
    staged, bad = [], []
    for got in plan.read:
        if not got.sheet.visible:
            notes.append(f"sheet '{got.sheet.name}' is hidden (read like the others)")
        mine = context.for_sheet(got.sheet.name) if context is not None else None  # files.csv: the sheet's employer
        tables, problem, unread, _ = _stage_records(dataset, got.records, got.found, rel, key, mine, notes,
                                                    sheet=got.sheet.name)
        if problem is not None:
            return [], problem, [], notes
        staged += tables
        bad += unread
    passed = 0
    for sheet, profile, pattern in plan.skipped:
        notes.append(f"sheet '{sheet.name}' skipped: sheets.skip {pattern!r} of '{profile}' ({len(sheet.records)} line(s))")
        passed += len(sheet.records)
    for sheet in plan.hidden:
        notes.append(f"hidden sheet '{sheet.name}' not read: it matches no layout")
    if staged:
        for sheet, near in plan.unread:
            msg = fg.unread_message(sheet.records, sheet.name)
            bad.append(Sheet(sheet.name, Problem("unread_table", msg, fg.lines_table(sheet.records, sheet=sheet.name),
                                                 f"{msg}; {pb.no_match(dataset, near, f'sheet {sheet.name!r}')[1]}")))
        for sheet in plan.covers:
            notes.append(f"sheet '{sheet.name}' skipped: no header row and no figures (a cover or notes sheet, "
                         f"{len(sheet.records)} line(s))")
            staged[0].shape.cover += len(sheet.records)
        staged[0].shape.skipped += passed
        rest = plan.unknown
    else:  # nothing read: every sheet is a sheet no layout reads, as the file is
        rest = [*plan.unread, *plan.unknown, *((s, None) for s in plan.covers)]
    for sheet, near in sorted(rest, key=lambda x: plan.order.index(x[0].name)):
        table = rd.table_from_records(sheet.records, sheet=sheet.name)
        short, full = pb.no_match(dataset, near, f"sheet '{sheet.name}'")
        bad.append(Sheet(sheet.name, Problem("unknown_layout", f"sheet '{sheet.name}': {short}", table,
                                             f"sheet '{sheet.name}': {full}")))
    if not staged and not bad:
        return [], Problem("unknown_layout", "no sheet of the workbook is read: every sheet is skipped by sheets.skip"), [], notes
    return staged, None, bad, notes


def _unread_above(records, found: hd.Found, shape: sh.Shape, sheet: str | None,
                  delimiter: str | None) -> list[Sheet]:
    """The lines above a header that hold a table of figures (``figures.run_of_figures``): an
    unread table, taken out of the preamble said (the file is not read whole)."""
    run = fg.run_of_figures(records[:found.first])
    if run is None:
        return []
    lines = records[run[0]:run[1] + 1]
    for _, cells in lines:
        text = " ".join(c.strip() for c in cells if c and c.strip())
        if text in shape.preamble:
            shape.preamble.remove(text)
    msg = fg.unread_message(lines, sheet, records[found.index][0])
    return [Sheet(sheet, Problem("unread_table", msg, fg.lines_table(lines, sheet=sheet, delimiter=delimiter)))]


def _stage_records(dataset: str, records, found: hd.Found, rel: str, key: HashKey,
                   context: FileContext | None, notes: list[str], *, sheet: str | None = None,
                   delimiter: str | None = None) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """The table of a file's records from its header (a report shaped by ``report_walk.shape_report``)."""
    m = found.match
    if m.profile.shaped:
        (table, m), shape = sh.shape_report(records, found, rel, sheet=sheet, delimiter=delimiter)
    else:
        table = rd.table_from_records(records[found.index:], sheet=sheet, delimiter=delimiter)
        shape = sh.Shape(preamble=[" ".join(c.strip() for c in cells if c and c.strip())
                                   for _, cells in records[:found.first]])
    unread = _unread_above(records, found, shape, sheet, delimiter)
    staged, problem, bad, notes = _finish_shaped(dataset, table, m, shape, rel, key, context, notes)
    return staged, problem, bad + unread, notes


def _finish_shaped(dataset: str, table: rd.RawTable, m: hd.Match, shape: sh.Shape, rel: str, key: HashKey,
                   context: FileContext | None, notes: list[str]):
    """A table read from its records: its split columns, its ignored columns said, staged."""
    table, m = ln.split_columns(table, m)
    if m.unmatched:
        notes.append((f"sheet '{table.sheet}': " if table.sheet else "") + f"ignored column(s) {hd.short_list(m.unmatched)}")
    return _finish_table(dataset, table, m, rel, key, context, notes, shape)


def _finish_table(dataset: str, table: rd.RawTable, m: hd.Match, rel: str, key: HashKey, context: FileContext | None,
                  notes: list[str], shape: sh.Shape) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """The submission's context on every row, the shape's lines said, the table staged."""
    where = f"{rel}[{table.sheet}]" if table.sheet else rel
    table, m, mismatch = ctx.apply_context(table, m, context, where)
    if (unread := ctx.unread_context(m, rel, table.sheet)) is not None:
        return [], Problem(unread.rule, unread.message), [], notes
    if shape.words():
        notes.append((f"sheet '{table.sheet}': " if table.sheet else "") + shape.words())
    st = stage_table(dataset, m, table, key, rel)
    if shape.totals_plan is not None:  # totals checked on the hours, wages and taxes the staging read
        shape.errors += shape.totals_plan.check(st.staged.select("__line", *STAGED_SUMS))
    st.structural += shape.errors + mismatch
    st.shape = shape
    return [st], None, [], notes


__all__ = ["Piece", "Problem", "Sheet", "discover", "pieces", "read_simple", "read_simple_many", "read_tables",
           "read_submission"]


def read_submission(input_dir: Path, key: HashKey, layouts: pfiles.Layouts | None = None) -> Staged:
    """Read and stage every dataset of a submission folder (vendor payroll layouts included).

    Rows with a cell that does not cast are left out and reported in ``errors``; nothing else is
    checked (``transforms.ingest.ingest_folder`` runs the validation suites and writes the lake).
    """
    root = Path(input_dir)
    if not root.is_dir():
        raise SubmissionError(f"{root}: not a folder")
    found = discover(root)
    for dataset, pattern in schema.SUBMISSION_FILES.items():
        if not any(d == dataset for d, _ in found):
            raise SubmissionError(f"{root}: no {pattern} (required by the canonical layout)")
    parts: dict[str, list[pl.DataFrame]] = {d: [] for d in schema.STAGED}
    errors: list[CellError] = []
    files: list[Path] = []
    for dataset, path in found:
        if dataset is None:
            continue
        files.append(path)
        rel = path.relative_to(root).as_posix()
        tables, problem, bad_sheets, _ = read_tables(dataset, path, rel, key, layouts=layouts)
        if problem is not None:
            raise SubmissionError(f"{path}: {problem.message}")
        for bad in bad_sheets:
            errors.append(CellError(rel, None, None, None, bad.problem.rule, bad.problem.message))
        for st in tables:
            errors.extend(st.structural)
            bad_lines = {e.line for e in st.structural}
            nonnull = [c for c in schema.STAGED[dataset] if c not in schema.LINEAGE and (dataset, c) not in NULLABLE]
            ok = pl.all_horizontal([pl.col(c).is_not_null() for c in nonnull])
            for row in st.staged.filter(~ok).select("__line").iter_rows():
                errors.append(CellError(rel, row[0], None, None, "type", "a cell is empty or not a valid value"))
            good = st.staged.filter(ok & ~pl.col("__line").is_in(list(bad_lines)))
            parts[dataset].append(good.select(list(schema.STAGED[dataset])))
    frames = {
        d: pl.concat(p, how="vertical") if p else pl.DataFrame(schema=schema.STAGED[d]) for d, p in parts.items()
    }
    return Staged(frames, errors, files)
