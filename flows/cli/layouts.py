"""``impcredit layouts``: the payroll layouts (profiles) ingest reads and where each comes from;
``layouts check FILE...``: how each file would be read, without a run or a ledger; ``layouts draft
FILE``: a draft profile for an export no profile reads."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from flows.cli import common, listing

layouts_app = typer.Typer(help="The payroll layouts (profiles): list them, check a file against them, draft one.",
                          invoke_without_command=True)

ProfilesOpt = Annotated[Path | None, typer.Option("--profiles", help=common.PROFILES_HELP, metavar="DIR")]
LAYOUT_KEYS = ["name", "dataset", "product", "extensions", "report", "line_per_code", "origin", "file", "description"]
CHECK_KEYS = ["file", "read_whole", "rows", "rejected_lines", "layouts", "problem", "notes", "tables", "rejects"]


@layouts_app.callback()
def layouts(ctx: typer.Context, profiles: ProfilesOpt = None, format: listing.Format = "table") -> None:
    """List the payroll layouts ingest reads: each profile, the product whose export it follows,
    what it reads and where it comes from (data/vendors/ as shipped, or the agency's folder). A
    file no layout reads is rejected naming the nearest row and layout.

    Examples: impcredit layouts; impcredit layouts --profiles /srv/impcredit/profiles;
    impcredit layouts --format csv; impcredit layouts check payroll/123456789/journal.csv;
    impcredit layouts draft export.xlsx
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = profiles
        return
    cfg, layouts = common.use_profiles(profiles)
    from transforms.ingest.read.layouts.profile_files import origin

    if listing.machine(format, LAYOUT_KEYS, [
            {"name": p.name, "dataset": p.dataset, "product": p.product or None, "extensions": list(p.extensions),
             "report": bool(p.shaped), "line_per_code": bool(p.long), "origin": origin(p).split(" (")[0],
             "file": str(Path(p.source).resolve()) if p.source else None, "description": p.description}
            for p in layouts]):
        return
    where = cfg.profiles
    common.console.print("Payroll layouts: a file is read by the one whose header it holds (data/vendors/"
                         + (f" and {escape(str(where))}" if where else "") + ").", soft_wrap=True)
    for p in layouts:
        kind = ", ".join(p.extensions) + ("; a report" if p.shaped else "") + ("; a line per code" if p.long else "")
        product = p.product or ("spec section 1" if p.name == "canonical" else "")
        common.console.print(f"[bold]{p.name}[/]  {escape(product)}  ({kind})  [dim]{escape(origin(p))}[/]", soft_wrap=True)
        common.console.print(f"    {escape(p.description)}", soft_wrap=True)


def _profiles(ctx: typer.Context, profiles: Path | None):
    """(the command's settings, the profiles in effect) with ``--profiles`` of the subcommand or of ``layouts``."""
    return common.use_profiles(profiles if profiles is not None else ctx.obj)


@layouts_app.command("check")
def check(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="Payroll files (CSV or workbooks).", metavar="FILE...")],
    profiles: ProfilesOpt = None,
    rows: Annotated[int, typer.Option("--rows", help="First rows to show as canonical values.", metavar="N")] = 3,
    format: listing.Format = "table",
) -> None:
    """How each file would be read, without a run or a ledger: the layout and where it comes from,
    the header line, each column and the field it reaches, the first rows as canonical values, the
    lines skipped (titles, totals checked, notes) and every reject with its rule. A file under a
    submission's payroll/ folder takes its employer from the folder or payroll/files.csv.
    Exit 0: every file read whole; 1: a file not read, or a line rejected. csv and json: a row per
    file (its tables, rejects and notes nested: JSON text in csv).

    Example: impcredit layouts check --profiles profiles/ submission/payroll/123456789/journal.csv
    """
    _, layouts = _profiles(ctx, profiles)
    from transforms.ingest.layout_check import check_file

    results = []
    for path in files:
        if not path.is_file():
            common.fail(f"{path}: not a file")
        try:
            result = check_file(path, first_rows=rows, layouts=layouts)
        except common.known_errors() as exc:
            common.fail(f"{path}: {exc}")
            return
        results.append(result)
        if format == "table":
            _print_check(result)
    listing.machine(format, CHECK_KEYS, [_check_record(r) for r in results])
    raise typer.Exit(0 if all(r.read_whole for r in results) else 1)


def _check_record(result) -> dict:
    """One file's check as csv and json give it."""
    return {"file": result.file, "read_whole": result.read_whole, "rows": result.rows,
            "rejected_lines": sum(1 for r in result.rejects if r["line"] is not None),
            "layouts": [t.profile for t in result.tables], "problem": result.problem, "notes": list(result.notes),
            "tables": [{"sheet": t.sheet, "layout": t.profile, "origin": t.origin, "header_line": t.header_line,
                        "rows": t.rows, "columns": [{"header": h, "field": f} for h, f in t.columns],
                        "skipped": t.skipped or None, "preamble": list(t.preamble), "totals_checked": t.totals_checked,
                        "first_rows": t.first_rows} for t in result.tables],
            "rejects": [dict(r) for r in result.rejects]}


