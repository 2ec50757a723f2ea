"""N.J.S.A. 34:11-56a39 and 34:11-56a40(b), (c), (d)(2), (e), (f) and (g): the reason codes of a decision.

Spec sections 5 and 7.

Every reason that applies is reported, sorted and ``;``-joined (spec section 5).
"""

from __future__ import annotations

import polars as pl

# Reason codes (spec section 5 and 7).
TAX_YEAR_BEFORE_2019 = "TAX_YEAR_BEFORE_2019"
DUPLICATE_APPLICATION = "DUPLICATE_APPLICATION"
WAGE_REDUCTION = "WAGE_REDUCTION"
MISSING_EMPLOYER_RATES = "MISSING_EMPLOYER_RATES"
LATE_APPLICATION = "LATE_APPLICATION"
NOT_CERTIFIED = "NOT_CERTIFIED"
NO_HOURS_IN_TAX_YEAR = "NO_HOURS_IN_TAX_YEAR"
HOURS_DECREASED = "HOURS_DECREASED"
SUBMINIMUM_ON_EFFECTIVE_DATE = "SUBMINIMUM_ON_EFFECTIVE_DATE"
DUPLICATE_EMPLOYEE = "DUPLICATE_EMPLOYEE"
NOT_IN_CONTROL_GROUP = "NOT_IN_CONTROL_GROUP"
NO_CREDIT_DUE = "NO_CREDIT_DUE"
# an application held, not decided: a line it could depend on was rejected (spec section 7)
INPUT_REJECTED = "INPUT_REJECTED"
# held: the employer's declared totals differ from what was read (spec section 1, reconciliation)
DECLARED_TOTALS_DIFFER = "DECLARED_TOTALS_DIFFER"
CAP_EXHAUSTED = "CAP_EXHAUSTED"
# an audit finding (spec section 9a, 56a40(e)): the employee was not an employee with an impairment
# (an (f) finding gives WAGE_REDUCTION, found on audit beyond what the payroll shows)
MISCLASSIFIED = "MISCLASSIFIED"

# application-level reason -> its flag column
APPLICATION_FLAGS = {
    DUPLICATE_APPLICATION: "is_duplicate",
    MISSING_EMPLOYER_RATES: "missing_rates",
    WAGE_REDUCTION: "__wage_reduction",
}


def join_reasons(*flags: tuple[str, pl.Expr]) -> pl.Expr:
    """Sorted, ';'-joined reason codes of the flags that are true."""
    parts = [pl.when(expr).then(pl.lit(code)) for code, expr in sorted(flags, key=lambda f: f[0])]
    return pl.concat_str(parts, separator=";", ignore_nulls=True).fill_null("")
