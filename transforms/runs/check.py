"""The employer's check of a submission before it is sent (``impcredit check``, issue 29 item 7).

The submission is read exactly as the agency will read it: the annual run's own reading step
(``inputs.stage_inputs``: vendor layouts, the validation suites, the identities) into a lake in a
temporary folder, with an ssn hash key made in memory for this check alone (the employer has no
agency key and needs none: nothing is kept). Nothing is decided and nothing is written but the
page: no ledger, no lake, no rejects file; the temporary folder is deleted before returning.

The check says:
- each file of the submission, the layout (profile) that reads it, or why no layout reads it, and
  its rows read, accepted and rejected;
- every rejected line (file, line, column, the value as written, quoted, every character visible,
  one message of what to fix, and the application the line gives or holds);
- every header read though it differs from the layout's words, and every value read leniently (a
  ``$`` after the number, a two-digit year...): what was written and what it was read as
  (``check_readings``);
- the applications the annual run would hold (spec section 7), computed as the annual run does
  (``annual.compute`` then ``annual.hold_unread``, over every tax year the submission holds);
- the payroll the credit is computed from, per employer and calendar year: the accepted rows'
  hours, wages and employer taxes spread evenly over their days (spec section 3, the engine's own
  ``spreading.spread_payroll``);
- whether the submission would be read whole (every file read, no line rejected, nothing held;
  and every tax year of its applications has reference data, else its holds are unknown).

``CheckImpossible`` (and ``inputs.SubmissionIncomplete``, the annual run's own message) when it
cannot be checked at all: not a folder, a required file missing or unreadable.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms import leftovers, schema
from transforms.runs.inputs import (
    RunError,
    RunInputs,
    SubmissionIncomplete,
    check_complete,
    stage_inputs,
)

TEMP_PREFIX = "impcredit-check-"  # the temporary workdir's name (deleted when the check returns)
NO_CLAIM = ("no employee of it was read: roster.csv has no line for it that could be read "
            "(an application that claims no one is held, never rejected)")


class CheckImpossible(RunError):
    """The submission cannot be checked at all (the message says what to fix)."""


@dataclass(frozen=True)
class FileCheck:
    file: str  # relative to the submission folder
    dataset: str | None  # what the file is (payroll, roster, ...), None when not part of the layout
    layout: str | None  # the profile that read it, None when no layout reads it
    rows_read: int
    rows_accepted: int
    rows_rejected: int
    status: str  # accepted | partial | rejected | duplicate (ingest's FileRecord)
    message: str
    read: bool  # False: the file was rejected whole (no layout reads it, not text, not part of the layout)
    lines: int | None = None  # its physical lines: read (accepted) + rejected + passed over (spec section 1)
    passed_over: int | None = None  # lines that are no row: a header, a title, a totals line, a blank


@dataclass(frozen=True)
class RejectedLine:
    file: str
    line: int | None  # None: the whole file
    column: str | None
    value: str | None  # as the rejects file shows it (every ssn-shaped value masked)
    rule: str
    message: str  # what to fix
    applications: tuple[str, ...] = ()  # the application the line gives (roster, applications) or those it holds

    @property
    def shown_value(self) -> str:
        """The value as written, quoted, every character visible (``as_written.quoted``)."""
        from transforms.products.as_written import quoted

        return quoted(self.value) if self.value is not None else ""

    @property
    def fix(self) -> str:
        """One message: the column said once, a letter that looks like a digit named."""
        from transforms.products.as_written import what_to_fix

        return what_to_fix(self.column, self.message, self.value)


@dataclass(frozen=True)
class HeldApplication:
    application_id: str
    employer_id: str
    employer_name: str
    tax_year: int
    why: list[str]  # one phrase per line that holds it ("payroll/a.csv line 3 (hours): hours: not a number")


@dataclass(frozen=True)
class YearTotals:
    employer_id: str
    employer_name: str
    year: int
    hours: float
    gross_wages: float
    employer_taxes: float


@dataclass(frozen=True)
class PersonFigures:
    """A claimed person's figures as read (by pay date, or period end), beside those the roster
    declares (spec section 1): (figure, period, read, declared or None, differs)."""
    application_id: str
    employee_id: str
    figures: list[tuple[str, str, float, float | None, bool]]


@dataclass
class CheckResult:
    input_dir: Path
    checked_at: dt.datetime
    files: list[FileCheck]
    rejects: list[RejectedLine]
    held: list[HeldApplication]
    totals: list[YearTotals]
    applications: int = 0  # applications read
    stop: str | None = None  # the annual run would stop after reading, deciding nothing (its one line)
    # tax years of applications the credit cannot be computed for (no reference data): not checked for holds
    unchecked_years: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: list[PersonFigures] = field(default_factory=list)  # each claimed person's figures, read and declared
    readings: list = field(default_factory=list)  # check_readings.Reading: headers and values read loosely

    @property
    def unread_files(self) -> list[FileCheck]:
        return [f for f in self.files if not f.read]

    @property
    def rejected_lines(self) -> int:
        """Distinct rejected lines (a file rejected whole is counted as a file, not here)."""
        return len({(r.file, r.line) for r in self.rejects if r.line is not None})

    @property
    def problems(self) -> int:
        """What there is to fix: each file not read, each rejected line, each application held
        for no rejected line (it claims no one), each tax year that cannot be computed; at least one
        when the submission would not be read whole (a stop that none of these explains)."""
        n = (len(self.unread_files) + self.rejected_lines + sum(1 for h in self.held if h.why == [NO_CLAIM])
             + len(self.unchecked_years))
        return n or (0 if self.read_whole else 1)

    @property
    def read_whole(self) -> bool:
        return not (self.unread_files or self.rejects or self.held or self.stop or self.unchecked_years)

    @property
    def headline(self) -> str:
        if self.read_whole:
            return "This submission would be read whole: every file read, no line rejected, no application held."
        parts = []
        if self.unread_files:
            parts.append(_count(len(self.unread_files), "file", "files") + " not read")
        if self.rejected_lines:
            parts.append(_count(self.rejected_lines, "rejected line", "rejected lines"))
        if self.held:
            parts.append(_count(len(self.held), "application", "applications") + " held")
        if self.unchecked_years:
            parts.append(_count(len(self.unchecked_years), "tax year", "tax years") + " without reference data")
        if self.stop:
            parts.append("the annual run would stop before deciding anything")
        return (f"This submission would not be read whole: {_count(self.problems, 'problem', 'problems')} to fix ("
                + "; ".join(parts) + ").")


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _ephemeral_key():
    """An ssn hash key made in memory for this check alone, never stored or shown."""
    from transforms.pii import HashKey

    return HashKey(secrets.token_bytes(32), "ephemeral")


def _aware(now: dt.datetime | None) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.UTC)
    return now if now.tzinfo else now.replace(tzinfo=ZoneInfo(schema.NJ_TZ))  # naive: New Jersey time, as ingest


def check_submission(input_dir: Path, *, now: dt.datetime | None = None, layouts=None) -> CheckResult:
    """Read the submission in ``input_dir`` as the agency will, decide nothing, keep nothing (see
    the module). ``now``: the instant of the check (default: now; naive means New Jersey time);
    ``layouts``: the payroll profiles in effect (None: the shipped ones)."""
    from transforms.ingest import ingest_folder

    input_dir = Path(input_dir)
    if not input_dir.is_dir():
        raise CheckImpossible(f"{input_dir} is not a folder (expected a submission: payroll/*.csv, applications.csv, "
                              "roster.csv, certifications.csv, employer_rates.csv)")
    check_complete(input_dir)  # SubmissionIncomplete: the annual run's one line
    checked_at = _aware(now)
    key = _ephemeral_key()
    with leftovers.temp_dir("check") as tmp:
        workdir = Path(tmp)
        # the ingest of a fresh lake, as the annual run's first step does it: what it says of each file
        report = ingest_folder(input_dir, workdir, key, now=checked_at, layouts=layouts)
        staged, stop = None, None
        try:  # the annual run's reading step over that lake (its files are in it: nothing is read twice)
            staged = stage_inputs(input_dir, workdir, key, layouts=layouts)
        except SubmissionIncomplete as exc:  # read, but the annual run would stop here
            stop = str(exc)
        rejects = pl.concat([report.rejects, staged.rejects if staged else report.rejects.clear()]).unique()
        result = CheckResult(input_dir=input_dir.resolve(), checked_at=checked_at, files=_files(report),
                             rejects=_rejects(rejects), held=[], totals=[], stop=stop)
        apps = _applications(staged, workdir)
        result.applications = apps.height
        result.totals = _totals(staged.frames["payroll"] if staged else _from_lake(workdir, "payroll"), _names(apps))
        holds: dict[tuple[str, int | None], set[str]] = {}
        if staged is not None:
            result.held = _held(staged, apps, checked_at, result.unchecked_years, result.figures, holds)
            if staged.unclaimed_without_ssn:
                result.notes.append(f"{staged.unclaimed_without_ssn:,} payroll rows of employees no application "
                                    "claims carry no ssn: they count for no one's credit.")
            if apps.height == 0:
                result.notes.append("The submission holds no application: there would be nothing to decide.")
    from transforms.runs.check_readings import read_again

    result.readings, app_of = read_again(input_dir, layouts)
    result.rejects = [_named(r, app_of, holds) for r in result.rejects]
    return result


def _named(r: RejectedLine, app_of: dict[tuple[str, int], str], holds: dict[tuple[str, int | None], set[str]]) -> RejectedLine:
    """``r`` with the application its line gives (a roster or application line), else those it holds."""
    if r.line is None:
        return r
    own = app_of.get((r.file, r.line))
    apps = (own,) if own else tuple(sorted(holds.get((r.file, r.line)) or holds.get((r.file, None), ())))
    return RejectedLine(r.file, r.line, r.column, r.value, r.rule, r.message, apps)


def _files(report) -> list[FileCheck]:
    """The ingest's record of each file; a file is not read when it was rejected whole (a reject
    with no line: no layout reads it, not text, not part of the layout; a workbook's sheet counts)."""
    whole = set(report.rejects.filter(pl.col("line").is_null()).get_column("file").to_list())

    def rejected_whole(f) -> bool:
        return f.status == "rejected" and any(w == f.file or w.startswith(f"{f.file}[") for w in whole)

    return [FileCheck(f.file, f.dataset, f.profile, f.rows_read, f.rows_accepted, f.rows_rejected, f.status, f.message,
                      read=not rejected_whole(f), lines=f.lines, passed_over=f.passed_over) for f in report.files]


