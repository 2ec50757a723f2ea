"""N.J.S.A. 34:11-56a40(a)-(d) and (g): the parameters of one tax year, each looked up once.

Spec section 2: the counterfactual old-law minimum wage CF(y) of register I-2, the federal
minimum wage, the payroll-tax rates and bases, the application deadlines and the program's
open-ended constants.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from transforms.reference.parameters import Parameters, derive_counterfactual
from transforms.schema import WAGE_CATEGORIES
from transforms.settings import RuleSettings


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
    start = int(latest(params, "program.first_tax_year"))  # the formula path starts from CF(first year)
    if rules.counterfactual_path == "published" or year <= start:
        return params.year_value(name, year)
    cpi = {y: params.value("counterfactual.cpi_w_august", dt.date(y, 8, 1)) for y in range(start - 2, year)}
    return derive_counterfactual(cpi, start, params.year_value(name, start), year)[year]


def year_params(params: Parameters, t: int, rules: RuleSettings, *, with_prior: bool = True) -> YearParams:
    """Look up every parameter a tax year needs; a missing one raises MissingParameterError."""
    first = int(latest(params, "program.first_tax_year"))
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


def latest(params: Parameters, name: str) -> float:
    """An open-ended statutory constant (first tax year, cap)."""
    return params.value(name, dt.date(9999, 12, 31))


def calendar_years(params: Parameters, rules: RuleSettings, *, adjustment_years: set[int],
                   tax_years: set[int]) -> pl.DataFrame:
    """The parameters by calendar ``year``: ``cf`` and ``fed`` (the old-law and federal minimum
    wages in effect on January 1) for ``adjustment_years``, and the payroll-tax rates and bases
    (``payroll_taxes.TAX_PARAMS``) for ``tax_years`` (null elsewhere). A missing one raises
    MissingParameterError naming it."""
    rows = []
    for y in sorted(adjustment_years | tax_years):
        row: dict[str, float | int | None] = {"year": y}
        if y in adjustment_years:
            row["cf"] = counterfactual(params, y, rules)
            row["fed"] = params.value("federal.minimum_wage", dt.date(y, 1, 1))
        if y in tax_years:
            row["ss_rate"] = params.year_value("payroll_taxes.ss_rate", y)
            row["ss_base"] = params.year_value("payroll_taxes.ss_wage_base", y)
            row["medicare_rate"] = params.year_value("payroll_taxes.medicare_rate", y)
            row["futa_rate"] = params.year_value("payroll_taxes.futa_rate", y)
            row["futa_base"] = params.year_value("payroll_taxes.futa_wage_base", y)
            row["nj_base"] = params.year_value("payroll_taxes.nj_wage_base", y)
        rows.append(row)
    cols = ["cf", "fed", "ss_rate", "ss_base", "medicare_rate", "futa_rate", "futa_base", "nj_base"]
    return pl.DataFrame(rows, schema={"year": pl.Int32, **dict.fromkeys(cols, pl.Float64)})
