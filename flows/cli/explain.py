"""``impcredit explain``: one employee-year's credit in plain words, then to the cent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from flows import _env
from flows.cli import common, listing


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.6f}".rstrip("0").rstrip(".") if abs(v) < 1e15 else str(v)
    return "" if v is None else str(v)


def _declared_table(r: dict, console: Console) -> None:
    """The person's figures as read beside those the employer declared (spec section 1), when any is declared."""
    if not any(x["declared"] is not None for x in r.get("declared_totals") or []):
        return
    d = Table(title="Declared by the employer and read (spec section 1: differ = beyond the larger of 2% and the "
                    "largest single row)")
    for c in ("figure", "period", "declared", "read", "tolerance", "differs"):
        d.add_column(c, justify="right" if c in ("declared", "read", "tolerance") else "left")
    for x in r["declared_totals"]:
        if x["declared"] is None:
            d.add_row(x["figure"], f"{x['period_start']}..{x['period_end']}", "not declared", f"{x['read']:,.2f}", "", "")
            continue
        d.add_row(x["figure"], f"{x['period_start']}..{x['period_end']}", f"{x['declared']:,.2f}", f"{x['read']:,.2f}",
                  f"{x['tolerance']:,.2f}", "[red]yes: held[/]" if x["differs"] else "no")
    listing.print_table(console, d)


