"""``ingest_folder``: read, stage, validate and store one submission folder (see ``__init__``)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms import schema
from transforms.ingest import cross_rows as xrows
from transforms.ingest import lake as lk
from transforms.ingest import profiles as pf
from transforms.ingest import readers as rd
from transforms.ingest import submission as sub
from transforms.ingest import validate as va
from transforms.ingest.cross_rows import ORDER_BASE, cross_row_rejects
from transforms.ingest.report import REJECT_SCHEMA, FileRecord, IngestReport
from transforms.pii import HashKey
from transforms.stages import stage, start
from transforms.staging import StagedTable, stage_table

SSN_LIKE = re.compile(r"^\s*\d{3}[- ]?\d{2}[- ]?\d{4}\s*$")
MASK = "[ssn masked]"
MAX_VALUE_CHARS = 200
ENGINES = ("polars", "gx")
FILE_WORKERS = 2
CROSS_RULES = ("duplicate_row", "negative_net", "hourly_rate", "duplicate_key")
COMPACT = ("ssn_hash", "source_file", "__code", "__counts")


# --- discovery -------------------------------------------------------------------------------

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


def read_tables(dataset: str, path: Path, rel: str, key: HashKey) -> tuple[list[StagedTable], Problem | None, list[Sheet], list[str]]:
    """(staged tables, whole-file problem, sheets that matched nothing, notes)."""
    notes: list[str] = []
    ext = path.suffix.lower()
    if ext == ".xlsx":
        try:
            tables = rd.read_xlsx(path)
        except rd.FileUnreadable as exc:
            return [], Problem(exc.rule, exc.message), [], notes
        if not tables:
            return [], Problem("empty_file", "the workbook has no sheet with a header row"), [], notes
        staged, bad = [], []
        cands = pf.profiles_for(dataset, "xlsx")
        for t in tables:
            m, near = pf.best_match(cands, t.headers)
            if m is None:
                bad.append(Sheet(t.sheet, Problem("unknown_layout", f"sheet '{t.sheet}': " + _no_match_message(dataset, t.headers, near), t)))
                continue
            if m.unmatched:
                notes.append(f"sheet '{t.sheet}': ignored column(s) {', '.join(m.unmatched)}")
            staged.append(stage_table(dataset, m, t, key, rel))
        return staged, None, bad, notes

    data = path.read_bytes()
    kind = sub.sniff(data[:sub.SNIFF_BYTES], ext)
    if kind is not None:  # compressed, binary, UTF-16 without a BOM: said, never echoed
        return [], Problem(*kind), [], notes
    if not data or data.isspace():
        return [], Problem("empty_file", "the file is empty"), [], notes
    cands = [p for p in pf.profiles_for(dataset, "csv") if ext in p.extensions]
    if not cands:
        return [], Problem("unknown_layout", f"no {dataset} layout is a {ext} file"), [], notes
    best, nearest = _best_layout(cands, data)
    if best is None:
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
    return [stage_table(dataset, m, table, key, rel)], None, [], notes


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
    data = b"" if ext == ".xlsx" else path.read_bytes() if piece is None else piece.read(path)
    got = _read_simple(dataset, [(ext, data)])[0]
    if got is not None and piece is not None and piece.first_line != 2:
        got[0].frame = got[0].frame.with_columns(pl.col("__line") + (piece.first_line - 2))
    return got


def read_simple_many(dataset: str, paths: list[Path]) -> list[tuple[rd.RawTable, pf.Match, list[str]] | None]:
    """``[read_simple(dataset, p) for p in paths]``, with one call of Polars' reader per layout
    (``readers.read_delimited_fast_many``) and the layout found once per header line."""
    return _read_simple(dataset, [(p.suffix.lower(), b"" if p.suffix.lower() == ".xlsx" else p.read_bytes()) for p in paths])


def _read_simple(dataset: str, files: list[tuple[str, bytes]]) -> list[tuple[rd.RawTable, pf.Match, list[str]] | None]:
    """``read_simple`` of each (extension, bytes)."""
    out: list[tuple[rd.RawTable, pf.Match, list[str]] | None] = [None] * len(files)
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, bytes, pf.Match]]] = {}
    layouts: dict[tuple[str, bytes], tuple[pf.Match, str] | None] = {}
    for i, (ext, data) in enumerate(files):
        cands = [p for p in pf.profiles_for(dataset, "csv") if ext in p.extensions]
        if ext == ".xlsx" or not cands or not data or data.isspace():
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


# --- big files, in pieces ------------------------------------------------------------------------

PIECE_BYTES = 32 * 2**20  # a delimited file bigger than this is read and validated in pieces of about this size


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


def _pieces(path: Path, size: int) -> list[Piece]:
    """``path`` cut at line ends into pieces of about ``PIECE_BYTES`` (one read of the file)."""
    n = -(-size // PIECE_BYTES)
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


# --- masking -------------------------------------------------------------------------------------

# ssn-shaped: 9 digits, bare or written with dashes, dots or spaces between the groups
_SSN_SHAPED = re.compile(r"(?<!\d)\d{3}[-. ]?\d{2}[-. ]?\d{4}(?!\d)")
_NINE = re.compile(r"(?<!\d)\d{9}(?!\d)")


def mask_value(value: str | None) -> str | None:
    """Mask every ssn-shaped value (9 digits, bare, dashed, dotted or spaced) in a cell kept for
    a reject or the quarantine, whatever column it is in and whatever the row's own ssn cell
    holds: a row whose ssn and employee id are swapped, or an ssn written ``987.65.4322``, keeps
    no ssn in clear. Employer ids in those cells are masked too (the record's own
    ``employer_id`` field keeps the employer)."""
    if value is None:
        return None
    return _SSN_SHAPED.sub(MASK, value)


def mask_employer(value: str | None, ssn_digits: frozenset[str]) -> str | None:
    """The ``employer_id`` field of a quarantine record: kept unless it is one of the file's
    ssns (a shifted column); a dashed ssn pattern is always masked."""
    if value is None:
        return None
    out = _SSN_SHAPED.sub(lambda m: m.group(0) if m.group(0).isdigit() else MASK, value)
    return _NINE.sub(lambda m: MASK if m.group(0) in ssn_digits else m.group(0), out)


# what cannot be printed (C0 controls but tab, DEL, bidirectional controls) is shown escaped
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def printable(v: str) -> str:
    """``v`` with each character that cannot be printed written as its escape (``\\x01``,
    ``\\u202e``): a reject or a log line never carries raw control bytes."""
    return _UNPRINTABLE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), v)


def _short(v: str | None) -> str | None:
    """A submitted value as a reject shows it: escaped, at most ``MAX_VALUE_CHARS`` long."""
    if v is None:
        return v
    v = printable(v)
    if len(v) <= MAX_VALUE_CHARS:
        return v
    return v[:MAX_VALUE_CHARS] + f"... ({len(v):,} characters)"


def _cells_json(row: dict) -> str:
    return json.dumps({k: mask_value(v) for k, v in row.items() if k != "__line"}, ensure_ascii=False)


# --- one file ------------------------------------------------------------------------------------

@dataclass
class FileWork:
    index: int
    rel: str
    dataset: str
    sha: str
    profile: str | None = None
    rows_read: int = 0
    rejects: list[dict] = field(default_factory=list)  # file, line, column, value, rule, message, employer_id, __sheet
    rejected_lines: dict[tuple[str | None, int], list[str]] = field(default_factory=dict)
    quarantine: list[dict] = field(default_factory=list)
    file_problem: str | None = None
    notes: list[str] = field(default_factory=list)
    passed: list[pl.DataFrame] = field(default_factory=list)  # staged rows that passed the suite

    def where(self, sheet: str | None) -> str:
        return f"{self.rel}[{sheet}]" if sheet else self.rel


def _employer_ids(staged: pl.DataFrame) -> list[str]:
    """The distinct valid (9-digit) employer ids of a staged table."""
    ids = staged.get_column("employer_id").drop_nulls().unique() if "employer_id" in staged.columns else []
    return [i for i in ids if re.fullmatch(r"\d{9}", i)]


def _sole_employer(st: StagedTable) -> str | None:
    ids = _employer_ids(st.staged)
    return ids[0] if len(ids) == 1 else None


def _quarantine_table(work: FileWork, table: rd.RawTable, rule: str, message: str) -> None:
    """Quarantine every row of a table that is rejected as a whole (ssn-like cells masked)."""
    for row in table.frame.iter_rows(named=True):
        line = row.pop("__line")
        cells = {table.headers[int(k[1:])] or k: v for k, v in row.items()}
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps({k: mask_value(v) for k, v in cells.items()}, ensure_ascii=False)))
    for line, cells in table.ragged:
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps([mask_value(c) for c in cells], ensure_ascii=False)))


def _lookup(frame: pl.DataFrame, lines: list[int], cols: list[str]) -> dict[int, dict]:
    """``{line: {col: value}}`` for a few lines of ``frame`` (with ``__line``), never every row."""
    if not lines:
        return {}
    sel = frame.filter(pl.col("__line").is_in(lines)).select("__line", *cols)
    return {r["__line"]: r for r in sel.iter_rows(named=True)}


def _masked_ssns(values: pl.Series, ssn_digits: frozenset[str]) -> pl.Series:
    """``values`` with every cell that is one of the file's ssns (digits, dashes, spaces) and
    every dashed ssn pattern inside a cell replaced by ``MASK``.

    Worked out on the distinct values (an id column of 25,000 rows has a few hundred), then
    mapped back only when something changed, so the regex work does not grow with the rows.
    """
    distinct = values.unique().drop_nulls()
    m = distinct.to_frame("v")
    if ssn_digits:
        m = m.with_columns(
            pl.when(pl.col("v").str.replace_all(r"[\s-]", "").is_in(pl.Series(list(ssn_digits), dtype=pl.String)))
            .then(pl.lit(MASK)).otherwise(pl.col("v")).alias("m")
        )
    else:
        m = m.with_columns(pl.col("v").alias("m"))
    m = m.with_columns(pl.col("m").str.replace_all(r"\b\d{3}[- ]\d{2}[- ]\d{4}\b", MASK)).filter(pl.col("m") != pl.col("v"))
    if m.height == 0:
        return values
    return values.replace(m.get_column("v"), m.get_column("m"))


def _suite_frame(dataset: str, staged: pl.DataFrame, text: pl.DataFrame, now: datetime) -> pl.DataFrame:
    """What the suite checks: the staged columns and the helper columns, ``__line`` last."""
    return va.helper_columns(dataset, staged.drop("__line").with_columns(staged.get_column("__line")), text, now)


# Ids whose valid values have the form of an ssn (9 digits). One that equals some ssn of the
# file is a coincidence, not an ssn to hide: at state scale (20,000 employer ids, 120,000 ssns
# in one export) some do coincide, and masking them failed valid rows on the employer_id
# format. Only a dashed ssn pattern is masked in them (it fails that format anyway); an employer
# id that is its own row's ssn is rejected before the suite (``staging``: employer_id_is_ssn).
NINE_DIGIT_IDS = frozenset({"employer_id"})


def _maskable(frame: pl.DataFrame, ssn_digits: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """(column, ssns masked in it) for the text columns masked before the suite sees them (the
    hash is not an ssn)."""
    return [(c, frozenset() if c in NINE_DIGIT_IDS else ssn_digits)
            for c, t in frame.schema.items() if t == pl.String and c != "ssn_hash"]


@dataclass
class FileScope:
    """What a big file decides as a whole when its pieces are validated one by one
    (``_validate_in_pieces``): its sole employer, the sums of its file expectations
    (``validate.file_tally``), and, once those failed, the message rejecting every row."""

    sole: str | None
    tally: list[list[int]]
    rejected: str | None = None

    def add(self, tally: list[tuple[int, int, int]]) -> None:
        for acc, t in zip(self.tally, tally, strict=True):
            for i, v in enumerate(t):
                acc[i] += v


def _held(passed: pl.DataFrame, index: int) -> pl.DataFrame:
    """Rows that passed, as held until the whole run is validated: ``__order`` for ``__line``,
    and the long repeated strings (a 64-character hash per row, the file name) as categoricals,
    4 bytes a row instead of about 80 (0.8 GB at 10M rows)."""
    return passed.drop("__line").with_columns(
        (pl.lit(index, dtype=pl.Int64) * ORDER_BASE + pl.col("source_line")).alias("__order"),
        *[pl.col(c).cast(pl.Categorical) for c in COMPACT if c in passed.columns],
    )


def validate_table(work: FileWork, st: StagedTable, now: datetime, docs_dir: Path | None, engine: str = "polars",
                   scope: FileScope | None = None) -> None:
    """Validate one staged table into ``work``: its rejects, quarantined rows and rows that passed.
    ``scope``: the table is a piece of a big file (polars engine), see ``FileScope``."""
    dataset = st.dataset
    sole = scope.sole if scope is not None else _sole_employer(st)
    has_emp = "employer_id" in st.staged.columns
    where = work.where(st.sheet)
    pending: list[tuple[int | None, str | None, str, str, str | None]] = []  # line, column, rule, message, value

    def flush() -> None:
        """Turn pending rejects into reject records (employer ids looked up for those lines only)."""
        lines = sorted({p[0] for p in pending if p[0] is not None})
        emp_of = {}
        if has_emp and lines:
            emp_of = {ln: r["employer_id"] for ln, r in _lookup(st.staged, lines, ["employer_id"]).items()
                      if r["employer_id"] is not None and re.fullmatch(r"\d{9}", r["employer_id"])}
        for line, column, rule, message, value in pending:
            header = st.headers.get(column, column) if column else None
            work.rejects.append(dict(file=where, line=line, column=header, value=_short(value), rule=rule,
                                     message=f"{header}: {message}" if header else message,
                                     employer_id=(emp_of.get(line) if line is not None else None) or sole))
            if line is not None:
                work.rejected_lines.setdefault((st.sheet, line), []).append(rule)
        pending.clear()

    # structural rejects (before validation)
    for e in st.structural:
        pending.append((e.line, e.column, e.rule, e.message.split(": ", 1)[-1] if e.column else e.message, None))
    flush()
    struct_lines = [e.line for e in st.structural]
    ragged = dict(st.ragged)
    for line, cells in ragged.items():
        work.quarantine.append(dict(source_sheet=st.sheet, source_line=line, employer_id=sole, rules="field_count",
                                    messages=f"{len(cells)} fields", cells=json.dumps([mask_value(c) for c in cells], ensure_ascii=False)))

    frame = st.staged.filter(~pl.col("__line").is_in(struct_lines)) if struct_lines else st.staged
    text = st.text.filter(~pl.col("__line").is_in(struct_lines)) if struct_lines else st.text
    gx_frame = _suite_frame(dataset, frame, text, now)
    # nothing that looks like an ssn of this file reaches the suite (or GX's Data Docs)
    gx_frame = gx_frame.with_columns(_masked_ssns(gx_frame.get_column(c), digits) for c, digits in _maskable(gx_frame, st.ssn_digits))
    if scope is not None and scope.rejected is not None:
        _reject_all(work, st, frame, struct_lines, ragged, scope.rejected)
        return
    if not frame.height:
        failures = []
    elif engine == "gx":
        failures = va.run_suite(dataset, gx_frame, run_name=where, docs_dir=docs_dir)
    else:
        failures = va.run_suite_polars(dataset, gx_frame)
    if scope is not None:  # a piece: the file's expectations are decided on the whole file
        failures = [f for f in failures if f.severity != "file"]
        scope.add(va.file_tally(dataset, gx_frame))
    file_fail = [f for f in failures if f.severity == "file"]
    if file_fail:
        msg = _wrong_types_message(st, file_fail)
        work.rejects.append(dict(file=where, line=None, column=None, value=None, rule="wrong_types", message=msg, employer_id=sole))
        work.notes.insert(0, f"sheet '{st.sheet}': {msg}" if st.sheet else msg)
        _reject_all(work, st, frame, struct_lines, ragged, msg)
        return
    bad: dict[int, list[str]] = {}
    failed_lines = sorted({ln for f in failures for ln in f.lines})
    text_cols = sorted({f.column for f in failures if f.column in text.columns})
    text_of = _lookup(text, failed_lines, text_cols) if failed_lines and text_cols else {}
    for f in failures:
        for line in f.lines:
            raw = text_of.get(line, {}).get(f.column)
            rule, message = f.rule, f.message
            if rule in ("not_a_number", "invalid_date", "invalid_timestamp", "missing_value") and (raw is None or not raw.replace("+", "").strip()):
                rule, message = "missing_value", "empty"
            value = None if f.column == "ssn" else mask_value(raw)
            pending.append((line, f.column, rule, message, value))
            bad.setdefault(line, []).append(rule)
    flush()
    _quarantine_rows(work, st, [ln for ln in struct_lines if ln not in ragged], {}, None)
    _quarantine_rows(work, st, list(bad), bad, None)
    passed = frame.filter(~pl.col("__line").is_in(list(bad))) if bad else frame
    work.passed.append(_held(passed, work.index))


def _wrong_types_message(st: StagedTable, file_fail: list[va.Failure]) -> str:
    cols = ", ".join(sorted({st.headers.get(f.column, f.column) for f in file_fail}))
    return f"most values of {cols} are empty or of the wrong type: the file is rejected"


def _reject_all(work: FileWork, st: StagedTable, frame: pl.DataFrame, struct_lines: list[int], ragged: dict, msg: str) -> None:
    """Every row of a table whose file failed a file expectation: rejected and quarantined (the
    rows rejected before validation are quarantined with their own rules)."""
    all_lines = frame.get_column("__line").to_list()
    for line in all_lines:
        work.rejected_lines.setdefault((st.sheet, line), []).append("wrong_types")
    _quarantine_rows(work, st, [ln for ln in struct_lines if ln not in ragged], {}, None)
    _quarantine_rows(work, st, all_lines, dict.fromkeys(all_lines, ["wrong_types"]), msg)


def _quarantine_rows(work: FileWork, st: StagedTable, lines: list[int], rules: dict[int, list[str]], message: str | None) -> None:
    if not lines:
        return
    sel = st.raw.filter(pl.col("__line").is_in(lines))
    emp = {ln: r["employer_id"] for ln, r in _lookup(st.staged, lines, ["employer_id"]).items()} if "employer_id" in st.staged.columns else {}
    wanted = set(lines) | set(rules)
    msgs: dict[int, list[str]] = {}
    for r in work.rejects:
        if r["line"] in wanted:
            msgs.setdefault(r["line"], []).append(r["message"])
    for row in sel.iter_rows(named=True):
        line = row["__line"]
        rl = sorted(set(rules.get(line) or work.rejected_lines.get((st.sheet, line), [])))
        work.quarantine.append(dict(
            source_sheet=st.sheet, source_line=line, employer_id=mask_employer(emp.get(line), st.ssn_digits),
            rules=";".join(rl), messages=message or " | ".join(dict.fromkeys(msgs.get(line, []))),
            cells=_cells_json(row),
        ))


# --- many files at once --------------------------------------------------------------------------

BATCH_BYTES = 8 * 2**20  # files staged and validated together, up to about this much text (5 bench files)


def _batches(todo: list[FileWork], sizes: dict[int, int]) -> list[list[FileWork]]:
    """Consecutive files of one dataset, up to ``BATCH_BYTES`` of text each (a bigger file alone)."""
    out: list[list[FileWork]] = []
    size = 0
    for w in todo:
        if out and out[-1][0].dataset == w.dataset and size + sizes[w.index] <= BATCH_BYTES:
            out[-1].append(w)
            size += sizes[w.index]
        else:
            out.append([w])
            size = sizes[w.index]
    return out


def _validate_batch(batch: list[FileWork], paths: dict[int, Path], key: HashKey, now: datetime) -> list[FileWork]:
    """Stage and validate the files of ``batch`` that pass as they are, together; return the others.

    A file passes as it is when the Polars reader maps it exactly (``read_simple``), no row is
    rejected before validation (``structural_errors``), no expectation finds any of its rows
    unexpected (``validate.unexpected_rows``: every expectation tests one row, so many files can
    be tested at once), and no cell would be masked as an ssn before validation (tested against
    the ssns of the whole batch, a superset of the file's own). Such a file gets exactly what the
    file-by-file route gives it: every row passes; the per-call cost of about 40 small Polars
    queries is paid once per batch instead of once per file. Every other file (a reject, a
    workbook, a quote or delimiter inside quotes...) is returned to go the file-by-file route,
    which words its rejects; it has been read twice, which costs little next to the work saved
    on the others.
    """
    groups: dict[tuple, list[tuple[FileWork, rd.RawTable, pf.Match, list[str]]]] = {}
    rest: list[FileWork] = []
    read = read_simple_many(batch[0].dataset, [paths[w.index] for w in batch])  # a batch is of one dataset
    for w, got in zip(batch, read, strict=True):
        if got is None:
            rest.append(w)
            continue
        table, m, notes = got
        layout = (w.dataset, m.profile.name, tuple(table.headers), table.delimiter, tuple(sorted(m.columns.items())))
        groups.setdefault(layout, []).append((w, table, m, notes))
    for group in groups.values():
        dataset, table0, m0 = group[0][0].dataset, group[0][1], group[0][2]
        raw = rd.RawTable(table0.headers, table0.header_line, pl.concat(
            [t.frame.with_columns(pl.col("__line") + w.index * ORDER_BASE) for w, t, _, _ in group], how="vertical", rechunk=False,
        ), [], delimiter=table0.delimiter)
        st = stage_table(dataset, m0, raw, key, group[0][0].rel)  # __line = file index * ORDER_BASE + line
        frame = st.staged
        flagged = _flagged(st, _suite_frame(dataset, frame, st.text, now))
        dirty = set((frame.get_column("__line").filter(flagged) // ORDER_BASE).unique().to_list())
        if any(e.line is None for e in st.structural):
            dirty = {w.index for w, _, _, _ in group}
        dirty |= {e.line // ORDER_BASE for e in st.structural if e.line is not None}
        file_of = (pl.col("source_line") // ORDER_BASE).replace_strict(
            [w.index for w, _, _, _ in group], [w.rel for w, _, _, _ in group], return_dtype=pl.Categorical)
        passed = frame.drop("__line").with_columns(
            pl.col("source_line") % ORDER_BASE, pl.col("source_line").alias("__order"), file_of.alias("source_file"),
            *[pl.col(c).cast(pl.Categorical) for c in COMPACT if c in frame.columns and c != "source_file"],
        ).select(*[c for c in frame.columns if c != "__line"], "__order")
        offset = 0
        for w, t, m, notes in group:
            n = t.frame.height
            if w.index in dirty:
                rest.append(w)
            else:
                w.profile, w.rows_read = m.profile.name, n
                w.notes += notes
                w.passed.append(passed.slice(offset, n))
            offset += n
    return rest


def _flagged(st: StagedTable, gx_frame: pl.DataFrame) -> pl.Series:
    """True for each row that some expectation finds unexpected or that has a cell masking
    would change (one of ``st.ssn_digits``, or a dashed ssn pattern)."""
    flagged = va.unexpected_rows(st.dataset, gx_frame)
    for c, digits in _maskable(gx_frame, st.ssn_digits):
        v = gx_frame.get_column(c)
        masked = _masked_ssns(v, digits)
        if masked is not v:
            flagged = flagged | masked.ne_missing(v)
    return flagged


@dataclass
class _Screened:
    """One piece of a big file after the first pass of ``_validate_in_pieces``."""

    dirty: bool
    rows: int
    held: pl.DataFrame | None  # its rows as the file route would hold them, when clean
    ssns: frozenset[str]  # its ssns (normalised)
    masked_ids: frozenset[str]  # its cells masked when one of the file's ssns, normalised
    employers: frozenset[str]  # its valid employer ids
    tally: list[tuple[int, int, int]]  # validate.file_tally


def _validate_in_pieces(work: FileWork, path: Path, size: int, key: HashKey, now: datetime) -> bool:
    """Read, stage and validate a big delimited file piece by piece (``PIECE_BYTES`` each, so
    memory holds one piece, not the file); False, with ``work`` untouched, when Polars' reader
    cannot map every piece exactly (``read_simple``): the caller then reads the file whole.

    The result is exactly the whole-file one (``_read_and_validate``). Every expectation but the
    file ones tests one row, and so do the rejects before validation. The rest is decided for the
    file: the ssns masked in a piece are all of the file's, the sole employer named on rejects
    without a valid employer id is the file's, and the file expectations ("most values of a
    column are empty") are decided on the sums over the pieces (``validate.file_tally``).

    First pass: each piece is staged and screened as a batch is (``_flagged``). When no piece
    has a flagged row or a cell equal to an ssn of another piece, every row passes. Otherwise
    the flagged pieces are read again and validated with the file's scope (``FileScope``); if
    the file's expectations then fail, every piece is read again to reject all its rows."""
    pieces = _pieces(path, size)

    def screen(piece: Piece) -> tuple[_Screened, pf.Match, list[str]] | None:
        got = read_simple(work.dataset, path, piece)
        if got is None:
            return None
        table, m, notes = got
        st = stage_table(work.dataset, m, table, key, work.rel)
        gx_frame = _suite_frame(work.dataset, st.staged, st.text, now)
        dirty = bool(st.structural) or bool(_flagged(st, gx_frame).any())
        masked_ids: set[str] = set()
        for c, digits in _maskable(gx_frame, st.ssn_digits):
            if digits:
                masked_ids.update(gx_frame.get_column(c).drop_nulls().unique().str.replace_all(r"[\s-]", "").to_list())
        return _Screened(dirty, st.staged.height, None if dirty else _held(st.staged, work.index), st.ssn_digits,
                         frozenset(masked_ids), frozenset(_employer_ids(st.staged)), va.file_tally(work.dataset, gx_frame)), m, notes

    screened: list[_Screened] = []
    for piece in pieces:  # one at a time (Polars uses the cores; two at a time gained 1 s in 26 at 10M rows)
        got = screen(piece)
        if got is None:
            return False
        screened.append(got[0])
        if len(screened) == 1:
            first_match, first_notes = got[1], got[2]
    if not screened:
        return False
    work.profile = first_match.profile.name
    work.notes += first_notes
    file_ssns = frozenset().union(*[s.ssns for s in screened])
    for s in screened:
        s.dirty = s.dirty or not s.masked_ids.isdisjoint(file_ssns)
    if not any(s.dirty for s in screened):
        work.rows_read = sum(s.rows for s in screened)
        work.passed = [s.held for s in screened]
        return True

    employers = frozenset().union(*[s.employers for s in screened])
    scope = FileScope(sole=next(iter(employers)) if len(employers) == 1 else None,
                      tally=[[0, 0, 0] for _ in screened[0].tally])

    def piece_table(piece: Piece) -> StagedTable:
        table, m, _ = read_simple(work.dataset, path, piece)
        st = stage_table(work.dataset, m, table, key, work.rel)
        st.ssn_digits = file_ssns
        return st

    for piece, s in zip(pieces, screened, strict=True):
        if s.dirty:
            st = piece_table(piece)
            work.rows_read += st.staged.height
            validate_table(work, st, now, None, "polars", scope)
        else:
            work.rows_read += s.rows
            work.passed.append(s.held)
            scope.add(s.tally)
    file_fail = va.file_failures(work.dataset, [tuple(t) for t in scope.tally])
    if file_fail:  # the whole file is rejected: start again, rejecting every row
        rows_read, notes = work.rows_read, work.notes
        work.rejects, work.rejected_lines, work.quarantine, work.passed = [], {}, [], []
        for piece in pieces:
            st = piece_table(piece)
            if scope.rejected is None:
                scope.rejected = _wrong_types_message(st, file_fail)
                work.rejects.append(dict(file=work.rel, line=None, column=None, value=None, rule="wrong_types",
                                         message=scope.rejected, employer_id=scope.sole))
            validate_table(work, st, now, None, "polars", scope)
        work.rows_read, work.notes = rows_read, [scope.rejected, *notes]
    return True


# --- the folder ----------------------------------------------------------------------------------

def _now_utc(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=ZoneInfo(schema.NJ_TZ))
    return now.astimezone(UTC)


def ingest_folder(
    input_dir: Path,
    workdir: Path,
    key: HashKey,
    *,
    now: datetime | None = None,
    docs_dir: Path | None = None,
    engine: str | None = None,
) -> IngestReport:
    """Ingest a submission folder into ``<workdir>/lake`` (idempotent; corrected files replace).

    ``engine`` evaluates the validation suites: ``"polars"`` (the suites compiled to Polars
    expressions, vectorised; the default) or ``"gx"`` (Great Expectations Core on pandas, file by
    file; needed for Data Docs, so the default when ``docs_dir`` is given). The environment
    variable ``IMPCREDIT_VALIDATION_ENGINE`` changes the default.
    """
    from filelock import FileLock

    root = Path(input_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    lake = lk.lake_dir(workdir)
    lake.mkdir(parents=True, exist_ok=True)
    now_utc = _now_utc(now)
    engine = engine or os.environ.get("IMPCREDIT_VALIDATION_ENGINE") or ("gx" if docs_dir is not None else "polars")
    if engine not in ENGINES:
        raise ValueError(f"unknown validation engine {engine!r}; known: {', '.join(ENGINES)}")
    if engine == "polars" and docs_dir is not None:
        raise ValueError("Data Docs are written by the gx validation engine only")
    with FileLock(str(lake / ".lock")):
        return _ingest(root, Path(workdir), lake, key, now_utc, Path(docs_dir) if docs_dir else None, engine)


def _cross_row_records(dataset: str, xr: pl.DataFrame, allrows: pl.DataFrame, by_index: dict[int, FileWork],
                       paths: dict[int, Path], key: HashKey, now: datetime) -> None:
    """Reject records and quarantine rows for the cross-row rejects ``xr`` (``__order``, rule, ...).

    The files' tables were let go after validation (memory); the few files with a cross-row
    reject are read again (same bytes, same result) to quote their cells.
    """
    info = allrows.select("__order", pl.col("source_line").alias("__line"), "source_sheet",
                          "employer_id" if "employer_id" in allrows.columns else pl.lit(None, dtype=pl.String).alias("employer_id"))
    hits = xr.join(info, on="__order", how="left", maintain_order="left").with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
    for (index,), grp in hits.group_by(["__file"], maintain_order=True):
        w = by_index[index]
        tables, _, _, _ = read_tables(w.dataset, paths[index], w.rel, key)
        for row in grp.iter_rows(named=True):
            st = next((t for t in tables if t.sheet == row["source_sheet"]), tables[0])
            header = st.headers.get(row["column"], row["column"]) if row["column"] else None
            value = None
            if row["column"] in st.text.columns:
                value = _lookup(st.text, [row["__line"]], [row["column"]]).get(row["__line"], {}).get(row["column"])
            w.rejects.append(dict(file=w.where(row["source_sheet"]), line=row["__line"], column=header, value=_short(mask_value(value)),
                                  rule=row["rule"], message=row["message"], employer_id=row["employer_id"]))
            w.rejected_lines.setdefault((row["source_sheet"], row["__line"]), []).append(row["rule"])
        for st in tables:
            lines = [ln for (s, ln), rules in w.rejected_lines.items() if s == st.sheet and rules and rules[-1] in CROSS_RULES]
            already = {q["source_line"] for q in w.quarantine if q["source_sheet"] == st.sheet}
            _quarantine_rows(w, st, [ln for ln in lines if ln not in already], {}, None)


def _payroll_sums(rows: pl.DataFrame, code_lines: pl.DataFrame, workdir: Path) -> pl.DataFrame:
    """The run-level rules over sums of payroll (``cross_rows``): ``negative_net`` (an
    employee-year nets negative) and ``hourly_rate`` (a pay period's rate is implausible), one
    reject per submitted line (a row of a line-per-code export: each of its code lines).
    Employees that break a rule on this run's rows alone are taken again with the lake's rows
    (a reversal may net against a check ingested by an earlier run); only then rejected."""
    cand = pl.concat([xrows.negative_years(rows).select("employer_id", "employee_id"),
                      xrows._period_rates(rows).select("employer_id", "employee_id")]).unique()
    if cand.height == 0:
        return pl.DataFrame(schema=xrows.CROSS_SCHEMA)
    from transforms.ingest.lake import scan_lake

    earlier = scan_lake(workdir, "payroll", employer_ids=cand.get_column("employer_id").unique().to_list()).join(
        cand.lazy(), on=["employer_id", "employee_id"], how="semi").collect()
    xn = pl.concat([xrows.negative_nets(rows, earlier), xrows.implausible_rates(rows, earlier)])
    if xn.height == 0 or code_lines.height == 0:
        return xn
    # a summed row stands for its code lines: the reject goes to each of them
    row_order = (pl.col("__order") // ORDER_BASE) * ORDER_BASE + pl.col("row_line")
    lines = code_lines.select(row_order.alias("__row"), "__order")
    expanded = xn.join(lines, left_on="__order", right_on="__row", how="left", suffix="_line").select(
        pl.coalesce("__order_line", "__order").alias("__order"), "rule", "column", "message")
    return expanded.cast(xrows.CROSS_SCHEMA)


def _in_pieces(work: FileWork, path: Path, size: int, key: HashKey, now: datetime) -> list[FileWork]:
    """``_validate_in_pieces``; [work] when the file must be read whole instead."""
    return [] if _validate_in_pieces(work, path, size, key, now) else [work]


def _read_and_validate(work: FileWork, path: Path, key: HashKey, now: datetime, docs_dir: Path | None, engine: str) -> None:
    """Read, stage and validate one file into ``work`` (touches nothing shared)."""
    rel = work.rel
    tables, problem, bad_sheets, notes = read_tables(work.dataset, path, rel, key)
    work.notes += notes
    if problem is not None:
        work.file_problem = problem.message
        work.rejects.append(dict(file=rel, line=None, column=None, value=None, rule=problem.rule, message=problem.message, employer_id=None))
        if problem.table is not None:
            work.rows_read += problem.table.rows_read
            for line in problem.table.frame.get_column("__line").to_list() + [ln for ln, _ in problem.table.ragged]:
                work.rejected_lines[(None, line)] = [problem.rule]
            _quarantine_table(work, problem.table, problem.rule, problem.message)
    for sh in bad_sheets:
        t = sh.problem.table
        work.rejects.append(dict(file=work.where(sh.sheet), line=None, column=None, value=None, rule=sh.problem.rule, message=sh.problem.message, employer_id=None))
        work.rows_read += t.rows_read
        for line in t.frame.get_column("__line").to_list() + [ln for ln, _ in t.ragged]:
            work.rejected_lines[(sh.sheet, line)] = [sh.problem.rule]
        _quarantine_table(work, t, sh.problem.rule, sh.problem.message)
    for st in tables:
        work.profile = st.profile
        work.rows_read += st.staged.height + len(st.ragged)
        validate_table(work, st, now, docs_dir, engine)
    # the rows that passed are in work.passed; the tables (cells) go out of scope here (a file
    # with a cross-row reject is read again for them): memory holds one staged copy of the run


def _digest(path: Path) -> tuple[str, int]:
    """(sha256, size) of a file's bytes; ("", -1) when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return "", -1
    return hashlib.sha256(data).hexdigest(), len(data)


def _ingest(root: Path, workdir: Path, lake: Path, key: HashKey, now: datetime, docs_dir: Path | None, engine: str) -> IngestReport:
    manifest = lk.load_manifest(lake)
    lk.upgrade(lake, manifest)
    lk.remove_orphans(lake, manifest)
    known = manifest["files"]
    records: list[FileRecord] = []
    todo: list[FileWork] = []
    paths: dict[int, Path] = {}
    sizes: dict[int, int] = {}
    rejects: list[dict] = []
    seen: dict[str, str] = {}
    entries = sub.discover(root, exclude=[workdir] + ([docs_dir] if docs_dir else []))
    for e in entries:  # not read at all: a symbolic link, a folder named like a data file
        if e.kind != "file":
            rule, msg = sub.KIND_MESSAGES[e.kind]
            records.append(FileRecord(e.rel, e.dataset, None, "", 0, 0, 0, "rejected", msg))
            rejects.append(dict(file=e.rel, line=None, column=None, value=None, rule=rule, message=msg, employer_id=None))
    found = [(e.dataset, e.path) for e in entries if e.kind == "file"]
    with stage("ingest") as st_ingest, ThreadPoolExecutor(max_workers=FILE_WORKERS, thread_name_prefix="digest") as pool:
        digests = list(pool.map(_digest, [path for _, path in found]))  # hashlib releases the GIL
        st_ingest.say(f"{len(found):,} files, {sum(max(s, 0) for _, s in digests) / 2**20:,.1f} MB read and hashed")
    validating = start("validate")
    for index, ((dataset, path), (sha, size)) in enumerate(zip(found, digests, strict=True)):
        rel = path.relative_to(root).as_posix()
        if size < 0:
            rule, msg = sub.file_problem(sub.Entry(dataset, path, rel)) or ("unreadable", "cannot be read")
            records.append(FileRecord(rel, dataset, None, "", 0, 0, 0, "rejected", msg))
            rejects.append(dict(file=rel, line=None, column=None, value=None, rule=rule, message=msg, employer_id=None))
            continue
        if dataset is None:
            msg = "not part of the submission layout (payroll/*.csv|.txt|.xlsx, applications.csv, roster.csv, certifications.csv, employer_rates.csv)"
            records.append(FileRecord(rel, None, None, sha, 0, 0, 0, "rejected", msg))
            rejects.append(dict(file=rel, line=None, column=None, value=None, rule="unknown_file", message=msg, employer_id=None))
            continue
        in_lake = sha in known and not known[sha].get("superseded_by")  # a superseded version sent again adds again
        if in_lake or sha in seen:
            first = known[sha]["file"] if in_lake else seen[sha]
            when = f" on {known[sha]['ingested_at'][:10]}" if in_lake else " earlier in this run"
            records.append(FileRecord(rel, dataset, known.get(sha, {}).get("profile"), sha, 0, 0, 0, "duplicate",
                                      f"same content as {first}, ingested{when}: nothing added"))
            continue
        seen[sha] = rel
        todo.append(FileWork(index, rel, dataset, sha))
        paths[index] = path
        sizes[index] = size

    def one_file(work: FileWork) -> FileWork:
        _read_and_validate(work, paths[work.index], key, now, docs_dir, engine)
        return work

    # files are independent until the cross-row rules: two jobs at a time (Polars releases the
    # GIL; GX's context is not shared across threads). With the polars engine, big delimited
    # files go in pieces (bounded memory) and the others in batches; the files that do not pass
    # as they are, and every file under gx, then go one by one.
    workers = 1 if engine == "gx" or len(todo) < 2 else FILE_WORKERS
    big = {w.index for w in todo if engine == "polars" and sizes[w.index] > PIECE_BYTES > 0
           and paths[w.index].suffix.lower() != ".xlsx"}
    one_by_one = [w for w in todo if w.index not in big]
    jobs = [functools.partial(_in_pieces, w, paths[w.index], sizes[w.index], key, now) for w in todo if w.index in big]
    if engine == "polars" and BATCH_BYTES > 0:
        jobs += [functools.partial(_validate_batch, b, paths, key, now) for b in _batches(one_by_one, sizes)]
        one_by_one = []
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest") as pool:
        one_by_one += [w for rest in pool.map(lambda job: job(), jobs) for w in rest]
        list(pool.map(one_file, one_by_one))
    works = todo

    # cross-row rules over the whole run, per dataset; then the accepted rows of the dataset
    by_index = {w.index: w for w in works}
    accepted: dict[str, pl.DataFrame] = {}
    run_shas = {w.sha for w in works}
    # each row's file, from the file index in ``__order``
    index = [w.index for w in works]
    file_sha = pl.col("__file").replace_strict(index, [w.sha for w in works], return_dtype=pl.String)
    file_rel = pl.col("__file").replace_strict(index, [w.rel for w in works], return_dtype=pl.String)
    replaced: list[dict] = []
    for dataset in schema.STAGED:
        passed = [p for w in works if w.dataset == dataset for p in w.passed]
        for w in works:
            if w.dataset == dataset:
                w.passed = []
        if not passed:
            continue
        same = all(p.schema == passed[0].schema for p in passed)
        allrows = pl.concat(passed, how="vertical" if same else "diagonal_relaxed", rechunk=False)
        del passed
        xr = cross_row_rejects(dataset, allrows)
        if xr.height:
            _cross_row_records(dataset, xr, allrows, by_index, paths, key, now)
            allrows = allrows.filter(~pl.col("__order").is_in(xr.get_column("__order").unique()))
        if dataset == "payroll":
            # a corrected file (a new version at the same path) supersedes the earlier version
            # whole, before the nets are taken over this run's rows and the lake's
            replaced += lk.supersede(lake, known, {w.sha: w.rel for w in works if w.dataset == "payroll"})
            lines_frame = allrows
            allrows, code_lines = xrows.aggregate_lines(allrows)
            xn = _payroll_sums(allrows, code_lines, workdir)
            if xn.height:
                _cross_row_records(dataset, xn, lines_frame, by_index, paths, key, now)
                gone = xn.get_column("__order").implode()
                allrows = allrows.filter(~pl.col("__order").is_in(gone))
                code_lines = code_lines.filter(~pl.col("__order").is_in(gone))
            del lines_frame
            if code_lines.height:
                accepted["payroll_lines"] = code_lines.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
        accepted[dataset] = allrows.with_columns((pl.col("__order") // ORDER_BASE).alias("__file"))
    n_accepted: dict[int, int] = {}
    for dataset, rows in accepted.items():
        if dataset == "payroll":  # lines: a row of a line-per-code export counts its lines
            n_accepted.update(rows.group_by("__file").agg(pl.col("line_count").sum()).iter_rows())
        elif dataset != "payroll_lines":
            n_accepted.update(rows.group_by("__file").len().iter_rows())

    # the lake: replacements by key of the other datasets (rows from earlier runs), then this run's parts
    for dataset, rows in accepted.items():
        if rows.height == 0 or dataset in ("payroll", "payroll_lines"):
            continue
        new = rows.select(*schema.STAGED[dataset], "__file").with_columns(
            file_sha.alias("_file_sha256"), file_rel.alias("source_file")).drop("__file")
        replaced += lk.replace_by_key(lake, dataset, new, run_shas)
    for r in replaced:
        if r["replaced_sha256"] in known:
            known[r["replaced_sha256"]].setdefault("replaced_by", []).append(r["sha256"])

    ingested_at = datetime.now(UTC).isoformat(timespec="seconds")
    # one part per dataset and partition for the whole run (named by the run's file hashes), not
    # one per file: far fewer, larger Parquet files; ``_file_sha256`` keeps each row's file
    parts_of: dict[str, list[str]] = {}
    run_tag = hashlib.sha256("\n".join(sorted(run_shas)).encode()).hexdigest()
    for dataset in list(accepted):
        rows = accepted.pop(dataset)
        if rows.height:
            for sha, parts in lk.write_run_rows(lake, dataset, rows, run_tag, file_sha=file_sha).items():
                parts_of.setdefault(sha, []).extend(parts)
        del rows
    for w in works:
        parts = parts_of.get(w.sha, [])
        qrows = pl.DataFrame(w.quarantine, schema={k: v for k, v in lk.QUARANTINE_SCHEMA.items() if k not in ("file_sha256", "source_file")}) if w.quarantine else None
        qpart = None
        if qrows is not None:
            qrows = qrows.with_columns(pl.lit(w.sha).alias("file_sha256"), pl.lit(w.rel).alias("source_file"))
            qpart = lk.write_quarantine(lake, w.dataset, qrows, w.sha)
        n_rej = len({k for k, v in w.rejected_lines.items() if v})
        n_acc = n_accepted.get(w.index, 0)
        mine = [r for r in replaced if r["sha256"] == w.sha]
        if w.file_problem is not None or (w.rows_read > 0 and n_acc == 0):
            status = "rejected"
        elif mine:
            status = "replaced"
        elif n_rej:
            status = "partial"
        else:
            status = "accepted"
        msg = list(w.notes)
        if w.file_problem:
            msg.insert(0, w.file_problem)
        elif w.rows_read == 0:
            msg.append("no data rows (header only)")
        if n_rej and not w.file_problem:
            msg.append(f"{n_rej} row(s) rejected")
        for r in mine:
            if r.get("superseded"):
                msg.append(f"a new version of {r['replaced_file']}: supersedes the earlier one ({r['rows_removed']} row(s) removed)")
                continue
            span = f" for {r['window_start']} to {r['window_end']}" if r.get("window_start") else ""
            who = f" of employer {r['employer_id']}" if r.get("employer_id") else ""
            msg.append(f"replaced {r['rows_removed']} row(s){who}{span} from {r['replaced_file']}")
        rec = FileRecord(w.rel, w.dataset, w.profile, w.sha, w.rows_read, n_acc, n_rej, status, "; ".join(msg))
        records.append(rec)
        rejects += w.rejects
        known[w.sha] = dict(file=w.rel, dataset=w.dataset, profile=w.profile, status=status, rows_read=w.rows_read,
                            rows_accepted=n_acc, rows_rejected=n_rej, ingested_at=ingested_at, parts=parts, quarantine=qpart)
    lk.save_manifest(lake, manifest)
    read_n = sum(r.rows_read for r in records)
    new = sum(1 for r in records if r.status not in ("duplicate",))
    validating.say(f"{new:,} new files: {read_n:,} rows read, {sum(r.rows_accepted for r in records):,} accepted, "
                   f"{sum(r.rows_rejected for r in records):,} rejected")
    validating.done()
    records.sort(key=lambda r: r.file)
    rej = pl.DataFrame(rejects, schema=REJECT_SCHEMA) if rejects else pl.DataFrame(schema=REJECT_SCHEMA)
    rej = rej.sort(["file", "line", "column", "rule"], nulls_last=False)
    return IngestReport(files=records, rejects=rej, replaced=replaced, workdir=workdir, docs_dir=docs_dir)