def _rejects(rejects: pl.DataFrame) -> list[RejectedLine]:
    from transforms.ingest.validate.masking import mask_value

    out = rejects.sort("file", "line", "column", "rule", nulls_last=False)
    return [RejectedLine(r["file"], r["line"], r["column"], mask_value(r["value"]), r["rule"] or "", r["message"] or "")
            for r in out.iter_rows(named=True)]


def _from_lake(workdir: Path, dataset: str) -> pl.LazyFrame:
    """The accepted rows of ``dataset`` in the lake (when the annual run would stop before its
    own reading step returns them)."""
    from transforms.ingest.store.lake import scan_lake

    return scan_lake(workdir, dataset).lazy()


def _applications(staged: RunInputs | None, workdir: Path) -> pl.DataFrame:
    apps = staged.frames["applications"] if staged else _from_lake(workdir, "applications")
    return apps.lazy().select("application_id", "employer_id", "employer_name", "tax_year", "received_date").collect()


def _names(apps: pl.DataFrame) -> dict[str, str]:
    """employer id -> the name its first application gives."""
    first = apps.sort("application_id").unique("employer_id", keep="first")
    return dict(first.select("employer_id", "employer_name").iter_rows())


def year_segments(first: dt.date, last: dt.date) -> pl.DataFrame:
    """One segment per calendar year from ``first`` to ``last`` (the segment table that
    ``spread_payroll`` spreads over): every day counts in its own calendar year."""
    years = range(first.year, last.year + 1)
    return pl.DataFrame({
        "seg_id": list(range(len(years))),
        "seg_start": [max(first, dt.date(y, 1, 1)) for y in years],
        "seg_end": [min(last, dt.date(y, 12, 31)) for y in years],
        "year": list(years),
    }, schema={"seg_id": pl.Int32, "seg_start": pl.Date, "seg_end": pl.Date, "year": pl.Int32})


