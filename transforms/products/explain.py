"""Explain one employee-year: a receipt of every quantity of spec sections 4 to 6 with its
formula, the parameters used with their citations, the reasons in plain words, the submitted
payroll lines the hours and wages came from, and a check that recomputes the credit from the
listed quantities to the cent."""

from __future__ import annotations

import datetime as dt
import io
import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from transforms import storage
from transforms.products.notices import explain_reasons
from transforms.reference.parameters import Parameters
from transforms.rules.year import counterfactual, year_params
from transforms.settings import RuleSettings


class ExplainError(ValueError):
    """The employee-year cannot be explained; the message says why."""


# (column, symbol, formula, spec section)
QUANTITIES: list[tuple[str, str, str]] = [
    ("H_t", "hours on days of the tax period T (periods spread evenly over their days), over the group's rows", "4"),
    ("H_p", "hours on days of the prior calendar year p (the last that ended before T began)", "4, I-11"),
    ("W_p", "actual gross wages on days in p", "4"),
    ("T_p", "actual employer payroll taxes on days in p, as reported", "4"),
    ("T_p_used", "prior-year employer taxes used in part 1 (= T_p unless I-6 model_both)", "4, I-6"),
    ("RW_t", "sum over days of T of hours(day) x MW(category, day)", "4"),
    ("RT_t", "the employer payroll taxes required on RW_t: per member of the group, each calendar year's wage bases "
             "counted from January 1, the member's UI/DI rates by half-year (see members)", "4, I-15"),
    ("MWavg_t", "RW_t / H_t", "4"),
    ("MWavg_p", "day-weighted average minimum wage of the category over p", "4, I-4"),
    ("ADJ_t", "max(CF(T) - CF(p), FED(T) - FED(p), 0), CF(T) and FED(T) averaged over the days of T", "4"),
    ("ADJ_part1", "adjustment used in part 1 (= ADJ_t under I-1 dollars)", "6, I-1, I-3"),
    ("ADJ_part2", "adjustment used in part 2 (= ADJ_t under I-1 dollars)", "6, I-1, I-3"),
    ("hours_prior", "round(H_p, 2)", "5"),
    ("hours_current", "round(H_t, 2)", "5"),
    ("part1", "min(H_t,H_p) * max(0, (RW_t+RT_t)/H_t - [(W_p+T_p)/H_p + ADJ*(1+T_p/W_p)]); 0 when H_p = 0", "6"),
    ("part2", "max(0, H_t-H_p) * max(0, (MWavg_t - (MWavg_p + ADJ)) * (1 + RT_t/RW_t))", "6"),
    ("credit_cents", "round(part1 + part2) half up to the cent (0 when INELIGIBLE)", "6"),
]


def _round_cents(x: float) -> int:
    """Round half up to the cent, with the engine's float guard (transforms.rules.rounding.round_cents)."""
    return int(math.floor(x * 100 + 0.5 + 1e-6))


def _safe(num: float, den: float) -> float:
    return num / den if den != 0 else 0.0


def recompute(q: dict[str, Any], rules: RuleSettings | None = None) -> dict[str, float]:
    """part1, part2 and the credit from the listed quantities, with the spec 6 formulas."""
    rules = rules or RuleSettings()
    H_t, H_p, W_p = q["H_t"], q["H_p"], q["W_p"]
    T_p = q.get("T_p_used", q["T_p"])
    RW, RT = q["RW_t"], q["RT_t"]
    adj1, adj2 = q.get("ADJ_part1", q["ADJ_t"]), q.get("ADJ_part2", q["ADJ_t"])
    if H_p > 0:
        prior = _safe(W_p + T_p, H_p) + adj1 * (1 + _safe(T_p, W_p))
        part1 = min(H_t, H_p) * max(0.0, _safe(RW + RT, H_t) - prior)
    else:
        part1 = 0.0
    factor = 1 + _safe(RT, RW) if rules.part2_taxes == "included" else 1.0
    mw_avg_t = _safe(RW, H_t)
    part2 = max(0.0, H_t - H_p) * max(0.0, (mw_avg_t - (q["MWavg_p"] + adj2)) * factor)
    return {"part1": part1, "part2": part2, "MWavg_t": mw_avg_t}


