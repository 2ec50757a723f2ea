"""The inputs of a run: the submission staged through ingest into the lake, and the checks that
stop a run before it decides anything (an incomplete submission, a file that could not be read,
a tax year without applications or before the program, a decision dated after today).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from transforms import failpoints, schema
from transforms.ingest.executors import Executor
from transforms.ingest.store.standing_rejects import STANDING_SCHEMA, as_rejects, under_applicant
from transforms.ingest.validate.identity import resolve as resolve_identities
from transforms.options import IngestOptions
from transforms.outputs import sha256_file, write_csv
from transforms.pii import HashKey
from transforms.reference.parameters import Parameters
from transforms.schema import AGENCY_DATASETS, STAGED


class RunError(RuntimeError):
    """A run cannot proceed; the message says what to fix."""


class SubmissionIncomplete(RunError):
    """A file of the submission is missing or cannot be read: nothing may be decided on it."""


# whole-file rejects of a dataset file that stop a run before it decides: its rows are unknown,
# so deciding would turn a fault of the file into a final decision
STOPPING_RULES = frozenset({"unknown_layout", "wrong_types", "encoding", "unreadable", "empty_file", "compressed_file",
                            "binary_file", "utf16_without_bom", "symbolic_link", "not_a_file", "no_employer_id",
                            "no_pay_frequency", "no_period",
                            "manifest_error"})


def check_complete(input_dir: Path, workdir: Path | None = None, cluster=None) -> None:
    """Every file the spec requires is there, a regular file, readable, text with a header
    (spec section 1); else ``SubmissionIncomplete`` naming each problem, before anything is
    read into the lake or decided. ``cluster``: a Dask scheduler's address; a worker reads the
    files' first bytes (no payroll byte on this machine)."""
    from transforms.ingest.read.files.submission import discover, incomplete

    if not any(e.dataset is not None for e in discover(input_dir, exclude=[workdir] if workdir else None)):
        raise SubmissionIncomplete(
            f"{input_dir}: no submission files found (expected payroll/*.csv, applications.csv, roster.csv, "
            "certifications.csv, employer_rates.csv, or a vendor payroll export)")
    if cluster:
        from transforms.ingest import tasks
        from transforms.ingest.executors import run_on_worker

        problems = run_on_worker(cluster, tasks.incomplete, Path(input_dir), [workdir] if workdir else [],
                                 what="the submission was checked")
    else:
        problems = incomplete(input_dir, exclude=[workdir] if workdir else None)
    if problems:
        raise SubmissionIncomplete(f"{input_dir}: the submission is incomplete, nothing was decided: "
                                   + "; ".join(problems) + ". Fix the submission and run again.")


def check_standing(workdir: Path) -> tuple[pl.DataFrame, dict]:
    """What the lake holds rejected, checked before anything is decided: a file rejected whole
    (not read: unknown layout, mostly wrong types, not text) or a rejected line of the agency's
    own files (certifications, employer rates, control groups) stops the run naming them (spec
    sections 1 and 7). Returns the standing rejected lines and the ids their files name."""
    from transforms.ingest.store.standing_rejects import (
        named_ids,
        standing_problems,
        standing_rejects,
    )

    problems = [f for f in standing_problems(workdir) if f.get("problem") in STOPPING_RULES]
    if problems:
        raise SubmissionIncomplete(
            "nothing was decided: " + "; ".join(f"{f['file']} could not be read ({f['problem'].replace('_', ' ')})"
                                                for f in sorted(problems, key=lambda f: f["file"]))
            + ". Correct or re-export these files under the same names, then run again.")
    standing = standing_rejects(workdir)
    agency = standing.filter(pl.col("dataset").is_in(AGENCY_DATASETS))
    if agency.height:
        shown = [f"{r['file']} line {r['line']}: {r['messages']}" for r in agency.head(10).iter_rows(named=True)]
        more = f" (and {agency.height - 10:,} more)" if agency.height > 10 else ""
        raise SubmissionIncomplete(
            "nothing was decided: a line of the agency's own files could not be read (they decide every "
            "application): " + "; ".join(shown) + more + ". Correct the file and run again.")
    return standing, named_ids(workdir)


