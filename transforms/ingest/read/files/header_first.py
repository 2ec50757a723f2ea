"""The fast route: delimited files of a known layout whose header is their first line and which
Polars' reader maps exactly (``readers.read_delimited_fast``), read whole, many at once, or in
pieces of whole lines (a big bulk export). Anything else is read by ``tables.read_tables``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from transforms.ingest.read.files import line_limits as ll
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files import workbooks as wbk
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.layouts import profile_files as pfiles


def table_notes(table: rd.RawTable, enc: str, m: hd.Match) -> list[str]:
    table.encoding = enc
    notes = []
    if enc not in ("utf-8", "utf-8-sig"):
        notes.append(f"read as {enc}")
    if m.unmatched:
        notes.append(f"ignored column(s) {hd.short_list(m.unmatched)}")
    return notes


def first_line_layout(cands: list, data: bytes) -> tuple[tuple[hd.Match, str] | None, hd.Match | None]:
    """The profile and delimiter whose header is the file's first line and matches best (most
    columns), and the nearest miss."""
    best: tuple[hd.Match, str] | None = None
    nearest: hd.Match | None = None
    heads: dict[str, list[str]] = {}
    for p in cands:
        for d in p.delimiters:
            cells = heads.setdefault(d, rd.sniff_header(data, d))
            m = hd.match_headers(p, cells)
            if m.ok:
                if best is None or len(m.columns) > len(best[0].columns):
                    best = (m, d)
            elif m.columns and (nearest is None or len(m.missing) < len(nearest.missing)):
                nearest = m
    return best, nearest


def read_simple(dataset: str, path: Path, piece: Piece | None = None, layouts: pfiles.Layouts | None = None
                ) -> tuple[rd.RawTable, hd.Match, list[str]] | None:
    """(table, match, notes) of a delimited file of a known layout that Polars' reader maps
    exactly (``readers.read_delimited_fast``): what ``read_tables`` would read, before staging.
    None for anything else (workbooks, unknown layouts, a quote inside a quoted field...):
    ``read_tables`` decides.
    ``piece``: only those rows of the file (its header line, then the piece's lines)."""
    ext = path.suffix.lower()
    data = b"" if ext in wbk.WORKBOOK_EXT else path.read_bytes() if piece is None else piece.read(path)
    got = _read_simple(dataset, [(ext, data)], layouts)[0]
    if got is not None and piece is not None and piece.first_line != 2:
        got[0].frame = got[0].frame.with_columns(pl.col("__line") + (piece.first_line - 2))
    return got


def read_simple_many(dataset: str, paths: list[Path], layouts: pfiles.Layouts | None = None,
                     max_line_bytes: int = ll.MAX_LINE_BYTES) -> list[tuple[rd.RawTable, hd.Match, list[str]] | None]:
    """``[read_simple(dataset, p) for p in paths]``, with one call of Polars' reader per layout
    (``readers.read_delimited_fast_many``) and the layout found once per header line. A file with
    a line over ``max_line_bytes`` is None (never read here: ``read_tables`` refuses or rejects it)."""
    return _read_simple(dataset, [(p.suffix.lower(), b"" if p.suffix.lower() in wbk.WORKBOOK_EXT
                                   or ll.has_long_line(p, max_line_bytes) else p.read_bytes()) for p in paths], layouts)


def _read_simple(dataset: str, files: list[tuple[str, bytes]], layouts: pfiles.Layouts | None = None
                 ) -> list[tuple[rd.RawTable, hd.Match, list[str]] | None]:
    """``read_simple`` of each (extension, bytes); ``layouts``: the profiles in effect (None: shipped)."""
    out: list[tuple[rd.RawTable, hd.Match, list[str]] | None] = [None] * len(files)
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, bytes, hd.Match]]] = {}
    by_header: dict[tuple[str, bytes], tuple[hd.Match, str] | None] = {}
    for i, (ext, data) in enumerate(files):
        cands = [p for p in pfiles.profiles_for(dataset, "csv", layouts) if ext in p.extensions and not p.shaped
                 and p.transposed is None and p.fixed_width is None]
        if ext in wbk.WORKBOOK_EXT or not cands or not data or data.isspace():
            continue
        line = data.split(b"\n", 1)[0]
        key = (ext, line) if _first_record(line, cands) else None
        if key is not None and key in by_header:
            best = by_header[key]
        else:
            best, _ = first_line_layout(cands, data)
            if key is not None:
                by_header[key] = best
        if best is not None:
            m, delim = best
            groups.setdefault((delim, tuple(m.profile.encodings)), []).append((i, data, m))
    for (delim, encodings), items in groups.items():
        got = rd.read_delimited_fast_many([data for _, data, _ in items], delim, list(encodings))
        for (i, _, m), fast in zip(items, got, strict=True):
            if fast is None:
                continue
            table, enc = fast
            m = hd.match_headers(m.profile, table.headers)
            if m.ok and not table.ragged:
                out[i] = (table, m, table_notes(table, enc, m))
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


