"""N.J.S.A. 34:11-56a40(d)(2): "If the number of hours worked during the tax year by an employee
with an impairment ... is less than the number of hours worked during the last preceding calendar
year, then the employer shall not be eligible for a tax credit ... for that employee".

Spec section 5: ``HOURS_DECREASED`` (H_t < H_p, both rounded to 2 decimals) and
``NO_HOURS_IN_TAX_YEAR`` (no hours on days of T).
"""

from __future__ import annotations

import polars as pl

from transforms.rules.rounding import round2


def hours_decreased() -> pl.Expr:
    """HOURS_DECREASED: H_t < H_p, both rounded to 2 decimals (56a40(d)(2))."""
    return round2(pl.col("H_t")) < round2(pl.col("H_p"))


def no_hours() -> pl.Expr:
    """NO_HOURS_IN_TAX_YEAR: no hours on days of T (rounded to 2 decimals)."""
    return round2(pl.col("H_t")) == 0
