"""The end of an ingest, on whatever route its files took (``pipeline``: one process;
``cluster``: Dask workers): what the report says of each file, the lake's manifest entries of the
run's files, their checksums, and the manifest saved last (the commit)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from transforms.ingest.plan import Plan
from transforms.ingest.read.problems import said_at
from transforms.ingest.report import REJECT_SCHEMA, FileRecord, IngestReport
from transforms.ingest.store import lake as lk
from transforms.ingest.store import lake_verify as lake_check
from transforms.ingest.validate.quarantine import FileWork
from transforms.ingest.validate.run_rejects import doubtful_only

# a file's quarantined rows as its FileWork holds them (the file's sha and path are added when written)
QUARANTINE_ROWS = {k: v for k, v in lk.QUARANTINE_SCHEMA.items() if k not in ("file_sha256", "source_file")}
# as the scratch area keeps them between the map and the finish: with the EIN a disputed line prints
STAGED_QUARANTINE = {**QUARANTINE_ROWS, "printed_employer": pl.String}


def accepted_counts(accepted: dict[str, pl.DataFrame]) -> dict[int, int]:
    """Accepted lines per file index: a row of a line-per-code export counts its lines."""
    n_accepted: dict[int, int] = {}
    for dataset, rows in accepted.items():
        if dataset == "payroll":
            n_accepted.update(rows.group_by("__file").agg(pl.col("line_count").sum()).iter_rows())
        elif dataset != "payroll_lines":
            n_accepted.update(rows.group_by("__file").len().iter_rows())
    return n_accepted


def file_record(w: FileWork, n_acc: int, mine: list[dict]) -> FileRecord:
    """What the report says of one file read in this run: its status and message."""
    n_rej = len({k for k, v in w.rejected_lines.items() if v})
    # a line read but doubtful is stored and held (spec section 7): rejected, not accepted, until confirmed
    n_doubt = sum(1 for v in w.rejected_lines.values() if doubtful_only(v))
    n_acc = max(n_acc - n_doubt, 0)
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
        msg.append(f"{said_at(w.profile)}no data rows (header only)")
    if n_rej and not w.file_problem:
        msg.append(f"{n_rej} row(s) rejected" + (
            f" ({n_doubt} read but doubtful: kept, they hold their applications until a release confirms them "
            "or a corrected file replaces them)" if n_doubt else ""))
    if w.padded_ssns:
        msg.append(f"{w.padded_ssns} ssn(s) of 7 or 8 digits (a numeric cell that dropped leading zeros) padded to 9")
    for r in mine:
        if r.get("superseded"):
            msg.append(f"a new version of {r['replaced_file']}: supersedes the earlier one ({r['rows_removed']} row(s) removed)")
            continue
        span = f" for {r['window_start']} to {r['window_end']}" if r.get("window_start") else ""
        who = f" of employer {r['employer_id']}" if r.get("employer_id") else ""
        msg.append(f"replaced {r['rows_removed']} row(s){who}{span} from {r['replaced_file']}")
    return FileRecord(w.rel, w.dataset, w.profile, w.sha, w.rows_read, n_acc, n_rej, status, "; ".join(msg))


def named(accepted: dict[str, pl.DataFrame], works: list[FileWork]) -> dict[int, dict[str, list[str]]]:
    """The employer and application ids each file with a rejected line names (on its accepted
    rows and its readable rejected lines): a line whose own ids cannot be read holds the
    applications of the file's employers (spec section 7)."""
    out: dict[int, dict[str, list[str]]] = {}
    for w in works:
        ids: dict[str, set[str]] = {"employers": set(), "applications": set()}
        rows = accepted.get(w.dataset)
        for kind, col in (("employers", "employer_id"), ("applications", "application_id")):
            if rows is not None and col in rows.columns:
                ids[kind] |= set(rows.filter(pl.col("__file") == w.index).get_column(col).drop_nulls().unique().to_list())
            ids[kind] |= {q[col] for q in w.quarantine if q.get(col)}
        ids["employers"] = {e for e in ids["employers"] if re.fullmatch(r"\d{9}", e)}
        out[w.index] = {k: sorted(v) for k, v in ids.items() if v}
    return out


def commit(lake: Path, manifest: dict, plan: Plan, parts_of: dict[str, list[str]], qparts: dict[int, str | None],
           n_accepted: dict[int, int], named_ids: dict[int, dict[str, list[str]]], replaced: list[dict], validating,
           workdir: Path, docs_dir: Path | None, written_sums: dict[str, str | None] | None = None) -> IngestReport:
    """Each file's record and manifest entry, the checksums (``written_sums``: of parts written
    elsewhere, as ``lake_verify.refresh`` takes them), the manifest saved last; the report."""
    records, rejects, works, known = plan.records, plan.rejects, plan.todo, manifest["files"]
    ingested_at = datetime.now(UTC).isoformat(timespec="seconds")
    seq = int(manifest.get("ingest_seq", 0)) + 1  # orders the runs' files (a later file replaces by key)
    manifest["ingest_seq"] = seq
    for w in works:
        rec = file_record(w, n_accepted.get(w.index, 0), [r for r in replaced if r["sha256"] == w.sha])
        rec.lines, blanks = w.lines, w.blank_lines  # counted where the file was read (``tasks.map_job``)
        rec.passed_over = None if rec.lines is None else rec.lines - rec.rows_accepted - rec.rows_rejected
        if blanks:
            rec.message = "; ".join(m for m in (rec.message, f"{blanks:,} blank line(s) passed over") if m)
        records.append(rec)
        rejects += w.rejects
        known[w.sha] = dict(file=w.rel, dataset=w.dataset, profile=w.profile, status=rec.status, rows_read=w.rows_read,
                            rows_accepted=rec.rows_accepted, rows_rejected=rec.rows_rejected, ingested_at=ingested_at,
                            parts=parts_of.get(w.sha, []), quarantine=qparts.get(w.index), ingest_seq=seq,
                            **named_ids.get(w.index, {}), **({"problem": w.problem_rule} if w.problem_rule else {}))
    lake_check.refresh(lake, manifest, written_sums)
    lk.save_manifest(lake, manifest)
    left = lake_check.owed(manifest)
    if left:
        raise lk.LakeDamaged(
            f"{len(left)} file(s) that a repair took out of the lake are not in this submission: "
            + ", ".join(sorted(left.values())[:10]) + ". Put them in the submission folder (the same content) "
            "and run again: nothing is decided without them")
    read_n = sum(r.rows_read for r in records)
    new = sum(1 for r in records if r.status not in ("duplicate",))
    padded = sum(w.padded_ssns for w in works)
    counted = [r for r in records if r.lines is not None]
    validating.say(f"{new:,} new files: {read_n:,} rows read, {sum(r.rows_accepted for r in records):,} accepted, "
                   f"{sum(r.rows_rejected for r in records):,} rejected; {sum(r.lines for r in counted):,} lines, "
                   f"{sum(r.passed_over for r in counted):,} passed over (headers, titles, totals, blanks)"
                   + (f"; {padded:,} ssns of 7 or 8 digits padded with leading zeros" if padded else ""))
    validating.done()
    records.sort(key=lambda r: r.file)
    rej = pl.DataFrame(rejects, schema=REJECT_SCHEMA) if rejects else pl.DataFrame(schema=REJECT_SCHEMA)
    rej = rej.sort(["file", "line", "column", "rule"], nulls_last=False)
    return IngestReport(files=records, rejects=rej, replaced=replaced, workdir=workdir, docs_dir=docs_dir,
                        lake_sha256=lake_check.lake_digest(manifest))
