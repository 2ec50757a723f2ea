"""The documents of an audit finding or of its withdrawal (spec section 9a), written from the
ledger as it stood just after that event: for each application it re-decided, the amended
certificate of credit (when the credit certified changed), the notice of the finding with its
reasons and hearing rights (HTML and PDF, as every certificate and notice), and the Division of
Taxation's ``taxation/recapture.csv`` (``finding_documents``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from transforms.award import finding_acts as acts
from transforms.award import findings as fnd
from transforms.award.decide import ROW_SCHEMA
from transforms.award.ledger import DECISION_COLUMNS, caps, decision_rows
from transforms.products._html import safe_filename
from transforms.products.award_file import award_rows
from transforms.products.certificates import write_certificates
from transforms.products.finding_documents import finding_block, recapture_row, write_recapture
from transforms.products.notices import write_notices


def as_of_event(history: pl.DataFrame, run_id: str) -> tuple[pl.DataFrame, dict]:
    """(an application's ledger rows up to and including those of ``run_id``; its decision then:
    the last of them with the award their sum, in its approval year)."""
    h = history.sort(pl.coalesce("decided_in", "approval_year"), "seq").with_row_index("__i")
    last = int(h.filter(pl.col("run_id") == run_id)["__i"].max())
    h = h.filter(pl.col("__i") <= last).drop("__i")
    row = h.row(h.height - 1, named=True)
    return h, {**row, "awarded_cents": int(h["awarded_cents"].sum()),
               "approval_year": row["decided_in"] if row["decided_in"] is not None else row["approval_year"]}


def _addresses(workdir: Path | None, ids: list[str]) -> dict[str, str]:
    """application id -> the employer's mailing address the lake holds for it."""
    from transforms.ingest.store.location import lake_dir

    if workdir is None or not lake_dir(workdir).is_dir():
        return {}
    from transforms.ingest.store.lake import scan_lake

    got = scan_lake(workdir, "applications").filter(
        pl.col("application_id").is_in(ids) & pl.col("employer_address").is_not_null()).select(
        "application_id", "employer_address").collect()
    return dict(got.iter_rows())


def write_event(staging_dir: Path, con, finding_id: str, event: str, run_id: str, params, *,
                workdir: Path | None = None) -> list[dict]:
    """The documents of a finding's ``event`` (``finding`` or ``withdrawal``, made by ``run_id``)
    under ``staging_dir``; returns each application's before and after and its certificate."""
    effects = con.sql("""SELECT * FROM finding_decisions WHERE finding_id = $f AND event = $e AND run_id = $r
                         ORDER BY application_id""", params={"f": finding_id, "e": event, "r": run_id}).pl().to_dicts()
    finding = next(f for f in fnd.read_findings(con) if f.finding_id == finding_id)
    shown = finding if event == "withdrawal" else fnd.Finding(**{**finding.__dict__, "withdrawn_on": None,
                                                                 "withdraw_reason": None, "withdraw_run": None})
    in_force = fnd.in_force_at(con, run_id)
    ids = [e["application_id"] for e in effects]
    hist, decisions, lines = [], [], []
    for app in ids:
        h, d = as_of_event(decision_rows(con, [app]), run_id)
        hist.append(h.cast(ROW_SCHEMA))
        decisions.append(d)
        emp = acts.base(con, app, detail=True)[1]
        lines.append(fnd.apply_to_employee_years(emp, in_force))
    history = pl.concat(hist)
    awards = pl.DataFrame(decisions).select(DECISION_COLUMNS).cast({c: ROW_SCHEMA[c] for c in DECISION_COLUMNS})
    addresses = _addresses(workdir, ids)
    new = award_rows(history, awards).filter((pl.col("run_id") == run_id) & (pl.col("record_type") == "AMENDMENT"))
    certs = dict(new.select("application_id", "certificate_no").iter_rows())
    jobs: list = []
    n_docs = len(ids) + len(certs)
    write_certificates(staging_dir, history, awards, run_id=run_id, pdf_jobs=jobs, documents=n_docs,
                       addresses=addresses, only=set(certs.values()))
    apps = {a["application_id"]: a for a in decisions}
    blocks = {e["application_id"]: [finding_block(shown, params, before=e["certified_before_cents"],
                                                  now=e["certified_now_cents"], app=apps[e["application_id"]])]
              for e in effects}
    write_notices(staging_dir, awards, pl.concat(lines, how="diagonal_relaxed"), None, run_id=run_id, pdf_jobs=jobs,
                  documents=n_docs, history=history, addresses=addresses, findings=blocks, finding_notice=event,
                  caps=caps(con))
    for job in jobs:
        job()
    write_recapture([recapture_row(finding, apps[e["application_id"]], e["certified_before_cents"],
                                   e["certified_now_cents"], params, reversal=event == "withdrawal") for e in effects],
                    Path(staging_dir) / "taxation" / "recapture.csv")
    return [{"application_id": e["application_id"], "certified_before": e["certified_before_cents"] / 100,
             "certified_now": e["certified_now_cents"] / 100, "requested_before": e["requested_before_cents"] / 100,
             "requested_now": e["requested_now_cents"] / 100, "status": apps[e["application_id"]]["status"],
             "reasons": apps[e["application_id"]]["reasons"], "certificate_no": certs.get(e["application_id"]),
             "notice": f"notices/{safe_filename(e['application_id'])}.html"} for e in effects]
