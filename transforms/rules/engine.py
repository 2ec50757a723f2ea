"""N.J.S.A. 34:11-56a40(d): the credit of every claimed employee-year, vectorised in Polars.

Spec sections 1 (the employer is its group, the tax year may be fiscal), 3 to 7 and 9.

Composes one module per paragraph, in the spec's order: ``tax_year`` (T, p and pp of each
application, 56a39), ``employer`` (the group's members, the claims and their persons, 56a39),
``spreading`` (section 3), the quantities of (d)(1) (H, W, T, RW per claim over the group's rows),
``payroll_taxes`` (RT per member), ``adjustment`` ((d)(1)(c)), ``projection`` (56a40(e)),
``eligibility`` (the reasons of section 5) and ``credit`` ((d)(1)(a), (b)), then the application
totals (section 7). Pure functions over Polars frames: no Prefect, no I/O, no loop over rows,
employees or employers. Amounts are carried unrounded and rounded half up to the cent once per
employee-year.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

import polars as pl

from transforms import schema
from transforms.reference.parameters import Parameters
from transforms.rules import employer as emp_rules
from transforms.rules.adjustment import adjustment
from transforms.rules.applications import (
    application_totals,
    before_first_year,
    duplicate_applications,
    visible_applications,
    with_requests,
)
from transforms.rules.credit import credit
from transforms.rules.declared import reconcile
from transforms.rules.effective_date import EFFECTIVE_DATE, effective_day_pay
from transforms.rules.eligibility import certified_claims, eligibility, lacking_rates, missing_rates
from transforms.rules.payroll_taxes import modelled_prior_taxes, rate_year_start, required_taxes
from transforms.rules.projection import projected_rows
from transforms.rules.quantities import prior_minimum_wage, quantities
from transforms.rules.reasons import APPLICATION_FLAGS
from transforms.rules.rounding import exact_sum
from transforms.rules.spreading import netted_lines, rate_segments, segments_long, spread_payroll
from transforms.rules.tax_year import quarter_end, with_periods
from transforms.rules.year import YearParams, calendar_years, latest, year_params
from transforms.schema import WAGE_CATEGORIES
from transforms.settings import RuleSettings


@dataclass
class CreditInputs:
    payroll: pl.LazyFrame
    applications: pl.LazyFrame
    roster: pl.LazyFrame
    certifications: pl.LazyFrame
    employer_rates: pl.LazyFrame
    control_groups: pl.LazyFrame = field(default_factory=lambda: pl.LazyFrame(schema=schema.CONTROL_GROUPS))
    estimate_requests: pl.LazyFrame = field(default_factory=lambda: pl.LazyFrame(schema=schema.ESTIMATE_REQUESTS))

    @classmethod
    def from_frames(cls, frames: dict[str, pl.DataFrame | pl.LazyFrame]) -> CreditInputs:
        return cls(**{k: _conform(k, v.lazy()) for k, v in frames.items() if k in schema.STAGED})


def _conform(dataset: str, lf: pl.LazyFrame) -> pl.LazyFrame:
    """A frame with the staged columns a scenario may lack (the optional ones, as nulls)."""
    have = lf.collect_schema().names()
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in schema.STAGED[dataset].items() if c not in have]
    return lf.with_columns(missing) if missing else lf


@dataclass
class CreditResult:
    employees: pl.DataFrame  # one row per claimed employee-year (all quantities)
    applications: pl.DataFrame  # one row per application: requested, pre-allocation status
    year: YearParams | None
    # per claim and member of the group whose rows were counted: hours, RW and RT (explain)
    members: pl.DataFrame | None = None
    waiting: int = 0  # applications whose tax period had not ended by the as-of date (they wait)
    claims: pl.DataFrame | None = None  # application_id, roster_employer_id, employee_id, ssn (the persons claimed)
    group_members: pl.DataFrame | None = None  # application_id, member_id: the applicant and its group for T
    # every claimed person's six figures as read, beside those its roster line declared (null: not
    # declared; ``declared.RECONCILIATION_SCHEMA``)
    reconciliation: pl.DataFrame | None = None
    reconcile_s: float = 0.0  # what the comparison cost (the bench reports it: spec section 1's price)
    # application_id, member_id, rate_year_start: the rate years the agency's table lacks (held.csv names them)
    lacking_rates: pl.DataFrame | None = None


EMPLOYEE_COLUMNS = [
    "application_id",
    "employer_id",
    "employee_id",
    "tax_year",
    "wage_category",
    "hours_prior",
    "hours_current",
    "part1_credit",
    "part2_credit",
    "credit",
    "status",
    "reasons",
    "roster_employer_id",
    "period_start",
    "period_end",
]

QUANTITIES = ("H_t", "H_p", "H_pp", "W_t", "W_p", "W1_p", "W_pp", "T_p", "RW_t", "RT_t")
APP_COLUMNS = ["application_id", "employer_id", "tax_year", "received_date", "received_at", "T_start", "T_end",
               "p_start", "p_end", "pp_start", "pp_end"]


def compute_credits(
    inputs: CreditInputs,
    tax_year: int,
    as_of: dt.date,
    params: Parameters,
    rules: RuleSettings | None = None,
    *,
    quarter: int | None = None,
) -> CreditResult:
    """Credits and eligibility of every claimed employee-year of the tax year (spec 4 to 6).

    ``quarter`` (quarterly estimates, spec section 9): each application's quantities are observed
    through the end E of that quarter of its own tax period, data after E is ignored and the
    period's hours are projected to its end; applications whose period has not ended are then
    estimated, not left waiting.
    """
    rules = rules or RuleSettings()
    t = tax_year
    apps_t, members_all, waiting = _applications(inputs, t, as_of, rules, quarter)
    claims = emp_rules.claims(inputs.roster, apps_t.select(*APP_COLUMNS, *(["E"] if quarter is not None else [])))
    if t < int(latest(params, "program.first_tax_year")):
        employees, totals = before_first_year(claims, apps_t, t)
        return CreditResult(employees, totals, None, waiting=waiting, group_members=members_all.select(
            "application_id", "member_id"))

    yp = year_params(params, t, rules)
    payroll = emp_rules.fill_ssn_from_roster(inputs.payroll, inputs.roster, inputs.applications)
    claims = emp_rules.claim_persons(claims, payroll)
    claims = claims.with_columns(emp_rules.in_group(claims, members_all).alias("__in_group"))
    members = members_all if rules.group_days == "membership_days" else members_all.unique(
        ["application_id", "member_id"], keep="first", maintain_order=True).with_columns(
        pl.lit(None, dtype=pl.Date).alias("win_from"), pl.lit(None, dtype=pl.Date).alias("win_to"))
    segments = _segments(params, apps_t, members, quarter, t)
    seg_long = segments_long(segments)
    per, rows, observed = _priced(claims, members, payroll, segments, seg_long, params, rules, quarter, t)
    years = calendar_years(
        params, rules,
        adjustment_years=_years_of(apps_t, ("T_start", "T_end"), ("p_start", "p_end")),
        tax_years=_years_of(apps_t, ("T_start", "T_end")) | ({t - 1} if rules.payroll_taxes == "model_both" else set()),
    )
    member_table = _member_table(per, years, inputs.employer_rates, rules)
    qty = quantities(per).join(
        member_table.group_by("__claim").agg(exact_sum(pl.col("RT_m")).alias("RT_t")), on="__claim", how="left")
    paying = per.filter(pl.col("in_T") & (pl.col("hours") != 0)).select("application_id", "member_id").unique()
    lacking = lacking_rates(apps_t, paying, inputs.employer_rates)
    app_flags = missing_rates(apps_t, lacking).join(
        apps_t.select("application_id", "is_duplicate"), on="application_id", how="left").join(
        adjustment(apps_t, years), on="application_id", how="left")
    emp = (
        claims.join(app_flags, on="application_id", how="left")
        .join(qty, on="__claim", how="left")
        .join(certified_claims(claims, inputs.certifications), on="__claim", how="left")
        .join(_effective_day(claims, members, rows, params), on="__claim", how="left")
        .join(prior_minimum_wage(claims, seg_long), on="__claim", how="left")
        .join(_netted(claims, payroll), on="__claim", how="left")
        .with_columns(pl.col(c).fill_null(0.0) for c in QUANTITIES)
        .with_columns(pl.col("certified").fill_null(False))
    )
    if observed is not None:
        emp = emp.join(observed, on="__claim", how="left").with_columns(pl.col("H_t_observed").fill_null(0.0))
    if rules.payroll_taxes == "model_both":
        emp = _model_prior_taxes(emp, years, inputs.employer_rates, t)
    emp = credit(eligibility(emp, yp, rules), yp, rules)
    members_out = member_table.join(claims.select("__claim", *emp_rules.CLAIM_KEYS), on="__claim", how="left")
    # the employer's declared totals against what was read (spec section 1); an estimate decides nothing
    began = time.perf_counter()
    recon = reconcile(claims, members_all, payroll, inputs.roster, every=True) if quarter is None else None
    reconcile_s = time.perf_counter() - began
    differ = [] if recon is None else recon.filter(pl.col("differs")).get_column("application_id").unique().to_list()
    totals = application_totals(apps_t, emp, _application_reasons(app_flags, emp), declared_differ=differ)
    return CreditResult(emp, totals, yp, members_out, waiting,
                        claims.select("application_id", "roster_employer_id", "employee_id", "ssn"),
                        members_all.select("application_id", "member_id").unique(), recon, reconcile_s, lacking)


def _applications(inputs: CreditInputs, t: int, as_of: dt.date, rules: RuleSettings,
                  quarter: int | None) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """(the tax year's applications the run decides, with T, p, pp, ``is_duplicate`` and the
    quarter's end E; their groups' members; how many wait because T has not ended)."""
    applications = inputs.applications
    if quarter is not None:  # estimates: the requests received during the year are requests too
        applications = with_requests(applications, inputs.estimate_requests, t, as_of)
    seen = with_periods(visible_applications(applications, as_of), rules)
    apps_t = seen.filter(pl.col("tax_year") == t).collect()
    members_all = emp_rules.group_members(apps_t, inputs.control_groups.collect())
    apps_t = apps_t.join(duplicate_applications(apps_t, members_all), on="application_id", how="left")
    waiting = 0
    if quarter is None:  # a period that has not ended waits (spec section 7)
        ended = apps_t.filter(pl.col("T_end") <= as_of)
        waiting = apps_t.height - ended.height
        apps_t = ended
    else:
        apps_t = apps_t.with_columns(quarter_end(quarter).alias("E"))
    return apps_t, members_all.join(apps_t.select("application_id"), on="application_id", how="semi"), waiting


def _priced(claims: pl.DataFrame, members: pl.DataFrame, payroll: pl.LazyFrame, segments: pl.DataFrame,
            seg_long: pl.DataFrame, params: Parameters, rules: RuleSettings, quarter: int | None,
            t: int) -> tuple[pl.DataFrame, pl.LazyFrame, pl.DataFrame | None]:
    """(``_claim_segments`` with the projected rows of an estimate and each segment's required
    wages ``req`` = hours x the minimum wage of the day (I-5: overtime hours at the multiplier);
    the persons' rows; the hours observed so far of an estimate)."""
    per, rows = _claim_segments(claims, members, payroll, segments, params, rules, quarter)
    observed = None
    if quarter is not None:
        observed = per.filter(pl.col("in_T")).group_by("__claim").agg(exact_sum(pl.col("hours")).alias("H_t_observed"))
        per = pl.concat([per, projected_rows(per, claims, segments)], how="diagonal_relaxed")
    per = per.join(seg_long.select("seg_id", "wage_category", "mw"), on=["seg_id", "wage_category"], how="left")
    ot_factor = 0.0
    if rules.overtime == "premium":
        ot_factor = params.value("overtime.rate_multiplier", dt.date(t, 12, 31)) - 1.0
    return per.with_columns(((pl.col("hours") + ot_factor * pl.col("ot_hours")) * pl.col("mw")).alias("req")), rows, observed


def _member_table(per: pl.DataFrame, years: pl.DataFrame, rates: pl.LazyFrame, rules: RuleSettings) -> pl.DataFrame:
    """``__claim, member_id, H_m, RW_m, RT_m``: each person's hours, required wages and required
    taxes in T at each member of the group whose rows were counted."""
    rt = required_taxes(per.lazy(), years, rates, rules).collect()
    sums = per.filter(pl.col("in_T")).group_by("__claim", "member_id").agg(
        exact_sum(pl.col("hours")).alias("H_m"), exact_sum(pl.col("req")).alias("RW_m"))
    return sums.join(rt, on=["__claim", "member_id"], how="full", coalesce=True).with_columns(
        pl.col("H_m").fill_null(0.0), pl.col("RW_m").fill_null(0.0), pl.col("RT_m").fill_null(0.0))


def _application_reasons(app_flags: pl.DataFrame, emp: pl.DataFrame) -> dict[str, list[str]]:
    """The application-level reasons of each application (spec section 5)."""
    flags = app_flags.join(
        emp.group_by("application_id").agg(pl.col("__wage_reduction").any()), on="application_id", how="left")
    return {
        row[0]: [code for code, on in zip(APPLICATION_FLAGS, row[1:], strict=True) if on]
        for row in flags.select("application_id", *APPLICATION_FLAGS.values()).iter_rows()
    }


def _years_of(apps: pl.DataFrame, *windows: tuple[str, str]) -> set[int]:
    """The calendar years touched by the given (start, end) columns of any application."""
    out: set[int] = set()
    for a, b in windows:
        for lo, hi in apps.select(pl.col(a).dt.year(), pl.col(b).dt.year()).unique().iter_rows():
            out.update(range(lo, hi + 1))
    return out


def _segments(params: Parameters, apps: pl.DataFrame, members: pl.DataFrame, quarter: int | None,
              t: int) -> pl.DataFrame:
    """Segments of days (section 3) from the earliest pp and January 1 of each period's first
    year to the latest period end, cut at every period's bounds (T, p, pp, the quarter's end)
    and at the membership windows (I-14 alternative)."""
    if apps.height == 0:
        return rate_segments(params, dt.date(t - 1, 1, 1), dt.date(t, 12, 31))
    lo = min(apps["pp_start"].min(), dt.date(apps["T_start"].min().year, 1, 1))
    hi = apps["T_end"].max()
    one = dt.timedelta(days=1)
    cuts: set[dt.date] = set()
    for col in ("T_start", "p_start", "pp_start"):
        cuts.update(apps[col].unique().to_list())
    for col in ("T_end", "p_end", "pp_end", *(["E"] if quarter is not None else [])):
        cuts.update(d + one for d in apps[col].unique().to_list())
    for d in members["win_from"].drop_nulls().unique().to_list():
        cuts.add(d)
    for d in members["win_to"].drop_nulls().unique().to_list():
        cuts.add(d + one)
    return rate_segments(params, lo, hi, tuple(sorted(cuts)))


def _claim_segments(claims: pl.DataFrame, members: pl.DataFrame, payroll: pl.LazyFrame, segments: pl.DataFrame,
                    params: Parameters, rules: RuleSettings, quarter: int | None) -> tuple[pl.DataFrame, pl.LazyFrame]:
    """One row per (claim, member of its group, segment) with the person's hours, wages, taxes
    and overtime hours there (spread over days, section 3), the segment's place in the claim's
    periods (``in_T``, ``in_p``, ``in_pp``) and ``year``, ``half``, ``seg_start``, ``days``.
    Also returns the persons' rows at the members (for the effective-date test)."""
    # the persons as small integers (a 64-character hash per row is slow to group and join on)
    ssns = claims.get_column("ssn").drop_nulls().unique().sort()
    ids = pl.int_range(ssns.len(), dtype=pl.UInt32, eager=True)
    def pid(col: str) -> pl.Expr:  # (polars 2.1 keeps the input type of replace_strict when nothing maps)
        if ssns.len() == 0:
            return pl.lit(None, dtype=pl.UInt32)
        return pl.col(col).replace_strict(ssns, ids, default=None, return_dtype=pl.UInt32)

    rows = (
        payroll.filter(pl.col("ssn_hash").is_in(ssns.implode())
                       & pl.col("employer_id").is_in(members.get_column("member_id").unique().implode()))
        .select("employer_id", "ssn_hash", "period_start", "period_end", "hours", "gross_wages", "employer_taxes")
    )
    ot_weekly = 0.0
    if rules.overtime == "premium":
        ot_weekly = params.value("overtime.weekly_hours_threshold", segments["seg_end"].max())
    spread = spread_payroll(rows.with_columns(pid("ssn_hash").alias("__pid")), segments, rules, ot_weekly_hours=ot_weekly,
                            keys=("employer_id", "__pid")).collect()
    cm = claims.filter(pl.col("ssn").is_not_null()).select(
        "__claim", "application_id", pid("ssn").alias("__pid")).join(
        members, on="application_id", how="inner")
    seg = segments.select("seg_id", "seg_start", "seg_end", "year", "half", "days")
    per = (
        cm.join(spread, left_on=["member_id", "__pid"], right_on=["employer_id", "__pid"], how="inner")
        .join(seg, on="seg_id", how="left")
    )
    if rules.group_days == "membership_days":  # I-14 alternative: a member's rows on its days only
        inside = (pl.col("win_from").is_null() | (pl.col("seg_start") >= pl.col("win_from"))) & (
            pl.col("win_to").is_null() | (pl.col("seg_end") <= pl.col("win_to")))
        per = per.filter(inside).unique(["__claim", "member_id", "seg_id"], keep="first", maintain_order=True)
    per = per.drop("win_from", "win_to", "__pid").join(
        claims.select("__claim", "wage_category", "T_start", "T_end", "p_start", "p_end", "pp_start", "pp_end",
                      *(["E"] if quarter is not None else [])),
        on="__claim", how="left",
    )
    within = lambda a, b: (pl.col("seg_start") >= pl.col(a)) & (pl.col("seg_end") <= pl.col(b))  # noqa: E731
    per = per.with_columns(in_T=within("T_start", "T_end"), in_p=within("p_start", "p_end"),
                           in_pp=within("pp_start", "pp_end"))
    if quarter is not None:  # data after the quarter's end is ignored (spec section 9)
        per = per.filter(pl.col("seg_start") <= pl.col("E"))
    return per, rows


def _effective_day(claims: pl.DataFrame, members: pl.DataFrame, rows: pl.LazyFrame,
                   params: Parameters) -> pl.DataFrame:
    """``__claim, __h_eff, __w_eff, __mw_eff``: the person's hours and wages on the effective
    date of P.L.2019, c.32 over the group's members, and the category's minimum wage that day."""
    pay = effective_day_pay(rows).collect()
    cm = claims.filter(pl.col("ssn").is_not_null()).select("__claim", "application_id", "ssn").join(
        members.select("application_id", "member_id").unique(), on="application_id", how="inner")
    sums = cm.join(pay, left_on=["member_id", "ssn"], right_on=["employer_id", "ssn_hash"], how="inner").group_by(
        "__claim").agg(pl.col("__h_eff").sum(), pl.col("__w_eff").sum())
    return claims.select("__claim", "wage_category").join(sums, on="__claim", how="left").with_columns(
        pl.col("wage_category").replace_strict(
            {c: params.value(f"minimum_wage.{c}", EFFECTIVE_DATE) for c in WAGE_CATEGORIES}, default=None,
            return_dtype=pl.Float64).alias("__mw_eff")).drop("wage_category")


def _netted(claims: pl.DataFrame, payroll: pl.LazyFrame) -> pl.DataFrame:
    """``__claim, netted_lines``: the person's negative lines (reversals, voids) on days of p and T."""
    keys = claims.select("__claim", "roster_employer_id", "employee_id", "p_start", "T_end")
    lo, hi = keys["p_start"].min(), keys["T_end"].max()
    if lo is None:
        return pl.DataFrame(schema={"__claim": pl.Int64, "netted_lines": pl.String})
    lines = netted_lines(payroll, lo, hi).collect()
    return keys.join(lines, left_on=["roster_employer_id", "employee_id"], right_on=["employer_id", "employee_id"],
                     how="inner").select("__claim", "netted_lines")


def _model_prior_taxes(emp: pl.DataFrame, years: pl.DataFrame, rates: pl.LazyFrame, t: int) -> pl.DataFrame:
    """Register I-6 alternative: T_p modelled from W_p at the prior year's statutory rates and the
    applicant's NJ rates."""
    prior = years.filter(pl.col("year") == t - 1).to_dicts()[0]
    njr = rates.unique(["employer_id", "rate_year_start"], keep="last", maintain_order=True).select(
        "employer_id", "rate_year_start", (pl.col("ui_rate") + pl.col("di_rate")).alias("njr")).collect()
    for name, start in (("__njr_p1", dt.date(t - 2, 7, 1)), ("__njr_p2", dt.date(t - 1, 7, 1))):
        emp = emp.join(njr.filter(pl.col("rate_year_start") == start).select("employer_id", pl.col("njr").alias(name)),
                       on="employer_id", how="left")
    return emp.with_columns(modelled_prior_taxes(pl.col("W_p"), pl.col("W1_p"), prior, pl.col("__njr_p1").fill_null(0.0),
                                                 pl.col("__njr_p2").fill_null(0.0)).alias("T_p"))


def employee_output(emp: pl.DataFrame) -> pl.DataFrame:
    """The contract columns of employee_credits.csv (spec section 8), money as decimals."""
    return emp.select(
        "application_id",
        "employer_id",
        "employee_id",
        pl.col("tax_year").cast(pl.Int32),
        "wage_category",
        "hours_prior",
        "hours_current",
        (pl.col("part1_cents") / 100).alias("part1_credit"),
        (pl.col("part2_cents") / 100).alias("part2_credit"),
        (pl.col("credit_cents") / 100).alias("credit"),
        "status",
        "reasons",
        "roster_employer_id",
        pl.col("T_start").alias("period_start"),
        pl.col("T_end").alias("period_end"),
    ).sort("application_id", "roster_employer_id", "employee_id")


__all__ = ["CreditInputs", "CreditResult", "EMPLOYEE_COLUMNS", "compute_credits", "employee_output", "rate_year_start"]
