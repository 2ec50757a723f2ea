"""The old-law minimum wage path CF(y) derived from CPI-W (register I-2; N.J. Const. Art. I
par. 23 and N.J.A.C. 12:56-3.1(b) as they stood before P.L.2019 c.32)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from transforms.reference.values import MissingParameterError, ParameterError


def derive_counterfactual(
    cpi: Mapping[int, float],
    start_year: int,
    start_value: float,
    end_year: int,
    overrides: Mapping[int, float] | None = None,
) -> dict[int, float]:
    """The old-law (N.J. Const. Art. I par. 23, N.J.A.C. 12:56-3.1(b)) minimum wage path.

    ``cpi`` is keyed by the year of its August (CWUR0000SA0). The rate in effect on January 1
    of ``y > start_year`` is ``rate[y-1] + max(0, round_half_up_cent(rate[y-1] * (cpi[y-1] /
    cpi[y-2] - 1)))``. An override replaces the computed value for its year and the path
    continues from it. Returns ``{start_year: start_value, ..., end_year: ...}``.
    """
    if end_year < start_year:
        raise ParameterError(
            f"derive_counterfactual: end_year {end_year} is before start_year {start_year}"
        )
    ov = dict(overrides or {})
    cent = Decimal("0.01")
    rate = Decimal(repr(float(ov.get(start_year, start_value))))
    out = {start_year: float(rate)}
    for y in range(start_year + 1, end_year + 1):
        if y in ov:
            rate = Decimal(repr(float(ov[y])))
        else:
            for yr in (y - 1, y - 2):
                if yr not in cpi:
                    raise MissingParameterError(
                        f"counterfactual.cpi_w_august has no value for August {yr} (needed for the "
                        f"{y}-01-01 old-law rate); add it to data/reference/counterfactual.yaml"
                    )
            prev, cur = Decimal(repr(float(cpi[y - 2]))), Decimal(repr(float(cpi[y - 1])))
            if prev <= 0 or cur <= 0:
                raise ParameterError(
                    f"derive_counterfactual: CPI values must be positive (Aug {y - 2}, Aug {y - 1})"
                )
            inc = (rate * (cur / prev - 1)).quantize(cent, rounding=ROUND_HALF_UP)
            rate = rate + max(inc, Decimal(0))
        out[y] = float(rate)
    return out