def check_control_groups(groups: pl.LazyFrame | pl.DataFrame) -> None:
    """An employer in two groups on one day stops the run naming the lines (spec section 1)."""
    from transforms.rules.employer import FAR

    g = groups.lazy().select("group_id", "employer_id", "member_from", "member_to", "source_file", "source_line").collect()
    if g.height < 2:
        return
    pairs = g.join(g, on="employer_id", suffix="_2").filter(
        (pl.col("group_id") != pl.col("group_id_2"))
        & (pl.col("member_from") <= pl.col("member_to_2").fill_null(FAR))
        & (pl.col("member_from_2") <= pl.col("member_to").fill_null(FAR))
        & ((pl.col("source_file") < pl.col("source_file_2"))
           | ((pl.col("source_file") == pl.col("source_file_2")) & (pl.col("source_line") < pl.col("source_line_2")))))
    if pairs.height:
        shown = [f"employer {r['employer_id']} is in group {r['group_id']} ({r['source_file']} line {r['source_line']}) "
                 f"and in group {r['group_id_2']} ({r['source_file_2']} line {r['source_line_2']}) on the same days"
                 for r in pairs.head(10).iter_rows(named=True)]
        raise SubmissionIncomplete("nothing was decided: " + "; ".join(shown)
                                   + ". An employer belongs to one group at a time: correct control_groups.csv and run again.")


def check_files_read(report) -> None:
    """No file of the layout was rejected whole (unknown layout, mostly wrong types, not text):
    else ``SubmissionIncomplete`` naming them (the lake keeps what was read; nothing is decided)."""
    bad = [f for f in report.files if f.dataset is not None and f.status == "rejected" and f.rows_accepted == 0
           and any(r["rule"] in STOPPING_RULES for r in report.rejects.filter(
               (pl.col("file").str.starts_with(f.file)) & pl.col("line").is_null()).iter_rows(named=True))]
    if bad:
        raise SubmissionIncomplete(
            "nothing was decided: " + "; ".join(f"{f.file} could not be read ({f.message})" for f in bad)
            + ". Correct or re-export these files (rejects.csv of `impcredit ingest` has the details), then run again.")


@dataclass
class RunInputs:
    frames: dict[str, pl.LazyFrame | pl.DataFrame]  # the staged datasets (lazy scans of the lake)
    rejects: pl.DataFrame
    files: list[dict]
    key_source: str
    key_id: str
    report: object | None = None  # the ingest report (transforms.ingest.IngestReport)
    docs_dir: Path | None = None  # GX Data Docs of the files this run validated (``data_docs``)
    # every rejected line the lake holds now (``ingest.lake.standing_rejects``), and the ids each
    # file with one names: they hold the applications they could touch (spec section 7)
    standing: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=STANDING_SCHEMA))
    named: dict = field(default_factory=dict)
    unclaimed_without_ssn: int = 0  # payroll rows of no claimed employee without an ssn (count for no one)
    cluster: object | None = None  # the executor that ingested (``collect`` reads the payroll there on a cluster)
    layouts: tuple | None = None  # the payroll profiles the run read with (``profile_files.Layouts``; None: shipped)

    def collect(self, plan: pl.LazyFrame) -> pl.DataFrame:
        """A (small) result of a plan over the lake's payroll: collected by a worker of the run's
        cluster when there is one (no payroll row passes through this process), else here."""
        if not self.cluster:
            return plan.collect()
        from transforms.ingest.executors import run_on_worker

        return run_on_worker(self.cluster, _collect, plan, what="the payroll was read")

    @property
    def lake_sha256(self) -> str | None:
        """What the lake held when the run read it (``lake_verify.lake_digest``)."""
        return getattr(self.report, "lake_sha256", None)

    @property
    def rejected_rows(self) -> int:
        """Input rows with at least one rejected cell (a whole-file reject counts once)."""
        return self.rejects.select(pl.struct("file", "line")).n_unique() if self.rejects.height else 0

    def write_data_docs(self, out_dir: Path) -> str | None:
        """Move the run's GX Data Docs into ``out_dir/data_docs``; their index, or None."""
        if self.docs_dir is None or not (self.docs_dir / "index.html").is_file():
            return None
        shutil.move(str(self.docs_dir), str(out_dir / "data_docs"))
        return "data_docs/index.html"

    def write_rejects(self, out_dir: Path) -> None:
        """rejects.csv (and one file per employer when the ingest report has them)."""
        if self.report is not None:
            self.report.write_rejects(out_dir, self.rejects)
        else:
            write_csv(self.rejects, out_dir / "rejects.csv")

    @property
    def inputs_sha256(self) -> str:
        h = hashlib.sha256()
        for f in sorted(self.files, key=lambda f: f["path"]):
            h.update(f"{f['path']}\0{f['sha256']}\n".encode())
        return h.hexdigest()