def _totals(payroll: pl.LazyFrame, names: dict[str, str]) -> list[YearTotals]:
    """The accepted payroll rows' hours, wages and employer taxes per employer and calendar year,
    each row spread evenly over its days as the credit spreads it (spec section 3)."""
    from transforms.rules.spreading import spread_payroll
    from transforms.settings import RuleSettings

    span = payroll.select(pl.col("period_start").min().alias("a"), pl.col("period_end").max().alias("b")).collect()
    if span.height == 0 or span["a"][0] is None:
        return []
    segments = year_segments(span["a"][0], span["b"][0])
    spread = spread_payroll(payroll, segments, RuleSettings(), keys=("employer_id",)).collect()
    by_year = (spread.join(segments.select("seg_id", "year"), on="seg_id")
               .group_by("employer_id", "year").agg(pl.col("hours", "wages", "taxes").sum())
               .sort("employer_id", "year"))
    return [YearTotals(e, names.get(e) or "", y, h, w, t) for e, y, h, w, t in by_year.iter_rows()]


def _as_of(apps: pl.DataFrame, checked_at: dt.datetime) -> dt.date:
    """A date by which every application of the submission is received and its tax period (at most
    12 months or 53 weeks from its tax year) has ended: the check sees them all, none waits."""
    dates = [checked_at.astimezone(ZoneInfo(schema.NJ_TZ)).date(), apps["received_date"].max()]
    last_year = apps["tax_year"].max()
    if last_year is not None:
        dates.append(dt.date(min(int(last_year) + 1, 9998), 12, 31))
    return max(d for d in dates if d is not None)


