"""The ingest report: one record per file, the rejects table, and what corrected files replaced."""

from __future__ import annotations

import csv
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

REJECT_SCHEMA = {
    "file": pl.String, "line": pl.Int64, "column": pl.String, "value": pl.String,
    "rule": pl.String, "message": pl.String, "employer_id": pl.String,
}
REJECT_CSV_COLUMNS = ["file", "line", "column", "value", "rule", "message"]
_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def rejects_file(employer_id: str | None) -> str:
    """Where an employer's rejected rows are written, relative to the output folder."""
    name = re.sub(r"[^0-9A-Za-z_-]", "_", employer_id) if employer_id else "_unknown_employer"
    return f"rejects/{name}.csv"


@dataclass
class FileRecord:
    file: str  # relative to the submission folder
    dataset: str | None
    profile: str | None
    sha256: str
    rows_read: int
    rows_accepted: int
    rows_rejected: int
    status: str  # accepted | partial | rejected | duplicate | replaced
    message: str
    # every physical line of the file (a workbook: each sheet's rows that hold anything), and those
    # that are no row (a header, a title, a totals line, a blank, a sheet skipped): lines = read
    # (accepted) + rejected + passed over. None: the file was not read (a copy, not text...)
    lines: int | None = None
    passed_over: int | None = None

    def line_words(self) -> str:
        """``840 lines: 838 read, 1 rejected, 1 passed over`` (empty when the file was not read)."""
        if self.lines is None:
            return ""
        return (f"{self.lines:,} line{'s' if self.lines != 1 else ''}: {self.rows_accepted:,} read, "
                f"{self.rows_rejected:,} rejected, {self.passed_over:,} passed over")

    def as_dict(self) -> dict:
        return asdict(self)


def neutralise(value: object) -> object:
    """A CSV cell that a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def _write_csv(frame: pl.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(REJECT_CSV_COLUMNS)
        for row in frame.select(REJECT_CSV_COLUMNS).iter_rows():
            w.writerow(["" if v is None else neutralise(v) for v in row])


@dataclass
class IngestReport:
    files: list[FileRecord]
    rejects: pl.DataFrame  # file, line, column, value, rule, message, employer_id
    replaced: list[dict] = field(default_factory=list)
    workdir: Path | None = None
    docs_dir: Path | None = None
    lake_sha256: str | None = None  # the digest of the lake's part checksums after this ingest (lake_check)

    @property
    def files_frame(self) -> pl.DataFrame:
        return pl.DataFrame([f.as_dict() for f in self.files]) if self.files else pl.DataFrame()

    def totals(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "rows_read": sum(f.rows_read for f in self.files),
            "rows_accepted": sum(f.rows_accepted for f in self.files),
            "rows_rejected": sum(f.rows_rejected for f in self.files),
        }

    def write_rejects(self, out_dir: Path, rejects: pl.DataFrame | None = None) -> list[Path]:
        """``rejects.csv`` and ``rejects/<employer_id>.csv`` (formula-like cells neutralised) of
        ``rejects`` (default: the report's own)."""
        rejects = self.rejects if rejects is None else rejects
        out = Path(out_dir)
        written = [out / "rejects.csv"]
        _write_csv(rejects, written[0])
        for (emp,), part in rejects.group_by(["employer_id"], maintain_order=True):
            p = out / rejects_file(emp)
            _write_csv(part, p)
            written.append(p)
        return written

    def summary(self) -> str:
        t = self.totals()
        lines = [f"{t['files']} file(s): {t['rows_read']} rows read, {t['rows_accepted']} accepted, {t['rows_rejected']} rejected"]
        for f in self.files:
            lines.append(f"  {f.status:9} {f.file} ({f.profile or '-'}): {f.rows_read} read, {f.rows_accepted} accepted, "
                         f"{f.rows_rejected} rejected{' (' + f.line_words() + ')' if f.lines is not None else ''}"
                         f"{'; ' + f.message if f.message else ''}")
        return "\n".join(lines)