def input_file_records(input_dir: Path, known: dict[str, str] | None = None) -> list[dict]:
    """Every regular input file with its sha256 (``known``: hashes ingest already computed, by
    path); a symbolic link is never followed (``submission.discover``)."""
    from transforms.ingest.read.files.submission import discover

    known = known or {}

    def sha(e) -> str:
        try:
            return known.get(e.rel) or sha256_file(e.path)
        except OSError:
            return "unreadable"

    return [{"path": e.rel, "sha256": sha(e), "bytes": e.path.stat().st_size}
            for e in discover(input_dir) if e.kind == "file"]


def stage_inputs(input_dir: Path, workdir: Path, key: HashKey, *, data_docs: bool = False, cluster=None,
                 key_loader=None, layouts=None, options: IngestOptions | None = None) -> RunInputs:
    """Ingest the submission into the lake (vendor layouts, validation suites, quarantine; the
    ssn is hashed on first read), then read every dataset back from the lake. ``data_docs``:
    validate with Great Expectations itself and keep its Data Docs of the files validated
    (``RunInputs.write_data_docs``). ``cluster``: a Dask executor (``executors.Executor`` or a
    scheduler's address): its workers ingest (``transforms.ingest.route``), loading the key with
    ``key_loader``. ``layouts``: the payroll profiles in effect (None: the shipped ones);
    ``options``: how the ingest reads (``transforms.options.IngestOptions``)."""
    from transforms.ingest import ingest_folder
    from transforms.ingest.read.files.line_limits import Limits
    from transforms.ingest.store.lake import scan_lake

    check_complete(input_dir, workdir, cluster)
    if (gone := lake_gone(workdir)) is not None:  # said, then rebuilt from the submission
        from transforms.stages import LOG

        LOG.warning("ingest: %s", gone)
    docs_dir = workdir / ".data_docs" if data_docs else None
    if docs_dir is not None:
        shutil.rmtree(docs_dir, ignore_errors=True)  # a crashed run's (one run at a time per workdir)
    o = options or IngestOptions()
    if cluster is not None and not isinstance(cluster, Executor):
        cluster = Executor(cluster, worker_wait_s=o.worker_wait_s)
    report = ingest_folder(input_dir, workdir, key, docs_dir=docs_dir, cluster=cluster, key_loader=key_loader,
                           layouts=layouts, engine=o.validation_engine, memory_up_to_bytes=o.scratch_in_memory_bytes,
                           tasks=o.ingest_tasks, limits=Limits(o.max_line_bytes, o.max_sheet_mb))
    check_files_read(report)
    standing, named = check_standing(workdir)
    if not report.files:
        raise RunError(
            f"{input_dir}: no submission files found (expected payroll/*.csv, applications.csv, roster.csv, "
            "certifications.csv, employer_rates.csv, or a vendor payroll export)"
        )
    frames = {name: scan_lake(workdir, name) for name in STAGED}
    check_control_groups(frames["control_groups"])
    if cluster:  # the workers read the payroll's rows (``cluster_identity``): none passes through here
        from transforms.ingest.cluster_identity import resolve_on_cluster
        from transforms.ingest.store.location import lake_dir

        ids = resolve_on_cluster(cluster, lake_dir(workdir), frames["payroll"], frames["roster"], frames["applications"])
    else:
        ids = resolve_identities(frames["payroll"], frames["roster"], frames["applications"])
    frames["payroll"] = ids.payroll
    failpoints.hit("staged")
    hashed = {f.file: f.sha256 for f in report.files}
    # the lines that stand rejected in files this run did not read again are reported too (issue 44)
    rejects = pl.concat([report.rejects, ids.rejects])
    anew = {f.sha256 for f in report.files if f.status != "duplicate"}
    if (standing_only := as_rejects(workdir, standing, rejects, anew)).height:
        rejects = pl.concat([rejects, standing_only.select(rejects.columns)]).sort("file", "line", maintain_order=True)
    rejects = under_applicant(rejects, standing, frames["applications"])  # a roster line: its applicant's
    staged = RunInputs(frames, rejects, input_file_records(input_dir, hashed),
                          key.source, key.key_id, report, docs_dir, pl.concat([standing, ids.lines]), named)
    staged.unclaimed_without_ssn = ids.unclaimed_without_ssn
    staged.cluster, staged.layouts = cluster, layouts
    return staged