def _jsonable(v: Any) -> Any:
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _rules_from_manifest(out_dir: Path) -> RuleSettings:
    m = out_dir / "manifest.json"
    if m.is_file():
        try:
            return RuleSettings(**json.loads(m.read_text())["settings"]["rules"])
        except (KeyError, ValueError, TypeError):
            pass
    return RuleSettings()


def _lake_files(workdir: Path, dataset: str) -> list[Path]:
    from transforms.ingest.store.location import lake_dir

    lake = lake_dir(workdir)  # exactly this dataset (payroll_lines is not payroll): its folder or one file
    files = [lake / f"{dataset}.parquet"] if (lake / f"{dataset}.parquet").is_file() else []
    if (lake / dataset).is_dir():
        files += (lake / dataset).rglob("*.parquet")
    return sorted(p for p in files if not p.name.startswith("."))


def _read_lake(workdir: Path, dataset: str, filt: pl.Expr, cols: list[str]) -> list[dict]:
    frames = []
    for f in _lake_files(workdir, dataset):
        lf = storage.scan_parquet(f)
        have = lf.collect_schema().names()
        if not all(c in have for c in ("employer_id",)):
            continue
        frames.append(lf.filter(filt).select([c for c in cols if c in have]).collect())
    if not frames:
        return []
    df = pl.concat(frames, how="diagonal_relaxed")
    sort = [c for c in ("source_file", "source_sheet", "source_line", "period_start") if c in df.columns]
    return [{k: _jsonable(v) for k, v in r.items()} for r in df.sort(sort, nulls_last=True).iter_rows(named=True)]


def _param(name: str, label: str, value: Any, params: Parameters, on: dt.date, period: str) -> dict:
    c = params.citation(name, on)
    return {"name": name, "label": label, "value": value, "period": period,
            "citation": {"title": c.title, "href": c.href, "source": c.source, "label": c.label}}


def parameters_used(params: Parameters, row: dict, rules: RuleSettings) -> list[dict]:
    """Every parameter the employee-year used, with its citation: the category's minimum wage over
    p and T, the old-law and federal minimum wages of each year of T and p, and the payroll-tax
    rates and bases of each calendar year T touches."""
    category = row["wage_category"]
    t_start, t_end = row["T_start"], row["T_end"]
    p_start, p_end = row["p_start"], row["p_end"]
    out = []
    for a, b, v in params.schedule(f"minimum_wage.{category}", p_start, t_end):
        out.append(_param(f"minimum_wage.{category}", f"MW {category}", v, params, a, f"{a} to {b}"))
    for y in sorted({*range(p_start.year, p_end.year + 1), *range(t_start.year, t_end.year + 1)}):
        jan1 = dt.date(y, 1, 1)
        out += [
            _param("counterfactual.old_law_minimum_wage", f"CF({y})", counterfactual(params, y, rules), params, jan1,
                   f"January 1, {y}"),
            _param("federal.minimum_wage", f"FED({y})", params.value("federal.minimum_wage", jan1), params, jan1,
                   f"January 1, {y}"),
        ]
    for y in range(t_start.year, t_end.year + 1):
        yp = year_params(params, y, rules, with_prior=False)
        jan1 = dt.date(y, 1, 1)
        out += [
            _param("payroll_taxes.ss_rate", "Social Security rate", yp.ss_rate, params, jan1, str(y)),
            _param("payroll_taxes.ss_wage_base", "Social Security wage base", yp.ss_base, params, jan1, str(y)),
            _param("payroll_taxes.medicare_rate", "Medicare rate", yp.medicare_rate, params, jan1, str(y)),
            _param("payroll_taxes.futa_rate", "FUTA net rate", yp.futa_rate, params, jan1, str(y)),
            _param("payroll_taxes.futa_wage_base", "FUTA wage base", yp.futa_base, params, jan1, str(y)),
            _param("payroll_taxes.nj_wage_base", "NJ taxable wage base (UI/DI)", yp.nj_base, params, jan1, str(y)),
        ]
    return out


