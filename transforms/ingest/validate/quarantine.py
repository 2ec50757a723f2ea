"""Quarantine: what a file gives up, as reject records (file, line, column, value, rule,
message, employer) and quarantined rows (the submitted cells, masked), gathered per file in a
``FileWork`` while its tables are validated."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import polars as pl

from transforms.ingest.read import problems as pb
from transforms.ingest.read.cast.canonical import StagedTable
from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files.line_limits import Limits
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.reports import report_walk as rw
from transforms.ingest.validate import engines as va
from transforms.ingest.validate.masking import cells_json, mask_employer, mask_value


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
    problem_rule: str | None = None  # the rule of a whole-file reject (unknown_layout, wrong_types ...)
    padded_ssns: int = 0  # ssns of 7 or 8 digits padded with the leading zeros a spreadsheet dropped
    context: object | None = None  # what the submission says of the file outside its rows (context.FileContext)
    layouts: tuple | None = None  # the payroll profiles in effect (profile_files.Layouts; None: the shipped ones)
    limits: Limits = field(default_factory=Limits)  # what one file may hold (a line's bytes, a sheet's XML)
    shape_lines: int = 0  # a report's preamble, totals, block, repeated-header and note lines
    lines: int | None = None  # the file's physical lines (``submission.physical_lines``), counted where it is read
    blank_lines: int = 0  # of them, lines that hold no cell
    notes: list[str] = field(default_factory=list)
    passed: list[pl.DataFrame] = field(default_factory=list)  # staged rows that passed the suite
    unread: str | None = None  # why no line of the file was read, said once (``file_employers.unread_reason``)

    def where(self, sheet: str | None) -> str:
        return f"{self.rel}[{sheet}]" if sheet else self.rel


def employer_ids(staged: pl.DataFrame) -> list[str]:
    """The distinct valid (9-digit) employer ids of a staged table."""
    ids = staged.get_column("employer_id").drop_nulls().unique() if "employer_id" in staged.columns else []
    return [i for i in ids if re.fullmatch(r"\d{9}", i)]


def sole_employer(st: StagedTable) -> str | None:
    ids = employer_ids(st.staged)
    return ids[0] if len(ids) == 1 else None


def quarantine_table(work: FileWork, table: rd.RawTable, rule: str, message: str) -> None:
    """Quarantine every row of a table that is rejected as a whole (ssn-like cells masked)."""
    for row in table.frame.iter_rows(named=True):
        line = row.pop("__line")
        cells = {table.headers[int(k[1:])] or k: v for k, v in row.items()}
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps({k: mask_value(v) for k, v in cells.items()}, ensure_ascii=False)))
    for line, cells in table.ragged:
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps([mask_value(c) for c in cells], ensure_ascii=False)))


def lookup(frame: pl.DataFrame, lines: list[int], cols: list[str]) -> dict[int, dict]:
    """``{line: {col: value}}`` for a few lines of ``frame`` (with ``__line``), never every row."""
    if not lines:
        return {}
    sel = frame.filter(pl.col("__line").is_in(lines)).select("__line", *cols)
    return {r["__line"]: r for r in sel.iter_rows(named=True)}


def wrong_types_message(st: StagedTable, file_fail: list[va.Failure], layouts: tuple | None = None) -> str:
    """The one line of a table rejected whole, naming its profile and sheet. A field that a report
    block or the file's (sheet's) name gives and that is empty on every row is said as what read
    nothing (the block's label and where it was looked for, the name's pattern), never as the
    empty values of its field; ``layouts``: the profiles in effect."""
    failed = {f.column for f in file_fail}
    empty = {c for c in failed if c in st.text.columns and st.text.get_column(c).str.strip_chars().fill_null("").eq("").all()}
    profile = next((p for p in (layouts or load_profiles()) if p.name == st.profile), None)
    said, lost = _read_nothing(st, profile, empty) if profile is not None and profile.report is not None else ([], set())
    cols = ", ".join(sorted({st.headers.get(c, c) for c in failed - lost}))
    said += [f"most values of {cols} are empty or of the wrong type"] if cols else []
    return pb.said_at(st.profile, st.sheet) + "; ".join(said) + ": the file is rejected"


def _read_nothing(st: StagedTable, profile, empty: set[str]) -> tuple[list[str], set[str]]:
    """(what read nothing, the fields it leaves empty): the blocks no line matched (a field a block
    sets is a column headed ``<field> (block header line)``) and the name patterns that matched no
    name (``<field> (file or sheet name)``)."""
    said, lost = [], set()
    blocks = {c for c in empty if st.headers.get(c, "").endswith(rw.BLOCK_SAID)}
    for b in profile.report.blocks:
        if set(b.sets) & blocks:
            said.append(f"no line matched report.blocks label '{b.label}' ({'alone ' if b.alone else ''}"
                        f"{'in the first cell' if b.first else 'in any cell'} of a line; it sets {', '.join(b.sets)})")
            lost |= set(b.sets) & blocks
    named = {c for c in empty if st.headers.get(c, "").endswith(rw.NAME_SAID)}
    for words, fields in ctx.names_missed(profile, st.source_file, st.sheet, named):
        said.append(words)
        lost |= fields
    return said, lost


def reject_all(work: FileWork, st: StagedTable, frame: pl.DataFrame, struct_lines: list[int], ragged: dict, msg: str) -> None:
    """Every row of a table whose file failed a file expectation: rejected and quarantined (the
    rows rejected before validation are quarantined with their own rules)."""
    all_lines = frame.get_column("__line").to_list()
    for line in all_lines:
        work.rejected_lines.setdefault((st.sheet, line), []).append("wrong_types")
    quarantine_rows(work, st, [ln for ln in struct_lines if ln not in ragged], {}, None)
    quarantine_rows(work, st, all_lines, dict.fromkeys(all_lines, ["wrong_types"]), msg)


def quarantine_rows(work: FileWork, st: StagedTable, lines: list[int], rules: dict[int, list[str]], message: str | None) -> None:
    if not lines:
        return
    sel = st.raw.filter(pl.col("__line").is_in(lines))
    ids = [c for c in ("employer_id", "employee_id", "ssn_hash", "application_id") if c in st.staged.columns]
    known = lookup(st.staged, lines, ids) if ids else {}
    emp = {ln: r.get("employer_id") for ln, r in known.items()}
    wanted = set(lines) | set(rules)
    msgs: dict[int, list[str]] = {}
    cols: dict[int, list[str]] = {}
    for r in work.rejects:
        if r["line"] in wanted:
            msgs.setdefault(r["line"], []).append(r["message"])
            if r.get("column"):
                cols.setdefault(r["line"], []).append(r["column"])
    # a line that is not a row of the table (a report's totals line that disagrees): its record alone
    for line in sorted(set(lines) - set(sel.get_column("__line").to_list())):
        work.quarantine.append(dict(
            source_sheet=st.sheet, source_line=line, employer_id=mask_employer(sole_employer(st), st.ssn_digits),
            rules=";".join(sorted(set(rules.get(line) or work.rejected_lines.get((st.sheet, line), [])))),
            messages=message or " | ".join(dict.fromkeys(msgs.get(line, []))), cells="{}",
            columns=";".join(dict.fromkeys(cols.get(line, []))) or None))
    for row in sel.iter_rows(named=True):
        line = row["__line"]
        rl = sorted(set(rules.get(line) or work.rejected_lines.get((st.sheet, line), [])))
        got = known.get(line, {})
        # an employer id that disagrees with the folder's or files.csv's is in doubt: the line holds
        # the applications of every employer the file names (spec section 7)
        disputed = "context_mismatch" in rl
        given = work.context.for_sheet(st.sheet).get("employer_id") if work.context is not None else None
        printed = mask_employer(emp.get(line), st.ssn_digits) if disputed else None
        work.quarantine.append(dict(
            source_sheet=st.sheet, source_line=line,
            employer_id=None if disputed else mask_employer(emp.get(line), st.ssn_digits),
            # the EIN the disputed line prints (a PEO's own): one of the file's employers, never stored in the part
            **({"printed_employer": printed} if printed and printed != given else {}),
            rules=";".join(rl), messages=message or " | ".join(dict.fromkeys(msgs.get(line, []))),
            cells=cells_json(row), employee_id=_readable_id(got.get("employee_id"), st.ssn_digits),
            ssn_hash=got.get("ssn_hash"), application_id=_readable_id(got.get("application_id"), st.ssn_digits),
            columns=";".join(dict.fromkeys(cols.get(line, []))) or None,
        ))


def _readable_id(value: str | None, ssn_digits: frozenset[str]) -> str | None:
    """An id as the quarantine keeps it to find the applications a rejected line holds: None
    when it cannot be printed, is too long or looks like an ssn (never stored)."""
    if value is None or len(value) > 64 or mask_value(value) != value or mask_employer(value, ssn_digits) != value:
        return None
    if any(ord(ch) < 32 and ch != "\t" for ch in value):
        return None
    return value
