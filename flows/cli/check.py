"""``impcredit check``: an employer's check of its submission before it sends it (issue 29, item 7).

Reads the submission as the agency will (``transforms.runs.check``), decides nothing, keeps
nothing, writes one HTML page; the exit code says whether the submission would be read whole."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common

EXIT_WHOLE, EXIT_NOT_WHOLE, EXIT_CANNOT_CHECK = 0, 1, 2
SHOWN_PROBLEMS = 5  # rejected lines and held applications printed on the terminal (the page has them all)


def default_page(input: Path) -> Path:
    """``<DIR>-check.html`` beside the submission folder (never inside it: it would become part of it)."""
    folder = input.resolve()
    return folder.parent / f"{folder.name or 'submission'}-check.html"


def check(
    input: Annotated[Path, typer.Option("--input", help="The submission folder to check (canonical layout or "
                                        "vendor exports, spec section 1).", metavar="DIR")],
    out: Annotated[Path | None, typer.Option("--out", help="The page to write (default: DIR-check.html beside the "
                                             "submission folder, never inside it).", metavar="PATH")] = None,
    profiles: Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")] = None,
) -> None:
    """Check a submission before sending it: read it exactly as the agency will, decide nothing,
    keep nothing (no ledger, no copy of the data, no ssn), and write one HTML page: each file and
    the layout that reads it, every rejected line and what to fix, the applications that would be
    held and why, and the payroll totals per employer and year (spread by day, as the credit is).

    Exit code: 0 read whole (every file read, no line rejected, nothing held);
    1 not read whole (the page says what to fix); 2 cannot be checked (not a
    folder, a required file missing or unreadable).

    Example: impcredit check --input submission-2023
    (writes submission-2023-check.html beside the folder)
    """
    _, layouts = common.use_profiles(profiles)
    common.check_run_args(input)
    page = (out or default_page(input)).resolve()
    if page.is_relative_to(input.resolve()):
        common.fail(f"--out {out} is inside the submission folder: the page would become part of the submission; "
                    "write it beside the folder")
    try:
        from transforms.runs.check import check_submission, write_check_page

        with common.console.status("reading the submission as the agency will..."):
            result = check_submission(input, layouts=layouts)
        write_check_page(result, page)
    except common.known_errors() as exc:
        common.fail(str(exc), EXIT_CANNOT_CHECK)
        return
    _print(result, page)
    raise typer.Exit(EXIT_WHOLE if result.read_whole else EXIT_NOT_WHOLE)


def _lines(files) -> str:
    """Every physical line of the files read: read, rejected or passed over (spec section 1)."""
    counted = [f for f in files if f.lines is not None]
    return (f"{sum(f.lines for f in counted):,}: {sum(f.rows_accepted for f in counted):,} read, "
            f"{sum(f.rows_rejected for f in counted):,} rejected, {sum(f.passed_over for f in counted):,} passed over "
            "(a header, a title, a totals line, a blank)")


def _print(result, page: Path) -> None:
    from rich.markup import escape

    from transforms.runs.check_page import rejected_line

    files = result.files
    declared = [f for p in result.figures for f in p.figures if f[3] is not None]
    rows = [("Submission", common.Whole(result.input_dir)),
            ("Files", f"{len(files):,} ({len(result.unread_files):,} not read)"),
            ("Rows", f"{sum(f.rows_read for f in files):,} read, {sum(f.rows_accepted for f in files):,} accepted, "
                     f"{sum(f.rows_rejected for f in files):,} rejected"),
            ("Lines", _lines(files)),
            ("Applications", f"{result.applications:,} read, {len(result.held):,} would be held"),
            ("Employer-years totalled", f"{len(result.totals):,} (spread by day, as the credit is)"),
            ("Declared totals", f"{sum(1 for p in result.figures if any(f[3] is not None for f in p.figures)):,} of "
                                f"{len(result.figures):,} claimed persons, {sum(1 for f in declared if f[4]):,} of "
                                f"{len(declared):,} figures differ from what was read"),
            ("Page", common.Whole(page))]
    colour = "green" if result.read_whole else "yellow"
    common.fitted_panel("impcredit check", rows, justify="left")
    common.console.print(f"[bold {colour}]{escape(result.headline)}[/]", soft_wrap=True)
    lines = [f"{f.file}: not read ({f.message})" for f in result.unread_files]
    lines += [rejected_line(r) for r in result.rejects if r.line is not None]
    lines += [f"{h.application_id} held: {'; '.join(h.why)}" for h in result.held]
    lines += result.unchecked_years
    lines += [f"read loosely: {x.file}, {x.words}" for x in result.readings]
    if result.stop:
        lines.append(f"the annual run would stop: {result.stop}")
    for line in lines[:SHOWN_PROBLEMS]:
        common.console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)
    if len(lines) > SHOWN_PROBLEMS:
        common.console.print(f"  ... and {len(lines) - SHOWN_PROBLEMS:,} more on the page", highlight=False)
    common.console.print(f"page: {escape(str(page))}", soft_wrap=True, highlight=False)
