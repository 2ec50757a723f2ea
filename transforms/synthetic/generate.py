"""Synthetic canonical submission folders for demos, tests and benchmarks.

``generate_submission`` writes a folder in the canonical layout of the rules spec (section 1)
with the columns of ``transforms.schema.SUBMITTED_COLUMNS``. Everything is vectorised with numpy
and polars (no per-row Python), so 20,000 employers and ~10M payroll rows take seconds, and the
output is byte-identical for a given seed.

The data carries the features the credit rules exercise: three calendar years of payroll in four
pay frequencies (weekly and biweekly periods run across January 1 and July 1), hires and leavers,
hours that grow and shrink, pay at the minimum wage of each employee's wage category (taken from
the reference parameters, never hard-coded), a few wage reductions, on-time, late and duplicate
applications, rostered employees without payroll, certifications that are missing, pending,
revoked or only granted after the tax year, and employers missing a UI/DI rate year.

Only ``Parameters.schedule`` is used for the minimum wage: one small day table per category,
gathered for all rows at once.

The scenario is built in the order a reader meets it: ``population`` (employers, employees,
wages), then ``records`` (pay periods, payroll rows, applications, roster, certifications,
employer rates), each builder with its own random stream; this module writes the folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from transforms.schema import SUBMITTED_COLUMNS
from transforms.synthetic.declared import declare
from transforms.synthetic.groups import Layered, layer
from transforms.synthetic.knobs import EMPLOYERS_PER_FILE, MEAN_EMPLOYEES, write_csv
from transforms.synthetic.population import (
    Calendar,
    MinimumWage,
    Picks,
    build_employees,
    build_employers,
    build_wages,
)
from transforms.synthetic.records import (
    Ids,
    build_applications,
    build_certifications,
    build_employer_rates,
    build_pay_periods,
    build_payroll,
    build_roster,
)

if TYPE_CHECKING:  # the parameter module is imported lazily (see _load_params)
    from transforms.reference.parameters import Parameters


@dataclass(frozen=True)
class GenerateSummary:
    out_dir: Path
    employers: int
    employees: int  # including rostered employees that have no payroll rows
    payroll_rows: int
    applications: int  # including duplicates
    rostered: int  # distinct rostered employees (employer, employee_id)
    files: int  # payroll files
    roster_rows: int = 0  # rows of roster.csv (duplicate applications repeat their roster)
    certifications: int = 0
    employer_rates: int = 0
    groups: int = 0  # groups of employers under common control (control_groups.csv)
    fiscal_filers: int = 0  # applications for a fiscal privilege period
    estimate_requests: int = 0  # requests for estimates during the tax year (estimate_requests.csv)


def _load_params(params: Parameters | None) -> Parameters:
    if params is not None:
        return params
    from transforms.reference.parameters import load_parameters

    return load_parameters()


def generate_submission(
    out_dir: Path,
    *,
    employers: int,
    seed: int,
    tax_year: int = 2023,
    params: Parameters | None = None,
    impaired_share: float = 0.15,
    groups_and_fiscal: bool = True,
    mean_employees: float = MEAN_EMPLOYEES,
) -> GenerateSummary:
    """Write a synthetic canonical submission folder for ``tax_year`` into ``out_dir``.

    Payroll covers the calendar years tax_year-2 .. tax_year; applications are for tax_year.
    Stale ``payroll/payroll_*.csv`` files from an earlier run in the same folder are removed so
    that the folder always reflects exactly one generation. The realism features listed in the
    module docstring are guaranteed from about 20 employers on. ``groups_and_fiscal``: lay
    groups of employers and fiscal-year filers over it (``transforms.synthetic.groups``).
    ``mean_employees``: employees per employer on average (1 + a geometric draw; the default
    ``knobs.MEAN_EMPLOYEES``); the bench's sets use fewer, for more employers per payroll row.
    """
    if employers < 1:
        raise ValueError("employers must be at least 1")
    if mean_employees <= 1.0:
        raise ValueError("mean_employees must be more than 1")
    if not 0.0 <= impaired_share <= 1.0:
        raise ValueError("impaired_share must be between 0 and 1")
    p = _load_params(params)
    cal = Calendar.of(int(tax_year))
    picks = Picks()
    er = build_employers(seed, int(employers))
    emp = build_employees(seed, er, cal, impaired_share, picks, mean_employees)
    mw = MinimumWage.of(p, cal)
    wages = build_wages(seed, emp, mw, picks)
    periods = build_pay_periods(er, cal, mw)
    ids = Ids.of(er, emp)
    payroll = build_payroll(seed, er, emp, wages, periods, cal, ids)
    apps = build_applications(seed, er, emp, cal, ids)
    roster = build_roster(er, emp, apps, ids)
    certifications = build_certifications(seed, emp, wages, cal, ids, picks)
    employer_rates = build_employer_rates(seed, er, cal, ids)
    ratio = p.value("minimum_wage.general", date(tax_year + 1, 1, 1)) / p.value("minimum_wage.general", date(tax_year, 1, 1))
    layered = layer(seed, tax_year, apps.frame, roster, payroll.frame, ratio) if groups_and_fiscal else None
    n_files = _write_folder(Path(out_dir), er.E, emp.emp_of, payroll.count, payroll.frame, apps.frame, roster,
                            certifications, employer_rates, layered, declared=(seed, int(tax_year)))
    return GenerateSummary(
        out_dir=Path(out_dir),
        employers=er.E,
        employees=emp.N,
        payroll_rows=payroll.frame.height + (layered.fiscal_payroll.height + layered.shared_payroll.height if layered else 0),
        applications=layered.applications.height if layered else apps.frame.height,
        rostered=int(emp.rostered.sum()),
        files=n_files,
        roster_rows=layered.roster.height if layered else roster.height,
        certifications=certifications.height,
        employer_rates=employer_rates.height,
        groups=layered.groups if layered else 0,
        fiscal_filers=layered.fiscal if layered else 0,
        estimate_requests=layered.estimate_requests.height if layered and layered.estimate_requests is not None else 0,
    )


def _write_folder(out_dir: Path, E: int, emp_of: np.ndarray, count: np.ndarray, payroll: pl.DataFrame,
                  applications: pl.DataFrame, roster: pl.DataFrame, certifications: pl.DataFrame,
                  employer_rates: pl.DataFrame, layered: Layered | None = None,
                  declared: tuple[int, int] | None = None) -> int:
    """The canonical layout: payroll in files of ``EMPLOYERS_PER_FILE`` employers (sliced at
    employer boundaries; stale payroll files removed) and one file per other dataset; with
    ``declared`` (seed, tax year), the roster carries most employers' declared totals
    (``synthetic.declared``). Returns the number of payroll files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pay_dir = out_dir / "payroll"
    pay_dir.mkdir(exist_ok=True)
    for stale in [*pay_dir.glob("payroll_*.csv"), *pay_dir.glob("shared_*.csv")]:
        stale.unlink()
    n_files = (E + EMPLOYERS_PER_FILE - 1) // EMPLOYERS_PER_FILE
    width = max(3, len(str(n_files)))
    # rows are grouped by employer in employer order: slice at employer boundaries
    rows_per_employer = np.bincount(emp_of, weights=count, minlength=E).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(rows_per_employer)])
    for i in range(n_files):
        a = int(bounds[i * EMPLOYERS_PER_FILE])
        b = int(bounds[min((i + 1) * EMPLOYERS_PER_FILE, E)])
        write_csv(
            payroll.slice(a, b - a), pay_dir / f"payroll_{i + 1:0{width}d}.csv", float_precision=2
        )
    groups = pl.DataFrame(schema=dict.fromkeys(SUBMITTED_COLUMNS["control_groups"], pl.String))
    roster = roster.select(SUBMITTED_COLUMNS["roster"])
    if layered is not None:
        applications, groups = layered.applications, layered.control_groups
        if layered.fiscal == 0:
            applications = applications.drop("period_start", "period_end")
        roster = layered.roster.select(*SUBMITTED_COLUMNS["roster"], "employer_id") if layered.groups else roster
        if layered.fiscal_payroll.height:
            write_csv(layered.fiscal_payroll, pay_dir / f"payroll_fiscal_{layered.fiscal_payroll['period_start'].max().year}.csv",
                      float_precision=2)
        if layered.shared_payroll.height:
            write_csv(layered.shared_payroll, pay_dir / "shared_member_payroll.csv", float_precision=2)
    for stale in out_dir.glob("estimate_requests.csv"):
        stale.unlink()
    if layered is not None and layered.estimate_requests is not None and layered.estimate_requests.height:
        write_csv(layered.estimate_requests, out_dir / "estimate_requests.csv")
    write_csv(applications, out_dir / "applications.csv")
    if declared is not None:
        extra = [layered.fiscal_payroll, layered.shared_payroll] if layered is not None else []
        roster = declare(*declared, roster, applications, [payroll, *extra], groups)
    write_csv(roster, out_dir / "roster.csv")
    write_csv(
        certifications.select(SUBMITTED_COLUMNS["certifications"]), out_dir / "certifications.csv"
    )
    write_csv(
        employer_rates.select(SUBMITTED_COLUMNS["employer_rates"]),
        out_dir / "employer_rates.csv",
        float_precision=4,
    )
    write_csv(groups, out_dir / "control_groups.csv")
    return n_files
