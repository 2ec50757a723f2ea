"""Every export fixture and shipped shape read by its unedited draft (issue 42, "Done when"): the
draft of each payroll file (``impcredit layouts draft`` as the CLI makes it, the employer and roster
those of the submission the file sits in) saved unedited in an agency's profiles folder, the shipped
profile of that product taken away, and an annual run decided. Each entry is READ (every payroll
file read whole by the draft, no reject, the credits and awards of the canonical layout to the
cent), STOPPED (the draft does not load, reads nothing, or the file is rejected or held so the
employer gets no award) or WRONG (an award or credit that differs from the canonical one). No entry
is ever WRONG; at least three quarters are READ; each entry's outcome is asserted (``EXPECTED``), so
a regression or an improvement shows as a failure to update."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
import yaml

import tests.fixtures.exports as exports
from tests.fixtures.exports import common
from tests.fixtures.exports import transposed_months as tr
from tests.fixtures.exports.run import decide
from tests.test_unread_tables import submission as example_a
from transforms.ingest.read.draft.draft import draft_profile, draft_yaml
from transforms.ingest.read.layouts.profile_files import ProfileError, read_profile
from transforms.runs.inputs import SubmissionIncomplete

SHAPES = Path(__file__).parent / "fixtures" / "shapes"
READ, STOPPED, WRONG = "READ", "STOPPED", "WRONG"


@dataclass(frozen=True)
class Entry:
    """An export as a submission holds it: its module (``tests/fixtures/exports/<module>.py``, or a
    shape of ``tests/fixtures/shapes``), the format it is written in (and the variant), the shipped
    profiles that read it (taken away: the draft reads in their place), the payroll it encodes."""

    module: str
    fmt: str
    shipped: tuple[str, ...]
    variant: str | None = None
    # the payroll: common.PAYROLL; "shapes": tests/fixtures/shapes/payroll/off_cycle.csv; "example_a": worked
    # example A's 2023 months (tests/test_unread_tables.py); a module's name: its write_canonical_submission
    payroll: str = "common"

    @property
    def name(self) -> str:
        return "_".join(x for x in (self.module, self.variant, self.fmt) if x)


def _both(module: str, *shipped: str, variant: str | None = None) -> list[Entry]:
    return [Entry(module, fmt, shipped, variant) for fmt in ("xlsx", "csv")]


ENTRIES: list[Entry] = [
    *_both("adp_run", "adp_run_payroll_register"),
    *_both("adp_wfn", "adp_wfn_payroll_history"),
    *_both("code_register"),
    *_both("gusto", "gusto_payroll_journal"),
    *_both("gusto_custom_report", "gusto_custom_report", variant="total"),
    *_both("gusto_custom_report", "gusto_custom_report", variant="parts"),
    *_both("justworks_payroll_report", "peo_export"),
    *_both("onboard_product"),
    *_both("patriot_payroll_details", "patriot_payroll_details"),
    *_both("paychex_flex", "paychex_flex_payroll_journal"),
    *_both("paycom", "paycom_prior_payroll"),
    *_both("paylocity", "paylocity_payroll_register"),
    Entry("printed_payroll_register", "prn", ("printed_payroll_register",)),
    *_both("quickbooks_desktop_payroll_summary", "quickbooks_desktop_payroll_summary"),
    *_both("quickbooks_online", "quickbooks_payroll_details"),
    *_both("rippling", "rippling_payroll_register"),
    *_both("timeclock_hours_minutes", "timeclock_payroll_summary"),
    *(Entry("transposed_months", fmt, (), payroll="example_a") for fmt in ("xlsx", "csv")),
    *(Entry("bureau_workbook", fmt, ("bureau_client_payroll_register",), payroll="bureau_workbook")
      for fmt in ("xlsx", "csv")),
    *_both("transposed_register", "payroll_summary_by_pay_run"),
    Entry("repeated_tabs", "xlsx", ("payroll_register_by_group",)),
    *_both("code_lines_register", "dynamics_pay_statement_lines"),
    Entry("shapes/register", "csv", ("register_lines",), payroll="shapes"),
    Entry("shapes/journal", "csv", ("journal_lines",), payroll="shapes"),
]

# modules of tests/fixtures/exports with a ``write`` that are no export, and shapes not tried
EXCLUDED = {
    "common": "the payroll every export encodes and the canonical layout's writer (the reference)",
    "shapes/payroll": "off_cycle.csv is the canonical layout (the shapes' reference): the canonical profile reads it",
}

# each entry's outcome; a STOPPED one: (what the draft or the run said, a part of it; why it stops)
STOPS = {
    "paychex_flex": ("fields.hours: the canonical column 'hours' is neither a field nor derived",
                     "a journal with a block per employee, a line per code (DESCRIPTION RATE HOURS EARNINGS), the "
                     "check's hours and gross only on its EMPLOYEE TOTAL line: the draft finds no hours column"),
    "paylocity": ("fields.employee_id: the canonical column 'employee_id' is neither a field nor derived",
                  "the employee column it takes (the group row taken for the header) holds none of the roster's "
                  "ids, so no id is proposed (nor hours); a two-row header (Earnings / Taxes / Deductions over Code Hours Rate Amount ...), a block per "
                  "check with its code lines side by side and its figures on the block's Totals line: the draft "
                  "takes the group row for the header"),
}
EXPECTED: dict[str, tuple[str, str]] = {
    e.name: (STOPPED, STOPS[e.module][0]) if e.module in STOPS else (READ, "") for e in ENTRIES}

# --- the submissions ----------------------------------------------------------------------------------

def _shapes_submission(root: Path, files: dict[str, Path]) -> Path:
    """A submission of one employer (100000001, three rostered employees E1..E3) with the given payroll
    files (as ``tests/test_real_input.py`` makes it)."""
    from tests.test_real_input import submission

    return submission(root, files)


def write(entry: Entry, root: Path) -> tuple[Path, list[Path], dict[str, str] | None]:
    """(the submission, its payroll files the draft is tried on, ssn -> the employee id of its
    outputs; None: the outputs' ids are the canonical ones)."""
    if entry.payroll == "example_a":
        sub = example_a(root)
        return sub, tr.write(sub / "payroll" / tr.EMPLOYER, entry.fmt), None
    if entry.payroll == "shapes":
        shape = entry.module.removeprefix("shapes/")
        src = SHAPES / shape / f"{shape}_lines.csv"
        files = {src.name: src}
        if shape == "journal":  # the journal holds the regular checks; the others come canonical
            extra = root.parent / f"{root.name}-extra.csv"
            rows = pl.read_csv(SHAPES / "payroll" / "off_cycle.csv", infer_schema=False)
            rows.filter(~pl.col("check_id").str.starts_with("R")).write_csv(extra)
            files["extra.csv"] = extra
        sub = _shapes_submission(root, files)
        return sub, [sub / "payroll" / src.name], None
    mod = importlib.import_module(f"tests.fixtures.exports.{entry.module}")
    ids = getattr(mod, "EMPLOYEE_IDS", None)
    if entry.payroll == entry.module:  # its own submission (a bureau's clients, each an employer)
        sub = mod.write_submission(root, entry.fmt)
        return sub, sorted(p for p in (sub / "payroll").rglob("*") if p.is_file() and p.name != "files.csv"), ids
    sub = common.submission(root, employee_ids=ids, roster_ssn=getattr(mod, "ROSTER_SSN", True))
    folder = sub / "payroll" / common.EMPLOYER
    folder.mkdir(parents=True, exist_ok=True)
    written = mod.write(folder, entry.fmt, *([entry.variant] if entry.variant else []))
    manifest = mod.files_csv(entry.fmt) if hasattr(mod, "files_csv") else getattr(mod, "FILES_CSV", None)
    if manifest:
        (sub / "payroll" / "files.csv").write_text(manifest, encoding="utf-8")
    return sub, written, ids or {e.ssn: e.employee_id for e in common.EMPLOYEES}


def outputs(out: Path, ids: dict[str, str] | None) -> tuple[list[tuple], list[tuple]]:
    """employee_credits.csv (the employee id read back as the person where ``ids`` says) and awards.csv."""
    credits = pl.read_csv(out / "employee_credits.csv", infer_schema_length=0)
    if ids is not None:
        person = {v: k for k, v in ids.items()}
        credits = credits.with_columns(pl.col("employee_id").replace_strict(person, default=None))
    awards = pl.read_csv(out / "awards.csv", infer_schema_length=0)
    return sorted(credits.rows()), sorted(awards.rows())


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    """The decision on each payroll in the canonical layout, made once when first asked."""
    root = tmp_path_factory.mktemp("canonical")
    made: dict[str, tuple] = {}

    def get(payroll: str):
        if payroll not in made:
            ids = None
            if payroll == "common":
                sub = common.submission(root / payroll)
                common.write_canonical(sub / "payroll" / "payroll.csv")
                ids = {e.ssn: e.employee_id for e in common.EMPLOYEES}
            elif payroll == "shapes":
                sub = _shapes_submission(root / payroll, {"off_cycle.csv": SHAPES / "payroll" / "off_cycle.csv"})
            elif payroll == "example_a":
                sub = tr.write_canonical(example_a(root / payroll))
            else:
                mod = importlib.import_module(f"tests.fixtures.exports.{payroll}")
                sub, ids = mod.write_canonical_submission(root / payroll), mod.EMPLOYEE_IDS
            _, out = decide(sub, root / f"w-{payroll}")
            made[payroll] = outputs(out, ids)
        return made[payroll]
    return get


# --- the draft and its outcome ------------------------------------------------------------------------

def drafted(paths: list[Path], folder: Path, stem: str) -> tuple[list[str], str | None]:
    """The drafts of ``paths`` saved unedited in ``folder`` (one per distinct draft: the files of one
    layout draft alike): (their names, why none can be used: no draft, or one that does not load)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts: dict[str, dict] = {}
    for path in paths:
        name = f"{stem}_{len(texts)}"
        try:
            text = draft_yaml(draft_profile(path, name))
        except ValueError as exc:
            return [], f"no draft: {str(exc).splitlines()[0]}"
        body = {k: v for k, v in yaml.safe_load(text).items() if k not in ("name", "description")}
        if body in texts.values():
            continue
        texts[name] = body
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
        try:
            read_profile(folder / f"{name}.yaml")
        except ProfileError as exc:
            return [], f"the draft does not load: {str(exc).splitlines()[0]}"
    return list(texts), None


def classify(entry: Entry, tmp_path: Path, canonical) -> tuple[str, str]:
    """(READ, STOPPED or WRONG, why)."""
    want = canonical(entry.payroll)
    sub, paths, ids = write(entry, tmp_path / "sub")
    names, why = drafted(paths, tmp_path / "profiles", entry.name.replace("/", "_"))
    if why:
        return STOPPED, why
    try:
        staged, out = decide(sub, tmp_path / "work", profiles=tmp_path / "profiles", without=entry.shipped)
    except SubmissionIncomplete as exc:
        return STOPPED, str(exc).splitlines()[0]
    rels = {p.relative_to(sub).as_posix() for p in paths}
    recs = [f for f in staged.report.files if f.file.split("[")[0] in rels]
    for rec in recs:  # a shipped profile never reads the file in the draft's place
        assert not rec.rows_read or rec.profile in names, (rec.file, rec.profile, names)
    whole = {f.split("[")[0] for f in (r.file for r in recs if r.rows_read)} == rels and all(
        r.status == "accepted" and r.rows_accepted == r.rows_read for r in recs if r.rows_read)
    rejects = staged.rejects.filter(pl.col("file").str.split("[").list.first().is_in(list(rels)))
    got = outputs(out, ids)
    awards = pl.read_csv(out / "awards.csv", infer_schema_length=0)
    if whole and rejects.height == 0 and got == want:
        return READ, ""
    if awards.height and (awards["status"] == "HELD").all():  # nothing decided on what was read
        return STOPPED, f"held ({rejects.height} reject(s): {rejects['message'].head(1).to_list()})"
    return WRONG, f"{got} != {want} ({rejects.height} reject(s))"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_the_unedited_draft_reads_the_export_or_stops(entry, tmp_path, canonical):
    outcome, why = classify(entry, tmp_path, canonical)
    assert outcome != WRONG, why
    expected, said = EXPECTED[entry.name]
    assert outcome == expected and said in why, f"{outcome}: {why}"


# --- the list itself ----------------------------------------------------------------------------------

def test_the_list_holds_every_export_fixture_and_shape():
    """Every module of tests/fixtures/exports with a ``write`` is listed (or excluded, with why), and
    every shape of tests/fixtures/shapes."""
    listed = {e.module for e in ENTRIES} | set(EXCLUDED)
    written = {m.name for m in pkgutil.iter_modules(exports.__path__)
               if hasattr(importlib.import_module(f"tests.fixtures.exports.{m.name}"), "write")}
    assert written - listed == set(), "list these exports in ENTRIES (or EXCLUDED, with why)"
    shapes = {f"shapes/{p.name}" for p in SHAPES.iterdir() if p.is_dir()}
    assert shapes - listed == set()
    assert set(EXPECTED) == {e.name for e in ENTRIES}


def test_three_quarters_are_read_and_none_wrongly():
    assert WRONG not in {v for v, _ in EXPECTED.values()}
    read = sum(v == READ for v, _ in EXPECTED.values())
    assert read * 4 >= len(EXPECTED) * 3, f"{read} of {len(EXPECTED)} read"