def lake_gone(workdir: Path) -> str | None:
    """One line when the lake this workdir's ledger read in its annual runs is gone (its manifest
    no longer there: a fresh object store, a deleted folder), else None: the run says so, then
    rebuilds the lake from the submission; the decisions in the ledger stand."""
    from transforms.award import ledger
    from transforms.ingest.store.lake import MANIFEST
    from transforms.ingest.store.location import lake_dir

    path = workdir / "impcredit.duckdb"
    if not path.is_file():
        return None
    lake = lake_dir(workdir)
    if (lake / MANIFEST).is_file():
        return None
    con = ledger.connect(path, read_only=True)
    try:
        runs = con.sql("SELECT count(*) FROM runs WHERE kind = 'annual'").fetchall()[0][0]
    finally:
        con.close()
    if not runs:
        return None
    return (f"the lake this workdir's {runs} annual run(s) read ({lake}) is gone (no {MANIFEST}): it is rebuilt "
            "from this submission; the decisions in the ledger stand (a submission without every earlier file "
            "reads only what it holds)")


def _collect(plan: pl.LazyFrame) -> pl.DataFrame:
    return plan.collect()


class NothingToDecide(RunError):
    """The submission holds nothing this run could decide; no run is recorded."""


def quick_applications(input_dir: Path) -> pl.DataFrame | None:
    """``tax_year, received_date`` of a canonical ``applications.csv``, read without staging
    (for the CLI to refuse a mistyped year at once); None when it cannot be read that way."""
    from transforms.ingest.read.cast.parsing import received_at_expr

    path = Path(input_dir) / "applications.csv"
    try:
        raw = pl.read_csv(path, infer_schema=False, columns=["tax_year", "received_at"], encoding="utf8-lossy")
    except (OSError, pl.exceptions.PolarsError, ValueError):
        return None
    return raw.select(
        pl.col("tax_year").str.strip_chars().cast(pl.Int32, strict=False),
        received_at_expr(pl.col("received_at")).dt.convert_time_zone(schema.NJ_TZ).dt.date().alias("received_date"),
    ).drop_nulls()


def received_after(staged: RunInputs, tax_year: int, as_of: dt.date) -> int:
    """Applications of the tax year received after the as-of date (a later run sees them)."""
    return staged.frames["applications"].lazy().filter(
        (pl.col("tax_year") == tax_year) & (pl.col("received_date") > as_of)).select(pl.len()).collect().item()


def holdings(staged: RunInputs, as_of: dt.date) -> str:
    """What the submission holds, by kind and tax year (``applications of tax year 2023: 5;
    estimate requests of tax year 2023: 1 (1 received after 2023-02-15)``): the line of a
    quarterly run that has no request of its tax year."""
    parts = []
    for name, what in (("applications", "applications"), ("estimate_requests", "estimate requests")):
        frame = staged.frames.get(name)
        if frame is None:
            continue
        years = frame.lazy().group_by("tax_year").agg(pl.len().alias("n"), (pl.col("received_date") > as_of).sum()
                                                      .alias("late")).sort("tax_year").collect()
        parts += [f"{what} of tax year {y}: {n:,}" + (f" ({late:,} received after {as_of})" if late else "")
                  for y, n, late in years.iter_rows()]
    return "; ".join(parts) or "no application and no estimate request"


