"""N.J.S.A. 34:11-56a40(f): an employer is not eligible "if the commissioner determines that the
employer reduced the wages that the employer paid to any employee with an impairment employed by
the employer to be eligible for a tax credit ... in a future year".

Spec section 5 (``WAGE_REDUCTION``, an application-level reason): for any certified employee of
the application, the average hourly rate (wages / hours on days of the year, unrounded, over the
group's rows) fell by more than $0.005 from pp to p, or from p to T; only those consecutive pairs
are compared, and only when both years of the pair have hours.
"""

from __future__ import annotations

import polars as pl

from transforms.rules.rounding import RATE_EPS, round2

PAIRS = (("pp", "p"), ("p", "t"))  # the consecutive years compared


def rate(year: str) -> pl.Expr:
    """The average hourly rate of a year (``pp``, ``p``, ``t``): wages / hours, unrounded."""
    return pl.col(f"W_{year}") / pl.col(f"H_{year}")


def fell(a: str, b: str) -> pl.Expr:
    """Whether the rate fell by more than $0.005 from year ``a`` to year ``b``, both with hours."""
    has = {y: round2(pl.col(f"H_{y}")) > 0 for y in (a, b)}
    return has[a] & has[b] & (rate(a) - rate(b) > 0.005 + RATE_EPS)


def wage_reduction() -> pl.Expr:
    """Whether this employee-year shows the reduction (``any`` over the application makes it the
    application's reason)."""
    return pl.col("certified") & (fell("pp", "p") | fell("p", "t"))
