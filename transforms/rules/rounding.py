"""N.J.S.A. 34:11-56a40(d): amounts in dollars, rounded half up to the cent once per employee-year.

Spec sections 4 and 6.

Amounts are float64 and carried unrounded; hours are rounded to 2 decimals where a rule compares
them (spec section 5).
"""

from __future__ import annotations

import polars as pl

# Float guards: amounts are float64; these keep a value that is mathematically on a boundary
# (x.xx5 dollars, a rate fall of exactly $0.005) from flipping on representation error.
ROUND_EPS = 1e-6  # in cents
RATE_EPS = 1e-9  # in dollars


def round_cents(expr: pl.Expr) -> pl.Expr:
    """Round half up to the cent; returns integer cents (Int64)."""
    return (expr * 100 + 0.5 + ROUND_EPS).floor().cast(pl.Int64)


def round2(expr: pl.Expr) -> pl.Expr:
    """Round half up to 2 decimals (hours), as a float."""
    return round_cents(expr) / 100


# Sums of many float terms (hours, wages and taxes spread over days) are taken in decimal: a
# float sum depends on the order of its terms, which a parallel group_by does not fix, so the same
# run could differ in the last bit from one rerun to the next. Each term is rounded to 1e-12 (far
# below the cent guard ROUND_EPS) and the decimal sum is exact, whatever the order.
SUM_TYPE = pl.Decimal(38, 12)


def exact_sum(expr: pl.Expr) -> pl.Expr:
    """``expr.sum()`` as a float that does not depend on the order of the terms."""
    return expr.cast(SUM_TYPE).sum().cast(pl.Float64)
