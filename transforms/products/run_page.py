"""``index.html``: the page an analyst works from (issue 23). It opens with the run's totals and the
cap (a bar of the approval year's awards against it), the charts inline, then one table of the
run's applications (employer, FEIN, status, requested, awarded, reasons, links to the certificate
and notice, HTML and PDF, and the explain command) that sorts and filters in the browser with no
server and no network (the data is in the page; the script builds the rows with ``textContent``,
never markup), the held applications with the lines that hold them, the rejected input by
employer, and every file of the run. A Content-Security-Policy lets the page load nothing from
anywhere but its own folder."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from transforms.products._html import render, safe_filename

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
            groups.append({"title": f"{title} ({len(mine):,} files, each linked from its application above)",
                           "files": [{"href": m, "name": m, "note": ""} for m in shown]})
            continue
        groups.append({"title": title, "files": [{"href": m, "name": m, "note": note if m.endswith("/") else ""} for m in mine]})
    return groups


def application_rows(files: set[str], awards: pl.DataFrame, certificates: dict[str, str]) -> list[list]:
    """One row per application for the page's table: id, employer, FEIN, tax, county, status,
    requested and awarded (cents), reasons, notice (html, pdf), certificate (html, pdf); a PDF
    linked when ``files`` (the run's, relative to its folder) holds it."""
    rows = []
    for a in awards.sort("application_id").iter_rows(named=True):
        app = a["application_id"]
        notice = f"notices/{safe_filename(app)}"
        cert = certificates.get(app)
        cert_base = f"certificates/{safe_filename(cert)}" if cert else None
        rows.append([
            app, a["employer_name"] or "", a["employer_id"], a["tax_type"] or "", a.get("county") or "", a["status"],
            int(a["requested_cents"]), int(a["awarded_cents"]), (a["reasons"] or "").replace(";", " "),
            f"{notice}.html", f"{notice}.pdf" if f"{notice}.pdf" in files else "",
            f"{cert_base}.html" if cert_base else "", f"{cert_base}.pdf" if f"{cert_base}.pdf" in files else "",
        ])
    return rows


# held.csv's sources in an analyst's words
HELD_WORDS = {"agency": "the Department's own data (employer rates missing)", "input": "lines not read",
              "doubtful": "lines read but doubtful (a release confirms them)",
              "declared_totals": "declared totals differ from what was read"}


def _held_line(r: dict) -> str:
    """One reason a held application is held, short: its file and line, or its figure, or the gap."""
    if r["source"] == "agency":
        return "no UI/DI rates in employer_rates.csv"
    if r["source"] == "declared_totals":
        return f"{r['employee_id']} {r['figure']}: declared {r['declared']:,.2f}, read {r['read']:,.2f}"
    return f"{r['file']}:{r['line']} {r['columns'] or ''}".strip()


def _script_json(value) -> str:
    """JSON safe inside a <script> element (no ``</``, no HTML comment opener)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def write_run_page(staging_dir: Path, summary, *, decided_at: str, awards: pl.DataFrame | None = None,
                   certificates: dict[str, str] | None = None, held: pl.DataFrame | None = None,
                   rejects: pl.DataFrame | None = None, freed: dict | None = None) -> Path:
    """``index.html`` of the run (see the module); ``freed``: the cap audit findings freed
    (``finding_documents.freed_cap``)."""
    from markupsafe import Markup

    from transforms.ingest.report import rejects_file
    from transforms.outputs import _walk_files

    staging_dir = Path(staging_dir)
    root = len(str(staging_dir)) + 1
    files = sorted(str(p)[root:] for p in _walk_files(staging_dir))
    rows = application_rows(set(files), awards, certificates or {}) if awards is not None else []
    used = max(0.0, summary.cap - summary.cap_left)
    held_rows = []
    if held is not None and held.height:  # the agency's own gaps first (held.csv's order), then the input's
        names = {} if awards is None else dict(awards.select("application_id", "employer_name").iter_rows())
        for (app,), grp in held.group_by(["application_id"], maintain_order=True):
            held_rows.append({"application_id": app, "href": f"notices/{safe_filename(app)}.html",
                              "employer": names.get(app) or "",
                              "why": ", ".join(HELD_WORDS.get(s, s) for s in grp.get_column("source").unique(maintain_order=True)),
                              "lines": [_held_line(r) for r in grp.head(5).iter_rows(named=True)],
                              "more": max(0, grp.height - 5)})
    by_employer = []
    if rejects is not None and rejects.height and "employer_id" in rejects.columns:
        for emp, n in rejects.group_by("employer_id").len().sort("len", descending=True).head(200).iter_rows():
            by_employer.append({"employer_id": emp or "(unreadable)", "rows": n, "href": rejects_file(emp)})
    charts = [f for f in files if f.startswith("reports/") and f.endswith(".svg") and f.count("/") == 1]
    return render("index.html.j2", staging_dir / "index.html", r=summary, decided_at=decided_at,
                  changes=getattr(summary, "changes", []), groups=_file_groups(files), charts=charts,
                  cap_used=used, cap_share=min(1.0, used / summary.cap) if summary.cap else 0.0, held_rows=held_rows,
                  rejects_by_employer=by_employer, apps_json=Markup(_script_json(rows)), n_apps=len(rows), freed=freed,
                  explain=f"impcredit explain --tax-year {summary.tax_year} --employer EMPLOYER --employee EMPLOYEE "
                          f"--out {summary.out_dir or '.'}")
