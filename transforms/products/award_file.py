"""The award file for the Division of Taxation (34:11-56a41(a)(4); 54:10A-5.42(a); 54A:4-18(a)).

One row per award greater than zero, with a deterministic certificate number, and one
amendment row per change an analyst's reopening made to an award (spec section 7, I-12).
Format documented in ``AWARD_FILE.md``; the schema version is a column and a manifest field.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import polars as pl

from transforms.outputs import sha256_file, write_csv, write_json

AWARD_FILE_SCHEMA_VERSION = "1.1"

AWARD_FILE_COLUMNS = [
    "schema_version",
    "certificate_no",
    "application_id",
    "employer_id",
    "employer_name",
    "tax_type",
    "tax_year",
    "tax_year_start",
    "tax_year_end",
    "approval_year",
    "certified_credit",
    "record_type",
    "amends_certificate_no",
    "change",
]


def certificate_no(approval_year: int, application_id: str) -> str:
    """Deterministic certificate number, ``NJ-IMP-<approval_year>-<application_id>`` with the id
    as a file name (``_html.safe_filename``: unchanged for ids of letters, digits and ``- _ .``),
    so that ``certificates/<certificate_no>.html`` is the certificate's file."""
    from transforms.products._html import safe_filename

    return f"NJ-IMP-{int(approval_year)}-{safe_filename(application_id)}"


def certificate_expr() -> pl.Expr:
    from transforms.products._html import safe_filename

    safe = pl.col("application_id").map_elements(safe_filename, return_dtype=pl.String)
    return pl.format("NJ-IMP-{}-{}", pl.col("approval_year").cast(pl.Int64), safe)


def award_rows(awards: pl.DataFrame, applications: pl.DataFrame | None = None) -> pl.DataFrame:
    """The award file's rows: an ``AWARD`` row per first award > 0 and an ``AMENDMENT`` row per
    re-decision that changed an award, with certificate numbers, the tax-year dates and the
    names filled in from ``applications`` where the decision lacks them. Money stays in integer
    cents (``certified_cents``: the award after the row; ``change_cents``); sorted by certificate
    number.

    ``awards``: ledger rows (``ledger.ROW_COLUMNS``: first decisions and amendments) or, without
    ``seq``, one decision per application (every one an award)."""
    rows = _history_rows(awards) if "seq" in awards.columns else awards.filter(pl.col("awarded_cents") > 0).with_columns(
        pl.lit("AWARD").alias("record_type"), pl.lit(None, dtype=pl.String).alias("amends_certificate_no"),
        pl.col("awarded_cents").cast(pl.Int64).alias("change_cents"), pl.lit(None, dtype=pl.String).alias("certificate_no"))
    if applications is not None and applications.height and "application_id" in applications.columns:
        extra = [c for c in ("employer_name", "tax_type", "county") if c in applications.columns]
        if extra:
            lookup = applications.select("application_id", *[pl.col(c).alias(f"__app_{c}") for c in extra]).unique(
                "application_id", keep="first"
            )
            rows = rows.join(lookup, on="application_id", how="left").with_columns(
                pl.coalesce(c, f"__app_{c}").alias(c) for c in extra if c in rows.columns
            )
            rows = rows.drop([c for c in rows.columns if c.startswith("__app_")])
    rows = rows.with_columns(
        pl.coalesce("certificate_no", certificate_expr()).alias("certificate_no"),
        pl.col("tax_year").cast(pl.Int32),
        pl.col("approval_year").cast(pl.Int32),
        # the tax period: a fiscal filer's privilege period or taxable year, else the calendar year
        pl.coalesce(_col(rows, "period_start", pl.Date), pl.date(pl.col("tax_year"), 1, 1)).alias("tax_year_start"),
        pl.coalesce(_col(rows, "period_end", pl.Date), pl.date(pl.col("tax_year"), 12, 31)).alias("tax_year_end"),
        pl.col("awarded_cents").cast(pl.Int64).alias("certified_cents"),
    )
    return rows.sort("certificate_no")


def _col(frame: pl.DataFrame, name: str, dtype) -> pl.Expr:
    return pl.col(name) if name in frame.columns else pl.lit(None, dtype=dtype)


