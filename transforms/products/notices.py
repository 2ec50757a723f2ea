"""Decision notices, one per application: the agency's letterhead, the employer and its tax
period, the award or the rejection (an amended one with the certificate it replaces and the
amounts before and after), every reason in plain words with its statute and what the employer can
do (the remedy the process applies: ``notice_record``), the employee lines (and the rows of each
person by member of the group), the submitted rows that were rejected or hold the application, and
the appeal rights with the contact. Every code in words with the code beside it; every date
written ``February 1, 2024``."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path

import polars as pl

from transforms.award.held import FIGURE_WORDS
from transforms.ingest.report import rejects_file
from transforms.options import DocumentOptions
from transforms.products import pdf
from transforms.products._html import (
    decision_date,
    file_names,
    money,
    num2,
    render_many,
    without_gc,
)
from transforms.products.agency import load_agency
from transforms.products.as_written import what_to_fix
from transforms.products.award_file import award_rows, certificate_no
from transforms.products.letter import (
    address_lines,
    fein,
    letterhead,
    long_date,
    long_instant,
    tax_period,
)
from transforms.products.notice_record import (
    agency_sentence,
    employee_line,
    explain_reasons,
    first_lines,
    other_rejects,
    pdf_record,
    rates_fell,
    rejects_text,
    wage_label,
)
from transforms.products.pdf import text
from transforms.products.reason_words import REASONS, STATUS_WORDS, labelled

__all__ = ["REASONS", "STATUS_WORDS", "explain_reasons", "write_notices"]


NOTICE_LINES_PER_FILE = DocumentOptions().notice_lines
REJECT_COLUMNS = ["file", "line", "column", "value", "rule", "message"]


def _rejects_by_employer(rejects: pl.DataFrame | None) -> dict[str, list[dict]]:
    """Rejected rows per employer (sorted by file, line, column), grouped in one pass."""
    if rejects is None or rejects.height == 0 or "employer_id" not in rejects.columns:
        return {}
    rows = rejects.filter(pl.col("employer_id").is_not_null())
    out: dict[str, list[dict]] = {}
    for r in rows.sort([c for c in ("employer_id", "file", "line", "column") if c in rows.columns], maintain_order=True).iter_rows(named=True):
        rec = {c: r.get(c) for c in REJECT_COLUMNS}
        if "ssn" in str(rec["column"] or "").lower():
            rec["value"] = "(withheld)"  # no ssn in any output
        out.setdefault(r["employer_id"], []).append(rec)
    return out


@lru_cache(maxsize=4096)
def _reasons_cached(reasons: str | None) -> tuple[dict, ...]:
    return tuple(explain_reasons(reasons))


def _certificates(history: pl.DataFrame | None, awards: pl.DataFrame) -> dict[str, dict]:
    """application id -> its certificate now (``certificate_no``) and, when a later decision
    amended the award, the certificate it replaces and the amounts before and after."""
    if history is None or history.height == 0 or "seq" not in history.columns:
        return {}
    from transforms.products.certificates import superseded_by

    rows = award_rows(history, awards)
    previous = {new["no"]: old for old, new in superseded_by(rows).items()}
    rows = rows.with_columns(pl.col("certificate_no").str.extract(r"-A(\d+)$").cast(pl.Int64).fill_null(0).alias("__n"))
    out = {}
    for r in rows.sort("application_id", "__n").group_by("application_id", maintain_order=True).agg(
            pl.all().last()).iter_rows(named=True):
        amended = r["record_type"] == "AMENDMENT"
        out[r["application_id"]] = {
            "certificate_no": r["certificate_no"], "amended": amended,
            "amends_no": text(previous.get(r["certificate_no"]) or r["amends_certificate_no"]) if amended else "",
            "before": money(int(r["certified_cents"]) - int(r["change_cents"])) if amended else "",
            "after": money(r["certified_cents"]) if amended else "",
        }
    return out


def _members_of(members: pl.DataFrame | None) -> dict[str, list[list[str]]]:
    """application id -> the rows of its persons whose payroll came from more than the applicant
    alone (employee, member FEIN, hours, required wages and payroll taxes in the tax period)."""
    if members is None or members.height == 0:
        return {}
    m = members.with_columns(pl.len().over("application_id", "roster_employer_id", "employee_id").alias("__n"))
    m = m.filter((pl.col("__n") > 1) | (pl.col("member_id") != pl.col("roster_employer_id")))
    out: dict[str, list[list[str]]] = {}
    for r in m.sort("application_id", "employee_id", "member_id").iter_rows(named=True):
        out.setdefault(r["application_id"], []).append(
            [r["employee_id"], fein(r["member_id"]), num2(r["H_m"]), money(round(r["RW_m"] * 100)),
             money(round(r["RT_m"] * 100))])
    return out


def _employee_lines(employee_years: pl.DataFrame, fell: dict[str, dict[str, str]]) -> dict[str, list[dict]]:
    """application id -> its employee lines; ``WAGE_REDUCTION`` beside each says whose rate fell
    (``fell``: ``rates_fell``)."""
    emp_cols = ["employee_id", "wage_category", "hours_prior", "hours_current", "part1_cents", "part2_cents",
                "credit_cents", "status", "reasons"]
    netted = pl.col("netted_lines") if "netted_lines" in employee_years.columns else pl.lit(None, dtype=pl.String)
    emp = employee_years.select("application_id", *emp_cols, netted.alias("netted_lines")).sort(
        "application_id", "employee_id", maintain_order=True)
    by_app: dict[str, list[dict]] = {}
    for e in emp.iter_rows(named=True):
        app = e.pop("application_id")
        line = employee_line({**e, "reason_list": list(_reasons_cached(e["reasons"]))})
        if app in fell and "WAGE_REDUCTION" in (e["reasons"] or ""):
            line["reasons_label"] = "; ".join(wage_label(e["employee_id"], fell[app]) if c == "WAGE_REDUCTION"
                                              else labelled(c) for c in e["reasons"].split(";") if c)
        by_app.setdefault(app, []).append(line)
    return by_app


# why a held application is held, as its notice shows it (``award.held.SOURCES``): the agency's own gap,
# lines not read, lines read but doubtful, the declared totals beside what was read
HELD_PARTS = {"agency": "agency", "held_lines": "input", "doubtful_lines": "doubtful", "declared": "declared_totals"}


def _held_by_source(held: pl.DataFrame | None) -> dict[str, dict[str, list[dict]]]:
    """application id -> {part of ``HELD_PARTS``: its rows}."""
    out: dict[str, dict[str, list[dict]]] = {}
    if held is None:
        return out
    part_of = {v: k for k, v in HELD_PARTS.items()}
    for r in held.iter_rows(named=True):
        rec = {"file": r["file"], "line": r["line"], "column": (r["columns"] or "").replace(";", ", "),
               "message": r["messages"] or "",
               "fix": what_to_fix(r["columns"], r["messages"], None)}
        if r.get("source") == "input" and r["line"] is None:  # a file none of whose lines was read, said once
            rec |= {"line": "every line", "whole": True}
        if r.get("source") == "declared_totals":
            rec |= {"employee_id": r["employee_id"], "figure": FIGURE_WORDS.get(r["figure"], r["figure"]),
                    "declared": _figure(r["figure"], r["declared"]), "read": _figure(r["figure"], r["read"]),
                    "difference": _figure(r["figure"], abs(r["declared"] - r["read"]))}
        out.setdefault(r["application_id"], {}).setdefault(part_of.get(r.get("source") or "input", "held_lines"), []).append(rec)
    return out


def _first_applications(awards: pl.DataFrame) -> dict[str, str]:
    """application id -> the employer's first application of the same tax year (received first, then
    the lower id), for those whose reasons say ``DUPLICATE_APPLICATION`` and whose first one is
    among ``awards`` (a group member's first application, not the applicant's, is not named)."""
    dup = awards.filter(pl.col("reasons").fill_null("").str.contains("DUPLICATE_APPLICATION"))
    if dup.height == 0:
        return {}
    first = awards.sort("received_at", "application_id").group_by("employer_id", "tax_year", maintain_order=True).agg(
        pl.col("application_id").first().alias("__first"))
    got = dup.join(first, on=["employer_id", "tax_year"], how="inner").filter(pl.col("__first") != pl.col("application_id"))
    return dict(got.select("application_id", "__first").iter_rows())


def _confirmed_line(r: dict) -> dict:
    """A line a release confirmed as its notice lists it: a doubtful line with what looked wrong, a
    declared total with both figures (the payroll as read decides)."""
    if r.get("figure"):
        return {**r, "column": r["employee_id"], "fix": f"{r['figure']}: declared {r['declared']}, read {r['read']}; "
                                                          "decided on the payroll as read"}
    return r


def _figure(figure: str, value: float) -> str:
    """A declared or read figure as the notice prints it: hours to 2 decimals, money in dollars."""
    return f"{value:,.2f} h" if "hours" in figure else f"${value:,.2f}"


@without_gc
def write_notices(
    staging_dir: Path,
    awards: pl.DataFrame,
    employee_years: pl.DataFrame,
    rejects: pl.DataFrame | None = None,
    *,
    run_id: str = "",
    pdf_jobs: list | None = None,
    documents: int = 0,
    held: pl.DataFrame | None = None,
    history: pl.DataFrame | None = None,
    members: pl.DataFrame | None = None,
    addresses: dict[str, str] | None = None,
    named_by: dict[str, str] | None = None,
    findings: dict[str, list[dict]] | None = None,
    finding_notice: str = "",
    caps: dict[int, int] | None = None,
    confirmed: pl.DataFrame | None = None,
    helper=None,
    lines_per_file: int = NOTICE_LINES_PER_FILE,
) -> list[Path]:
    """``notices/<application_id>.html`` for every application of ``awards``; a held one lists
    the lines to correct (``held``). ``history``: the ledger rows of these applications (an
    amended decision names the certificate it replaces); ``members``: the rows of each person
    by member of the group (``CreditResult.members``); ``addresses``: application id -> the
    employer's mailing address; ``named_by``: employer id -> the product whose report identifies its
    employees by their printed names (no employee id: said in the notice); ``findings``: application
    id -> the audit findings that concern it (``finding_documents.finding_block``); ``finding_notice``:
    ``finding`` or ``withdrawal``, the notices of that event itself, titled so, without the run's
    rejected rows; ``caps``: approval year -> the cap (cents) its decisions were made under, stated
    by the reason ``CAP_EXHAUSTED`` (``ledger.caps``); ``lines_per_file``: the lines of each file a
    notice lists (in each of its lists), then how many more and the employer's rejects file
    (``notice_record.first_lines``). With ``pdf_jobs``, the PDF of them all (``notices/notices.pdf``) and one per notice
    (``notices/<application_id>.pdf``) are appended as a job for the caller."""
    fell = rates_fell(employee_years)
    by_app = _employee_lines(employee_years, fell)
    rejects_known = rejects is not None and "employer_id" in rejects.columns
    rejects_of = _rejects_by_employer(rejects)
    held_of = _held_by_source(held)
    confirmed_of = {app: [r for rows in parts.values() for r in rows] for app, parts in _held_by_source(confirmed).items()}
    certs, members_of, agency = _certificates(history, awards), _members_of(members), load_agency()
    firsts = _first_applications(awards)
    head = letterhead(agency)
    pages = []
    names = file_names(awards.get_column("application_id").to_list(), "the notices of applications")
    for a in awards.sort("application_id").iter_rows(named=True):
        cert = certs.get(a["application_id"]) or {
            "certificate_no": certificate_no(a["approval_year"], a["application_id"]) if a["awarded_cents"] > 0 else "",
            "amended": False, "amends_no": "", "before": "", "after": ""}
        ctx = _context(a, head, cert, agency, by_app.get(a["application_id"], []), held_of.get(a["application_id"], {}),
                       rejects_of.get(a["employer_id"], []), rejects_known, run_id=run_id,
                       address=(addresses or {}).get(a["application_id"]), members=members_of.get(a["application_id"], []),
                       named_by=(named_by or {}).get(a["employer_id"], ""),
                       findings=(findings or {}).get(a["application_id"], []), finding_notice=finding_notice,
                       cap_cents=(caps or {}).get(int(a["approval_year"])), first=firsts.get(a["application_id"]),
                       fell=fell.get(a["application_id"]), confirmed=confirmed_of.get(a["application_id"], []),
                       lines_per_file=lines_per_file)
        pages.append((Path(staging_dir) / "notices" / f"{names[a['application_id']]}.html", {"n": ctx}))
    if pdf_jobs is not None and pages:
        job = pdf.job("notices", lambda: [pdf_record(ctx["n"]) for _, ctx in pages], Path(staging_dir) / "notices" / "notices.pdf",
                      footer=agency.agency.name, documents=documents or len(pages), names=[p.stem for p, _ in pages],
                      options=getattr(pdf_jobs, "options", None))
        if job is not None:
            pdf_jobs.append(job)
    return render_many("notice.html.j2", pages, helper)


def _context(a: dict, head: dict, cert: dict, agency, lines: list[dict], held_parts: dict, rejects: list[dict],
             rejects_known: bool, *, run_id: str, address: str | None, members: list, named_by: str, findings: list[dict],
             finding_notice: str, cap_cents: int | None = None, first: str | None = None,
             fell: dict[str, str] | None = None, confirmed: list[dict] | None = None,
             lines_per_file: int = NOTICE_LINES_PER_FILE) -> dict:
    """One notice's fields (``notice.html.j2``, and ``pdf_record`` for the PDF)."""
    held = a["status"] == "HELD"
    start = a.get("period_start") or dt.date(int(a["tax_year"]), 1, 1)
    end = a.get("period_end") or dt.date(int(a["tax_year"]), 12, 31)
    period = tax_period(agency, a["tax_type"], start, end)
    parts = {k: held_parts.get(k, []) for k in HELD_PARTS}
    on = decision_date(a.get("run_id") or run_id)
    send_by = long_date(agency.reply_by(dt.date.fromisoformat(on))) if held and on else ""
    parts["send"] = {"where": agency.resubmission.where, "by": send_by}  # where and by when (held_action)
    emp_codes = sorted({r["code"] for ln in lines for r in ln["reason_list"]})
    found = {f["code"]: f["title"] for f in findings if f.get("active")}  # codes an audit finding in force gave
    opening = STATUS_WORDS.get(a["status"], a["status"])
    if finding_notice and findings:  # the notice of an audit finding opens with what happened
        opening = findings[0]["opening"]
    confirmed = [_confirmed_line(r) for r in confirmed or []]
    shown = other_rejects(rejects, parts["held_lines"] + parts["doubtful_lines"] + confirmed) if not finding_notice else []
    see = rejects_file(a["employer_id"])  # the rest of a long list (``first_lines``)
    shown = first_lines(shown, lines_per_file, see)
    parts |= {k: first_lines(parts[k], lines_per_file, see) for k in ("held_lines", "doubtful_lines")}
    return {
        **head, **period, **cert,
        "application_id": text(a["application_id"]), "employer_name": text(a["employer_name"]),
        "fein": fein(a["employer_id"]), "employer_address": address_lines(address),
        "tax_type": text(a["tax_type"]), "tax_year": str(a["tax_year"]), "approval_year": str(a["approval_year"]),
        "status": a["status"], "status_label": labelled(a["status"]), "opening": opening,
        "requested": money(a["requested_cents"]), "awarded": money(a["awarded_cents"]),
        "reason_list": explain_reasons(a["reasons"], held=parts if held else None, found=found, cap_cents=cap_cents,
                                       first=first, fell=fell),
        "employee_reason_list": explain_reasons(";".join(emp_codes), found=found, fell=fell),
        "lines": lines, "netted": [ln for ln in lines if ln["netted_lines"]], "members": members,
        "rejects": shown, "rejects_text": rejects_text(held, shown, rejects_known, bool(confirmed)),
        "confirmed": confirmed,
        **{k: v for k, v in parts.items() if k not in ("agency", "send")},
        "send_where": parts["send"]["where"], "send_by": send_by,
        "agency": [agency_sentence(fein(a["employer_id"]), period["period_word"], period["period"])
                   for _ in parts["agency"][:1]],
        "received": long_instant(a.get("received_at")),
        "decided_on": long_date(on),
        "named_by": text(named_by), "findings": findings, "finding_notice": finding_notice,
    }
