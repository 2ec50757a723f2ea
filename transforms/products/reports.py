"""Reports with charts: the annual cap-sufficiency report (34:11-56a40(g)) and the biennial
report to the Governor and Legislature (34:11-56a41(b)). SVG charts (``charts``, every bar
labelled with its amount) linked from one HTML page per report, plus the tables as CSV."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.award.ledger import DECISION_COLUMNS
from transforms.outputs import write_csv
from transforms.products import charts
from transforms.products._html import render

CAP_TITLE = "Annual cap-sufficiency report, approval year {y}"
BIENNIAL_TITLE = "Biennial report on the tax credit for employers of employees with impairments, {y}"


def ledger_decisions(con, awards: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every decision row in the ledger (amendments are rows of their own: their change counts in
    their approval year), with ``awards`` (this run's, not yet committed) laid over it by
    (application_id, approval_year)."""
    hist = con.sql(f"SELECT {', '.join(DECISION_COLUMNS)} FROM decisions").pl()
    if awards is not None and awards.height:
        cur = awards.select(DECISION_COLUMNS).cast(hist.schema) if hist.height else awards.select(DECISION_COLUMNS)
        if hist.height:
            hist = pl.concat(
                [hist.join(cur.select("application_id", "approval_year"), on=["application_id", "approval_year"], how="anti"),
                 cur.cast(hist.schema)]
            )
        else:
            hist = cur
    return hist.with_columns(pl.col("county").fill_null("(unknown)"), pl.col("employer_name").fill_null(""))


def _caps_by_year(con, default_cap_cents: int) -> dict[int, int]:
    rows = con.sql("SELECT approval_year, max(cap_cents) FROM runs WHERE kind = 'annual' GROUP BY 1").fetchall()
    return {int(y): int(c) for y, c in rows}


def cap_sufficiency(decisions: pl.DataFrame, employee_years: pl.DataFrame, cap_cents: int, approval_year: int,
                    caps: dict[int, int]) -> dict:
    """The tables of the cap-sufficiency report (money in cents)."""
    years = (
        decisions.group_by("approval_year")
        .agg(
            pl.col("requested_cents").filter(pl.col("status") != "REJECTED").sum().alias("requested_cents"),
            pl.col("awarded_cents").sum().alias("approved_cents"),
            pl.len().alias("applications"),
            (pl.col("status") == "WAITLISTED").sum().alias("waitlisted"),
            (pl.col("status") == "PARTIAL").sum().alias("partial"),
        )
        .sort("approval_year")
        .with_columns(
            pl.col("approval_year").replace_strict(caps, default=cap_cents, return_dtype=pl.Int64).alias("cap_cents")
        )
        .with_columns((pl.col("requested_cents") / pl.col("cap_cents")).alias("oversubscription"))
    )
    cur = decisions.filter(pl.col("approval_year") == approval_year)
    county = (
        cur.group_by("county")
        .agg(pl.col("requested_cents").filter(pl.col("status") != "REJECTED").sum().alias("requested_cents"),
             pl.col("awarded_cents").sum().alias("approved_cents"), pl.len().alias("applications"))
        .sort("county")
    )
    # By wage category: requested = eligible employee credits; approved prorated by each
    # application's awarded / requested share.
    share = cur.select("application_id", "requested_cents", "awarded_cents")
    emp = employee_years.filter(pl.col("status") == "ELIGIBLE").select("application_id", "wage_category", "credit_cents")
    cat = (
        emp.join(share, on="application_id", how="inner")
        .with_columns(
            pl.when(pl.col("requested_cents") > 0)
            .then(pl.col("credit_cents") * pl.col("awarded_cents") / pl.col("requested_cents"))
            .otherwise(0.0)
            .alias("approved_share")
        )
        .group_by("wage_category")
        .agg(pl.col("credit_cents").sum().alias("requested_cents"),
             pl.col("approved_share").sum().round(0).cast(pl.Int64).alias("approved_cents"),
             pl.len().alias("eligible_employee_years"))
        .sort("wage_category")
    )
    this = years.filter(pl.col("approval_year") == approval_year)
    req = int(this["requested_cents"].sum()) if this.height else 0
    app = int(this["approved_cents"].sum()) if this.height else 0
    cap = caps.get(approval_year, cap_cents)
    return {
        "years": years, "county": county, "category": cat,
        "summary": {"approval_year": approval_year, "cap_cents": cap, "requested_cents": req, "approved_cents": app,
                    "cap_left_cents": cap - app, "oversubscription": req / cap if cap else None,
                    "oversubscribed": req > cap},
    }


