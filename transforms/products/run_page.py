"""``index.html``: the page an analyst works from (issues 23 and 36). It opens with the run's totals,
then what needs the analyst: the applications held by the Department's own gaps, those held by the
employer's input (each with its employer, what holds it and what lets the next run decide it), and
the rejected input by employer (its name, FEIN and the problems); then the cap (a bar of the
approval year's awards against it), one table of the run's applications (employer, FEIN, status and
reasons in words with their codes, requested, awarded, links to the certificate and notice, HTML and
PDF, and the explain command) that sorts and filters in the browser with no server and no network
(the data is in the page; the script builds the rows with ``textContent``, never markup), the charts
(each at its own size: its labels as legible as the page's text, ``charts.MIN_FONT``), and every file
of the run, certificates and notices counted as documents. A Content-Security-Policy lets the page
load nothing from anywhere but its own folder."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from transforms.products._html import env as _html_env
from transforms.products._html import render, safe_filename
from transforms.products.as_written import plain_message
from transforms.products.letter import fein
from transforms.products.reason_words import labelled, reasons_labelled

# where each group of files is listed (title, names or folders, note)
GROUPS = [
    ("Decisions", ["awards.csv", "awards.xlsx", "employee_credits.csv", "changes.csv", "held.csv", "manifest.json"], ""),
    ("For the Division of Taxation", ["taxation/"], ""),
    ("Reports", ["reports/"], ""),
    ("Rejected input", ["rejects.csv", "rejects/"], "each employer's rejected rows in rejects/"),
    ("Certificates of credit", ["certificates/"], ""),
    ("Decision notices", ["notices/"], ""),
    ("Validation (Great Expectations Data Docs)", ["data_docs/"], ""),
    ("For audit and explain", ["employee_years.parquet", "employee_members.parquet"], ""),
]


def _file_groups(files: list[str]) -> list[dict]:
    group_of = {n: i for i, (_, names, _) in enumerate(GROUPS) for n in names}
    by_group: dict[int, list[str]] = {}
    for f in files:  # a file belongs to the group of its name, or of its top folder
        top = f.split("/", 1)[0] + "/" if "/" in f else f
        if (g := group_of.get(f, group_of.get(top))) is not None:
            by_group.setdefault(g, []).append(f)
    groups = []
    for g, (title, names, note) in enumerate(GROUPS):
        mine = by_group.get(g, [])
        if not mine:
            continue
        if "notices/" in names or "certificates/" in names or "data_docs/" in names:  # many: the combined files and a count
            shown = [m for m in mine if m.count("/") == 1 and (m.endswith(("s.pdf", "index.html")))] or mine[:1]
            groups.append({"title": f"{title} ({_count(mine, names)})",
                           "files": [{"href": m, "name": m, "note": ""} for m in shown]})
            continue
        groups.append({"title": title, "files": [{"href": m, "name": m, "note": note if m.endswith("/") else ""} for m in mine]})
    return groups


def _count(files: list[str], names: list[str]) -> str:
    """How many documents a folder holds (certificates, notices: one HTML page each, and its PDF),
    and its files."""
    word = "certificate" if "certificates/" in names else "notice" if "notices/" in names else ""
    if not word:
        return f"{len(files):,} files"
    docs = sum(1 for f in files if f.count("/") == 1 and f.endswith(".html"))
    return f"{docs:,} {word}{'' if docs == 1 else 's'}, each linked from its application above; {len(files):,} files"


def application_rows(files: set[str], awards: pl.DataFrame, certificates: dict[str, str],
                     audit: dict[str, str] | None = None) -> list[list]:
    """One row per application for the page's table: id, employer, FEIN, tax, county, status,
    requested and awarded (cents), reasons (with what an audit finding in force did to it,
    ``audit``), notice (html, pdf), certificate (html, pdf); a PDF linked when ``files`` (the
    run's, relative to its folder) holds it."""
    rows, audit = [], audit or {}
    for a in awards.sort("application_id").iter_rows(named=True):
        app = a["application_id"]
        notice = f"notices/{safe_filename(app)}"
        cert = certificates.get(app)
        cert_base = f"certificates/{safe_filename(cert)}" if cert else None
        rows.append([
            app, a["employer_name"] or "", a["employer_id"], a["tax_type"] or "", a.get("county") or "", a["status"],
            int(a["requested_cents"]), int(a["awarded_cents"]),
            "; ".join(x for x in (reasons_labelled(a["reasons"]), audit.get(app, "")) if x),
            f"{notice}.html", f"{notice}.pdf" if f"{notice}.pdf" in files else "",
            f"{cert_base}.html" if cert_base else "", f"{cert_base}.pdf" if f"{cert_base}.pdf" in files else "",
            labelled(a["status"]),
        ])
    return rows


# held.csv's sources in an analyst's words, and what lets the next run decide the application
HELD_WORDS = {"agency": "the Department's own data (employer rates missing)", "input": "lines not read",
              "doubtful": "lines read but doubtful (a release confirms them)",
              "declared_totals": "declared totals differ from what was read"}
# the same, short enough for the run summary's label column at 80 columns (``flows.cli.common``)
HELD_SHORT = {"agency": "by the Department's data", "input": "by lines not read", "doubtful": "by lines to confirm",
              "declared_totals": "by declared totals"}
HELD_NEXT = {"agency": "add the employer's UI/DI rates to employer_rates.csv: the first run that has them decides it",
             "input": "the employer's corrected file (its notice lists the lines)",
             "doubtful": "the corrected file, or impcredit release (confirms the lines as read)",
             "declared_totals": "a corrected file or roster, or impcredit release (decided on the payroll as read)"}


def _held_line(r: dict) -> str:
    """One reason a held application is held, short: its file and line, or its figure, or the gap."""
    if r["source"] == "agency":
        years = r.get("rate_years") or "a rate year"
        return f"no UI/DI rates in employer_rates.csv for {years}, which its tax period needs"
    if r["source"] == "declared_totals":
        return f"{r['employee_id']} {r['figure']}: declared {r['declared']:,.2f}, read {r['read']:,.2f}"
    where = f"{r['file']}:{r['line']} {r['columns'] or ''}".strip() if r["line"] is not None else f"{r['file']} (every line)"
    cols = [c for c in (r["columns"] or "").split(";") if c]
    return f"{where}: {plain_message(cols[0] if len(cols) == 1 else None, r['messages'])}" if r.get("messages") else where


def held_rows(held: pl.DataFrame | None, awards: pl.DataFrame | None) -> tuple[list[dict], list[dict]]:
    """(held by the Department's own gaps, held by the employer's input): each application with its
    employer (name, FEIN), why, the first lines that hold it and what lets the next run decide it."""
    agency, employer = [], []
    if held is None or not held.height:
        return agency, employer
    who = {} if awards is None else {a: (n or "", e) for a, n, e in awards.select(
        "application_id", "employer_name", "employer_id").iter_rows()}
    for (app,), grp in held.group_by(["application_id"], maintain_order=True):
        name, emp = who.get(app, ("", ""))
        sources = grp.get_column("source").unique(maintain_order=True).to_list()
        row = {"application_id": app, "href": f"notices/{safe_filename(app)}.html", "employer": name,
               "fein": fein(emp), "why": ", ".join(HELD_WORDS.get(x, x) for x in sources),
               "next": "; ".join(HELD_NEXT.get(x, "") for x in sources),
               "lines": [_held_line(r) for r in grp.head(5).iter_rows(named=True)], "more": max(0, grp.height - 5)}
        (agency if sources == ["agency"] else employer).append(row)
    return agency, employer


def rejects_rows(rejects: pl.DataFrame | None, awards: pl.DataFrame | None, limit: int = 200) -> list[dict]:
    """The rejected input by employer, most lines first: its name and FEIN (or, for lines whose
    employer id cannot be read, the files they are in), the lines, the first problems, its file."""
    from transforms.ingest.report import rejects_file

    if rejects is None or not rejects.height or "employer_id" not in rejects.columns:
        return []
    names = {} if awards is None else dict(awards.sort("application_id").unique("employer_id", keep="first").select(
        "employer_id", "employer_name").iter_rows())
    per = rejects.group_by("employer_id").agg(pl.struct("file", "line").n_unique().alias("lines"),
                                              pl.col("file").unique().sort().alias("files"))
    out = []
    for emp, lines, files in per.sort("lines", "employer_id", descending=[True, False], nulls_last=True).head(limit).iter_rows():
        mine = rejects.filter(pl.col("employer_id").is_null() if emp is None else pl.col("employer_id") == emp)
        problems = [f"{r['file']}:{r['line'] if r['line'] is not None else 'whole file'} {r['column'] or ''}: "
                    f"{plain_message(r['column'], r['message'])}".replace(" :", ":")
                    for r in mine.sort("file", "line").head(3).iter_rows(named=True)]
        out.append({"employer": names.get(emp, "") if emp else "(employer id not readable)",
                    "fein": fein(emp) if emp else ", ".join(files), "lines": lines, "problems": problems,
                    "more": max(0, mine.height - 3), "href": rejects_file(emp)})
    return out


def link_pdfs(out_dir: Path) -> bool:
    """After ``impcredit documents`` rendered the PDFs a big run left as data: the run page's
    Documents column links each application's notice and certificate PDF now in ``out_dir``, as a
    run that rendered them itself does (``application_rows``). Whether the page changed."""
    page = Path(out_dir) / "index.html"
    if not page.is_file():
        return False
    html = page.read_bytes().decode("utf-8")
    head, sep, rest = html.partition('<script type="application/json" id="apps-data">')
    data, end, tail = rest.partition("</script>")
    if not sep or not end:
        return False
    rows = json.loads(data.replace("<\\!--", "<!--"))
    for r in rows:  # notice (html, pdf), certificate (html, pdf): the PDF beside its page
        for html_at, pdf_at in ((9, 10), (11, 12)):
            pdf = r[html_at].removesuffix(".html") + ".pdf" if r[html_at] else ""
            if pdf and not r[pdf_at] and (Path(out_dir) / pdf).is_file():
                r[pdf_at] = pdf
    new = head + sep + _script_json(rows) + end + _relist_documents(Path(out_dir), tail)
    if new == html:
        return False
    tmp = page.with_name(f".{page.name}.tmp")
    tmp.write_bytes(new.encode("utf-8"))
    tmp.replace(page)
    return True


def _relist_documents(out_dir: Path, html: str) -> str:
    """``html`` (the end of a run page) with its certificates' and notices' file lists as the
    folders hold them now (their combined PDFs, their counts), as ``_file_groups`` lists them."""
    import re

    from transforms.outputs import _walk_files

    root = len(str(out_dir)) + 1
    files = sorted(f for f in (str(p)[root:] for p in _walk_files(out_dir)) if f.startswith(("certificates/", "notices/")))
    for group in _file_groups(files):
        title = group["title"].split(" (", 1)[0]
        listed = re.compile(rf"<h2>{re.escape(title)} \([^<]*\)</h2>\n<ul>\n.*?</ul>\n", re.DOTALL)
        fresh = _html_env().get_template("_file_group.html.j2").render(group=group)
        html = listed.sub(lambda _m, fresh=fresh: fresh, html, count=1)
    return html


def _script_json(value) -> str:
    """JSON safe inside a <script> element (no ``</``, no HTML comment opener)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def write_run_page(staging_dir: Path, summary, *, decided_at: str, awards: pl.DataFrame | None = None,
                   certificates: dict[str, str] | None = None, held: pl.DataFrame | None = None,
                   rejects: pl.DataFrame | None = None, freed: dict | None = None, input_files: list | None = None,
                   audit: dict[str, str] | None = None) -> Path:
    """``index.html`` of the run (see the module); ``freed``: the cap audit findings freed
    (``finding_documents.freed_cap``); ``input_files``: the ingest's record of each file
    (``report.FileRecord``), its lines counted beside those read, rejected and passed over;
    ``audit``: application id -> what findings did to it (``finding_documents.audit_notes``)."""
    from markupsafe import Markup

    from transforms.outputs import _walk_files

    staging_dir = Path(staging_dir)
    root = len(str(staging_dir)) + 1
    files = sorted(str(p)[root:] for p in _walk_files(staging_dir))
    rows = application_rows(set(files), awards, certificates or {}, audit) if awards is not None else []
    used = max(0.0, summary.cap - summary.cap_left)
    held_agency, held_employer = held_rows(held, awards)
    by_employer = rejects_rows(rejects, awards)
    charts = [f for f in files if f.startswith("reports/") and f.endswith(".svg") and f.count("/") == 1]
    return render("index.html.j2", staging_dir / "index.html", r=summary, decided_at=decided_at,
                  changes=getattr(summary, "changes", []), groups=_file_groups(files), charts=charts,
                  cap_used=used, cap_share=min(1.0, used / summary.cap) if summary.cap else 0.0,
                  input_files=[f for f in input_files or [] if f.lines is not None],
                  held_agency=held_agency, held_employer=held_employer, rejects_by_employer=by_employer, apps_json=Markup(_script_json(rows)), n_apps=len(rows), freed=freed,
                  explain=f"impcredit explain --tax-year {summary.tax_year} --employer EMPLOYER --employee EMPLOYEE "
                          "--out .")