def _find(ey: pl.DataFrame, path: Path, tax_year: int, employer_id: str, employee_id: str,
          application_id: str | None) -> pl.DataFrame:
    """The rows of the employee-year (one per application claiming it); an ExplainError says
    what is unknown: the tax year, the employer or the employee (with the claimed ones)."""
    employer = (pl.col("employer_id") == str(employer_id)) | (pl.col("roster_employer_id") == str(employer_id))
    sel = ey.filter((pl.col("tax_year") == tax_year) & employer & (pl.col("employee_id") == str(employee_id)))
    if application_id is not None:
        sel = sel.filter(pl.col("application_id") == application_id)
    if sel.height == 0:
        years = sorted(set(ey["tax_year"].to_list()))
        if tax_year not in years:
            raise ExplainError(f"{path} holds tax year(s) {', '.join(map(str, years)) or 'none'}, not {tax_year}: "
                               "give the --out of that year's annual run")
        mine = ey.filter((pl.col("tax_year") == tax_year) & employer)
        if mine.height == 0:
            raise ExplainError(f"the employer {employer_id} is unknown in {path}: no application of it was decided "
                               f"for tax year {tax_year}")
        others = ", ".join(sorted(mine.get_column("employee_id").unique().to_list())[:10])
        raise ExplainError(
            f"the employee {employee_id} is unknown for employer {employer_id} in tax year {tax_year}: its claimed "
            f"employees are {others} (only employees on an application's roster are claimed)")
    return sel


def _check(row: dict, members: list[dict], rules, computed: bool) -> dict[str, Any]:
    """The credit recomputed from the stored quantities, item by item against what the run
    stored (to the cent; MWavg_t to a thousandth of a cent)."""
    check: dict[str, Any] = {"ok": True, "items": []}
    if computed:
        r = recompute(row, rules)
        eligible = row["status"] == "ELIGIBLE"
        items = [("RT_t = the members' RT (cents)", _round_cents(sum(m["RT_m"] for m in members)), _round_cents(row["RT_t"]))
                 ] if members else []  # (a run writes employee_members.parquet beside employee_years.parquet)
        items += [
            ("MWavg_t (cents x 1000)", round(r["MWavg_t"] * 1e5), round((row.get("MWavg_t") or 0.0) * 1e5)),
            ("part1_cents", _round_cents(r["part1"]) if eligible else 0, row["part1_cents"]),
            ("part2_cents", _round_cents(r["part2"]) if eligible else 0, row["part2_cents"]),
            ("credit_cents", _round_cents(r["part1"] + r["part2"]) if eligible else 0, row["credit_cents"]),
        ]
        check["items"] = [{"name": n, "recomputed": a, "stored": b, "ok": a == b} for n, a, b in items]
        check["ok"] = all(i["ok"] for i in check["items"])
        check["unrounded"] = {"part1": r["part1"], "part2": r["part2"]}
        if not eligible:
            check["note"] = "INELIGIBLE: part1, part2 and credit count 0 (the formulas would give the unrounded values shown)"
    else:
        check["note"] = "nothing computed for this tax year (" + (row.get("reasons") or "") + ")"
        check["ok"] = row.get("credit_cents", 0) == 0
    return check


def _members(out_dir: Path, row: dict) -> list[dict]:
    """The members of the group whose rows counted for the person: hours, required wages and
    required taxes in T at each (``employee_members.parquet`` of the run)."""
    path = out_dir / "employee_members.parquet"
    if not path.is_file():
        return []
    m = storage.read_parquet(path).filter(
        (pl.col("application_id") == row["application_id"]) & (pl.col("roster_employer_id") == row["roster_employer_id"])
        & (pl.col("employee_id") == row["employee_id"]))
    return m.select("member_id", "H_m", "RW_m", "RT_m").sort("member_id").to_dicts()


