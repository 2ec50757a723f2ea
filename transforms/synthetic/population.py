"""Who is in a synthetic submission: employers, their employees and what they are paid.

Each builder draws from its own random stream (``stream(seed, name)``), so changing one aspect
leaves the others alone, and a ``Picks`` record makes sure every feature the credit rules
exercise is present at least once (an employee picked for one feature is never picked for
another).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

import numpy as np

from transforms.schema import WAGE_CATEGORIES
from transforms.synthetic.knobs import (
    CATEGORY_SHARES,
    FREQUENCY_SHARES,
    MEAN_EMPLOYEES,
    NAME_PLACES,
    NAME_SUFFIXES,
    NAME_TRADES,
    NJ_COUNTIES,
    TAX_RATE_RANGE,
    WEEKLY_HOURS_RANGE,
    mw_day_table,
    pick,
    stream,
)


@dataclass(frozen=True)
class Calendar:
    """The three payroll years t-2 .. t as day offsets from January 1 of t-2 (``d0``)."""

    t: int
    d0: date
    d_end: date
    end_off: int  # offset of December 31 of t
    jan1: np.ndarray  # offsets of January 1 of t-1 and of t

    @classmethod
    def of(cls, t: int) -> Calendar:
        d0, d_end = date(t - 2, 1, 1), date(t, 12, 31)
        jan1 = np.array([(date(t - 1, 1, 1) - d0).days, (date(t, 1, 1) - d0).days], dtype=np.int64)
        return cls(t, d0, d_end, (d_end - d0).days, jan1)


@dataclass
class Picks:
    """Employees picked to carry a feature, each picked at most once across features."""

    taken: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def force(self, rng: np.random.Generator, mask: np.ndarray, k: int = 1) -> np.ndarray:
        idx = pick(rng, mask, k, self.taken)
        self.taken = np.concatenate([self.taken, idx])
        return idx


@dataclass
class Employers:
    E: int
    employer_num: np.ndarray  # 9-digit federal employer ids
    freq: np.ndarray  # index of FREQUENCIES
    dom_cat: np.ndarray  # dominant wage category
    county: np.ndarray
    tax_type: np.ndarray  # CBT | GIT
    tax_bp: np.ndarray  # effective payroll tax rate on wages, basis points
    period_len: np.ndarray  # 7 or 14 days (weekly, biweekly)
    anchor: np.ndarray  # first weekly/biweekly period starts on or before January 1 of t-2
    dashed_ssn: np.ndarray  # the employer's vendor writes the ssn with dashes
    names: np.ndarray


def build_employers(seed: int, E: int) -> Employers:
    """Employers of every pay frequency and every dominant category (from 4 employers on), with
    names made of a New Jersey place, a trade of the category and a suffix."""
    r = stream(seed, "employers")
    employer_num = r.choice(900_000_000, size=E, replace=False) + 100_000_000
    freq = r.choice(4, size=E, p=FREQUENCY_SHARES)
    dom_cat = r.choice(4, size=E, p=CATEGORY_SHARES)
    # every frequency and every category present (from 4 employers on)
    forced = r.permutation(E)[: min(E, 4)]
    freq[forced] = np.arange(forced.size)
    forced = r.permutation(E)[: min(E, 4)]
    dom_cat[forced] = np.arange(forced.size)
    county = r.integers(0, len(NJ_COUNTIES), size=E)
    tax_type = np.where(r.random(E) < 0.7, "CBT", "GIT")
    tax_bp = r.integers(
        int(TAX_RATE_RANGE[0] * 10_000), int(TAX_RATE_RANGE[1] * 10_000) + 1, size=E
    )
    period_len = np.where(freq == 0, 7, 14)
    anchor = -r.integers(0, period_len)  # first weekly/biweekly period starts on or before Jan 1
    dashed_ssn = r.random(E) < 0.6  # payroll vendors differ in how they write the ssn
    place = r.integers(0, len(NAME_PLACES), size=E)
    trade_u = r.random(E)
    suffix = r.integers(0, len(NAME_SUFFIXES), size=E)
    names = np.empty(E, dtype=object)
    for c, cat_name in enumerate(WAGE_CATEGORIES):
        m = dom_cat == c
        trades = np.array(NAME_TRADES[cat_name], dtype=object)
        names[m] = (
            np.array(NAME_PLACES, dtype=object)[place[m]]
            + " "
            + trades[(trade_u[m] * len(trades)).astype(np.int64)]
            + " "
            + np.array(NAME_SUFFIXES, dtype=object)[suffix[m]]
        )
    return Employers(E, employer_num, freq, dom_cat, county, tax_type, tax_bp, period_len, anchor, dashed_ssn, names)


@dataclass
class Employees:
    N: int
    n_emp: np.ndarray  # employees per employer
    emp_of: np.ndarray  # employer of each employee
    first_of: np.ndarray  # first employee of each employer
    employee_no: np.ndarray  # the employer's own employee numbers
    ssn_area: np.ndarray
    ssn_group: np.ndarray
    ssn_serial: np.ndarray
    rostered: np.ndarray  # claimed by the employer's application
    cat: np.ndarray  # wage category
    hire: np.ndarray  # employment window, day offsets (inclusive)
    leave: np.ndarray
    no_payroll: np.ndarray  # rostered with no payroll rows at all
    weekly_h: np.ndarray  # (N, 3) hours a week in t-2, t-1, t
    ros_pay: np.ndarray  # rostered with payroll


def build_employees(seed: int, er: Employers, cal: Calendar, impaired_share: float, picks: Picks,
                    mean_employees: float = MEAN_EMPLOYEES) -> Employees:
    """Long-tailed employer sizes (``mean_employees`` on average, more than 1); unique ssns; a roster (``impaired_share`` of employees, at
    least one per employer, every category on some roster); hires and leavers; hours that stay,
    grow or shrink; and, guaranteed, a rostered employee without payroll and one whose hours
    grow and one whose hours shrink."""
    E, end_off = er.E, cal.end_off
    r = stream(seed, "employees")
    n_emp = 1 + r.geometric(1.0 / (mean_employees - 1), size=E)
    N = int(n_emp.sum())
    emp_of = np.repeat(np.arange(E), n_emp)
    first_of = np.concatenate([[0], np.cumsum(n_emp)[:-1]])
    # employer's own employee numbers: increasing with random gaps from a random base
    gaps = r.integers(1, 40, size=N)
    csum = np.cumsum(gaps)
    base = r.integers(1, 5_000, size=E)
    employee_no = base[emp_of] + csum - (csum[first_of] - gaps[first_of])[emp_of]
    # ssn: unique over everyone, area 001-899 without 666, group 01-99, serial 0001-9999
    areas = np.array([a for a in range(1, 900) if a != 666], dtype=np.int64)
    code = r.choice(areas.size * 99 * 9999, size=N, replace=False)
    ssn_area = areas[code // (99 * 9999)]
    ssn_group = (code // 9999) % 99 + 1
    ssn_serial = code % 9999 + 1

    rostered = r.random(N) < impaired_share
    has_any = np.bincount(emp_of, weights=rostered, minlength=E) > 0
    need = np.flatnonzero(~has_any)  # every application claims at least one employee
    rostered[first_of[need] + (r.random(need.size) * n_emp[need]).astype(np.int64)] = True
    cat = er.dom_cat[emp_of].copy()
    other = rostered & (r.random(N) < 0.08)  # an employer mostly has one category
    cat[other] = r.integers(0, 4, size=int(other.sum()))
    for c in range(len(WAGE_CATEGORIES)):  # every category on some roster
        if not (rostered & (cat == c)).any():
            pool = rostered & (np.bincount(emp_of, weights=rostered, minlength=E)[emp_of] > 1)
            idx = pick(r, pool if pool.any() else rostered)
            cat[idx] = c

    # employment window in day offsets (inclusive); most employed throughout
    u = r.random(N)
    hire = np.full(N, -10_000, dtype=np.int64)
    leave = np.full(N, 10_000, dtype=np.int64)
    is_hire = (u < 0.18) | (u >= 0.95)
    is_leaver = ((u >= 0.84) & (u < 0.95)) | (u >= 0.95)
    hire[is_hire] = r.integers(30, end_off - 90, size=int(is_hire.sum()))
    leave_draw = r.integers(60, end_off - 5, size=N)
    leave[is_leaver] = leave_draw[is_leaver]
    both = is_hire & is_leaver
    leave[both] = hire[both] + r.integers(60, 500, size=int(both.sum()))
    no_payroll = rostered & (r.random(N) < 0.02)

    weekly_h, trend = _weekly_hours(r, N)
    # features guaranteed among rostered employees with payroll (disjoint picks)
    ros_pay = rostered & ~no_payroll
    if not no_payroll.any():
        idx = picks.force(r, rostered & (n_emp[emp_of] > 1))
        no_payroll[idx] = True
        ros_pay = rostered & ~no_payroll
    for kind, sign in ((1, 1.0), (2, -1.0)):
        idx = picks.force(r, ros_pay)
        trend[idx] = kind
        hire[idx], leave[idx] = -10_000, 10_000
        weekly_h[idx, 0] = 25.0
        weekly_h[idx, 1] = 25.0 + sign * 4.0
        weekly_h[idx, 2] = 25.0 + sign * 8.0
    return Employees(N, n_emp, emp_of, first_of, employee_no, ssn_area, ssn_group, ssn_serial, rostered, cat, hire,
                     leave, no_payroll, weekly_h, ros_pay)


def _weekly_hours(r: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Hours per week by year: a trend (0 steady, 1 grow, 2 shrink) on a part-time base."""
    h0 = r.uniform(*WEEKLY_HOURS_RANGE, size=N)
    trend = r.choice(3, size=N, p=(0.6, 0.2, 0.2))  # 0 steady, 1 grow, 2 shrink
    step = np.where(
        trend == 0,
        r.normal(0.0, 0.02, size=(2, N)),
        np.where(trend == 1, 1, -1) * r.uniform(0.08, 0.3, size=(2, N)),
    )
    weekly_h = np.empty((N, 3))
    weekly_h[:, 0] = h0
    weekly_h[:, 1] = h0 * (1 + step[0])
    weekly_h[:, 2] = weekly_h[:, 1] * (1 + step[1])
    return np.clip(weekly_h, *WEEKLY_HOURS_RANGE), trend


