"""Read: the files of a submission as tables of text cells, each matched to a vendor layout and
staged (``staging.stage_table``); a file or sheet that matches no layout is a problem naming the
nearest layout and what it lacks. Big delimited files are cut into pieces of whole lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms import schema
from transforms.ingest import profiles as pf
from transforms.ingest import readers as rd
from transforms.ingest import shape as sh
from transforms.ingest import submission as sub
from transforms.ingest import workbooks as wbk
from transforms.ingest.shape import FileContext
from transforms.ingest.staging import (
    NULLABLE,
    CellError,
    Staged,
    StagedTable,
    SubmissionError,
    stage_table,
)
from transforms.pii import HashKey


def discover(root: Path, exclude: list[Path] | None = None) -> list[tuple[str | None, Path]]:
    """Every regular file of the folder with its dataset (None: not part of the layout); the
    entries that are not regular files (symbolic links, folders named like data files) are
    left out here: ``submission.discover`` lists them."""
    return [(e.dataset, e.path) for e in sub.discover(root, exclude) if e.kind == "file"]


@dataclass
class Problem:
    rule: str
    message: str
    table: rd.RawTable | None = None  # the rows we could still split, to count and quarantine


@dataclass
class Sheet:
    """One table of a file that matched no profile (its rows are rejected as a whole)."""

    sheet: str | None
    problem: Problem


def _no_match_message(dataset: str, headers: list[str], near: pf.Match | None, hint: str = "") -> str:
    if near is None:
        return f"no layout is known for {dataset} files of this type"
    parts = [f"the header matches no known {dataset} layout; nearest: '{near.profile.name}'"]
    if near.missing:
        parts.append("missing column(s): " + ", ".join(near.missing_headers()))
    if near.duplicated:
        parts.append("column(s) given twice: " + ", ".join(near.duplicated))
    if near.unmatched:
        parts.append("unmatched column(s): " + ", ".join(near.unmatched[:20]))
    return "; ".join(parts) + (f". {hint}" if hint else "")


def read_tables(dataset: str, path: Path, rel: str, key: HashKey, context: FileContext | None = None
                ) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """(staged tables, whole-file problem, sheets that matched nothing, notes). ``context``: what
    the submission says of the file outside its rows (``shape.contexts``)."""
    notes: list[str] = []
    ext = path.suffix.lower()
    if ext in wbk.WORKBOOK_EXT:
        return _read_workbook(dataset, path, rel, key, context, notes)
    data = path.read_bytes()
    kind = sub.sniff(data[:sub.SNIFF_BYTES], ext)
    if kind is not None:  # compressed, binary, UTF-16 without a BOM: said, never echoed
        return [], Problem(*kind), [], notes
    if not data or data.isspace():
        return [], Problem("empty_file", "the file is empty"), [], notes
    cands = _candidates(dataset, "csv", context, ext)
    if not cands:
        return [], Problem("unknown_layout", f"no {dataset} layout is a {ext} file"), [], notes
    best, nearest = _best_layout(cands, data)
    if best is not None and best[0].profile.shaped:  # a report with its header first: read line by line
        best = None
    if best is None:  # a report: its header below a title, an address, a date range
        report = _find_report(cands, data)
        if report is not None:
            records, found, enc, delim = report
            notes += [f"read as {enc}"] if enc not in ("utf-8", "utf-8-sig") else []
            return _stage_records(dataset, records, found, rel, key, context, notes, delimiter=delim)
        return [], _unknown_layout(dataset, cands, data, nearest), [], notes
    m, delim = best
    fast = rd.read_delimited_fast(data, delim, list(m.profile.encodings))
    if fast is not None:  # Polars' reader, when the file is simple enough to map lines exactly
        table, enc = fast
    else:
        try:
            text, enc = rd.decode(data, m.profile.encodings)
            table = rd.read_delimited(text, delim)
        except rd.FileUnreadable as exc:
            return [], Problem(exc.rule, exc.message), [], notes
    m = pf.match_headers(m.profile, table.headers)
    if not m.ok:
        return [], Problem("unknown_layout", _no_match_message(dataset, table.headers, m)), [], notes
    notes += _table_notes(table, enc, m)
    return _finish_table(dataset, table, m, rel, key, context, notes, sh.Shape())


def _candidates(dataset: str, fmt: str, context: FileContext | None, ext: str | None = None) -> list[pf.Profile]:
    """The layouts a file may be: of its format (and extension), or the one files.csv names."""
    cands = [p for p in pf.profiles_for(dataset, fmt) if ext is None or ext in p.extensions]
    if context is not None and context.layout:
        cands = [p for p in cands if p.name == context.layout]
    return cands


def _find_report(cands: list[pf.Profile], data: bytes):
    """(records, (header index, match), encoding, delimiter) of the first report layout whose
    header is found among the file's first lines; None when none is."""
    for p in cands:
        if p.report is None:
            continue
        for d in p.delimiters:
            try:
                text, enc = rd.decode(data, p.encodings)
                head = rd.delimited_records(text, d, limit=p.report.header_within + 1)
            except rd.FileUnreadable:
                continue
            found = sh.find_header(head, p)
            if found is not None:
                return rd.delimited_records(text, d), found, enc, d
    return None


