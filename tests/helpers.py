"""Small scenarios shared by the ledger and orchestration tests: one employer, one application,
one general employee paid the minimum wage, 80 h a month in the prior year."""

from __future__ import annotations

import polars as pl

from transforms.reference.parameters import load_parameters
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()


def employer_case(n: int, received_at: str, hours: float = 100, tax_year: int = 2023) -> dict:
    return {
        "employer_id": f"{100000000 + n}",
        "application_id": f"APP-{tax_year}-{n:03d}",
        "tax_year": tax_year,
        "received_at": received_at,
        "employees": [
            {
                "employee_id": "E1",
                "ssn": f"222-33-{4000 + n:04d}",
                "category": "general",
                "months": {
                    tax_year - 1: {"hours": 80, "rate": "minimum_wage"},
                    tax_year: {"hours": hours, "rate": "minimum_wage"},
                },
            }
        ],
    }


def frames_for(cases: list[dict]) -> dict[str, pl.DataFrame]:
    """Staged frames of several scenarios side by side."""
    parts = [build_frames(c, PARAMS) for c in cases]
    return {k: pl.concat([p[k] for p in parts]) for k in parts[0]}


def twelve_employers_without_agency_gaps(sub) -> None:
    """``generate_submission``'s 12 employers (seed 31, tax year 2023, no groups or fiscal years) at
    ``sub``, every employer given rates for every rate year, so no agency gap holds anything."""
    from transforms.synthetic.generate import generate_submission

    generate_submission(sub, employers=12, seed=31, tax_year=2023, groups_and_fiscal=False)
    rates = pl.read_csv(sub / "employer_rates.csv", infer_schema=False)
    every = rates.select("employer_id").unique().join(rates.select("rate_year_start").unique(), how="cross")
    missing = every.join(rates, on=["employer_id", "rate_year_start"], how="anti").with_columns(
        pl.lit("0.0280").alias("ui_rate"), pl.lit("0.0050").alias("di_rate"))
    pl.concat([rates, missing.select(rates.columns)]).write_csv(sub / "employer_rates.csv")
