"""The credit of N.J.S.A. 34:11-56a40(d), per employee-year, vectorised in Polars.

Spec sections 3 to 6 (and the projection of section 9). Pure functions over Polars frames: no
Prefect, no I/O, no loop over rows, employees or employers. Amounts are carried unrounded and
rounded half up to the cent once per employee-year.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from transforms.params import Parameters, derive_counterfactual
from transforms.schema import WAGE_CATEGORIES
from transforms.settings import RuleSettings

# Reason codes (spec section 5 and 7).
TAX_YEAR_BEFORE_2019 = "TAX_YEAR_BEFORE_2019"
DUPLICATE_APPLICATION = "DUPLICATE_APPLICATION"
WAGE_REDUCTION = "WAGE_REDUCTION"
MISSING_EMPLOYER_RATES = "MISSING_EMPLOYER_RATES"
LATE_APPLICATION = "LATE_APPLICATION"
NOT_CERTIFIED = "NOT_CERTIFIED"
NO_HOURS_IN_TAX_YEAR = "NO_HOURS_IN_TAX_YEAR"
HOURS_DECREASED = "HOURS_DECREASED"
NO_CREDIT_DUE = "NO_CREDIT_DUE"
CAP_EXHAUSTED = "CAP_EXHAUSTED"

# application-level reason -> its flag column
APPLICATION_FLAGS = {
    DUPLICATE_APPLICATION: "is_duplicate",
    MISSING_EMPLOYER_RATES: "missing_rates",
    WAGE_REDUCTION: "__wage_reduction",
}

# Float guards: amounts are float64; these keep a value that is mathematically on a boundary
# (x.xx5 dollars, a rate fall of exactly $0.005) from flipping on representation error.
_ROUND_EPS = 1e-6  # in cents
_RATE_EPS = 1e-9  # in dollars


def round_cents(expr: pl.Expr) -> pl.Expr:
    """Round half up to the cent; returns integer cents (Int64)."""
    return (expr * 100 + 0.5 + _ROUND_EPS).floor().cast(pl.Int64)


def round2(expr: pl.Expr) -> pl.Expr:
    """Round half up to 2 decimals (hours), as a float."""
    return round_cents(expr) / 100


@dataclass(frozen=True)
class YearParams:
    """The scalar parameters of one tax year, each looked up (and checked present) once."""

    tax_year: int
    first_tax_year: int
    ss_rate: float
    ss_base: float
    medicare_rate: float
    futa_rate: float
    futa_base: float
    nj_base: float
    cf_t: float
    cf_p: float
    fed_t: float
    fed_p: float
    deadlines: dict[str, dt.date]
    # prior-year taxes, used only by the I-6 alternative (model both sides)
    prior: YearParams | None = None

    @property
    def adj_dollars(self) -> float:
        return max(self.cf_t - self.cf_p, self.fed_t - self.fed_p, 0.0)

    @property
    def adj_percent(self) -> float:
        cf = self.cf_t / self.cf_p - 1 if self.cf_p else 0.0
        fed = self.fed_t / self.fed_p - 1 if self.fed_p else 0.0
        return max(cf, fed, 0.0)


def counterfactual(params: Parameters, year: int, rules: RuleSettings) -> float:
    """CF(y): the old-law State minimum wage in effect on January 1 of y (register I-2)."""
    name = "counterfactual.old_law_minimum_wage"
    start = int(_latest(params, "program.first_tax_year"))  # the formula path starts from CF(first year)
    if rules.counterfactual_path == "published" or year <= start:
        return params.year_value(name, year)
    cpi = {y: params.value("counterfactual.cpi_w_august", dt.date(y, 8, 1)) for y in range(start - 2, year)}
    return derive_counterfactual(cpi, start, params.year_value(name, start), year)[year]


def year_params(params: Parameters, t: int, rules: RuleSettings, *, with_prior: bool = True) -> YearParams:
    """Look up every parameter a tax year needs; a missing one raises MissingParameterError."""
    first = int(_latest(params, "program.first_tax_year"))
    jan1 = dt.date(t, 1, 1)
    yp = YearParams(
        tax_year=t,
        first_tax_year=first,
        ss_rate=params.year_value("payroll_taxes.ss_rate", t),
        ss_base=params.year_value("payroll_taxes.ss_wage_base", t),
        medicare_rate=params.year_value("payroll_taxes.medicare_rate", t),
        futa_rate=params.year_value("payroll_taxes.futa_rate", t),
        futa_base=params.year_value("payroll_taxes.futa_wage_base", t),
        nj_base=params.year_value("payroll_taxes.nj_wage_base", t),
        cf_t=counterfactual(params, t, rules),
        cf_p=counterfactual(params, t - 1, rules),
        fed_t=params.value("federal.minimum_wage", jan1),
        fed_p=params.value("federal.minimum_wage", dt.date(t - 1, 1, 1)),
        deadlines={c: params.date_value(f"program.application_deadline_{c}") for c in WAGE_CATEGORIES},
        prior=year_params(params, t - 1, rules, with_prior=False)
        if with_prior and rules.payroll_taxes == "model_both"
        else None,
    )
    # The minimum wage of every category must cover the prior and the tax year.
    for cat in WAGE_CATEGORIES:
        params.schedule(f"minimum_wage.{cat}", dt.date(t - 1, 1, 1), dt.date(t, 12, 31))
    return yp


def _latest(params: Parameters, name: str) -> float:
    """An open-ended statutory constant (first tax year, cap)."""
    return params.value(name, dt.date(9999, 12, 31))


# ---------------------------------------------------------------------------------------------
# Section 3: day segments with a constant minimum wage


def rate_segments(
    params: Parameters, start: dt.date, end: dt.date, extra_cuts: tuple[dt.date, ...] = ()
) -> pl.DataFrame:
    """Cut [start, end] into segments on which every category's minimum wage is constant and
    which never straddle January 1 or July 1 (the halves of RW1/RW2), nor any ``extra_cuts``.

    Columns: seg_id, seg_start, seg_end, year, half, days, and one mw_<category> per category.
    """
    cuts: set[dt.date] = {start, *[c for c in extra_cuts if start < c <= end]}
    for y in range(start.year, end.year + 1):
        for d in (dt.date(y, 1, 1), dt.date(y, 7, 1)):
            if start < d <= end:
                cuts.add(d)
    schedules = {c: params.schedule(f"minimum_wage.{c}", start, end) for c in WAGE_CATEGORIES}
    for pieces in schedules.values():
        cuts.update(p[0] for p in pieces if start < p[0] <= end)
    starts = sorted(cuts)
    ends = [s - dt.timedelta(days=1) for s in starts[1:]] + [end]
    frame = pl.DataFrame({"seg_start": starts, "seg_end": ends}).with_row_index("seg_id")
    frame = frame.with_columns(
        pl.col("seg_id").cast(pl.Int32),
        pl.col("seg_start").dt.year().cast(pl.Int32).alias("year"),
        pl.when(pl.col("seg_start").dt.month() <= 6).then(1).otherwise(2).cast(pl.Int8).alias("half"),
        ((pl.col("seg_end") - pl.col("seg_start")).dt.total_days() + 1).cast(pl.Int32).alias("days"),
    )
    for cat, pieces in schedules.items():
        mw = [next(v for (a, b, v) in pieces if a <= s <= b) for s in starts]
        frame = frame.with_columns(pl.Series(f"mw_{cat}", mw, dtype=pl.Float64))
    return frame


def segments_long(segments: pl.DataFrame) -> pl.DataFrame:
    """(seg_id, wage_category, mw): the segment table with one row per category."""
    return segments.unpivot(
        index=["seg_id", "year", "half", "days", "seg_start", "seg_end"],
        on=[f"mw_{c}" for c in WAGE_CATEGORIES],
        variable_name="wage_category",
        value_name="mw",
    ).with_columns(pl.col("wage_category").str.strip_prefix("mw_"))


def spread_payroll(
    payroll: pl.LazyFrame, segments: pl.DataFrame, rules: RuleSettings, *, ot_weekly_hours: float = 0.0
) -> pl.LazyFrame:
    """Spread each period's hours, wages and taxes evenly over its days, summed per segment.

    Returns one row per (employer_id, employee_id, seg_id): hours, wages, taxes, ot_hours.
    Days outside the segment table's range are dropped (they belong to other years).
    """
    first, last = segments["seg_start"].min(), segments["seg_end"].max()
    bounds = segments["seg_start"]
    lf = payroll.select("employer_id", "employee_id", "period_start", "period_end", "hours", "gross_wages", "employer_taxes")
    if rules.attribution == "period_end":
        lf = lf.with_columns(pl.col("period_end").alias("period_start"))
    n_days = (pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1
    lf = lf.filter((pl.col("period_end") >= first) & (pl.col("period_start") <= last)).with_columns(
        n_days.cast(pl.Float64).alias("__n"),
        # I-5 alternative: hours above the weekly overtime threshold, estimated per period.
        (pl.col("hours") - ot_weekly_hours * n_days / 7.0).clip(lower_bound=0.0).alias("__ot"),
        (pl.lit(bounds).search_sorted(pl.col("period_start").clip(first, last), side="right").cast(pl.Int32) - 1).alias(
            "__i0"
        ),
        (pl.lit(bounds).search_sorted(pl.col("period_end").clip(first, last), side="right").cast(pl.Int32) - 1).alias(
            "__i1"
        ),
    )
    lf = (
        lf.with_columns(pl.int_ranges(pl.col("__i0"), pl.col("__i1") + 1, dtype=pl.Int32).alias("seg_id"))
        .explode("seg_id")
        .join(segments.lazy().select("seg_id", "seg_start", "seg_end"), on="seg_id", how="left")
    )
    overlap = (
        pl.min_horizontal("seg_end", "period_end") - pl.max_horizontal("seg_start", "period_start")
    ).dt.total_days() + 1
    frac = overlap.cast(pl.Float64) / pl.col("__n")
    return lf.group_by("employer_id", "employee_id", "seg_id").agg(
        (pl.col("hours") * frac).sum().alias("hours"),
        (pl.col("gross_wages") * frac).sum().alias("wages"),
        (pl.col("employer_taxes") * frac).sum().alias("taxes"),
        (pl.col("__ot") * frac).sum().alias("ot_hours"),
    )


# ---------------------------------------------------------------------------------------------
# Applications in scope


def netted_lines(payroll: pl.LazyFrame, start: dt.date, end: dt.date) -> pl.LazyFrame:
    """``employer_id, employee_id, netted_lines``: the submitted lines with a negative hours,
    wages or taxes value (reversals and voids, netted against the rest: spec section 1) of each
    employee on periods touching ``start``..``end``, as ``file:line`` joined by ", "."""
    neg = pl.any_horizontal(pl.col(c) < 0 for c in ("hours", "gross_wages", "employer_taxes"))
    touch = (pl.col("period_end") >= start) & (pl.col("period_start") <= end)
    return (
        payroll.filter(neg & touch)
        .sort("source_file", "source_line")
        .group_by("employer_id", "employee_id", maintain_order=True)
        .agg(pl.format("{}:{}", "source_file", "source_line").str.join(", ").alias("netted_lines"))
    )


def visible_applications(applications: pl.LazyFrame, as_of: dt.date) -> pl.LazyFrame:
    """Applications received (New Jersey date) on or before the as-of date (spec section 7)."""
    return applications.filter(pl.col("received_date") <= as_of)


def duplicate_flags(applications: pl.LazyFrame) -> pl.LazyFrame:
    """DUPLICATE_APPLICATION: an earlier application of the same employer for the same tax year
    (ties: lower application_id first). Returns application_id, is_duplicate."""
    return applications.select(
        "application_id",
        (
            pl.struct("received_at", "application_id")
            .rank("ordinal")
            .over("employer_id", "tax_year", order_by=["received_at", "application_id"])
            > 1
        ).alias("is_duplicate"),
    )


@dataclass
class CreditInputs:
    payroll: pl.LazyFrame
    applications: pl.LazyFrame
    roster: pl.LazyFrame
    certifications: pl.LazyFrame
    employer_rates: pl.LazyFrame

    @classmethod
    def from_frames(cls, frames: dict[str, pl.DataFrame | pl.LazyFrame]) -> CreditInputs:
        return cls(**{k: v.lazy() for k, v in frames.items()})


@dataclass
class CreditResult:
    employees: pl.DataFrame  # one row per claimed employee-year (all quantities)
    applications: pl.DataFrame  # one row per application: requested, pre-allocation status
    year: YearParams | None


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
]


def _join_reasons(*flags: tuple[str, pl.Expr]) -> pl.Expr:
    """Sorted, ';'-joined reason codes of the flags that are true."""
    parts = [pl.when(expr).then(pl.lit(code)) for code, expr in sorted(flags, key=lambda f: f[0])]
    return pl.concat_str(parts, separator=";", ignore_nulls=True).fill_null("")


def compute_credits(
    inputs: CreditInputs,
    tax_year: int,
    as_of: dt.date,
    params: Parameters,
    rules: RuleSettings | None = None,
    *,
    observe_through: dt.date | None = None,
) -> CreditResult:
    """Credits and eligibility of every claimed employee-year of the tax year (spec 4 to 6).

    ``observe_through`` (quarterly estimates, spec section 9): data after that day is ignored
    and the tax year's hours are projected to the full year.
    """
    rules = rules or RuleSettings()
    t, p = tax_year, tax_year - 1
    apps = visible_applications(inputs.applications, as_of)
    dup = duplicate_flags(apps)
    apps = apps.filter(pl.col("tax_year") == t).join(dup, on="application_id", how="left")
    roster = inputs.roster.unique(["application_id", "employee_id"], keep="first", maintain_order=True)
    claimed = roster.join(
        apps.select("application_id", "employer_id", "tax_year", "received_date", "received_at"),
        on="application_id",
        how="inner",
    ).collect()

    first_year = int(_latest(params, "program.first_tax_year"))
    if t < first_year:
        return _before_first_year(claimed, apps.collect(), t)

    yp = year_params(params, t, rules)
    start = dt.date(t - 2, 1, 1)
    end = dt.date(t, 12, 31)
    cuts = (observe_through + dt.timedelta(days=1),) if observe_through and observe_through < end else ()
    segments = rate_segments(params, start, end, cuts)

    keys = claimed.select("employer_id", "employee_id").unique()
    claimed_payroll = inputs.payroll.join(keys.lazy(), on=["employer_id", "employee_id"], how="semi")
    payroll = claimed_payroll
    if observe_through is not None:
        payroll = payroll.filter(pl.col("period_start") <= observe_through)
    premium = rules.overtime == "premium"
    ot_weekly = params.value("overtime.weekly_hours_threshold", end) if premium else 0.0
    # hours over the threshold are priced at the multiplier: the part above straight time is added
    ot_factor = params.value("overtime.rate_multiplier", end) - 1.0 if premium else 0.0
    spread = spread_payroll(payroll, segments, rules, ot_weekly_hours=ot_weekly)
    if observe_through is not None:
        spread = spread.join(
            segments.lazy().filter(pl.col("seg_start") <= observe_through).select("seg_id"), on="seg_id", how="semi"
        )
    seg_long = segments_long(segments)

    # Priced per claimed employee and segment.
    per_seg = (
        claimed.lazy()
        .select("application_id", "employer_id", "employee_id", "wage_category")
        .join(spread, on=["employer_id", "employee_id"], how="inner")
        .join(segments.lazy().select("seg_id", "year", "half"), on="seg_id", how="left")
        .join(seg_long.lazy().select("seg_id", "wage_category", "mw"), on=["seg_id", "wage_category"], how="left")
    )
    in_t = pl.col("year") == t
    in_p = pl.col("year") == p
    req = (pl.col("hours") + ot_factor * pl.col("ot_hours")) * pl.col("mw")
    qty = per_seg.group_by("application_id", "employee_id").agg(
        pl.col("hours").filter(in_t).sum().alias("H_t"),
        pl.col("hours").filter(in_p).sum().alias("H_p"),
        pl.col("hours").filter(pl.col("year") == t - 2).sum().alias("H_pp"),
        pl.col("wages").filter(in_t).sum().alias("W_t"),
        pl.col("wages").filter(in_p).sum().alias("W_p"),
        pl.col("wages").filter(in_p & (pl.col("half") == 1)).sum().alias("W1_p"),
        pl.col("wages").filter(pl.col("year") == t - 2).sum().alias("W_pp"),
        pl.col("taxes").filter(in_p).sum().alias("T_p"),
        req.filter(in_t).sum().alias("RW_t"),
        req.filter(in_t & (pl.col("half") == 1)).sum().alias("RW1"),
    )

    # Minimum-wage profile of each category: prior-year average and, for projections, the sum of
    # the minimum wage over the unobserved days of the tax year (per half).
    days_p = (dt.date(p, 12, 31) - dt.date(p, 1, 1)).days + 1
    days_t = (dt.date(t, 12, 31) - dt.date(t, 1, 1)).days + 1
    dec31 = dt.date(p, 12, 31)
    unobserved = pl.col("seg_start") > observe_through if observe_through else pl.lit(False)
    cat_profile = (
        seg_long.group_by("wage_category")
        .agg(
            ((pl.col("mw") * pl.col("days")).filter(pl.col("year") == p).sum() / days_p).alias("mw_avg_p"),
            pl.col("mw").filter((pl.col("seg_start") <= dec31) & (pl.col("seg_end") >= dec31)).first().alias("mw_dec31_p"),
            (pl.col("mw") * pl.col("days")).filter((pl.col("year") == t) & unobserved).sum().alias("mw_days_rest"),
            (pl.col("mw") * pl.col("days")).filter((pl.col("year") == t) & unobserved & (pl.col("half") == 1)).sum().alias(
                "mw_days_rest1"
            ),
            pl.col("days").filter((pl.col("year") == t) & unobserved).sum().alias("days_rest"),
        )
    )

    # Certification (the ssn is the one on the employee's payroll rows with that employer, any year).
    ssns = (
        claimed_payroll
        .select("employer_id", "employee_id", "ssn_hash")
        .unique()
    )
    certified = (
        ssns.join(
            inputs.certifications.filter(
                (pl.col("status") == "CERTIFIED")
                & (pl.col("valid_from") <= dt.date(t, 12, 31))
                & (pl.col("valid_to").is_null() | (pl.col("valid_to") >= dt.date(t, 1, 1)))
            ).select("ssn_hash"),
            on="ssn_hash",
            how="semi",
        )
        .select("employer_id", "employee_id")
        .unique()
        .with_columns(pl.lit(True).alias("certified"))
    )

    # Employer UI/DI rates for the rate years starting July 1 of t-1 and of t (and of t-2 when the
    # prior side is modelled too); an employer lacking one is an application-level reason.
    rates = inputs.employer_rates.unique(["employer_id", "rate_year_start"], keep="last", maintain_order=True)
    rate_years = {"njr1": dt.date(t - 1, 7, 1), "njr2": dt.date(t, 7, 1)}
    if rules.payroll_taxes == "model_both":
        rate_years["njrp1"] = dt.date(t - 2, 7, 1)
    app_flags = apps.select("application_id", "employer_id", "is_duplicate")
    for name, start_day in rate_years.items():
        app_flags = app_flags.join(
            rates.filter(pl.col("rate_year_start") == start_day).select(
                "employer_id", (pl.col("ui_rate") + pl.col("di_rate")).alias(name)
            ),
            on="employer_id",
            how="left",
        )
    app_flags = app_flags.with_columns(
        pl.any_horizontal(pl.col(n).is_null() for n in rate_years).alias("missing_rates")
    ).drop("employer_id")

    netted = netted_lines(payroll, dt.date(p, 1, 1), end)
    emp = (
        claimed.lazy()
        .join(app_flags, on="application_id", how="left")
        .join(qty, on=["application_id", "employee_id"], how="left")
        .join(certified, on=["employer_id", "employee_id"], how="left")
        .join(netted, on=["employer_id", "employee_id"], how="left")
        .join(cat_profile.lazy(), on="wage_category", how="left")
        .with_columns(
            pl.col(c).fill_null(0.0)
            for c in ("H_t", "H_p", "H_pp", "W_t", "W_p", "W1_p", "W_pp", "T_p", "RW_t", "RW1")
        )
        .with_columns(pl.col("certified").fill_null(False))
    )

    # Section 9: projection of the tax year's hours to the full year.
    if observe_through is not None and observe_through < end:
        days_so_far = (observe_through - dt.date(t, 1, 1)).days + 1
        per_day = pl.col("H_t") * (days_t / days_so_far - 1) / pl.col("days_rest")
        emp = emp.with_columns(
            (pl.col("H_t") * days_t / days_so_far).alias("H_t"),
            # wages scale like hours, so the wage-reduction rate W_t/H_t stays the observed one
            (pl.col("W_t") * days_t / days_so_far).alias("W_t"),
            (pl.col("RW_t") + per_day * pl.col("mw_days_rest")).alias("RW_t"),
            (pl.col("RW1") + per_day * pl.col("mw_days_rest1")).alias("RW1"),
        )

    emp = _credit(_eligibility(emp.collect(), yp, rules), yp, rules)
    flags = app_flags.collect().join(
        emp.group_by("application_id").agg(pl.col("__wage_reduction").any()), on="application_id", how="left"
    )
    app_reasons = {
        row[0]: [code for code, on in zip(APPLICATION_FLAGS, row[1:], strict=True) if on]
        for row in flags.select("application_id", *APPLICATION_FLAGS.values()).iter_rows()
    }
    return CreditResult(emp, _application_totals(apps.collect(), emp, app_reasons), yp)


def _before_first_year(claimed: pl.DataFrame, apps: pl.DataFrame, t: int) -> CreditResult:
    """56a40(e): nothing is computed for a tax year before the first one; every employee and
    application gets TAX_YEAR_BEFORE_2019 (and DUPLICATE_APPLICATION where it applies)."""
    flags = apps.select(
        "application_id",
        _join_reasons((TAX_YEAR_BEFORE_2019, pl.lit(True)), (DUPLICATE_APPLICATION, pl.col("is_duplicate"))).alias(
            "reasons"
        ),
    )
    employees = claimed.join(flags, on="application_id", how="left").select(
        "application_id",
        "employer_id",
        "employee_id",
        pl.lit(t, pl.Int32).alias("tax_year"),
        "wage_category",
        pl.lit(None, pl.Float64).alias("hours_prior"),
        pl.lit(None, pl.Float64).alias("hours_current"),
        *[pl.lit(0, pl.Int64).alias(c) for c in ("part1_cents", "part2_cents", "credit_cents")],
        pl.lit("INELIGIBLE").alias("status"),
        "reasons",
    )
    app_reasons = {a: r.split(";") for a, r in flags.iter_rows()}
    return CreditResult(employees, _application_totals(apps, employees, app_reasons), None)


def _required_taxes(rw: pl.Expr, rw1: pl.Expr, yp: YearParams, njr1: pl.Expr, njr2: pl.Expr) -> pl.Expr:
    """RT: the employer payroll taxes required on wages rw (spec section 4)."""
    nj_all = pl.min_horizontal(rw, pl.lit(yp.nj_base))
    nj_h1 = pl.min_horizontal(rw1, pl.lit(yp.nj_base))
    return (
        yp.ss_rate * pl.min_horizontal(rw, pl.lit(yp.ss_base))
        + yp.medicare_rate * rw
        + yp.futa_rate * pl.min_horizontal(rw, pl.lit(yp.futa_base))
        + njr1 * nj_h1
        + njr2 * (nj_all - nj_h1)
    )


def _eligibility(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    t = yp.tax_year
    deadline = pl.col("wage_category").replace_strict(
        {c: d for c, d in yp.deadlines.items()}, return_dtype=pl.Date, default=None
    )
    if rules.deadline_basis == "received_date":
        late = pl.col("received_date") >= deadline
    else:
        late = pl.lit(dt.date(t, 1, 1)) >= deadline
    h_t, h_p = round2(pl.col("H_t")), round2(pl.col("H_p"))
    rate = {y: pl.col(f"W_{y}") / pl.col(f"H_{y}") for y in ("pp", "p", "t")}
    has = {y: round2(pl.col(f"H_{y}")) > 0 for y in ("pp", "p", "t")}
    fell = lambda a, b: has[a] & has[b] & (rate[a] - rate[b] > 0.005 + _RATE_EPS)  # noqa: E731
    emp = emp.with_columns(
        (pl.col("certified") & (fell("pp", "p") | fell("p", "t"))).alias("__wage_reduction_emp"),
        late.fill_null(True).alias("__late"),
        (~pl.col("certified")).alias("__not_certified"),
        (h_t == 0).alias("__no_hours"),
        (h_t < h_p).alias("__decreased"),
    ).with_columns(
        pl.col("__wage_reduction_emp").any().over("application_id").alias("__wage_reduction"),
    )
    reasons = _join_reasons(
        (DUPLICATE_APPLICATION, pl.col("is_duplicate").fill_null(False)),
        (WAGE_REDUCTION, pl.col("__wage_reduction")),
        (MISSING_EMPLOYER_RATES, pl.col("missing_rates").fill_null(True)),
        (LATE_APPLICATION, pl.col("__late")),
        (NOT_CERTIFIED, pl.col("__not_certified")),
        (NO_HOURS_IN_TAX_YEAR, pl.col("__no_hours")),
        (HOURS_DECREASED, pl.col("__decreased")),
    )
    return emp.with_columns(
        reasons.alias("reasons"),
    ).with_columns(
        pl.when(pl.col("reasons") == "").then(pl.lit("ELIGIBLE")).otherwise(pl.lit("INELIGIBLE")).alias("status"),
        h_t.alias("hours_current"),
        h_p.alias("hours_prior"),
    )


def _credit(emp: pl.DataFrame, yp: YearParams, rules: RuleSettings) -> pl.DataFrame:
    """Part 1 and part 2 of 56a40(d)(1) (spec section 6), unrounded, then the rounded credit."""
    H_t, H_p, W_p, T_p = pl.col("H_t"), pl.col("H_p"), pl.col("W_p"), pl.col("T_p")
    RW, RW1 = pl.col("RW_t"), pl.col("RW1")
    njr1 = pl.col("njr1").fill_null(0.0)
    njr2 = pl.col("njr2").fill_null(0.0)
    RT = _required_taxes(RW, RW1, yp, njr1, njr2)
    if rules.payroll_taxes == "model_both" and yp.prior is not None:
        T_p = _required_taxes(W_p, pl.col("W1_p"), yp.prior, pl.col("njrp1").fill_null(0.0), njr1)
    mw_avg_p = pl.col("mw_avg_p") if rules.prior_minimum_wage == "day_weighted" else pl.col("mw_dec31_p")
    zero_adj = (pl.col("wage_category") == "tipped") if rules.tipped_adjustment == "zero" else pl.lit(False)
    safe = lambda num, den: pl.when(den != 0).then(num / den).otherwise(0.0)  # noqa: E731
    prior_rate = safe(W_p + T_p, H_p)
    if rules.adjustment == "dollars":
        adj1 = adj2 = pl.lit(yp.adj_dollars)
    else:
        adj1 = yp.adj_percent * safe(W_p, H_p)
        adj2 = yp.adj_percent * mw_avg_p
    adj1 = pl.when(zero_adj).then(0.0).otherwise(adj1)
    adj2 = pl.when(zero_adj).then(0.0).otherwise(adj2)
    part1 = pl.when(H_p > 0).then(
        pl.min_horizontal(H_t, H_p)
        * (safe(RW + RT, H_t) - (prior_rate + adj1 * (1 + safe(T_p, W_p)))).clip(lower_bound=0.0)
    ).otherwise(0.0)
    tax_factor = (1 + safe(RT, RW)) if rules.part2_taxes == "included" else pl.lit(1.0)
    mw_avg_t = safe(RW, H_t)
    part2 = (H_t - H_p).clip(lower_bound=0.0) * ((mw_avg_t - (mw_avg_p + adj2)) * tax_factor).clip(lower_bound=0.0)
    eligible = pl.col("status") == "ELIGIBLE"
    emp = emp.with_columns(
        RT.alias("RT_t"),
        mw_avg_t.alias("MWavg_t"),
        mw_avg_p.alias("MWavg_p"),
        adj1.alias("ADJ_part1"),
        adj2.alias("ADJ_part2"),
        pl.lit(yp.adj_dollars).alias("ADJ_t"),
        T_p.alias("T_p_used"),
        pl.when(eligible).then(part1).otherwise(0.0).alias("part1"),
        pl.when(eligible).then(part2).otherwise(0.0).alias("part2"),
    )
    return emp.with_columns(
        round_cents(pl.col("part1")).alias("part1_cents"),
        round_cents(pl.col("part2")).alias("part2_cents"),
        round_cents(pl.col("part1") + pl.col("part2")).alias("credit_cents"),
        pl.lit(yp.tax_year, pl.Int32).alias("tax_year"),
    )


def _application_totals(
    apps: pl.DataFrame, emp: pl.DataFrame, app_reasons: dict[str, list[str]]
) -> pl.DataFrame:
    """One row per application: requested = sum of the eligible credits (spec section 7).

    Applications with requested = 0 are REJECTED with their application-level reasons, or
    NO_CREDIT_DUE; the others are PENDING allocation.
    """
    totals = emp.group_by("application_id").agg(
        pl.col("credit_cents").filter(pl.col("status") == "ELIGIBLE").sum().alias("requested_cents"),
        pl.len().alias("employees"),
        (pl.col("status") == "ELIGIBLE").sum().alias("eligible_employees"),
    )
    reasons_df = pl.DataFrame(
        {"application_id": list(app_reasons), "app_reasons": [";".join(v) for v in app_reasons.values()]},
        schema={"application_id": pl.String, "app_reasons": pl.String},
    )
    out = (
        apps.join(totals, on="application_id", how="left")
        .join(reasons_df, on="application_id", how="left")
        .with_columns(
            pl.col("requested_cents").fill_null(0),
            pl.col("employees").fill_null(0).cast(pl.UInt32),
            pl.col("eligible_employees").fill_null(0).cast(pl.UInt32),
            pl.col("app_reasons").fill_null(""),
        )
    )
    return out.with_columns(
        pl.when(pl.col("requested_cents") == 0).then(pl.lit("REJECTED")).otherwise(pl.lit("PENDING")).alias("status"),
        pl.when(pl.col("requested_cents") > 0)
        .then(pl.lit(""))
        .when(pl.col("app_reasons") != "")
        .then(pl.col("app_reasons"))
        .otherwise(pl.lit(NO_CREDIT_DUE))
        .alias("reasons"),
    ).sort("received_at", "application_id")


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
    ).sort("application_id", "employee_id")