def _read_workbook(dataset: str, path: Path, rel: str, key: HashKey, context: FileContext | None,
                   notes: list[str]) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """Every sheet of a workbook that has a layout, its report shape found as in a text file; a
    hidden sheet is named in the notes (and not read when it matches no layout)."""
    try:
        sheets = wbk.read_workbook(path)
    except rd.FileUnreadable as exc:
        return [], Problem(exc.rule, exc.message), [], notes
    if not any(s.records for s in sheets):
        return [], Problem("empty_file", "the workbook has no sheet with a header row"), [], notes
    cands = _candidates(dataset, "xlsx", context)
    staged, bad = [], []
    for sheet in sheets:
        if not sheet.records:
            continue
        found, near = _sheet_layout(cands, sheet.records)
        if found is None:
            if not sheet.visible:
                notes.append(f"hidden sheet '{sheet.name}' not read: it matches no layout")
                continue
            table = rd.table_from_records(sheet.records, sheet=sheet.name)
            bad.append(Sheet(sheet.name, Problem("unknown_layout", f"sheet '{sheet.name}': "
                                                 + _no_match_message(dataset, table.headers, near), table)))
            continue
        if not sheet.visible:
            notes.append(f"sheet '{sheet.name}' is hidden (read like the others)")
        got, problem, _, _ = _stage_records(dataset, sheet.records, found, rel, key, context, notes, sheet=sheet.name)
        if problem is not None:
            return [], problem, [], notes
        staged += got
    return staged, None, bad, notes


def _sheet_layout(cands: list[pf.Profile], records) -> tuple[tuple[int, pf.Match] | None, pf.Match | None]:
    """((header index, match) of the sheet's layout, or None; the nearest layout)."""
    m, near = pf.best_match(cands, [(c or "").strip() for c in records[0][1]])
    if m is not None:
        return (0, m), None
    for p in cands:
        if p.report is not None and (found := sh.find_header(records, p)) is not None:
            return found, None
    return None, near


def _stage_records(dataset: str, records, found: tuple[int, pf.Match], rel: str, key: HashKey,
                   context: FileContext | None, notes: list[str], *, sheet: str | None = None,
                   delimiter: str | None = None) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """The table of a file's records from its header (a report shaped by ``shape.shape_report``)."""
    index, m = found
    if m.profile.report is not None:
        (table, m), shape = sh.shape_report(records, index, m, rel, sheet=sheet, delimiter=delimiter)
    else:
        table = rd.table_from_records(records[index:], sheet=sheet, delimiter=delimiter)
        shape = sh.Shape(preamble=[" ".join(c.strip() for c in cells if c and c.strip()) for _, cells in records[:index]])
    if m.unmatched:
        notes.append((f"sheet '{sheet}': " if sheet else "") + f"ignored column(s) {', '.join(m.unmatched)}")
    return _finish_table(dataset, table, m, rel, key, context, notes, shape)


