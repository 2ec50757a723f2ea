"""``ingest_folder``: read, stage, validate and store one submission folder (see ``__init__``)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms import schema
from transforms.ingest import lake as lk
from transforms.ingest import profiles as pf
from transforms.ingest import readers as rd
from transforms.ingest import validate as va
from transforms.ingest.report import REJECT_SCHEMA, FileRecord, IngestReport
from transforms.pii import HashKey
from transforms.staging import StagedTable, stage_table

DATA_EXT = {".csv", ".txt", ".xlsx"}
SSN_LIKE = re.compile(r"^\s*\d{3}[- ]?\d{2}[- ]?\d{4}\s*$")
MASK = "[ssn masked]"
MAX_VALUE_CHARS = 200


# --- discovery -------------------------------------------------------------------------------

def discover(root: Path, exclude: list[Path] | None = None) -> list[tuple[str | None, Path]]:
    """Every file of the folder with its dataset (None: not part of the layout)."""
    out: list[tuple[str | None, Path]] = []
    excl = [e.resolve() for e in (exclude or [])]
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        rp = path.resolve()
        if any(rp.is_relative_to(e) for e in excl):
            continue
        dataset: str | None = None
        if rel.parts[0] == "payroll" and len(rel.parts) > 1:
            dataset = "payroll" if path.suffix.lower() in DATA_EXT else None
        elif len(rel.parts) == 1 and path.stem in schema.SUBMITTED_COLUMNS and path.suffix.lower() == ".csv":
            dataset = path.stem
        elif rel.parts[0] in schema.SUBMITTED_COLUMNS and path.suffix.lower() == ".csv":
            dataset = rel.parts[0]
        out.append((dataset, path))
    return out


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
    if not data.strip():
        return [], Problem("empty_file", "the file is empty"), [], notes
    cands = [p for p in pf.profiles_for(dataset, "csv") if ext in p.extensions]
    if not cands:
        return [], Problem("unknown_layout", f"no {dataset} layout is a {ext} file"), [], notes
    best: tuple[pf.Match, str] | None = None
    nearest: pf.Match | None = None
    for p in cands:
        for d in p.delimiters:
            m, near = pf.best_match([p], rd.sniff_header(data, d))
            if m is not None and (best is None or len(m.columns) > len(best[0].columns)):
                best = (m, d)
            if near is not None and (nearest is None or len(near.missing) < len(nearest.missing)):
                nearest = near
    if best is None:
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
        return [], Problem("unknown_layout", _no_match_message(dataset, headers, nearest, hint), table), [], notes
    m, delim = best
    try:
        text, enc = rd.decode(data, m.profile.encodings)
        table = rd.read_delimited(text, delim)
    except rd.FileUnreadable as exc:
        return [], Problem(exc.rule, exc.message), [], notes
    m = pf.match_headers(m.profile, table.headers)
    if not m.ok:
        return [], Problem("unknown_layout", _no_match_message(dataset, table.headers, m)), [], notes
    table.encoding = enc
    if enc not in ("utf-8", "utf-8-sig"):
        notes.append(f"read as {enc}")
    if m.unmatched:
        notes.append(f"ignored column(s) {', '.join(m.unmatched)}")
    return [stage_table(dataset, m, table, key, rel)], None, [], notes


# --- masking -------------------------------------------------------------------------------------

_SSN_DASHED = re.compile(r"(?<!\d)\d{3}[- ]\d{2}[- ]\d{4}(?!\d)")
_NINE = re.compile(r"(?<!\d)\d{9}(?!\d)")


def mask_value(value: str | None, ssn_digits: frozenset[str] | None) -> str | None:
    """Mask whatever could be an ssn in a cell kept for a reject or the quarantine.

    Dashed/spaced ssn patterns are always masked; a run of 9 digits is masked when it is one of
    the file's ssns, or always when ``ssn_digits`` is None (rows whose ssn column is unknown:
    unknown layouts, ragged rows), at the price of masking employer ids there too.
    """
    if value is None:
        return None
    out = _SSN_DASHED.sub(MASK, value)
    if ssn_digits is None:
        return _NINE.sub(MASK, out)
    if ssn_digits:
        out = _NINE.sub(lambda m: MASK if m.group(0) in ssn_digits else m.group(0), out)
    return out


def _short(v: str | None) -> str | None:
    if v is None or len(v) <= MAX_VALUE_CHARS:
        return v
    return v[:MAX_VALUE_CHARS] + f"... ({len(v):,} characters)"


def _cells_json(row: dict, ssn_digits: frozenset[str]) -> str:
    return json.dumps({k: mask_value(v, ssn_digits) for k, v in row.items() if k != "__line"}, ensure_ascii=False)


# --- one file ------------------------------------------------------------------------------------

@dataclass
class FileWork:
    index: int
    rel: str
    dataset: str
    sha: str
    profile: str | None = None
    tables: list[StagedTable] = field(default_factory=list)
    rows_read: int = 0
    rejects: list[dict] = field(default_factory=list)  # file, line, column, value, rule, message, employer_id, __sheet
    rejected_lines: dict[tuple[str | None, int], list[str]] = field(default_factory=dict)
    quarantine: list[dict] = field(default_factory=list)
    file_problem: str | None = None
    notes: list[str] = field(default_factory=list)
    passed: list[pl.DataFrame] = field(default_factory=list)  # staged rows that passed the suite

    def where(self, sheet: str | None) -> str:
        return f"{self.rel}[{sheet}]" if sheet else self.rel


def _sole_employer(st: StagedTable) -> str | None:
    ids = st.staged.get_column("employer_id").drop_nulls().unique() if "employer_id" in st.staged.columns else []
    ids = [i for i in ids if re.fullmatch(r"\d{9}", i)]
    return ids[0] if len(ids) == 1 else None


def _quarantine_table(work: FileWork, table: rd.RawTable, rule: str, message: str) -> None:
    """Quarantine every row of a table that is rejected as a whole (ssn-like cells masked)."""
    for row in table.frame.iter_rows(named=True):
        line = row.pop("__line")
        cells = {table.headers[int(k[1:])] or k: v for k, v in row.items()}
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps({k: mask_value(v, None) for k, v in cells.items()}, ensure_ascii=False)))
    for line, cells in table.ragged:
        work.quarantine.append(dict(source_sheet=table.sheet, source_line=line, employer_id=None, rules=rule,
                                    messages=message, cells=json.dumps([mask_value(c, None) for c in cells], ensure_ascii=False)))


def validate_table(work: FileWork, st: StagedTable, now: datetime, docs_dir: Path | None) -> None:
    dataset = st.dataset
    sole = _sole_employer(st)
    emp = (
        st.staged.select("__line", pl.when(pl.col("employer_id").str.contains(r"^\d{9}$")).then(pl.col("employer_id")).alias("e"))
        if "employer_id" in st.staged.columns else st.staged.select("__line", pl.lit(None, dtype=pl.String).alias("e"))
    )
    emp_of = dict(emp.iter_rows())
    text_of = {c: dict(st.text.select("__line", c).iter_rows()) for c in st.text.columns if c != "__line"}
    where = work.where(st.sheet)

    def add(line: int | None, column: str | None, rule: str, message: str, value: str | None = None) -> None:
        header = st.headers.get(column, column) if column else None
        work.rejects.append(dict(file=where, line=line, column=header, value=_short(value), rule=rule,
                                 message=f"{header}: {message}" if header else message,
                                 employer_id=(emp_of.get(line) if line is not None else None) or sole))
        if line is not None:
            work.rejected_lines.setdefault((st.sheet, line), []).append(rule)

    # structural rejects (before validation)
    for e in st.structural:
        add(e.line, e.column, e.rule, e.message.split(": ", 1)[-1] if e.column else e.message)
    struct_lines = [e.line for e in st.structural]
    ragged = dict(st.ragged)
    for line, cells in ragged.items():
        work.quarantine.append(dict(source_sheet=st.sheet, source_line=line, employer_id=sole, rules="field_count",
                                    messages=f"{len(cells)} fields", cells=json.dumps([mask_value(c, None) for c in cells], ensure_ascii=False)))

    frame = st.staged.filter(~pl.col("__line").is_in(struct_lines))
    text = st.text.filter(~pl.col("__line").is_in(struct_lines))
    gx_frame = va.helper_columns(dataset, frame.drop("__line").with_columns(frame.get_column("__line")), text, now)
    # nothing that looks like an ssn of this file reaches GX (or its Data Docs)
    if st.ssn_digits:
        digits = list(st.ssn_digits)
        gx_frame = gx_frame.with_columns(
            pl.when(pl.col(c).str.replace_all(r"[\s-]", "").is_in(digits)).then(pl.lit(MASK)).otherwise(pl.col(c)).alias(c)
            for c, t in gx_frame.schema.items() if t == pl.String and c != "ssn_hash"
        )
    gx_frame = gx_frame.with_columns(
        pl.col(c).str.replace_all(r"\b\d{3}[- ]\d{2}[- ]\d{4}\b", MASK).alias(c)
        for c, t in gx_frame.schema.items() if t == pl.String and c != "ssn_hash"
    )
    failures = va.run_suite(dataset, gx_frame, run_name=where, docs_dir=docs_dir) if frame.height else []
    file_fail = [f for f in failures if f.severity == "file"]
    if file_fail:
        cols = ", ".join(sorted({st.headers.get(f.column, f.column) for f in file_fail}))
        msg = f"most values of {cols} are empty or of the wrong type: the file is rejected"
        work.rejects.append(dict(file=where, line=None, column=None, value=None, rule="wrong_types", message=msg, employer_id=sole))
        work.notes.insert(0, f"sheet '{st.sheet}': {msg}" if st.sheet else msg)
        for line in frame.get_column("__line").to_list():
            work.rejected_lines.setdefault((st.sheet, line), []).append("wrong_types")
        _quarantine_rows(work, st, frame.get_column("__line").to_list(), {ln: ["wrong_types"] for ln in frame.get_column("__line")}, msg)
        return
    bad: dict[int, list[str]] = {}
    for f in failures:
        col_text = text_of.get(f.column, {})
        for line in f.lines:
            raw = col_text.get(line)
            rule, message = f.rule, f.message
            if rule in ("not_a_number", "invalid_date", "invalid_timestamp", "missing_value") and (raw is None or not raw.replace("+", "").strip()):
                rule, message = "missing_value", "empty"
            value = None if f.column == "ssn" else mask_value(raw, st.ssn_digits)
            add(line, f.column, rule, message, value)
            bad.setdefault(line, []).append(rule)
    _quarantine_rows(work, st, [ln for ln in struct_lines if ln not in ragged], {}, None)
    _quarantine_rows(work, st, list(bad), bad, None)
    passed = frame.filter(~pl.col("__line").is_in(list(bad)))
    work.passed.append(passed.with_columns((pl.lit(work.index, dtype=pl.Int64) * 10_000_000_000 + pl.col("__line")).alias("__order")))


def _quarantine_rows(work: FileWork, st: StagedTable, lines: list[int], rules: dict[int, list[str]], message: str | None) -> None:
    if not lines:
        return
    sel = st.raw.filter(pl.col("__line").is_in(lines))
    emp = dict(st.staged.select("__line", "employer_id").iter_rows()) if "employer_id" in st.staged.columns else {}
    msgs: dict[int, list[str]] = {}
    for r in work.rejects:
        if r["line"] in rules or r["line"] in lines:
            msgs.setdefault(r["line"], []).append(r["message"])
    for row in sel.iter_rows(named=True):
        line = row["__line"]
        rl = sorted(set(rules.get(line) or work.rejected_lines.get((st.sheet, line), [])))
        work.quarantine.append(dict(
            source_sheet=st.sheet, source_line=line, employer_id=mask_value(emp.get(line), st.ssn_digits),
            rules=";".join(rl), messages=message or " | ".join(dict.fromkeys(msgs.get(line, []))),
            cells=_cells_json(row, st.ssn_digits),
        ))


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
) -> IngestReport:
    """Ingest a submission folder into ``<workdir>/lake`` (idempotent; corrected files replace)."""
    from filelock import FileLock

    root = Path(input_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    lake = lk.lake_dir(workdir)
    lake.mkdir(parents=True, exist_ok=True)
    now_utc = _now_utc(now)
    with FileLock(str(lake / ".lock")):
        return _ingest(root, Path(workdir), lake, key, now_utc, Path(docs_dir) if docs_dir else None)


def _ingest(root: Path, workdir: Path, lake: Path, key: HashKey, now: datetime, docs_dir: Path | None) -> IngestReport:
    manifest = lk.load_manifest(lake)
    known = manifest["files"]
    records: list[FileRecord] = []
    works: list[FileWork] = []
    rejects: list[dict] = []
    seen: dict[str, str] = {}
    for index, (dataset, path) in enumerate(discover(root, exclude=[workdir] + ([docs_dir] if docs_dir else []))):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        del data
        if dataset is None:
            msg = "not part of the submission layout (payroll/*.csv|.txt|.xlsx, applications.csv, roster.csv, certifications.csv, employer_rates.csv)"
            records.append(FileRecord(rel, None, None, sha, 0, 0, 0, "rejected", msg))
            rejects.append(dict(file=rel, line=None, column=None, value=None, rule="unknown_file", message=msg, employer_id=None))
            continue
        if sha in known or sha in seen:
            first = known[sha]["file"] if sha in known else seen[sha]
            when = f" on {known[sha]['ingested_at'][:10]}" if sha in known else " earlier in this run"
            records.append(FileRecord(rel, dataset, known.get(sha, {}).get("profile"), sha, 0, 0, 0, "duplicate",
                                      f"same content as {first}, ingested{when}: nothing added"))
            continue
        seen[sha] = rel
        work = FileWork(index, rel, dataset, sha)
        tables, problem, bad_sheets, notes = read_tables(dataset, path, rel, key)
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
            table_rows = st.staged.height + len(st.ragged)
            work.rows_read += table_rows
            validate_table(work, st, now, docs_dir)
        work.tables = tables
        works.append(work)

    # cross-row rules over the whole run, per dataset
    by_index = {w.index: w for w in works}
    for dataset in schema.STAGED:
        passed = [p for w in works if w.dataset == dataset for p in w.passed]
        if not passed:
            continue
        allrows = pl.concat(passed, how="vertical")
        xr = va.cross_row_rejects(dataset, allrows.drop("__line"))
        if xr.height == 0:
            continue
        info = allrows.select("__order", "__line", "source_sheet", "employer_id" if "employer_id" in allrows.columns else pl.lit(None, dtype=pl.String).alias("employer_id"))
        for row in xr.join(info, on="__order", how="left").iter_rows(named=True):
            w = by_index[row["__order"] // 10_000_000_000]
            st = next((t for t in w.tables if t.sheet == row["source_sheet"]), w.tables[0])
            header = st.headers.get(row["column"], row["column"]) if row["column"] else None
            value = st.text.filter(pl.col("__line") == row["__line"]).get_column(row["column"])[0] if row["column"] in st.text.columns else None
            w.rejects.append(dict(file=w.where(row["source_sheet"]), line=row["__line"], column=header, value=mask_value(value, st.ssn_digits),
                                  rule=row["rule"], message=row["message"], employer_id=row["employer_id"]))
            w.rejected_lines.setdefault((row["source_sheet"], row["__line"]), []).append(row["rule"])
        drop = set(xr.get_column("__order").to_list())
        for w in works:
            if w.dataset != dataset:
                continue
            w.passed = [p.filter(~pl.col("__order").is_in(list(drop))) for p in w.passed]
            for st in w.tables:
                lines = [ln for (s, ln), rules in w.rejected_lines.items() if s == st.sheet and rules and rules[-1] in ("duplicate_row", "overlapping_period", "duplicate_key")]
                already = {q["source_line"] for q in w.quarantine if q["source_sheet"] == st.sheet}
                _quarantine_rows(w, st, [ln for ln in lines if ln not in already], {}, None)

    # the lake: replacements first (rows from earlier runs), then this run's parts
    run_shas = {w.sha for w in works}
    replaced: list[dict] = []
    accepted: dict[int, pl.DataFrame] = {}
    for w in works:
        rows = pl.concat(w.passed, how="vertical") if w.passed else pl.DataFrame(schema={**schema.STAGED[w.dataset]})
        accepted[w.index] = rows.select(list(schema.STAGED[w.dataset]))
    for dataset in schema.STAGED:
        ws = [w for w in works if w.dataset == dataset and accepted[w.index].height]
        if not ws:
            continue
        if dataset == "payroll":
            windows = pl.concat([
                accepted[w.index].group_by("employer_id").agg(
                    pl.col("period_start").min().alias("start"), pl.col("period_end").max().alias("end")
                ).with_columns(pl.lit(w.sha).alias("file_sha256"), pl.lit(w.rel).alias("source_file"))
                for w in ws
            ])
            replaced += lk.replace_payroll(lake, windows, run_shas, {w.sha: w.rel for w in ws})
        else:
            new = pl.concat([accepted[w.index].with_columns(pl.lit(w.sha).alias("_file_sha256"), pl.lit(w.rel).alias("source_file")) for w in ws])
            replaced += lk.replace_by_key(lake, dataset, new, run_shas)
    for r in replaced:
        if r["replaced_sha256"] in known:
            known[r["replaced_sha256"]].setdefault("replaced_by", []).append(r["sha256"])

    ingested_at = datetime.now(UTC).isoformat(timespec="seconds")
    for w in works:
        parts = lk.write_rows(lake, w.dataset, accepted[w.index], w.sha)
        qrows = pl.DataFrame(w.quarantine, schema={k: v for k, v in lk.QUARANTINE_SCHEMA.items() if k not in ("file_sha256", "source_file")}) if w.quarantine else None
        qpart = None
        if qrows is not None:
            qrows = qrows.with_columns(pl.lit(w.sha).alias("file_sha256"), pl.lit(w.rel).alias("source_file"))
            qpart = lk.write_quarantine(lake, w.dataset, qrows, w.sha)
        n_rej = len({k for k, v in w.rejected_lines.items() if v})
        n_acc = accepted[w.index].height
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
            span = f" for {r['window_start']} to {r['window_end']}" if r.get("window_start") else ""
            who = f" of employer {r['employer_id']}" if r.get("employer_id") else ""
            msg.append(f"replaced {r['rows_removed']} row(s){who}{span} from {r['replaced_file']}")
        rec = FileRecord(w.rel, w.dataset, w.profile, w.sha, w.rows_read, n_acc, n_rej, status, "; ".join(msg))
        records.append(rec)
        rejects += w.rejects
        known[w.sha] = dict(file=w.rel, dataset=w.dataset, profile=w.profile, status=status, rows_read=w.rows_read,
                            rows_accepted=n_acc, rows_rejected=n_rej, ingested_at=ingested_at, parts=parts, quarantine=qpart)
    lk.save_manifest(lake, manifest)
    records.sort(key=lambda r: r.file)
    rej = pl.DataFrame(rejects, schema=REJECT_SCHEMA) if rejects else pl.DataFrame(schema=REJECT_SCHEMA)
    rej = rej.sort(["file", "line", "column", "rule"], nulls_last=False)
    return IngestReport(files=records, rejects=rej, replaced=replaced, workdir=workdir, docs_dir=docs_dir)