def render_text(r: dict, console: Console) -> None:
    e = r["employee_year"]
    console.print(plain_words(r))
    console.print()
    head = Table(show_header=False, box=None)
    head.add_column(style="bold")
    head.add_column()
    for k in ("application_id", "employer_id", "employee_id", "tax_year", "wage_category", "status", "reasons"):
        head.add_row(k, _fmt(e.get(k)))
    head.add_row("credit", f"${r['result']['credit']} (part 1 ${r['result']['part1_credit']}, part 2 ${r['result']['part2_credit']})")
    console.print(Panel(head, title="impcredit explain", expand=False))
    q = Table(title="Quantities (spec sections 4 to 6)")
    for c in ("quantity", "value", "formula", "spec"):
        q.add_column(c, justify="right" if c == "value" else "left", overflow="fold")
    for x in r["quantities"]:
        q.add_row(x["name"], _fmt(x["value"]), x["formula"], x["section"])
    listing.print_table(console, q)
    if r.get("members"):
        m = Table(title="The group's members whose rows counted for this person (in the tax period)")
        for c in ("member", "hours", "required wages RW", "required taxes RT"):
            m.add_column(c, justify="left" if c == "member" else "right")
        for x in r["members"]:
            m.add_row(x["member_id"] + (" (the applicant)" if x["member_id"] == e.get("employer_id") else ""),
                      f"{x['H_m']:,.2f}", f"{x['RW_m']:,.2f}", f"{x['RT_m']:,.2f}")
        listing.print_table(console, m)
    _declared_table(r, console)
    if r["parameters"]:
        p = Table(title="Parameters used")
        for c in ("parameter", "value", "period", "citation"):
            p.add_column(c, overflow="fold")
        for x in r["parameters"]:
            cite = x["citation"].get("label", x["citation"]["title"]) + (f" <{x['citation']['href']}>" if x["citation"]["href"] else "")
            p.add_row(x["label"], _fmt(x["value"]), x["period"], Text(cite))  # text, not markup
        listing.print_table(console, p)
    if r.get("findings"):
        f = Table(title="Audit findings (spec section 9a)")
        for c in ("finding", "date", "kind", "code", "knowing", "status", "the Department's finding"):
            f.add_column(c, overflow="fold")
        for x in r["findings"]:
            f.add_row(x["finding_id"], x["finding_date"], f"{x['kind']} ({x['statute']})", x["reason_code"],
                      "yes" if x["knowing"] else "no", Text(x["status"]), Text(x["reason"]))
        listing.print_table(console, f)
    if r["reasons"]:
        t = Table(title="Reasons")
        for c in ("code", "meaning", "statute"):
            t.add_column(c, overflow="fold")
        for x in r["reasons"]:
            t.add_row(x["code"], x["words"], x["citation"])
        listing.print_table(console, t)
    s = Table(title=f"Submitted payroll lines ({r['sources']['payroll_totals']['rows']} rows of the person at the group's "
                    "members, periods overlapping the prior years and the tax period)")
    for c in ("employer", "file", "sheet", "line", "check", "period", "hours", "gross_wages", "employer_taxes", "note"):
        s.add_column(c, justify="right" if c in ("line", "hours", "gross_wages", "employer_taxes") else "left")
    for x in r["sources"]["payroll"]:
        note = "netted (a reversal)" if x.get("netted") else ""
        if (x.get("line_count") or 1) > 1:
            note = ", ".join(filter(None, [note, f"{x['line_count']} code lines"]))
        s.add_row(_fmt(x.get("employer_id")), _fmt(x.get("source_file")), _fmt(x.get("source_sheet")), _fmt(x.get("source_line")),
                  _fmt(x.get("check_id")), f"{x.get('period_start')}..{x.get('period_end')}", _fmt(x.get("hours")),
                  _fmt(x.get("gross_wages")), _fmt(x.get("employer_taxes")), note)
    listing.print_table(console, s)
    if r.get("netted_lines"):
        console.print(f"Reversals netted against the other lines of the year: {r['netted_lines']}")
    if r["sources"].get("code_lines"):
        cl = Table(title="Code lines summed into the rows above (line-per-code export)")
        for c in ("file", "line", "row line", "check", "code", "counts as", "hours", "amount"):
            cl.add_column(c, justify="right" if c in ("line", "row line", "hours", "amount") else "left")
        for x in r["sources"]["code_lines"]:
            cl.add_row(_fmt(x.get("source_file")), _fmt(x.get("source_line")), _fmt(x.get("row_line")), _fmt(x.get("check_id")),
                       _fmt(x.get("code")), _fmt(x.get("counts_as")), _fmt(x.get("hours")), _fmt(x.get("amount")))
        listing.print_table(console, cl)
    ck = r["check"]
    c = Table(title="Check: recomputed from the quantities above " + ("[green]OK[/]" if ck["ok"] else "[red]MISMATCH[/]"))
    for col in ("item", "recomputed", "stored", "ok"):
        c.add_column(col)
    for x in ck["items"]:
        c.add_row(x["name"], str(x["recomputed"]), str(x["stored"]), "yes" if x["ok"] else "[red]no[/]")
    listing.print_table(console, c)
    if ck.get("note"):
        console.print(f"[dim]{ck['note']}[/]")