def write_reports(staging_dir: Path, con, employee_years: pl.DataFrame, cap_cents: int, approval_year: int, *,
                  awards: pl.DataFrame | None = None, freed: dict | None = None) -> list[Path]:
    """``reports/cap_sufficiency.html`` and ``reports/biennial.html`` with their PNG charts and
    CSV tables. History comes from the ledger ``decisions`` table; ``awards`` (this run's
    decisions, written before the ledger commits) are laid over it. ``freed``: the cap audit
    findings freed and the applications that could use it (``finding_documents.freed_cap``)."""
    out = Path(staging_dir) / "reports"
    out.mkdir(parents=True, exist_ok=True)
    dec = ledger_decisions(con, awards)
    caps = _caps_by_year(con, cap_cents)
    caps.setdefault(approval_year, cap_cents)
    tables = cap_sufficiency(dec, employee_years, cap_cents, approval_year, caps)
    files: list[Path] = []
    y = tables["years"]
    req, app_, caps_ = y["requested_cents"].to_list(), y["approved_cents"].to_list(), y["cap_cents"].to_list()
    files.append(charts.bars(
        out / "cap_by_approval_year.svg", [str(v) for v in y["approval_year"].to_list()] or [str(approval_year)],
        {"requested": req or [0], "approved": app_ or [0]}, "Requested, approved and cap by approval year",
        caps=caps_ or [cap_cents],
        note=[f"requested {100 * r / c:,.2f}% of the cap" if c else "" for r, c in zip(req, caps_, strict=True)] or None,
    ))
    c = tables["category"]
    from transforms.products.reason_words import CATEGORY_LABELS, labelled

    files.append(charts.bars(
        out / "cap_by_wage_category.svg",
        [f"{CATEGORY_LABELS[w]}\n({w})" if w in CATEGORY_LABELS else w for w in c["wage_category"].to_list()],
        {"requested": c["requested_cents"].to_list(), "approved": c["approved_cents"].to_list()},
        f"By wage category, approval year {approval_year}",
    ))
    k = tables["county"]
    files.append(charts.bars(
        out / "cap_by_county.svg", k["county"].to_list(),
        {"requested": k["requested_cents"].to_list(), "approved": k["approved_cents"].to_list()},
        f"By county, approval year {approval_year}", horizontal=True,
    ))
    files.append(write_csv(y.with_columns(*[(pl.col(n) / 100).alias(n.replace("_cents", "")) for n in
                                           ("requested_cents", "approved_cents", "cap_cents")]).drop(
        "requested_cents", "approved_cents", "cap_cents"), out / "cap_by_approval_year.csv"))
    files.append(render("cap_report.html.j2", out / "cap_sufficiency.html",
                        title=CAP_TITLE.format(y=approval_year), s=tables["summary"], freed=freed,
                        years=y.to_dicts(), county=k.to_dicts(),
                        category=[{**r, "label": labelled(r["wage_category"], CATEGORY_LABELS)} for r in c.to_dicts()]))

    # Biennial report (56a41(b)): names and locations of, and credits allowed to, each employer.
    allowed = dec.filter((pl.col("awarded_cents") > 0) & (pl.col("approval_year") <= approval_year))
    by_emp = (
        allowed.group_by("employer_id", "approval_year")
        .agg(pl.col("employer_name").last(), pl.col("county").last(), pl.col("awarded_cents").sum().alias("allowed_cents"))
        .sort("employer_id", "approval_year")
    )
    ap_years = sorted(set(by_emp["approval_year"].to_list()))
    totals = (
        by_emp.group_by("employer_id")
        .agg(pl.col("employer_name").last(), pl.col("county").last(), pl.col("allowed_cents").sum().alias("total_cents"),
             *[pl.col("allowed_cents").filter(pl.col("approval_year") == ay).sum().alias(f"y{ay}") for ay in ap_years])
        .sort("employer_name", "employer_id")
    )
    files.append(write_csv(
        by_emp.select("employer_id", "employer_name", "county", "approval_year",
                      (pl.col("allowed_cents") / 100).alias("credits_allowed")),
        out / "biennial_employers.csv",
    ))
    top = totals.sort("total_cents", "employer_id", descending=[True, False]).head(25)
    files.append(charts.bars(
        out / "biennial_by_employer.svg", [f"{n[:28]} ({cid})" for n, cid in zip(top["employer_name"], top["employer_id"], strict=True)],
        {"credits allowed": top["total_cents"].to_list()},
        "Credits allowed by employer (largest 25)", horizontal=True,
    ))
    county_tot = allowed.group_by("county").agg(pl.col("awarded_cents").sum()).sort("county")
    files.append(charts.bars(
        out / "biennial_by_county.svg", county_tot["county"].to_list(),
        {"credits allowed": county_tot["awarded_cents"].to_list()},
        "Credits allowed by county", horizontal=True,
    ))
    files.append(render("biennial_report.html.j2", out / "biennial.html",
                        title=BIENNIAL_TITLE.format(y=approval_year), approval_year=approval_year,
                        years=ap_years, employers=totals.to_dicts(),
                        total_cents=int(totals["total_cents"].sum()) if totals.height else 0))
    return files
