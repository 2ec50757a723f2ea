"""Row-by-row reference of the credit (spec sections 3 to 6), in plain Python.

Independent of ``transforms.rules.engine``: it reads the canonical CSV files with the ``csv`` module,
spreads every payroll row over its days one day at a time, prices each day at the minimum wage of
the employee's category in effect that day, builds the section 4 quantities per employee-year,
applies the section 5 eligibility tests and the section 6 formulas. Only ``transforms.reference.parameters`` is
used, to read the reference parameters (minimum wages, tax rates and bases, CF, FED, deadlines).

Two number modes:
- ``float``: what a straightforward Python implementation would do; this is the timed one
  (seconds per payroll row, the yardstick for the vectorised engine);
- ``exact``: the same code over ``fractions.Fraction`` (every input is a decimal string, so
  the arithmetic is exact and "round half up" is exact too). Used to arbitrate a mismatch.

Long because it is one read-through of spec sections 3 to 6 in the spec's order, kept apart
from the project's code so that an auditor can check it line by line against the spec, and so
that it stays what it measures: the straightforward row-by-row implementation.

Usage (stand-alone):
    python bench/reference.py INPUT_DIR --employee-credits OUT/employee_credits.csv [--employers 50]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import sys
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CATEGORIES = ("general", "tipped", "seasonal_small", "agricultural")
NJ = ZoneInfo("America/New_York")
ONE_DAY = dt.timedelta(days=1)


# --------------------------------------------------------------------------- numbers


class Num:
    """Number mode: float, or exact Fraction from decimal strings."""

    def __init__(self, exact: bool):
        self.exact = exact
        self.zero = Fraction(0) if exact else 0.0

    def __call__(self, x) -> float | Fraction:
        if self.exact:
            if isinstance(x, float):
                return Fraction(repr(x))
            return Fraction(x)
        return float(x)

    def round_cents(self, x) -> int:
        """Round half up to the cent -> integer cents."""
        if self.exact:
            return math.floor(x * 100 + Fraction(1, 2))
        # float: a tiny guard so that x.xx5 computed as x.xx4999999 still rounds up
        return math.floor(x * 100 + 0.5 + 1e-7)

    def round2(self, x):
        c = self.round_cents(x)
        return Fraction(c, 100) if self.exact else c / 100


# --------------------------------------------------------------------------- parameters


class RefParams:
    """Every parameter of tax year t, read once from transforms.reference.parameters."""

    def __init__(self, t: int, num: Num):
        from transforms.reference.parameters import load_parameters

        p = load_parameters()
        self.t = t
        n = num
        y = lambda name, year: n(p.year_value(name, year))  # noqa: E731
        self.first_tax_year = int(p.value("program.first_tax_year", dt.date(9999, 12, 31)))
        self.ss_rate = y("payroll_taxes.ss_rate", t)
        self.ss_base = y("payroll_taxes.ss_wage_base", t)
        self.medicare = y("payroll_taxes.medicare_rate", t)
        self.futa_rate = y("payroll_taxes.futa_rate", t)
        self.futa_base = y("payroll_taxes.futa_wage_base", t)
        self.nj_base = y("payroll_taxes.nj_wage_base", t)
        cf_t = y("counterfactual.old_law_minimum_wage", t)
        cf_p = y("counterfactual.old_law_minimum_wage", t - 1)
        fed_t = n(p.value("federal.minimum_wage", dt.date(t, 1, 1)))
        fed_p = n(p.value("federal.minimum_wage", dt.date(t - 1, 1, 1)))
        self.adj = max(cf_t - cf_p, fed_t - fed_p, n.zero)
        self.deadline = {c: p.date_value(f"program.application_deadline_{c}") for c in CATEGORIES}
        # per-day minimum wage, days t-2-01-01 .. t-12-31 (the days the credit prices)
        self.first_day = dt.date(t - 2, 1, 1)
        self.last_day = dt.date(t, 12, 31)
        ndays = (self.last_day - self.first_day).days + 1
        self.mw: dict[str, list] = {}
        for c in CATEGORIES:
            row = [None] * ndays
            for a, b, v in p.schedule(f"minimum_wage.{c}", self.first_day, self.last_day):
                v = n(v)
                for i in range((a - self.first_day).days, (b - self.first_day).days + 1):
                    row[i] = v
            self.mw[c] = row
        # MWavg_p: day-weighted average over calendar year p (each day counts once)
        p0 = (dt.date(t - 1, 1, 1) - self.first_day).days
        p1 = (dt.date(t - 1, 12, 31) - self.first_day).days
        self.mw_avg_p = {
            c: sum(self.mw[c][p0 : p1 + 1], n.zero) / (p1 - p0 + 1) for c in CATEGORIES
        }


# --------------------------------------------------------------------------- reading


def _read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _ssn(s: str) -> str:
    return "".join(ch for ch in s if ch.isdigit())


def _received(s: str) -> tuple[dt.datetime, dt.date]:
    """(instant in UTC, New Jersey local date); a naive timestamp is New Jersey local time."""
    s = s.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    ts = dt.datetime.fromisoformat(s)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=NJ)
    return ts.astimezone(dt.UTC), ts.astimezone(NJ).date()


def sample_employers(input_dir: Path, n: int) -> tuple[list[Path], set[str]]:
    """The employers of the first payroll files (in name order) until at least n employers.

    A file's employers are taken whole, and an employer is only sampled if all of its rows are
    in the files read (checked: the first file of any other employer is not earlier).
    """
    files = sorted((input_dir / "payroll").glob("*.csv"))
    chosen: list[Path] = []
    employers: set[str] = set()
    for f in files:
        chosen.append(f)
        with open(f, newline="", encoding="utf-8") as fh:
            employers.update(r["employer_id"] for r in csv.DictReader(fh))
        if len(employers) >= n:
            break
    return chosen, employers


# --------------------------------------------------------------------------- the computation


def reference_credits(
    input_dir: Path,
    tax_year: int,
    as_of: dt.date,
    *,
    employers: set[str],
    payroll_files: list[Path],
    exact: bool = False,
) -> tuple[dict[tuple[str, str], dict], dict]:
    """Employee-year results of the sampled employers, keyed (application_id, employee_id).

    Returns (results, stats) where stats has payroll_rows, days, seconds. Long because it is the
    spec's sections 3 to 6 in one pass, as a straightforward implementation would write them
    (the yardstick the engine is measured against; see the module docstring).
    """
    t0 = time.perf_counter()
    num = Num(exact)
    t = tax_year
    P = RefParams(t, num)
    zero = num.zero

    # applications in scope
    apps = {}
    for r in _read(input_dir / "applications.csv"):
        if r["employer_id"] not in employers:
            continue
        inst, day = _received(r["received_at"])
        if day > as_of:
            continue
        apps[r["application_id"]] = {
            "employer_id": r["employer_id"],
            "tax_year": int(r["tax_year"]),
            "inst": inst,
            "date": day,
        }
    # DUPLICATE_APPLICATION: an earlier one of the same employer and tax year (ties: lower id)
    for a_id, a in apps.items():
        a["dup"] = any(
            b["employer_id"] == a["employer_id"]
            and b["tax_year"] == a["tax_year"]
            and (b["inst"], b_id) < (a["inst"], a_id)
            for b_id, b in apps.items()
        )
    # rates: rate years starting July 1 of t-1 and of t (last row wins on duplicates)
    rates: dict[tuple[str, dt.date], object] = {}
    for r in _read(input_dir / "employer_rates.csv"):
        if r["employer_id"] in employers:
            rates[(r["employer_id"], dt.date.fromisoformat(r["rate_year_start"]))] = num(
                r["ui_rate"]
            ) + num(r["di_rate"])
    # certified ssns for t
    jan1, dec31 = dt.date(t, 1, 1), dt.date(t, 12, 31)
    certified_ssn = set()
    for r in _read(input_dir / "certifications.csv"):
        if r["status"].strip() != "CERTIFIED":
            continue
        vf = dt.date.fromisoformat(r["valid_from"])
        vt = dt.date.fromisoformat(r["valid_to"]) if r["valid_to"].strip() else None
        if vf <= dec31 and (vt is None or vt >= jan1):
            certified_ssn.add(_ssn(r["ssn"]))
    # claimed employees: roster rows of visible applications of tax year t (first row wins)
    claimed: dict[tuple[str, str], str] = {}
    for r in _read(input_dir / "roster.csv"):
        a = apps.get(r["application_id"])
        if a is None or a["tax_year"] != t:
            continue
        claimed.setdefault((r["application_id"], r["employee_id"]), r["wage_category"])
    cats_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (a_id, e_id), cat in claimed.items():
        cats_of[(apps[a_id]["employer_id"], e_id)].add(cat)

    # section 3: every payroll row of a claimed employee, spread day by day
    # acc[(employer, employee)]: year -> [hours, wages, taxes]; priced[(employer, employee, cat)]
    acc: dict[tuple[str, str], dict[int, list]] = {}
    priced: dict[tuple[str, str, str], list] = {}
    ssn_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    rows = days_n = 0
    first_day, last_day = P.first_day, P.last_day
    for f in payroll_files:
        with open(f, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                rows += 1
                emp_key = (r["employer_id"], r["employee_id"])
                # every row is spread (a plain implementation computes every employee-year);
                # only the days of claimed employees are priced (the category is on the roster)
                cats = cats_of.get(emp_key, ())
                ssn_of[emp_key].add(_ssn(r["ssn"]))
                start = dt.date.fromisoformat(r["period_start"])
                end = dt.date.fromisoformat(r["period_end"])
                n = (end - start).days + 1
                h_day = num(r["hours"]) / n
                w_day = num(r["gross_wages"]) / n
                x_day = num(r["employer_taxes"]) / n
                years = acc.setdefault(emp_key, {})
                day = start
                while day <= end:
                    if first_day <= day <= last_day:
                        days_n += 1
                        y = years.get(day.year)
                        if y is None:
                            y = years[day.year] = [zero, zero, zero]
                        y[0] += h_day
                        y[1] += w_day
                        y[2] += x_day
                        if day.year == t:
                            i = (day - first_day).days
                            for c in cats:
                                pr = priced.get((*emp_key, c))
                                if pr is None:
                                    pr = priced[(*emp_key, c)] = [zero, zero]
                                req = h_day * P.mw[c][i]
                                pr[0] += req  # RW_t
                                if day.month <= 6:
                                    pr[1] += req  # RW1
                    day += ONE_DAY

    # sections 4 to 6 per claimed employee-year
    results: dict[tuple[str, str], dict] = {}
    wage_red_app: dict[str, bool] = defaultdict(bool)
    for (a_id, e_id), cat in claimed.items():
        a = apps[a_id]
        emp_key = (a["employer_id"], e_id)
        years = acc.get(emp_key, {})
        H = {y: years.get(y, [zero])[0] for y in (t - 2, t - 1, t)}
        W = {y: years.get(y, [zero, zero])[1] for y in (t - 2, t - 1, t)}
        T_p = years.get(t - 1, [zero, zero, zero])[2]
        RW, RW1 = priced.get((*emp_key, cat), [zero, zero])
        certified = any(s in certified_ssn for s in ssn_of.get(emp_key, ()))
        # WAGE_REDUCTION: rate fell by more than $0.005 from p-1 to p or from p to t
        fell = False
        for y0, y1 in ((t - 2, t - 1), (t - 1, t)):
            if (
                H[y0] > 0
                and H[y1] > 0
                and W[y0] / H[y0] - W[y1] / H[y1] > num("0.005") + (0 if exact else 1e-9)
            ):
                fell = True
        if certified and fell:
            wage_red_app[a_id] = True
        reasons = set()
        if t < P.first_tax_year:
            reasons.add("TAX_YEAR_BEFORE_2019")
        if a["dup"]:
            reasons.add("DUPLICATE_APPLICATION")
        r1 = rates.get((a["employer_id"], dt.date(t - 1, 7, 1)))
        r2 = rates.get((a["employer_id"], dt.date(t, 7, 1)))
        if r1 is None or r2 is None:
            reasons.add("MISSING_EMPLOYER_RATES")
        if a["date"] >= P.deadline[cat]:
            reasons.add("LATE_APPLICATION")
        if not certified:
            reasons.add("NOT_CERTIFIED")
        H_t, H_p = H[t], H[t - 1]
        if H_t == 0:
            reasons.add("NO_HOURS_IN_TAX_YEAR")
        if num.round2(H_t) < num.round2(H_p):
            reasons.add("HOURS_DECREASED")
        W_p = W[t - 1]
        # section 4: RT_t
        part1 = part2 = zero
        if H_t > 0 and r1 is not None and r2 is not None:
            nj_all = min(RW, P.nj_base)
            nj_1 = min(RW1, P.nj_base)
            RT = (
                P.ss_rate * min(RW, P.ss_base)
                + P.medicare * RW
                + P.futa_rate * min(RW, P.futa_base)
                + r1 * nj_1
                + r2 * (nj_all - nj_1)
            )
            # section 6
            if H_p > 0:
                tp_wp = T_p / W_p if W_p != 0 else zero
                gap = (RW + RT) / H_t - ((W_p + T_p) / H_p + P.adj * (1 + tp_wp))
                part1 = min(H_t, H_p) * max(zero, gap)
            mw_avg_t = RW / H_t
            tax_factor = 1 + (RT / RW if RW != 0 else zero)
            part2 = max(zero, H_t - H_p) * max(
                zero, (mw_avg_t - (P.mw_avg_p[cat] + P.adj)) * tax_factor
            )
        results[(a_id, e_id)] = {
            "employer_id": a["employer_id"],
            "wage_category": cat,
            "reasons": reasons,
            "hours_prior": num.round2(H_p),
            "hours_current": num.round2(H_t),
            "part1": part1,
            "part2": part2,
        }
    # application-level WAGE_REDUCTION, then status and rounding
    for (a_id, _e), res in results.items():
        if wage_red_app[a_id]:
            res["reasons"].add("WAGE_REDUCTION")
        eligible = not res["reasons"]
        res["status"] = "ELIGIBLE" if eligible else "INELIGIBLE"
        res["reasons"] = ";".join(sorted(res["reasons"]))
        res["part1_cents"] = num.round_cents(res["part1"]) if eligible else 0
        res["part2_cents"] = num.round_cents(res["part2"]) if eligible else 0
        res["credit_cents"] = num.round_cents(res["part1"] + res["part2"]) if eligible else 0
        res["part1_unrounded"] = float(res.pop("part1"))
        res["part2_unrounded"] = float(res.pop("part2"))
        res["hours_prior"] = float(res["hours_prior"])
        res["hours_current"] = float(res["hours_current"])
    stats = {
        "payroll_rows": rows,
        "days": days_n,
        "seconds": time.perf_counter() - t0,
        "employers": len(employers),
        "employee_years": len(results),
        "exact": exact,
    }
    return results, stats


# --------------------------------------------------------------------------- comparison


def _cents(s: str) -> int:
    return int((Fraction(s) * 100).limit_denominator(1))


def compare(
    results: dict, engine_csv: Path, employers: set[str], exact_results: dict | None = None
) -> dict:
    """Compare the reference with the engine's employee_credits.csv on the sampled employers."""
    engine = {}
    for r in _read(engine_csv):
        if r["employer_id"] in employers:
            engine[(r["application_id"], r["employee_id"])] = r
    mismatches = []
    for key in sorted(set(engine) | set(results)):
        e, ref = engine.get(key), results.get(key)
        if e is None or ref is None:
            mismatches.append(
                {
                    "key": list(key),
                    "field": "row",
                    "engine": e is not None,
                    "reference": ref is not None,
                }
            )
            continue
        checks = {
            "status": (e["status"], ref["status"]),
            "reasons": (e["reasons"], ref["reasons"]),
            "hours_prior": (_cents(e["hours_prior"]), round(ref["hours_prior"] * 100)),
            "hours_current": (_cents(e["hours_current"]), round(ref["hours_current"] * 100)),
            "part1_cents": (_cents(e["part1_credit"]), ref["part1_cents"]),
            "part2_cents": (_cents(e["part2_credit"]), ref["part2_cents"]),
            "credit_cents": (_cents(e["credit"]), ref["credit_cents"]),
        }
        for field, (ev, rv) in checks.items():
            if ev != rv:
                m = {
                    "key": list(key),
                    "field": field,
                    "engine": ev,
                    "reference": rv,
                    "part1_unrounded": ref["part1_unrounded"],
                    "part2_unrounded": ref["part2_unrounded"],
                }
                if exact_results is not None and key in exact_results:
                    m["reference_exact"] = exact_results[key].get(field)
                mismatches.append(m)
    n_elig = sum(1 for r in results.values() if r["status"] == "ELIGIBLE")
    return {
        "employee_years_engine": len(engine),
        "employee_years_reference": len(results),
        "eligible_reference": n_elig,
        "credit_total_engine_cents": sum(_cents(r["credit"]) for r in engine.values()),
        "credit_total_reference_cents": sum(r["credit_cents"] for r in results.values()),
        "mismatches": len(mismatches),
        "mismatch_rows": mismatches[:50],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--employee-credits", type=Path, help="engine output to compare with")
    ap.add_argument("--tax-year", type=int, default=2023)
    ap.add_argument("--as-of", default="2024-07-01")
    ap.add_argument("--employers", type=int, default=50)
    ap.add_argument("--exact", action="store_true", help="exact (Fraction) arithmetic")
    a = ap.parse_args(argv)
    files, emps = sample_employers(a.input, a.employers)
    res, stats = reference_credits(
        a.input,
        a.tax_year,
        dt.date.fromisoformat(a.as_of),
        employers=emps,
        payroll_files=files,
        exact=a.exact,
    )
    stats["us_per_row"] = stats["seconds"] / max(stats["payroll_rows"], 1) * 1e6
    print(stats)
    if a.employee_credits:
        cmp = compare(res, a.employee_credits, emps)
        print({k: v for k, v in cmp.items() if k != "mismatch_rows"})
        for m in cmp["mismatch_rows"]:
            print(m)
        return 1 if cmp["mismatches"] else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
