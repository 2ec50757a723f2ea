"""The files of a submission folder as they arrive: what each entry is, before anything is read.

Nothing outside ``--input`` is ever read: a symbolic link (to a file or a folder) is reported
("symbolic link, not read") and never opened, and the walk does not descend into linked
folders. A folder named like a data file, a device, a pipe or a socket is reported as what it is.
A regular file is sniffed on its first bytes (``sniff``): compressed archives, binary data and
UTF-16 text without a byte-order mark are reported as such, and no byte of them is echoed.

``incomplete`` is the check every deciding run makes first (spec section 1: every file is
required): a required dataset missing, or a file of the layout that is not a regular file,
cannot be read, is empty or has no header line, or is not text. Any of these stops the run
before it decides anything (decisions are final, so a missing roster must never become a
rejection).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from transforms import schema

DATA_EXT = {".csv", ".txt", ".prn", ".xlsx", ".xlsm", ".xls"}  # .txt, .prn: delimited or printed in columns
WORKBOOK_EXT = (".xlsx", ".xlsm", ".xls")
# what the submission says of its payroll files outside their rows (spec section 1): not payroll
PAYROLL_MANIFEST = "payroll/files.csv"
SNIFF_BYTES = 65536
REQUIRED = {
    "payroll": "payroll/ (at least one payroll file)",
    "applications": "applications.csv",
    "roster": "roster.csv",
    "certifications": "certifications.csv",
    "employer_rates": "employer_rates.csv",
    "control_groups": "control_groups.csv",
}
KIND_MESSAGES = {
    "symlink": ("symbolic_link", "a symbolic link, not read (nothing outside the submission folder is read)"),
    "folder": ("not_a_file", "a folder named like a data file, not a file"),
    "special": ("not_a_file", "not a regular file (a device, pipe or socket), not read"),
}


@dataclass(frozen=True)
class Entry:
    """One entry of a submission folder: its dataset by path (None: not part of the layout) and
    what it is (``file``, ``symlink``, ``folder`` named like a data file, ``special``)."""

    dataset: str | None
    path: Path
    rel: str
    kind: str = "file"


def dataset_of(rel: Path) -> str | None:
    """The dataset a path of the layout belongs to (spec section 1), or None."""
    parts, suffix = rel.parts, rel.suffix.lower()
    if rel.as_posix() == PAYROLL_MANIFEST:
        return None
    if parts[0] == "payroll" and len(parts) > 1:
        return "payroll" if suffix in DATA_EXT else None
    if len(parts) == 1 and rel.stem in schema.SUBMITTED_COLUMNS and suffix == ".csv":
        return rel.stem
    if parts[0] in schema.SUBMITTED_COLUMNS and suffix == ".csv":
        return parts[0]
    return None


def discover(root: Path, exclude: list[Path] | None = None) -> list[Entry]:
    """Every entry of the folder, sorted by path, without following a symbolic link anywhere:
    regular files, symbolic links (reported, never read), folders named like a data file and
    special files. Hidden names (a leading dot) and the ``exclude`` folders are skipped."""
    root = Path(root)
    excl = [Path(os.path.abspath(e)) for e in (exclude or [])]
    out: list[Entry] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            p = here / d
            rel = p.relative_to(root)
            if d.startswith(".") or any(Path(os.path.abspath(p)).is_relative_to(e) for e in excl):
                continue
            if p.is_symlink():
                out.append(Entry(dataset_of(rel) or _dir_dataset(rel), p, rel.as_posix(), "symlink"))
            elif dataset_of(rel) is not None:
                out.append(Entry(dataset_of(rel), p, rel.as_posix(), "folder"))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            p = here / f
            rel = p.relative_to(root)
            st = os.lstat(p)
            kind = "symlink" if os.path.islink(p) else "file" if _is_regular(st.st_mode) else "special"
            out.append(Entry(dataset_of(rel), p, rel.as_posix(), kind))
    return sorted(out, key=lambda e: e.rel)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _dir_dataset(rel: Path) -> str | None:
    """A linked folder where the layout expects files (``payroll``, ``roster/``): its dataset."""
    if rel.parts[0] == "payroll" or (len(rel.parts) == 1 and rel.name in schema.SUBMITTED_COLUMNS):
        return rel.parts[0]
    return None


def sniff(head: bytes, ext: str) -> tuple[str, str] | None:
    """(rule, message) when the first bytes of a file show it is not text a reader can take:
    compressed or archived, binary, or UTF-16 without a byte-order mark. None for text (and for
    an ``.xlsx`` workbook, which is a zip archive by nature)."""
    if ext in WORKBOOK_EXT:
        return None
    if head.startswith(b"\x1f\x8b"):
        return "compressed_file", "a gzip-compressed file, not text: send it uncompressed"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "compressed_file", "a zip archive (or a workbook saved under a text name), not text: send the file itself"
    if head.startswith((b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c", b"\x28\xb5\x2f\xfd")):
        return "compressed_file", "a compressed archive (bzip2, xz, 7z or zstd), not text: send it uncompressed"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with a byte-order mark: the readers decode it
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.3 * len(odd) and even.count(0) < 0.05 * len(even) or \
                even.count(0) > 0.3 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf16_without_bom", "UTF-16 text without a byte-order mark: export it as UTF-8"
        return "binary_file", "binary data (NUL bytes), not text"
    return None


def file_problem(entry: Entry) -> tuple[str, str] | None:
    """(rule, message) of an entry that cannot be read as the layout expects, without reading
    more than its first bytes: not a regular file, unreadable, empty, no header, not text."""
    if entry.kind != "file":
        return KIND_MESSAGES[entry.kind]
    try:
        with open(entry.path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        return "unreadable", f"cannot be read ({exc.strerror or exc.__class__.__name__})"
    ext = entry.path.suffix.lower()
    problem = sniff(head, ext)
    if problem is not None:
        return problem
    if ext not in WORKBOOK_EXT and (not head or not head.strip()):
        return "empty_file", "is empty (no header line)"
    return None


def incomplete(root: Path, exclude: list[Path] | None = None) -> list[str]:
    """Why a submission cannot be decided (empty when it can): every required dataset present
    as at least one regular file, and every file of the layout readable text with a header
    (spec section 1). One phrase per problem, naming the file."""
    entries = discover(root, exclude)
    problems: list[str] = []
    for dataset, what in REQUIRED.items():
        if not any(e.dataset == dataset for e in entries):
            problems.append(f"{what} is missing")
    for e in entries:
        if e.dataset is None:
            continue
        found = file_problem(e)
        if found is not None:
            problems.append(f"{e.rel}: {found[1]}")
    return problems


def physical_lines(path: Path | None, max_sheet_mb: float | None = None) -> tuple[int | None, int]:
    """(lines, blank lines) of a file read (spec section 1: every line accounted for): a text
    file's physical lines, a workbook's rows that hold anything (every sheet's); None when it
    cannot be read again, or is a workbook with a sheet over ``max_sheet_mb`` (never read)."""
    if path is None:
        return None, 0
    from transforms.ingest.read.files import bytecount
    from transforms.ingest.read.files import line_limits as ll
    from transforms.ingest.read.files import readers as rd
    from transforms.ingest.read.files import workbooks as wbk

    try:
        if path.suffix.lower() in wbk.WORKBOOK_EXT:
            if path.suffix.lower() != ".xls" and ll.sheet_too_large(path, max_sheet_mb or ll.MAX_SHEET_MB) is not None:
                return None, 0
            return sum(len(s.records) for s in wbk.read_workbook(path)), 0
        data = path.read_bytes()
        return bytecount.lines(data), bytecount.blank_lines(data)
    except (OSError, rd.FileUnreadable):
        return None, 0