def plain_words(r: dict) -> str:
    """The paragraph an analyst reads to an employer: hours, the rates, each part in dollars."""
    e, res = r["employee_year"], r["result"]
    q = {x["name"]: x["value"] for x in r["quantities"]}
    who = f"Employee {e['employee_id']} of employer {e['employer_id']} (application {e['application_id']}, {e['wage_category']})"
    if "H_t" not in q:
        return f"{who}: nothing is computed for tax year {e['tax_year']} ({e.get('reasons') or 'no reason recorded'})."
    period = r.get("tax_period") or {}
    calendar = str(period.get("start", "")).endswith("-01-01") and str(period.get("end", "")).endswith("-12-31")
    t = str(e["tax_year"]) if calendar or not period else f"the tax period {period['start']} to {period['end']}"
    p = str(int(e["tax_year"]) - 1) if calendar or not period else f"{str(period['prior_year'][0])[:4]}"
    words = [f"{who} worked {q['H_t']:,.2f} hours in {t} and {q['H_p']:,.2f} in {p}."]
    members = r.get("members") or []
    if len(members) > 1:
        words.append("Those hours count over the employer's group: " + ", ".join(
            f"{m['H_m']:,.2f} at {m['member_id']}" for m in members) + ".")
    words.append(f"The minimum wage of the category averaged ${q['MWavg_t']:,.4f} an hour over those hours "
                 f"(${q['MWavg_p']:,.4f} over {p}); the old-law adjustment ADJ is ${q['ADJ_t']:,.2f}.")
    if q["H_p"]:
        words.append(f"In {p} the employer paid ${q['W_p']:,.2f} in wages and ${q['T_p']:,.2f} in employer taxes, "
                     f"${(q['W_p'] + q['T_p']) / q['H_p']:,.4f} an hour.")
    if e["status"] != "ELIGIBLE":
        words.append(f"The employee-year is not eligible ({e['reasons']}), so it counts $0.00.")
    else:
        words.append(f"Part 1, for the {min(q['H_t'], q['H_p']):,.2f} hours both years share, is ${res['part1_credit']}; "
                     f"part 2, for the {max(q['H_t'] - q['H_p'], 0):,.2f} additional hours, is ${res['part2_credit']}. "
                     f"The credit is ${res['credit']}.")
    if r.get("netted_lines"):
        words.append(f"Reversals netted: {r['netted_lines']}.")
    for f in r.get("findings") or []:
        what = ("found the employee misclassified" if f["kind"] == "misclassified"
                else "determined that the employer reduced wages to qualify (tax years named)")
        words.append(f"An audit finding ({f['finding_id']}, {f['finding_date']}, {f['statute']}) {what}"
                     f"{', knowingly' if f['knowing'] else ''}: {f['reason_code']}, {f['status']}.")
    return " ".join(words)


def explain(
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year, e.g. 2023.", metavar="YEAR")],
    employer: Annotated[str, typer.Option("--employer", help="Employer id (9 digits).", metavar="ID")],
    employee: Annotated[str, typer.Option("--employee", help="Employee id (the employer's own).", metavar="ID")],
    workdir: Annotated[Path, typer.Option("--workdir", help="Workdir of the run (holds the ledger, and the lake or "
                                          "where it is).", metavar="DIR")] = common.DATA / "work",
    out: Annotated[str | None, typer.Option("--out", help="Output folder of the annual run (default "
                                            "data/out/annual-YEAR, as annual writes it; or its s3://bucket/prefix).",
                                            metavar="DIR|URL")] = None,
    format: Annotated[str, typer.Option("--format", help="text (or table): words, then tables (piped or redirected, "
                                        "as wide as their content: nothing wrapped or cut); or json: one document.",
                                        metavar="text|json")] = "text",
    application: Annotated[str | None, typer.Option("--application", help="Application id, when the employee is claimed by several.",
                                                    metavar="ID")] = None,
) -> None:
    """Explain one employee-year's credit, in plain words first, then to the cent.

    Every quantity with its formula, the parameters with their citations, the submitted lines
    and a check that recomputes the credit to the cent.

    Example: impcredit explain --tax-year 2023 --employer 100000001 --employee E1
    """
    if format not in ("text", "table", "json"):
        common.fail(f"--format must be text or json, not {format!r}")
    common.local_dir(workdir, "--workdir", ledger=True)
    out = common.out_location(out, common.DATA / "out" / f"annual-{tax_year}")
    from transforms.products.explain import ExplainError
    from transforms.products.explain import explain as run_explain
    from transforms.reference.parameters import ParameterError, load_parameters

    try:
        _env.one_key(workdir)  # the lake and the ledger it reads were written with this key
        result = run_explain(workdir, out, tax_year, employer, employee, load_parameters(), application_id=application)
    except (ExplainError, ParameterError, OSError, *common.known_errors()) as exc:
        common.fail(str(exc))
    if format == "json":
        print(json.dumps(result, indent=2, sort_keys=True, default=str))
    else:
        render_text(result, common.console)
    if not result["check"]["ok"]:
        raise typer.Exit(1)
