"""Explain one employee-year: a receipt of every quantity of spec sections 4 to 6 with its
formula, the parameters used with their citations, the reasons in plain words, the submitted
payroll lines the hours and wages came from, and a check that recomputes the credit from the
listed quantities to the cent."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from transforms.products.notices import explain_reasons
from transforms.reference.parameters import Parameters
from transforms.rules.year import counterfactual, year_params
from transforms.settings import RuleSettings


class ExplainError(ValueError):
    """The employee-year cannot be explained; the message says why."""


# (column, symbol, formula, spec section)
QUANTITIES: list[tuple[str, str, str]] = [
    ("H_t", "hours on days in the tax year t (periods spread evenly over their days)", "4"),
    ("H_p", "hours on days in the prior calendar year p = t-1", "4"),
    ("W_p", "actual gross wages on days in p", "4"),
    ("T_p", "actual employer payroll taxes on days in p, as reported", "4"),
    ("T_p_used", "prior-year employer taxes used in part 1 (= T_p unless I-6 model_both)", "4, I-6"),
    ("RW_t", "sum over days in t of hours(day) x MW(category, day)", "4"),
    ("RW1", "the part of RW_t on days January to June", "4"),
    ("RT_t", "SSrate*min(RW_t,SSbase) + MEDrate*RW_t + FUTArate*min(RW_t,FUTAbase) + njr1*min(RW1,NJbase) + njr2*(min(RW_t,NJbase)-min(RW1,NJbase))", "4"),
    ("MWavg_t", "RW_t / H_t", "4"),
    ("MWavg_p", "day-weighted average minimum wage of the category over p", "4, I-4"),
    ("ADJ_t", "max(CF(t) - CF(t-1), FED(t) - FED(t-1), 0)", "4"),
    ("ADJ_part1", "adjustment used in part 1 (= ADJ_t under I-1 dollars)", "6, I-1, I-3"),
    ("ADJ_part2", "adjustment used in part 2 (= ADJ_t under I-1 dollars)", "6, I-1, I-3"),
    ("njr1", "employer UI+DI rate, rate year starting July 1 of t-1", "4"),
    ("njr2", "employer UI+DI rate, rate year starting July 1 of t", "4"),
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


def _required_taxes(q: dict[str, Any], yp) -> float:
    rw, rw1 = q["RW_t"], q["RW1"]
    nj_all, nj_h1 = min(rw, yp.nj_base), min(rw1, yp.nj_base)
    return (
        yp.ss_rate * min(rw, yp.ss_base) + yp.medicare_rate * rw + yp.futa_rate * min(rw, yp.futa_base)
        + (q.get("njr1") or 0.0) * nj_h1 + (q.get("njr2") or 0.0) * (nj_all - nj_h1)
    )


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
    lake = workdir / "lake"  # exactly this dataset (payroll_lines is not payroll): its folder or one file
    files = [lake / f"{dataset}.parquet"] if (lake / f"{dataset}.parquet").is_file() else []
    if (lake / dataset).is_dir():
        files += (lake / dataset).rglob("*.parquet")
    return sorted(p for p in files if not p.name.startswith("."))


def _read_lake(workdir: Path, dataset: str, filt: pl.Expr, cols: list[str]) -> list[dict]:
    frames = []
    for f in _lake_files(workdir, dataset):
        lf = pl.scan_parquet(f)
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
            "citation": {"title": c.title, "href": c.href}}


def parameters_used(params: Parameters, t: int, category: str, row: dict, rules: RuleSettings) -> list[dict]:
    yp = year_params(params, t, rules, with_prior=False)
    jan1, jan1p = dt.date(t, 1, 1), dt.date(t - 1, 1, 1)
    out = []
    for a, b, v in params.schedule(f"minimum_wage.{category}", jan1p, dt.date(t, 12, 31)):
        out.append(_param(f"minimum_wage.{category}", f"MW {category}", v, params, a, f"{a} to {b}"))
    out += [
        _param("counterfactual.old_law_minimum_wage", "CF(t)", counterfactual(params, t, rules), params, jan1, f"January 1, {t}"),
        _param("counterfactual.old_law_minimum_wage", "CF(t-1)", counterfactual(params, t - 1, rules), params, jan1p,
               f"January 1, {t - 1}"),
        _param("federal.minimum_wage", "FED(t)", yp.fed_t, params, jan1, f"January 1, {t}"),
        _param("federal.minimum_wage", "FED(t-1)", yp.fed_p, params, jan1p, f"January 1, {t - 1}"),
        _param("payroll_taxes.ss_rate", "Social Security rate", yp.ss_rate, params, jan1, str(t)),
        _param("payroll_taxes.ss_wage_base", "Social Security wage base", yp.ss_base, params, jan1, str(t)),
        _param("payroll_taxes.medicare_rate", "Medicare rate", yp.medicare_rate, params, jan1, str(t)),
        _param("payroll_taxes.futa_rate", "FUTA net rate", yp.futa_rate, params, jan1, str(t)),
        _param("payroll_taxes.futa_wage_base", "FUTA wage base", yp.futa_base, params, jan1, str(t)),
        _param("payroll_taxes.nj_wage_base", "NJ taxable wage base (UI/DI)", yp.nj_base, params, jan1, str(t)),
    ]
    for key, start in (("njr1", dt.date(t - 1, 7, 1)), ("njr2", dt.date(t, 7, 1))):
        out.append({"name": f"employer_rates.{key}", "label": f"employer UI+DI ({key})", "value": row.get(key),
                    "period": f"rate year from {start}",
                    "citation": {"title": "the employer's UI/DI rate notice (employer_rates.csv of the submission)",
                                 "href": ""}})
    return out


def _find(ey: pl.DataFrame, path: Path, tax_year: int, employer_id: str, employee_id: str,
          application_id: str | None) -> pl.DataFrame:
    """The rows of the employee-year (one per application claiming it); an ExplainError says
    what is unknown: the tax year, the employer or the employee (with the claimed ones)."""
    sel = ey.filter(
        (pl.col("tax_year") == tax_year)
        & (pl.col("employer_id") == str(employer_id))
        & (pl.col("employee_id") == str(employee_id))
    )
    if application_id is not None:
        sel = sel.filter(pl.col("application_id") == application_id)
    if sel.height == 0:
        years = sorted(set(ey["tax_year"].to_list()))
        if tax_year not in years:
            raise ExplainError(f"{path} holds tax year(s) {', '.join(map(str, years)) or 'none'}, not {tax_year}: "
                               "give the --out of that year's annual run")
        mine = ey.filter((pl.col("tax_year") == tax_year) & (pl.col("employer_id") == str(employer_id)))
        if mine.height == 0:
            raise ExplainError(f"the employer {employer_id} is unknown in {path}: no application of it was decided "
                               f"for tax year {tax_year}")
        others = ", ".join(sorted(mine.get_column("employee_id").unique().to_list())[:10])
        raise ExplainError(
            f"the employee {employee_id} is unknown for employer {employer_id} in tax year {tax_year}: its claimed "
            f"employees are {others} (only employees on an application's roster are claimed)")
    return sel


def _check(row: dict, params: Parameters, t: int, rules, computed: bool) -> dict[str, Any]:
    """The credit recomputed from the stored quantities, item by item against what the run
    stored (to the cent; MWavg_t to a thousandth of a cent)."""
    check: dict[str, Any] = {"ok": True, "items": []}
    if computed:
        r = recompute(row, rules)
        eligible = row["status"] == "ELIGIBLE"
        yp = year_params(params, t, rules, with_prior=False)
        rt = _required_taxes(row, yp)
        items = [
            ("RT_t (cents)", _round_cents(rt), _round_cents(row["RT_t"])),
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


def explain(workdir: Path, out_dir: Path, tax_year: int, employer_id: str, employee_id: str, params: Parameters,
            *, application_id: str | None = None) -> dict:
    """The receipt of one employee-year (see module docstring). Raises ExplainError when the
    run output or the employee-year is not found."""
    workdir, out_dir = Path(workdir), Path(out_dir)
    path = out_dir / "employee_years.parquet"
    if not path.is_file():
        raise ExplainError(f"no employee_years.parquet in {out_dir}: run the annual run for tax year {tax_year} first")
    ey = pl.read_parquet(path)
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
    params_list = parameters_used(params, t, row["wage_category"], row, rules) if computed else []
    check = _check(row, params, t, rules, computed)
    emp_filter = (pl.col("employer_id") == str(employer_id)) & (pl.col("employee_id") == str(employee_id))
    period = (pl.col("period_end") >= dt.date(t - 1, 1, 1)) & (pl.col("period_start") <= dt.date(t, 12, 31))
    payroll = _read_lake(
        workdir, "payroll", emp_filter & period,
        ["source_file", "source_sheet", "source_line", "period_start", "period_end", "hours", "gross_wages", "employer_taxes",
         "check_id", "pay_date", "line_count"],
    )
    for p in payroll:  # a reversal or void (spec section 1): netted against the other lines
        p["netted"] = any((p.get(c) or 0) < 0 for c in ("hours", "gross_wages", "employer_taxes"))
    # the code lines of line-per-code exports, summed into the rows above (row_line)
    code_lines = _read_lake(
        workdir, "payroll_lines", emp_filter & period,
        ["source_file", "source_sheet", "source_line", "row_line", "check_id", "pay_date", "period_start", "period_end",
         "code", "counts_as", "hours", "amount"],
    )
    rates = _read_lake(
        workdir, "employer_rates",
        (pl.col("employer_id") == str(employer_id)) & pl.col("rate_year_start").is_in([dt.date(t - 1, 7, 1), dt.date(t, 7, 1)]),
        ["source_file", "source_sheet", "source_line", "rate_year_start", "ui_rate", "di_rate"],
    )
    return {
        "employee_year": {
            k: _jsonable(row.get(k))
            for k in ("application_id", "employer_id", "employee_id", "tax_year", "wage_category", "status", "reasons",
                      "received_date")
            if k in row
        },
        "other_applications": sel["application_id"].to_list()[1:],
        "settings": rules.model_dump(),
        "quantities": quantities,
        "result": result,
        "parameters": params_list,
        "reasons": reasons,
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