def first_tax_year(params: Parameters) -> int:
    """The first tax year of the credit (program.first_tax_year, an open-ended constant)."""
    return int(params.value("program.first_tax_year", dt.date(9999, 12, 31)))


def check_dated(as_of: dt.date, today: dt.date, *, option: str = "--as-of", run: str = "a run that decides",
                note: str = "") -> None:
    """Spec section 7: a run that decides (annual, a rerun; quarterly estimates) is dated on or
    before the day it runs. ``today``: New Jersey's date, given by the caller (``flows.settings.today``).
    ``RunError`` naming ``option`` when ``as_of`` is after it; a what-if may look ahead."""
    if as_of > today:
        raise RunError(f"{option} {as_of}{note} is after today ({today}, New Jersey time): {run} is dated on or before "
                       "the day it runs; give today's date or an earlier one (impcredit whatif may look ahead)")


def check_tax_year(applications: pl.LazyFrame | pl.DataFrame, tax_year: int, as_of: dt.date, first_year: int, *,
                   estimates: bool = False) -> int:
    """A mistyped year is not a run: the staged applications must hold some for ``tax_year``,
    received by ``as_of``. Returns how many were received after it (not seen by this run).

    ``NothingToDecide`` when the submission holds no application at all, or only ones received
    after the as-of date; ``RunError`` naming the years it holds when none is for ``tax_year``
    (naming ``first_year`` too when ``tax_year`` is before it)."""
    apps = applications.lazy().select("tax_year", "received_date").collect()
    if apps.height == 0:
        raise NothingToDecide("nothing to decide: the submission holds no application")
    years = dict(sorted(apps.group_by("tax_year").len().iter_rows()))
    if tax_year not in years and estimates:
        raise NothingToDecide(f"nothing received yet for tax year {tax_year}: the submission holds no estimate request "
                              f"(application) for it")
    if tax_year not in years:
        held = ", ".join(f"{y} ({n} application{'s' if n != 1 else ''})" for y, n in years.items())
        before = (f"tax year {tax_year} is before {first_year}, the first tax year of the credit "
                  f"(N.J.S.A. 34:11-56a40(e)); " if tax_year < first_year else "")
        raise RunError(f"{before}the submission holds no application for tax year {tax_year}; it holds {held}. "
                       "Check --tax-year")
    mine = apps.filter(pl.col("tax_year") == tax_year)
    late = mine.filter(pl.col("received_date") > as_of)
    if late.height == mine.height:
        if estimates:
            raise NothingToDecide(f"nothing received yet for tax year {tax_year} as of {as_of}: its {mine.height} "
                                  f"request(s) were received later (the first on {late.get_column('received_date').min()})")
        raise NothingToDecide(
            f"nothing to decide for tax year {tax_year} as of {as_of}: its {mine.height} application(s) were "
            f"received after that date (the first on {late.get_column('received_date').min()}); run with a later --as-of")
    return late.height


def named_by(workdir: Path, payroll, collect=pl.LazyFrame.collect, layouts=None) -> dict[str, str]:
    """employer id -> the product whose report gave its payroll rows no employee id (the printed name
    is the id: ``Profile.employee_id_from``), said in the employer's notice (``layouts``: the
    profiles the run read with)."""
    from transforms.ingest.read.layouts.profile_files import load_profiles
    from transforms.ingest.store.lake import lake_dir, load_manifest

    naming = {p.name: p.product or p.name for p in (layouts or load_profiles()) if p.employee_id_from}
    if not naming:
        return {}
    files = {f["file"]: naming[f["profile"]] for f in load_manifest(lake_dir(workdir))["files"].values()
             if f.get("dataset") == "payroll" and f.get("profile") in naming}
    if not files:
        return {}
    frame = payroll.lazy() if isinstance(payroll, pl.DataFrame) else payroll
    pairs = collect(frame.filter(pl.col("source_file").is_in(list(files))).select("employer_id", "source_file").unique())
    return {emp: files[src] for emp, src in sorted(pairs.iter_rows())}