def _history_rows(history: pl.DataFrame) -> pl.DataFrame:
    """Award-file rows from ledger rows: each first decision > 0 an ``AWARD``; each re-decision
    (the amendment rows one run made for one application, a decrease possibly split over years)
    an ``AMENDMENT`` whose certificate is ``<first certificate>-A<n>``, ``change`` the sum of its
    rows and ``awarded_cents`` the award after it, in the approval year of the run that made it."""
    history = history.sort("application_id", pl.coalesce("decided_in", "approval_year"), "seq")
    first = history.filter((pl.col("kind") == "decision") & (pl.col("awarded_cents") > 0)).with_columns(
        pl.lit("AWARD").alias("record_type"), pl.lit(None, dtype=pl.String).alias("amends_certificate_no"),
        pl.col("awarded_cents").cast(pl.Int64).alias("change_cents"), pl.lit(None, dtype=pl.String).alias("certificate_no"))
    keep = [c for c in history.columns if c not in ("seq", "kind", "decided_in")]
    out = [first.select(*keep, "record_type", "amends_certificate_no", "change_cents", "certificate_no")]
    amended = history.filter(pl.col("kind") == "amendment").get_column("application_id").unique().to_list()
    extra = []
    for app in sorted(amended):
        mine = history.filter(pl.col("application_id") == app)
        total, last_cert, n = 0, None, 0
        for (kind, _run, year), grp in mine.group_by(["kind", "run_id", pl.coalesce("decided_in", "approval_year")],
                                                    maintain_order=True):
            change = int(grp["awarded_cents"].sum())
            row = grp.row(grp.height - 1, named=True)
            total += change
            if kind == "decision":
                if change > 0:
                    last_cert = certificate_no(row["approval_year"], app)
                continue
            if change == 0:
                continue
            n += 1
            cert = f"{last_cert}-A{n}" if last_cert else certificate_no(year, app)
            extra.append({**{c: row[c] for c in keep}, "approval_year": int(year), "awarded_cents": total,
                          "record_type": "AMENDMENT" if last_cert else "AWARD", "amends_certificate_no": last_cert,
                          "change_cents": change, "certificate_no": cert})
            last_cert = last_cert or cert
    if extra:
        out.append(pl.DataFrame(extra, schema=out[0].schema))
    return pl.concat(out)


def dollars(cents: pl.Series) -> pl.Series:
    """Integer cents as Decimal(18, 2) dollars, each built from its integer (756.82 from 75682):
    no float and no step at scale 0 (a cast to Decimal(18, 0) divided by 100 keeps scale 0 under
    the locked Polars, and the award file certified whole dollars)."""
    return pl.Series(cents.name, [None if c is None else Decimal(int(c)).scaleb(-2) for c in cents.to_list()],
                     dtype=pl.Decimal(18, 2))


def write_award_file(
    staging_dir: Path,
    awards: pl.DataFrame,
    applications: pl.DataFrame,
    run_id: str,
    tax_year: int,
    approval_year: int,
) -> dict:
    """Write ``taxation/award_file.csv``, ``taxation/award_file.parquet`` and
    ``taxation/award_manifest.json`` under ``staging_dir``; returns the manifest."""
    out = Path(staging_dir) / "taxation"
    out.mkdir(parents=True, exist_ok=True)
    rows = award_rows(awards, applications)
    base = rows.select(
        pl.lit(AWARD_FILE_SCHEMA_VERSION).alias("schema_version"),
        "certificate_no",
        "application_id",
        "employer_id",
        "employer_name",
        "tax_type",
        "tax_year",
        "tax_year_start",
        "tax_year_end",
        "approval_year",
        "certified_cents",
        "record_type",
        "amends_certificate_no",
        "change_cents",
    )
    csv_frame = base.with_columns((pl.col("certified_cents") / 100).alias("certified_credit"),
                                  (pl.col("change_cents") / 100).alias("change")).select(AWARD_FILE_COLUMNS)
    pq_frame = base.with_columns(dollars(base["certified_cents"]).alias("certified_credit"),
                                 dollars(base["change_cents"]).alias("change")).select(AWARD_FILE_COLUMNS)
    csv_path = write_csv(csv_frame, out / "award_file.csv")
    pq_path = out / "award_file.parquet"
    tmp = out / ".award_file.parquet.tmp"
    pq_frame.write_parquet(tmp)
    tmp.replace(pq_path)
    # the credit certified now: each application's last row (an amendment replaces the award before it)
    latest = base.sort("certificate_no").group_by("application_id", maintain_order=True).agg(
        pl.col("certified_cents").last(), pl.col("tax_type").last()) if base.height else base.select("certified_cents", "tax_type")
    total_cents = int(latest["certified_cents"].sum()) if latest.height else 0
    manifest = {
        "schema_version": AWARD_FILE_SCHEMA_VERSION,
        "format": "impcredit award file (see transforms/products/AWARD_FILE.md)",
        "run_id": run_id,
        "tax_year": int(tax_year),
        "approval_year": int(approval_year),
        "generated_for": "New Jersey Division of Taxation",
        "statutory_basis": "N.J.S.A. 34:11-56a41(a)(4); 54:10A-5.42(a) (CBT); 54A:4-18(a) (GIT)",
        "columns": AWARD_FILE_COLUMNS,
        "row_count": base.height,
        "total_certified_credit": f"{total_cents // 100}.{total_cents % 100:02d}",
        "total_certified_cents": total_cents,
        "amendment_rows": int((base["record_type"] == "AMENDMENT").sum()) if base.height else 0,
        # applications of the run not decided (spec section 7): no row here until a later run decides them
        "held_applications": int((applications["status"] == "HELD").sum()) if "status" in applications.columns else 0,
        "by_tax_type": {
            k: {"rows": n, "total_certified_cents": int(c)}
            for k, n, c in latest.group_by("tax_type").agg(pl.len(), pl.col("certified_cents").sum()).sort("tax_type").iter_rows()
        },
        "files": {
            p.name: {"sha256": sha256_file(p), "bytes": p.stat().st_size} for p in (csv_path, pq_path)
        },
    }
    write_json(manifest, out / "award_manifest.json")
    return manifest
