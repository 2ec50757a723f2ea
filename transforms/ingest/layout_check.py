"""How a payroll file would be read, without a run or a ledger (``impcredit layouts check FILE``).

For each table of the file: the layout (profile) that reads it and where that profile comes from,
the header's line, each column and the field it reaches (or none), the first rows as canonical
values (never an ssn: only whether one is given), the lines that are not rows (titles, totals
checked against the lines above them, block lines, notes, a summary, a cover sheet) and every
reject with its rule, as the validation suites of a run would give them. A file in a submission's
``payroll/`` folder takes what the submission says of it (the folder named by a FEIN,
``payroll/files.csv``). The rules over a whole run (a line sent twice, an employee-year that nets
negative, one person under two ids) need the other files: a run applies them.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.layouts import profile_files as pfiles
from transforms.ingest.read.tables import read_tables
from transforms.ingest.validate.files import validate_table
from transforms.ingest.validate.quarantine import FileWork
from transforms.pii import HashKey

SHOWN = ("employer_id", "employee_id", "period_start", "period_end", "hours", "gross_wages", "employer_taxes",
         "check_id", "pay_date")


@dataclass
class TableCheck:
    sheet: str | None
    profile: str
    origin: str  # shipped, or agency (<file>)
    header_line: int | None
    columns: list[tuple[str, str | None]]  # each header and the field it reaches
    rows: int
    first_rows: list[dict]  # canonical values (no ssn: "ssn given" yes/no)
    skipped: str  # the lines that are not rows, counted ("3 preamble line(s), 4 totals line(s)")
    preamble: list[str]  # the text of the lines above the header
    totals_checked: int  # totals lines compared with the lines they total


@dataclass
class FileCheck:
    file: str
    tables: list[TableCheck] = field(default_factory=list)
    problem: str | None = None  # no layout reads the file (the message: the nearest row and layout)
    rejects: list[dict] = field(default_factory=list)  # line, column, value, rule, message
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    @property
    def read_whole(self) -> bool:
        """Every table read by a layout and no line rejected."""
        return self.problem is None and bool(self.tables) and not self.rejects


def _where(path: Path) -> tuple[Path | None, str]:
    """(the submission folder, the file's path in it) when the file lies under a ``payroll/``
    folder; else (None, its name)."""
    parts = path.resolve().parts
    if "payroll" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("payroll", 1)
        root = Path(*parts[:i])
        return root, PurePosixPath(*parts[i:]).as_posix()
    return None, path.name


def check_file(path: Path, *, dataset: str = "payroll", first_rows: int = 5,
               now: dt.datetime | None = None, layouts=None) -> FileCheck:
    """How ``path`` would be read (see the module's docstring); ``layouts``: the payroll profiles in
    effect (None: the shipped ones)."""
    root, rel = _where(path)
    context = None
    if root is not None and dataset == "payroll":
        contexts, _ = ctx.contexts(root, [rel])
        context = contexts.get(rel)
    key = HashKey(secrets.token_bytes(32), "ephemeral")  # nothing is kept: the hashes are thrown away
    tables, problem, bad_sheets, notes = read_tables(dataset, path, rel, key, context, layouts=layouts)
    out = FileCheck(rel, notes=list(notes))
    if problem is not None:
        out.problem = problem.detail or problem.message
        return out
    for sheet in bad_sheets:
        out.rejects.append(dict(line=None, column=None, value=None, rule=sheet.problem.rule,
                                message=sheet.problem.detail or sheet.problem.message, sheet=sheet.sheet))
    profiles = {p.name: p for p in (layouts or pfiles.load_profiles())}
    now = now or dt.datetime.now(dt.UTC)
    for st in tables:
        work = FileWork(0, rel, dataset, "")
        validate_table(work, st, now, None, "polars")
        out.rejects += [dict(line=r["line"], column=r["column"], value=r["value"], rule=r["rule"],
                             message=r["message"], sheet=st.sheet) for r in work.rejects]
        shape = st.shape
        head = st.staged.head(first_rows)
        shown = [c for c in SHOWN if c in head.columns]
        rows = [{**{c: r[c] for c in shown}, "ssn given": "yes" if r.get("ssn_hash") else "no"}
                for r in head.select(*shown, *(["ssn_hash"] if "ssn_hash" in head.columns else [])).to_dicts()]
        p = profiles.get(st.profile) or pfiles.canonical_profile(dataset, layouts)
        out.tables.append(TableCheck(
            st.sheet, st.profile, pfiles.origin(p), st.header_line, st.columns, st.staged.height + len(st.ragged),
            rows, shape.words() if shape is not None else "", list(shape.preamble) if shape is not None else [],
            shape.totals if shape is not None else 0))
    return out


__all__ = ["FileCheck", "TableCheck", "check_file"]