def _print_check(result) -> None:
    out = common.console
    listing.rule(out, result.file)
    if result.problem is not None:
        out.print(f"[bold red]not read:[/] {escape(result.problem)}", soft_wrap=True)
        return
    for t in result.tables:
        sheet = f" (sheet {escape(repr(t.sheet))})" if t.sheet else ""
        out.print(f"layout [bold]{t.profile}[/]{sheet}  [dim]{escape(t.origin)}[/]", soft_wrap=True)
        out.print(f"header: line {t.header_line}; {t.rows:,} row(s) read" + (f"; {escape(t.skipped)}" if t.skipped else ""),
                  soft_wrap=True)
        for text in t.preamble[:8]:
            out.print(f"  [dim]skipped above the header:[/] {escape(text[:100])}", soft_wrap=True)
        cols = Table("column", "field", box=None, pad_edge=False)
        for header, field in t.columns:
            cols.add_row(Text(header), field or "[dim](none)[/]")
        listing.print_table(out, cols)
        if t.first_rows:
            out.print("first rows, as read:")
            for r in t.first_rows:
                out.print("  " + escape("; ".join(f"{k} {'' if v is None else v}" for k, v in r.items())), soft_wrap=True)
    for note in result.notes:
        out.print(f"[dim]note:[/] {escape(note)}", soft_wrap=True)
    whole = [r for r in result.rejects if r["line"] is None]
    for r in whole:
        out.print(f"[bold red]not read[/] ({r['rule']}): {escape(r['message'])}", soft_wrap=True)
    lines = [r for r in result.rejects if r["line"] is not None]
    if lines:
        rej = Table("line", "column", "rule", "what to fix", box=None, pad_edge=False,
                    title=f"{len(lines)} line(s) rejected", title_justify="left")
        for r in lines[:50]:
            rej.add_row(str(r["line"] or ""), Text(r["column"] or ""), r["rule"], Text(r["message"]))
        listing.print_table(out, rej)
        if len(lines) > 50:
            out.print(f"... and {len(lines) - 50} more")
    if not result.rejects:
        out.print(f"[green]read whole:[/] {result.rows:,} row(s), no reject")


def _already_read(file: Path, layouts) -> None:
    """Said on stderr when the profiles in effect already read ``file`` whole (a draft is for an
    export no profile reads; saved under another name it would be one more profile to keep)."""
    from transforms.ingest.layout_check import check_file

    try:
        got = check_file(file, first_rows=0, layouts=layouts)
    except common.known_errors():
        return
    if got.read_whole:
        names = ", ".join(dict.fromkeys(f"'{t.profile}' ({t.origin})" for t in got.tables))
        common.err.print(f"[yellow]note:[/] {escape(file.name)} is already read whole by profile {escape(names)}: "
                         f"`impcredit layouts check {escape(shlex.quote(str(file)))}` shows how (the draft is for "
                         "comparison)", soft_wrap=True)


@layouts_app.command("draft")
def draft(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="An export no profile reads (CSV or workbook).", metavar="FILE")],
    out: Annotated[Path | None, typer.Option("--out", help="Where to write the draft (default: print it).",
                                             metavar="FILE")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The profile's name (default: from the file's name).",
                                             metavar="NAME")] = None,
    profiles: ProfilesOpt = None,
    employer: Annotated[str | None, typer.Option(
        "--employer", help="The employer's FEIN (default: the folder payroll/<FEIN>/ or payroll/files.csv the file "
        "sits in); a FEIN column that disagrees (a PEO's own) is not taken.", metavar="FEIN")] = None,
    roster: Annotated[Path | None, typer.Option(
        "--roster", help="The roster whose employee ids the employee column must hold (default: the roster.csv "
        "of the submission the file sits in).", metavar="FILE")] = None,
) -> None:
    """Write a draft profile for a payroll export no profile reads: the sheet that holds the payroll
    (never a Summary tab; sheets read and skipped by name), the header found (below any title rows,
    or the labels of a table whose items run down the side), the columns matched to fields by
    meaning and never hours for money or the reverse, a repeated column named by its section, the
    employee, gross wages and employer taxes from their parts where there is no total, the others
    listed as comments, the date format and the totals lines guessed from the file. Its foot says
    what was guessed and what to check. Edit it, put it in the agency's profiles folder, and verify
    it with `impcredit layouts check --profiles DIR FILE`.

    Example: impcredit layouts draft "Paycheck Details.xlsx" --out profiles/square_paycheck_details.yaml
    """
    cfg, layouts = _profiles(ctx, profiles)
    from transforms.ingest.read.draft.draft import draft_profile, draft_yaml
    from transforms.ingest.read.draft.draft_ids import submission_of

    if not file.is_file():
        common.fail(f"{file}: not a file")
    try:
        text = draft_yaml(draft_profile(file, name, cfg.profiles, submission_of(file, employer, roster)))
    except (ValueError, OSError) as exc:
        common.fail(str(exc))
        return
    _already_read(file, layouts)
    if out is None:
        print(text, end="")
        return
    if out.exists():
        common.fail(f"{out}: exists; the draft is not written over a file (choose another --out)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    common.err.print(f"wrote {escape(str(out))}: edit it, then `impcredit layouts check --profiles "
                     f"{escape(shlex.quote(str(out.parent)))} {escape(shlex.quote(str(file)))}`")