def _finish_table(dataset: str, table: rd.RawTable, m: pf.Match, rel: str, key: HashKey, context: FileContext | None,
                  notes: list[str], shape: sh.Shape) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """The submission's context on every row, the shape's lines said, the table staged."""
    where = f"{rel}[{table.sheet}]" if table.sheet else rel
    table, m, mismatch = sh.apply_context(table, m, context, where)
    if (no_employer := sh.unread_employer(m, where)) is not None:
        return [], Problem(no_employer.rule, no_employer.message), [], notes
    if shape.words():
        notes.append((f"sheet '{table.sheet}': " if table.sheet else "") + shape.words())
    st = stage_table(dataset, m, table, key, rel)
    st.structural += shape.errors + mismatch
    st.shape = shape
    return [st], None, [], notes


def _best_layout(cands: list, data: bytes) -> tuple[tuple[pf.Match, str] | None, pf.Match | None]:
    """The profile and delimiter whose header matches the file best (most columns), and the nearest miss."""
    best: tuple[pf.Match, str] | None = None
    nearest: pf.Match | None = None
    for p in cands:
        for d in p.delimiters:
            m, near = pf.best_match([p], rd.sniff_header(data, d))
            if m is not None and (best is None or len(m.columns) > len(best[0].columns)):
                best = (m, d)
            if near is not None and (nearest is None or len(near.missing) < len(nearest.missing)):
                nearest = near
    return best, nearest


def _unknown_layout(dataset: str, cands: list, data: bytes, nearest: pf.Match | None) -> Problem:
    hint = ""
    for alt in [",", ";", "\t", "|"]:
        for p in cands:
            if alt in p.delimiters:
                continue
            m, _ = pf.best_match([p], rd.sniff_header(data, alt))
            if m is not None:
                hint = (f"The header matches the '{p.name}' layout when split on {alt!r}, but that "
                        f"layout is delimited by {' or '.join(repr(x) for x in p.delimiters)}: "
                        "export it again with that delimiter.")
                break
        if hint:
            break
    first = cands[0]
    table = None
    try:
        text, _ = rd.decode(data, list(first.encodings) + ["latin-1"])
        table = rd.read_delimited(text, first.delimiters[0])
    except rd.FileUnreadable:
        table = None
    headers = table.headers if table else []
    return Problem("unknown_layout", _no_match_message(dataset, headers, nearest, hint), table)


def _table_notes(table: rd.RawTable, enc: str, m: pf.Match) -> list[str]:
    table.encoding = enc
    notes = []
    if enc not in ("utf-8", "utf-8-sig"):
        notes.append(f"read as {enc}")
    if m.unmatched:
        notes.append(f"ignored column(s) {', '.join(m.unmatched)}")
    return notes


def read_simple(dataset: str, path: Path, piece: Piece | None = None) -> tuple[rd.RawTable, pf.Match, list[str]] | None:
    """(table, match, notes) of a delimited file of a known layout that Polars' reader maps
    exactly (``readers.read_delimited_fast``): what ``read_tables`` would read, before staging.
    None for anything else (workbooks, unknown layouts, a quote inside a quoted field...):
    ``read_tables`` decides.
    ``piece``: only those rows of the file (its header line, then the piece's lines)."""
    ext = path.suffix.lower()
    data = b"" if ext in wbk.WORKBOOK_EXT else path.read_bytes() if piece is None else piece.read(path)
    got = _read_simple(dataset, [(ext, data)])[0]
    if got is not None and piece is not None and piece.first_line != 2:
        got[0].frame = got[0].frame.with_columns(pl.col("__line") + (piece.first_line - 2))
    return got