def _held(staged: RunInputs, apps: pl.DataFrame, checked_at: dt.datetime, unchecked: list[str],
          figures: list[PersonFigures], holds: dict[tuple[str, int | None], set[str]]) -> list[HeldApplication]:
    """The applications the annual run would hold (spec section 7): for each tax year the
    submission holds, the engine's claims and groups (``annual.compute``) and the annual run's own
    ``hold_unread``, nothing released; with the lines that hold each one. A tax year without
    reference data (the annual run refuses it) is said in ``unchecked``; ``holds`` gets (file, line) ->
    the applications the line holds."""
    from transforms.reference.parameters import load_parameters
    from transforms.reference.values import ParameterError
    from transforms.runs import annual as steps
    from transforms.settings import Settings

    params, settings, as_of = load_parameters(), Settings(), _as_of(apps, checked_at)
    statuses, lines = [], []
    for year in sorted(apps.get_column("tax_year").drop_nulls().unique().to_list()):
        try:
            result = steps.compute(staged.frames, year, as_of, params, settings)
        except ParameterError as exc:
            ids = apps.filter(pl.col("tax_year") == year).get_column("application_id").sort().to_list()
            unchecked.append(f"tax year {year} ({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}): the credit "
                             f"cannot be computed for it yet, the annual run would refuse it ({exc}). Check the tax "
                             "year in applications.csv; these applications were not checked for holds.")
            continue
        ctx = steps.RunContext(kind="check", run_id="check", tax_year=year, as_of=as_of, params=params,
                               settings=settings, workdir=Path(), out_dir=Path(), staged=staged, result=result,
                               started_at=checked_at)
        steps.hold_unread(ctx, released=[])
        figures += _figures(result.reconciliation)
        statuses.append(ctx.result.applications.select("application_id", "status"))
        if ctx.held is not None:
            lines.append(ctx.held)
    if not statuses:
        return []
    held_ids = pl.concat(statuses).filter(pl.col("status") == "HELD").get_column("application_id").unique()
    why: dict[str, list[str]] = {}
    from transforms.products.as_written import line_problem

    for r in (pl.concat(lines).unique().sort("application_id", "file", "line") if lines else pl.DataFrame()).iter_rows(named=True):
        why.setdefault(r["application_id"], []).append(line_problem(r["file"], r["line"], r["columns"],
                                                                    r["messages"] or r["rules"]))
        if r["line"] is not None:
            holds.setdefault((r["file"], int(r["line"])), set()).add(r["application_id"])
        elif r["source"] == "input":  # a file none of whose lines was read holds them by each of its lines
            holds.setdefault((r["file"], None), set()).add(r["application_id"])
    out = []
    for a in apps.filter(pl.col("application_id").is_in(held_ids.implode())).sort("application_id").iter_rows(named=True):
        out.append(HeldApplication(a["application_id"], a["employer_id"], a["employer_name"] or "", int(a["tax_year"]),
                                   why.get(a["application_id"]) or [NO_CLAIM]))
    return out


def _figures(recon: pl.DataFrame | None) -> list[PersonFigures]:
    """``PersonFigures`` of the engine's reconciliation (``CreditResult.reconciliation``)."""
    if recon is None or not recon.height:
        return []
    from transforms.award.held import FIGURE_WORDS

    out = []
    for (app, emp), grp in recon.sort("figure").group_by(["application_id", "employee_id"], maintain_order=True):
        out.append(PersonFigures(app, emp, [(FIGURE_WORDS.get(r["figure"], r["figure"]), f"{r['period_start']} to "
                                             f"{r['period_end']}", r["read"], r["declared"], r["differs"])
                                            for r in grp.iter_rows(named=True)]))
    return sorted(out, key=lambda f: (f.application_id, f.employee_id))


def write_check_page(result: CheckResult, path: Path) -> Path:
    """The check as one HTML page (``check_page.write_page``)."""
    from transforms.runs.check_page import write_page

    return write_page(result, path)