def _person_lines(workdir: Path, row: dict, members: list[dict]) -> tuple[list[dict], list[dict]]:
    """The submitted payroll lines (and code lines) the person's quantities came from: the rows of
    the roster's employer and employee id and the rows of the same person (ssn) at the members of
    the group, on days of p and T."""
    key = (pl.col("employer_id") == row["roster_employer_id"]) & (pl.col("employee_id") == row["employee_id"])
    lo = row.get("pp_start") or dt.date(int(row["tax_year"]) - 1, 1, 1)
    hi = row.get("T_end") or dt.date(int(row["tax_year"]), 12, 31)
    period = (pl.col("period_end") >= lo) & (pl.col("period_start") <= hi)
    ssns = {r["ssn_hash"] for r in _read_lake(workdir, "payroll", key, ["ssn_hash"]) if r.get("ssn_hash")}
    ids = sorted({m["member_id"] for m in members} | {row["roster_employer_id"]})
    person = key | (pl.col("ssn_hash").is_in(sorted(ssns)) & pl.col("employer_id").is_in(ids)) if ssns else key
    cols = ["employer_id", "employee_id", "source_file", "source_sheet", "source_line", "period_start", "period_end",
            "hours", "gross_wages", "employer_taxes", "check_id", "pay_date", "line_count"]
    payroll = _read_lake(workdir, "payroll", person & period, cols)
    keys = {(p["employer_id"], p["employee_id"]) for p in payroll}
    line_key = pl.struct("employer_id", "employee_id").is_in([{"employer_id": e, "employee_id": i} for e, i in keys]) \
        if keys else key
    code_lines = _read_lake(
        workdir, "payroll_lines", line_key & period,
        ["employer_id", "employee_id", "source_file", "source_sheet", "source_line", "row_line", "check_id", "pay_date",
         "period_start", "period_end", "code", "counts_as", "hours", "amount"],
    )
    return payroll, code_lines


def declared_for(out_dir: Path, row: dict) -> list[dict]:
    """The totals the employer declared for the person beside the figures as read (spec section
    1: ``declared_totals.csv`` of the run), with the tolerance and whether they differ."""
    path = out_dir / "declared_totals.csv"
    if not path.is_file():
        return []
    d = pl.read_csv(io.BytesIO(path.read_bytes()), infer_schema=False).with_columns(
        pl.col("declared", "read", "tolerance").cast(pl.Float64), pl.col("differs") == "true")
    d = d.filter((pl.col("application_id") == row["application_id"])
                 & (pl.col("roster_employer_id") == row["roster_employer_id"]) & (pl.col("employee_id") == row["employee_id"]))
    return [{k: _jsonable(v) for k, v in r.items()} for r in d.select(
        "figure", "period_start", "period_end", "declared", "read", "tolerance", "differs").to_dicts()]


def findings_for(workdir: Path, row: dict) -> list[dict]:
    """The audit findings (spec section 9a) that concern the employee-year, from the workdir's
    ledger: a misclassification of the person in the application, or a wage reduction of the
    employer for the tax year; in force or withdrawn."""
    from transforms.award import findings as fnd
    from transforms.award.ledger import LedgerError, connect

    path = Path(workdir) / "impcredit.duckdb"
    if not path.is_file():
        return []
    try:
        con = connect(path, read_only=True)
    except LedgerError:
        return []
    try:
        found = fnd.read_findings(con)
    finally:
        con.close()
    mine = [f for f in fnd.findings_of(found, row["application_id"], row["employer_id"], int(row["tax_year"]))
            if f.kind == "wage-reduction" or row["employee_id"] in f.employees]
    return [{"finding_id": f.finding_id, "kind": f.kind, "reason_code": f.code, "finding_date": f.found_on.isoformat(),
             "knowing": f.knowing, "reason": f.reason, "statute": fnd.STATUTE[f.kind],
             "status": "in force" if f.active else f"withdrawn on {f.withdrawn_on}: {f.withdraw_reason}"}
            for f in mine]


