"""Validate: one staged table against its dataset's suite (``expectations/``, evaluated by
``validate``) into its file's ``FileWork``: rejects, quarantined rows and the rows that passed;
and one file read, staged and validated whole (the route of every file that is not simple)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from transforms.ingest.read.cast.canonical import StagedTable
from transforms.ingest.read.tables import read_tables
from transforms.ingest.validate import engines as va
from transforms.ingest.validate.cross_rows import ORDER_BASE
from transforms.ingest.validate.masking import mask_value, maskable, masked_ssns, short
from transforms.ingest.validate.quarantine import (
    FileWork,
    lookup,
    quarantine_rows,
    quarantine_table,
    reject_all,
    sole_employer,
    wrong_types_message,
)
from transforms.pii import HashKey

COMPACT = ("ssn_hash", "source_file", "__code", "__counts")


def suite_frame(dataset: str, staged: pl.DataFrame, text: pl.DataFrame, now: datetime) -> pl.DataFrame:
    """What the suite checks: the staged columns and the helper columns, ``__line`` last."""
    return va.helper_columns(dataset, staged.drop("__line").with_columns(staged.get_column("__line")), text, now)


@dataclass
class FileScope:
    """What a big file decides as a whole when its pieces are validated one by one
    (``validate_in_pieces``): its sole employer, the sums of its file expectations
    (``validate.file_tally``), and, once those failed, the message rejecting every row."""

    sole: str | None
    tally: list[list[int]]
    rejected: str | None = None

    def add(self, tally: list[tuple[int, int, int]]) -> None:
        for acc, t in zip(self.tally, tally, strict=True):
            for i, v in enumerate(t):
                acc[i] += v


SHEET_BASE = 10_000_000  # a workbook's sheets: __order = file index * ORDER_BASE + sheet * SHEET_BASE + line


def held(passed: pl.DataFrame, index: int, sheet: int = 0) -> pl.DataFrame:
    """Rows that passed, as held until the whole run is validated: ``__order`` for ``__line``
    (``sheet``: the table's place among a workbook's sheets, from 1, so that the same line of two
    sheets is two rows), and the long repeated strings (a 64-character hash per row, the file
    name) as categoricals, 4 bytes a row instead of about 80 (0.8 GB at 10M rows)."""
    return passed.drop("__line").with_columns(
        (pl.lit(index * ORDER_BASE + sheet * SHEET_BASE, dtype=pl.Int64) + pl.col("source_line")).alias("__order"),
        *[pl.col(c).cast(pl.Categorical) for c in COMPACT if c in passed.columns],
    )


# a cell that names a totals line (``TOTAL``, ``Grand total``, ``Totals:``): the line is one problem, not one per cell
_TOTALS = re.compile(r"(?i)^\s*(grand\s+|sub-?\s*)?totals?\b")
TOTALS_MESSAGE = "a totals line: remove it (the credit is computed from the lines themselves)"


def _totals_said_once(pending: list[tuple], bad: dict[int, list[str]], text: pl.DataFrame, lines: list[int]) -> None:
    """The rejects of a failed line (``lines``) one of whose cells (``text``) says it is a totals
    line (``_TOTALS``), said as one problem: that cell, rule ``totals_line``, "a totals line: remove it"."""
    text_of = lookup(text, lines, [c for c in text.columns if c != "__line"]) if lines else {}
    totals = {}
    for line, row in text_of.items():
        said = next(((c, v) for c, v in row.items() if isinstance(v, str) and _TOTALS.match(v)), None)
        if said is not None:
            totals[line] = said
    if not totals:
        return
    kept = [p for p in pending if p[0] not in totals]
    for line, (column, value) in sorted(totals.items()):
        kept.append((line, column, "totals_line", TOTALS_MESSAGE, None if column == "ssn" else mask_value(value)))
        bad[line] = ["totals_line"]
    pending[:] = kept


def validate_table(work: FileWork, st: StagedTable, now: datetime, docs_dir: Path | None, engine: str = "polars",
                   scope: FileScope | None = None) -> None:
    """Validate one staged table into ``work``: its rejects, quarantined rows and rows that passed.
    ``scope``: the table is a piece of a big file (polars engine), see ``FileScope``."""
    dataset = st.dataset
    work.padded_ssns += st.padded_ssns
    sole = scope.sole if scope is not None else sole_employer(st)
    has_emp = "employer_id" in st.staged.columns
    where = work.where(st.sheet)
    pending: list[tuple[int | None, str | None, str, str, str | None]] = []  # line, column, rule, message, value

    def flush() -> None:
        """Turn pending rejects into reject records (employer ids looked up for those lines only)."""
        lines = sorted({p[0] for p in pending if p[0] is not None})
        emp_of = {}
        if has_emp and lines:
            emp_of = {ln: r["employer_id"] for ln, r in lookup(st.staged, lines, ["employer_id"]).items()
                      if r["employer_id"] is not None and re.fullmatch(r"\d{9}", r["employer_id"])}
        for line, column, rule, message, value in pending:
            header = st.headers.get(column, column) if column else None
            work.rejects.append(dict(file=where, line=line, column=header, value=short(value), rule=rule,
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
    _quarantine_ragged(work, st, ragged, sole)

    frame = st.staged.filter(~pl.col("__line").is_in(struct_lines)) if struct_lines else st.staged
    text = st.text.filter(~pl.col("__line").is_in(struct_lines)) if struct_lines else st.text
    gx_frame = suite_frame(dataset, frame, text, now)
    # nothing that looks like an ssn of this file reaches the suite (or GX's Data Docs)
    gx_frame = gx_frame.with_columns(masked_ssns(gx_frame.get_column(c), digits) for c, digits in maskable(gx_frame, st.ssn_digits))
    if scope is not None and scope.rejected is not None:
        reject_all(work, st, frame, struct_lines, ragged, scope.rejected)
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
        msg = wrong_types_message(st, file_fail, work.layouts)
        work.rejects.append(dict(file=where, line=None, column=None, value=None, rule="wrong_types", message=msg, employer_id=sole))
        work.problem_rule = work.problem_rule or "wrong_types"
        work.notes.insert(0, msg)
        reject_all(work, st, frame, struct_lines, ragged, msg)
        return
    bad: dict[int, list[str]] = {}
    failed_lines = sorted({ln for f in failures for ln in f.lines})
    text_cols = sorted({f.column for f in failures if f.column in text.columns})
    text_of = lookup(text, failed_lines, text_cols) if failed_lines and text_cols else {}
    for f in failures:
        for line in f.lines:
            raw = text_of.get(line, {}).get(f.column)
            rule, message = f.rule, f.message
            if rule in ("not_a_number", "invalid_date", "invalid_timestamp", "missing_value") and (raw is None or not raw.replace("+", "").strip()):
                rule, message = "missing_value", "empty"
            value = None if f.column == "ssn" else mask_value(raw)
            pending.append((line, f.column, rule, message, value))
            bad.setdefault(line, []).append(rule)
    _totals_said_once(pending, bad, text, failed_lines)
    flush()
    quarantine_rows(work, st, [ln for ln in struct_lines if ln not in ragged], {}, None)
    quarantine_rows(work, st, list(bad), bad, None)
    passed = frame.filter(~pl.col("__line").is_in(list(bad))) if bad else frame
    work.passed.append(held(passed, work.index, 0 if st.sheet is None else len(work.passed) + 1))


def _quarantine_ragged(work: FileWork, st: StagedTable, ragged: dict, sole: str | None) -> None:
    """The lines of the wrong width, and those a quote left open spans (``quotes.py``), quarantined."""
    open_quote = {e.line: e.message for e in st.structural if e.rule == "open_quote"}
    at = next((i for i, (_, f) in enumerate(st.columns) if f == "employer_id"), None)
    given = work.context.for_sheet(st.sheet).get("employer_id") if work.context is not None else None
    for line, cells in ragged.items():
        rule, said = ("open_quote", open_quote[line]) if line in open_quote else ("field_count", f"{len(cells)} fields")
        # a line a quote hid still names its employer in its text: one of the employers the file
        # names, whose applications it holds (spec section 7), never a value read
        named = _named_employer(cells, at) if rule == "open_quote" else None
        mine = sole if named is None or named == sole else None  # another employer's line: whose is in doubt
        work.quarantine.append(dict(source_sheet=st.sheet, source_line=line, employer_id=mine, rules=rule,
                                    messages=said, cells=json.dumps([mask_value(c) for c in cells], ensure_ascii=False),
                                    **({"printed_employer": named} if named and named != given else {})))


def _named_employer(cells: list[str], at: int | None) -> str | None:
    """The 9 digits of an employer id written in a line's ``at``-th cell (``12-3456789`` or
    ``123456789``, quotes and blanks around it dropped), else None."""
    if at is None or at >= len(cells):
        return None
    digits = cells[at].strip().strip('"').strip().replace("-", "")
    return digits if len(digits) == 9 and digits.isdigit() else None


def read_and_validate(work: FileWork, path: Path, key: HashKey, now: datetime, docs_dir: Path | None, engine: str) -> None:
    """Read, stage and validate one file into ``work`` (touches nothing shared)."""
    rel = work.rel
    tables, problem, bad_sheets, notes = read_tables(work.dataset, path, rel, key, work.context, layouts=work.layouts,
                                                     limits=work.limits)
    work.notes += notes
    if problem is not None:
        work.file_problem = problem.message
        work.problem_rule = problem.rule
        work.rejects.append(dict(file=rel, line=None, column=None, value=None, rule=problem.rule,
                                 message=problem.detail or problem.message, employer_id=None))
        if problem.table is not None:
            work.rows_read += problem.table.rows_read
            for line in problem.table.frame.get_column("__line").to_list() + [ln for ln, _ in problem.table.ragged]:
                work.rejected_lines[(None, line)] = [problem.rule]
            quarantine_table(work, problem.table, problem.rule, problem.message)
    for sh in bad_sheets:
        t = sh.problem.table
        if sh.problem.rule == "unread_table":  # said in the file's message: the file is not read whole
            work.notes.append(sh.problem.message)
        work.rejects.append(dict(file=work.where(sh.sheet), line=None, column=None, value=None, rule=sh.problem.rule,
                                 message=sh.problem.detail or sh.problem.message, employer_id=None))
        work.rows_read += t.rows_read
        for line in t.frame.get_column("__line").to_list() + [ln for ln, _ in t.ragged]:
            work.rejected_lines[(sh.sheet, line)] = [sh.problem.rule]
        quarantine_table(work, t, sh.problem.rule, sh.problem.message)
    for st in tables:
        work.profile = st.profile
        work.rows_read += st.staged.height + len(st.ragged) + sum(e.rule == "line_too_long" for e in st.structural)
        if st.shape is not None:
            work.shape_lines += st.shape.lines
        validate_table(work, st, now, docs_dir, engine)
    # the rows that passed are in work.passed; the tables (cells) go out of scope here (a file
    # with a cross-row reject is read again for them): memory holds one staged copy of the run