def read_simple_many(dataset: str, paths: list[Path]) -> list[tuple[rd.RawTable, pf.Match, list[str]] | None]:
    """``[read_simple(dataset, p) for p in paths]``, with one call of Polars' reader per layout
    (``readers.read_delimited_fast_many``) and the layout found once per header line."""
    return _read_simple(dataset, [(p.suffix.lower(), b"" if p.suffix.lower() in wbk.WORKBOOK_EXT else p.read_bytes())
                                  for p in paths])


def _read_simple(dataset: str, files: list[tuple[str, bytes]]) -> list[tuple[rd.RawTable, pf.Match, list[str]] | None]:
    """``read_simple`` of each (extension, bytes)."""
    out: list[tuple[rd.RawTable, pf.Match, list[str]] | None] = [None] * len(files)
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, bytes, pf.Match]]] = {}
    layouts: dict[tuple[str, bytes], tuple[pf.Match, str] | None] = {}
    for i, (ext, data) in enumerate(files):
        cands = [p for p in pf.profiles_for(dataset, "csv") if ext in p.extensions and not p.shaped]
        if ext in wbk.WORKBOOK_EXT or not cands or not data or data.isspace():
            continue
        line = data.split(b"\n", 1)[0]
        key = (ext, line) if _first_record(line, cands) else None
        if key is not None and key in layouts:
            best = layouts[key]
        else:
            best, _ = _best_layout(cands, data)
            if key is not None:
                layouts[key] = best
        if best is not None:
            m, delim = best
            groups.setdefault((delim, tuple(m.profile.encodings)), []).append((i, data, m))
    for (delim, encodings), items in groups.items():
        got = rd.read_delimited_fast_many([data for _, data, _ in items], delim, list(encodings))
        for (i, _, m), fast in zip(items, got, strict=True):
            if fast is None:
                continue
            table, enc = fast
            m = pf.match_headers(m.profile, table.headers)
            if m.ok and not table.ragged:
                out[i] = (table, m, _table_notes(table, enc, m))
    return out


def _first_record(line: bytes, cands: list) -> bool:
    """Whether the header sniffed for the layout (``readers.sniff_header``) is this first line
    whatever else the file holds: ASCII (read alike as UTF-8 or Latin-1), no quote and no CR in
    it (a record of its own for the csv module), and not blank under any candidate delimiter."""
    text = line.removesuffix(b"\r")
    if not text.isascii() or b'"' in text or b"\r" in text:
        return False
    delims = {d for p in cands for d in p.delimiters}
    return any(not ch.isspace() and ch not in delims for ch in text.decode("ascii"))


@dataclass(frozen=True)
class Piece:
    """Whole lines of a big delimited file: bytes ``start:end``, the first of them line ``first_line``."""

    header_end: int  # the header line is bytes 0:header_end
    start: int
    end: int
    first_line: int

    def read(self, path: Path) -> bytes:
        """The header line and the piece's lines: a file of their own, for the same reader."""
        with path.open("rb") as fh:
            header = fh.read(self.header_end)
            fh.seek(self.start)
            return header + fh.read(self.end - self.start)


def pieces(path: Path, size: int, piece_bytes: int) -> list[Piece]:
    """``path`` cut at line ends into pieces of about ``piece_bytes`` (one read of the file)."""
    n = -(-size // piece_bytes)
    target = -(-size // n)
    out: list[Piece] = []
    with path.open("rb") as fh:
        header_end = len(fh.readline())
        pos, line = header_end, 2
        while pos < size:
            chunk = fh.read(target)
            if not chunk:
                break
            if not chunk.endswith(b"\n"):
                chunk += fh.readline()
            out.append(Piece(header_end, pos, pos + len(chunk), line))
            pos += len(chunk)
            line += chunk.count(b"\n")
    return out


def stage_submission(input_dir: Path, key: HashKey) -> Staged:
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
        tables, problem, bad_sheets, _ = read_tables(dataset, path, rel, key)
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