def explain(workdir: Path, out_dir: Path, tax_year: int, employer_id: str, employee_id: str, params: Parameters,
            *, application_id: str | None = None) -> dict:
    """The receipt of one employee-year (see module docstring). Raises ExplainError when the
    run output or the employee-year is not found."""
    workdir, out_dir = Path(workdir), storage.location(out_dir)
    path = out_dir / "employee_years.parquet"
    if not path.is_file():
        raise ExplainError(f"no employee_years.parquet in {out_dir}: run the annual run for tax year {tax_year} first")
    if storage.is_remote(out_dir) and not (out_dir / "manifest.json").is_file():  # published last: the commit
        raise ExplainError(f"{out_dir} is incomplete (no manifest.json: a run is publishing it, or was stopped while "
                           "it did): run the annual run again, or wait for it")
    ey = storage.read_parquet(path)
    sel = _find(ey, path, tax_year, employer_id, employee_id, application_id)
    sel = sel.sort("application_id")
    row = sel.row(0, named=True)
    rules = _rules_from_manifest(out_dir)
    t = int(tax_year)
    computed = "H_t" in ey.columns and row.get("H_t") is not None
    quantities = [
        {"name": c, "value": _jsonable(row.get(c)), "formula": f, "section": s} for c, f, s in QUANTITIES if c in row
    ]
    reasons = explain_reasons(row.get("reasons"))
    result = {
        "part1_cents": row.get("part1_cents"),
        "part2_cents": row.get("part2_cents"),
        "credit_cents": row.get("credit_cents"),
        "part1_credit": f"{(row.get('part1_cents') or 0) / 100:.2f}",
        "part2_credit": f"{(row.get('part2_cents') or 0) / 100:.2f}",
        "credit": f"{(row.get('credit_cents') or 0) / 100:.2f}",
    }
    members = _members(out_dir, row)
    params_list = parameters_used(params, row, rules) if computed else []
    check = _check(row, members, rules, computed)
    payroll, code_lines = _person_lines(workdir, row, members)
    for p in payroll:  # a reversal or void (spec section 1): netted against the other lines
        p["netted"] = any((p.get(c) or 0) < 0 for c in ("hours", "gross_wages", "employer_taxes"))
    member_ids = sorted({m["member_id"] for m in members} | {row["employer_id"]})
    years = sorted({y for y in range(row["T_start"].year - 1, row["T_end"].year + 1)}) if computed else [t - 1, t]
    rates = _read_lake(
        workdir, "employer_rates",
        pl.col("employer_id").is_in(member_ids) & pl.col("rate_year_start").is_in([dt.date(y, 7, 1) for y in years]),
        ["employer_id", "source_file", "source_sheet", "source_line", "rate_year_start", "ui_rate", "di_rate"],
    )
    return {
        "employee_year": {
            k: _jsonable(row.get(k))
            for k in ("application_id", "employer_id", "roster_employer_id", "employee_id", "tax_year", "wage_category",
                      "status", "reasons", "received_date")
            if k in row
        },
        "other_applications": sel["application_id"].to_list()[1:],
        "tax_period": {"start": _jsonable(row.get("T_start")), "end": _jsonable(row.get("T_end")),
                       "prior_year": [_jsonable(row.get("p_start")), _jsonable(row.get("p_end"))]},
        "members": [{k: _jsonable(v) for k, v in m.items()} for m in members],
        "settings": rules.model_dump(),
        "quantities": quantities,
        "result": result,
        "parameters": params_list,
        "reasons": reasons,
        "findings": findings_for(workdir, row),
        "declared_totals": declared_for(out_dir, row),
        "netted_lines": row.get("netted_lines"),
        "sources": {"payroll": payroll, "code_lines": code_lines, "employer_rates": rates,
                    "payroll_totals": {
                        "rows": len(payroll),
                        "hours": round(sum(p.get("hours") or 0 for p in payroll), 2),
                        "gross_wages": round(sum(p.get("gross_wages") or 0 for p in payroll), 2),
                    }},
        "check": check,
        "parameters_version": params.version,
    }
