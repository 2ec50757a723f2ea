"""The parts of a decision notice that depend on what it says rather than on the run: each reason
with the remedy the process applies (a decided application, a held one), the lines an employer
reads (codes in words with the code beside them, values quoted as written), the sentence of the
agency's own gap, the rejected lines a notice shows and what it says of them; and the notice's
fields as the PDF template takes them (``pdf_record``)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

import polars as pl

from transforms.products._html import money, num2
from transforms.products.as_written import quoted, what_to_fix
from transforms.products.pdf import text
from transforms.products.reason_words import (
    ACTIONS,
    CATEGORY_LABELS,
    FOUND_ACTION,
    FOUND_REASONS,
    HELD_ACTIONS,
    REASONS,
    STATUS_LABELS,
    labelled,
    reasons_labelled,
)

HELD_SECTIONS = {"held_lines": "Lines to correct before a decision", "doubtful_lines": "Lines read but doubtful",
                 "declared": "Your declared totals and what was read",
                 "agency": "The Department is completing its records"}


def explain_reasons(reasons: str | None, *, held: dict | None = None, found: dict[str, str] | None = None,
                    cap_cents: int | None = None, first: str | None = None, fell: dict[str, str] | None = None
                    ) -> list[dict]:
    """``"A;B"`` -> [{code, label, words, citation, action}] (unknown codes are listed as such, never
    dropped). ``held``: the sections of a held application's notice (``HELD_SECTIONS`` keys -> their
    rows): its remedies are the held ones (the next run decides it from corrected files). ``found``:
    code -> the heading of the audit finding in force that gave it (above the reasons): explained as
    that finding, with a hearing as its remedy (no payroll remedy). ``cap_cents``: the cap the
    decision was made under (the run's ``--cap`` or the statute's), stated with ``CAP_EXHAUSTED``;
    ``first``: the employer's first application of the tax year, named by ``DUPLICATE_APPLICATION``;
    ``fell``: employee id -> how its rate fell (``rates_fell``), named by ``WAGE_REDUCTION``."""
    out = []
    codes = [r for r in (reasons or "").split(";") if r]
    if found and "NO_CREDIT_DUE" in codes:  # a finding took every employee (I-16's default): said as the finding
        codes = [c for c in codes if c != "NO_CREDIT_DUE"] + [c for c in found if c in FOUND_REASONS and c not in codes]
    for code in codes:
        words, cite = REASONS.get(code, (f"Reason code {code}.", ""))
        action = held_action(code, held) if held is not None else ACTIONS.get(code, "")
        if code == "WAGE_REDUCTION" and fell:
            words = wage_words(fell)
        if found and code in found and code in FOUND_REASONS:
            words, cite = FOUND_REASONS[code]
            words, action = f"{words} (See \u201c{found[code]}\u201d above.)", FOUND_ACTION
        words = words.replace("{cap}", f" ({_dollars(cap_cents)} per calendar year)" if cap_cents is not None else "")
        words = words.replace("{first}", f" (application {first})" if first else "")
        out.append({"code": code, "label": labelled(code), "words": words, "citation": cite, "action": action})
    return out


def _dollars(cents: int) -> str:
    """A cap in dollars: whole dollars without cents (``$10,000,000``), else to the cent."""
    return f"${cents // 100:,}" if cents % 100 == 0 else money(cents)


def rates_fell(employee_years: pl.DataFrame) -> dict[str, dict[str, str]]:
    """application id -> {employee id: how its average hourly rate fell ("from $20.00 in 2022 to
    $19.57 in 2023")}: the certified employees whose rate fell, of the applications with
    ``WAGE_REDUCTION`` (spec section 5; ``rules.wage_reduction``). Empty where the frame does not
    hold the quantities (a finding's notice: the finding is the reason, not the payroll)."""
    from transforms.rules.wage_reduction import PAIRS, fell, rate

    need = {"W_pp", "H_pp", "W_p", "H_p", "W_t", "H_t", "certified", "p_start", "pp_start"}
    if not need <= set(employee_years.columns):
        return {}
    emp = employee_years.filter(pl.col("reasons").fill_null("").str.contains("WAGE_REDUCTION")
                                & pl.col("certified").fill_null(False))
    if emp.height == 0:
        return {}
    got = emp.select("application_id", "employee_id", "tax_year", pl.col("pp_start").dt.year().alias("pp"),
                     pl.col("p_start").dt.year().alias("p"),
                     *[fell(a, b).fill_null(False).alias(f"{a}>{b}") for a, b in PAIRS],
                     *[rate(y).alias(f"rate_{y}") for y in ("pp", "p", "t")])
    out: dict[str, dict[str, str]] = {}
    for e in got.iter_rows(named=True):
        year = {"pp": e["pp"], "p": e["p"], "t": e["tax_year"]}
        said = [f"from {_rate(e[f'rate_{a}'])} in {year[a]} to {_rate(e[f'rate_{b}'])} in {year[b]}"
                for a, b in PAIRS if e[f"{a}>{b}"]]
        if said:
            out.setdefault(e["application_id"], {})[e["employee_id"]] = " and ".join(said)
    return out


def _rate(dollars: float) -> str:
    """An hourly rate to the cent, half up."""
    return f"${Decimal(repr(dollars)).quantize(Decimal('0.01'), ROUND_HALF_UP):,.2f}"


def wage_words(fell: dict[str, str]) -> str:
    """WAGE_REDUCTION's words naming the employees whose rate fell, with both rates."""
    who = ("employee " + next(f"{e} fell {how}" for e, how in fell.items()) if len(fell) == 1 else
           "employees " + "; ".join(f"{e} fell {how}" for e, how in sorted(fell.items())))
    return (f"The average hourly rate (wages / hours) of {who}: by more than half a cent from one year to the next. "
            "No credit is allowed to an employer that reduced the wages of an employee with an impairment: no "
            "employee of this application counts for the year, whatever their own rates.")


def wage_label(employee_id: str, fell: dict[str, str]) -> str:
    """WAGE_REDUCTION beside an employee line: whose rate fell and how, or that it was another's."""
    if employee_id in fell:
        return f"Wages reduced {fell[employee_id]} (WAGE_REDUCTION)"
    return "Another employee's wages reduced (WAGE_REDUCTION)"


def held_action(code: str, sections: dict) -> str:
    """What the employer of a held application does about ``code``, naming the sections of its
    notice that are there (above the reasons: ``notice.html.j2``)."""
    if code != "INPUT_REJECTED":
        return HELD_ACTIONS.get(code) or ACTIONS.get(code, "")
    parts = []
    send = sections.get("send") or {}
    when = f" by {send['by']}" if send.get("by") else ""
    if sections.get("held_lines"):
        parts.append(f"Correct the lines under \u201c{HELD_SECTIONS['held_lines']}\u201d above and send the corrected "
                     f"files{when}, {send.get('where') or 'under the same names'}.")
    if sections.get("doubtful_lines"):
        parts.append(f"For each line under \u201c{HELD_SECTIONS['doubtful_lines']}\u201d above: if it is right as "
                     "written, write to the Department at the address at the end of this notice to say so, and the "
                     "Department confirms it; if it is a mistake, send the corrected file under the same name.")
    if not parts:
        parts.append("roster.csv has no line for this application that could be read: send a roster.csv with a line "
                     "for each employee you claim (application id, employee id, wage category).")
    return " ".join([*parts, "The next run decides the application like a new one, with no need to ask for anything."])


def agency_sentence(fein: str, period_word: str, period: str) -> str:
    """The agency's own gap as the employer reads it (no file name, no code, the tax period in words)."""
    return (f"The Department's records have no New Jersey unemployment and disability insurance rates of your company "
            f"(FEIN {fein}), or of a member of its group, for a rate year your {period_word} ({period}) needs")


@lru_cache(maxsize=4096)
def _reasons_cached(reasons: str | None) -> str:
    return reasons_labelled(reasons)


def employee_line(e: dict) -> dict:
    """An employee line with its codes in words (category, status, reasons), the codes beside them."""
    return {**e, "category_label": labelled(e["wage_category"], CATEGORY_LABELS),
            "status_label": labelled(e["status"], STATUS_LABELS), "reasons_label": _reasons_cached(e["reasons"])}


def reject_line(r: dict) -> dict:
    """A rejected line as a notice shows it: the value quoted as written, one message."""
    value = r.get("value")
    shown = value if value == "(withheld)" else quoted(value)
    return {**r, "shown_value": shown, "fix": what_to_fix(r.get("column"), r.get("message"), value)}


def other_rejects(rejects: list[dict], held_rows: list[dict]) -> list[dict]:
    """The employer's rejected lines a notice lists under its own heading: for a held application,
    those not already among the lines that hold it (or in a file that holds it whole: none of its lines read)."""
    holding = {(r["file"], r["line"]) for r in held_rows}
    whole = tuple(r["file"] for r in held_rows if r.get("whole"))
    return [reject_line(r) for r in rejects if (r["file"], r["line"]) not in holding
            and not (r["file"] in whole or r["file"].startswith(tuple(f"{f}[" for f in whole)))]


def first_lines(rows: list[dict], per_file: int, see: str) -> list[dict]:
    """The rows of the first ``per_file`` lines of each file (a line's rows kept together), and
    after them, for a file with more, one row saying how many more lines and where they are
    (``see``: the employer's rejects file): a notice's size is bounded whatever the lines."""
    lines: dict[str, set] = {}
    more: dict[str, dict] = {}
    out: list[dict] = []
    for r in rows:
        seen = lines.setdefault(r["file"], set())
        if r["line"] in seen or len(seen) < per_file:
            seen.add(r["line"])
            out.append(r)
            continue
        if r["file"] not in more:
            more[r["file"]] = {"file": r["file"], "line": "", "column": "", "value": None, "message": "",
                               "shown_value": "", "fix": "", "more": set()}
            out.append(more[r["file"]])
        more[r["file"]]["more"].add(r["line"])
    for m in more.values():
        n = len(m.pop("more"))
        m["fix"] = f"and {n:,} more line{'s' if n != 1 else ''} of this file: see {see}"
    return out


def rejects_text(held: bool, rejects: list[dict], known: bool, confirmed: bool = False) -> str:
    """What a notice says of the employer's other rejected lines. A held notice never says nothing
    was rejected (the lines that hold it are listed above); a decided one says the decision does
    not rest on the lines and that a corrected file does not change it by itself."""
    if held:
        return ("These other lines of your submission could not be read either. This application does not depend on "
                "them (they are not among the lines above); correct them if they matter to another application."
                if rejects else "")
    if rejects:
        return ("These lines of your submission could not be read and were left out: the decision does not rest on "
                "them. A corrected file does not change this decision by itself: if a line concerns an employee this "
                "application claims, write to the Department at the address at the end of this notice, naming this "
                "application.")
    if confirmed:  # a release confirmed lines that held it (listed above): nothing else was left out
        return "No other line of your submission was left out."
    return ("None of your submitted rows were rejected." if known
            else "Rejected rows are not attributed to employers in this run; see the run's rejects.csv.")


def pdf_record(n: dict) -> dict:
    """A notice's fields as the PDF template takes them (every value text)."""
    reasons = lambda rs: [[r["label"], r["words"], r["citation"], r["action"]] for r in rs]  # noqa: E731
    keep = ("agency_name", "agency_program", "agency_address", "agency_contact", "appeal_text", "appeal_citation",
            "application_id", "employer_name", "fein", "employer_address", "tax_type", "tax_type_title", "tax_year",
            "period_label", "period", "approval_year", "status", "status_label", "opening", "requested", "awarded",
            "certificate_no", "amended", "amends_no", "before", "after", "members", "decided_on", "received",
            "findings", "finding_notice", "named_by", "agency", "rejects_text", "send_where", "send_by")
    return {
        **{k: n[k] for k in keep},
        "reasons": reasons(n["reason_list"]), "employee_reasons": reasons(n["employee_reason_list"]),
        "lines": [[e["employee_id"], e["category_label"], num2(e["hours_prior"]), num2(e["hours_current"]),
                   money(e["part1_cents"]), money(e["part2_cents"]), money(e["credit_cents"]), e["status_label"],
                   e["reasons_label"]] for e in n["lines"]],
        "netted": [[e["employee_id"], e["netted_lines"]] for e in n["netted"]],
        "rejects": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["shown_value"]), text(r["fix"])]
                    for r in n["rejects"]],
        "held_lines": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["fix"])] for r in n["held_lines"]],
        "doubtful_lines": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["fix"])]
                           for r in n["doubtful_lines"]],
        "confirmed": [[text(r["file"]), text(r["line"]), text(r["column"]), text(r["fix"])] for r in n["confirmed"]],
        "declared": [[text(r["employee_id"]), text(r["figure"]), text(r["declared"]), text(r["read"]), text(r["difference"]),
                      f"{text(r['file'])} line {text(r['line'])}"] for r in n["declared"]],
    }