@dataclass(frozen=True)
class MinimumWage:
    """The minimum wage in cents by category and day, from the reference parameters."""

    mw_day: np.ndarray  # (4, days): the day table
    shift: int  # day offset -> column of mw_day
    mw_year_max: np.ndarray  # (4, 3): the highest of each payroll year

    @classmethod
    def of(cls, params, cal: Calendar) -> MinimumWage:
        lo = cal.d0 - timedelta(days=40)
        hi = cal.d_end + timedelta(days=40)
        mw_day = mw_day_table(params, lo, hi, cal.d0 - timedelta(days=14), cal.d_end)
        shift = (cal.d0 - lo).days
        year_bounds = [(0, cal.jan1[0] - 1), (cal.jan1[0], cal.jan1[1] - 1), (cal.jan1[1], cal.end_off)]
        mw_year_max = np.stack(
            [mw_day[:, a + shift : b + shift + 1].max(axis=1) for a, b in year_bounds], axis=1
        )  # (4, 3) cents
        return cls(mw_day, shift, mw_year_max)


@dataclass
class Wages:
    nominal: np.ndarray  # (N, 3) hourly rate in cents per year; 0 = paid the minimum wage
    premium: np.ndarray  # paid above the minimum wage


def build_wages(seed: int, emp: Employees, mw: MinimumWage, picks: Picks) -> Wages:
    """Who is paid above the minimum wage and at what rate, with raises; a few wage reductions
    (a cut in one year, kept above that year's minimum wage), one guaranteed on a roster."""
    N, cat, mw_year_max = emp.N, emp.cat, mw.mw_year_max
    r = stream(seed, "rates")
    premium = (r.random(N) < np.where(emp.rostered, 0.2, 0.4)) & ~np.isin(np.arange(N), picks.taken)
    reducer = premium & (r.random(N) < 0.08)
    extra = r.integers(50, 600, size=N)
    nominal = np.zeros((N, 3), dtype=np.int64)
    nominal[:, 0] = mw_year_max[cat, 0] + extra
    raise_c = r.integers(0, 120, size=(N, 2))
    nominal[:, 1] = np.maximum(nominal[:, 0] + raise_c[:, 0], mw_year_max[cat, 1] + extra // 2)
    nominal[:, 2] = np.maximum(nominal[:, 1] + raise_c[:, 1], mw_year_max[cat, 2] + extra // 2)
    # wage reductions: a cut in one year, kept above that year's minimum wage
    if not (reducer & emp.rostered).any():
        idx = picks.force(r, emp.ros_pay)
        premium[idx] = reducer[idx] = True
        emp.hire[idx], emp.leave[idx] = -10_000, 10_000  # paid in every year, so the cut shows
    cut_year = r.integers(1, 3, size=N)
    cut = r.integers(25, 150, size=N)
    red_idx = np.flatnonzero(reducer)
    rise = mw_year_max[cat[red_idx], 2] - mw_year_max[cat[red_idx], 0]
    nominal[red_idx, 0] = mw_year_max[cat[red_idx], 0] + rise + 300 + extra[red_idx]
    cy = cut_year[red_idx]
    nominal[red_idx, 1] = np.where(cy == 1, nominal[red_idx, 0] - cut[red_idx], nominal[red_idx, 0])
    nominal[red_idx, 2] = np.where(cy == 2, nominal[red_idx, 1] - cut[red_idx], nominal[red_idx, 1])
    nominal[~premium] = 0
    return Wages(nominal, premium)
