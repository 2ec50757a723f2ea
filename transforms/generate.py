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
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from transforms.schema import SUBMITTED_COLUMNS, WAGE_CATEGORIES

if TYPE_CHECKING:  # the parameter module is imported lazily (see _load_params)
    from transforms.params import Parameters

# --- knobs of the synthetic population (not legal numbers) -----------------------------------

NJ_COUNTIES: tuple[str, ...] = (
    "Atlantic", "Bergen", "Burlington", "Camden", "Cape May", "Cumberland", "Essex",
    "Gloucester", "Hudson", "Hunterdon", "Mercer", "Middlesex", "Monmouth", "Morris", "Ocean",
    "Passaic", "Salem", "Somerset", "Sussex", "Union", "Warren",
)  # fmt: skip
FREQUENCIES: tuple[str, ...] = ("weekly", "biweekly", "semimonthly", "monthly")
FREQUENCY_SHARES = (0.35, 0.35, 0.20, 0.10)
# dominant category of an employer, in WAGE_CATEGORIES order
CATEGORY_SHARES = (0.70, 0.15, 0.10, 0.05)
EMPLOYERS_PER_FILE = 50
MEAN_EMPLOYEES = 6  # 1 + geometric: a long tail of larger employers
TAX_RATE_RANGE = (0.08, 0.12)  # employer-level effective payroll tax rate on gross wages
UI_RATE_RANGE = (0.004, 0.054)
DI_RATE_RANGE = (0.001, 0.0075)
WEEKLY_HOURS_RANGE = (10.0, 40.0)

_NAME_PLACES = (
    "Garden State", "Pine Barrens", "Shore", "Liberty", "Palisades", "Raritan", "Delaware Valley",
    "Hudson", "Passaic", "Meadowlands", "Highlands", "Atlantic", "Cape", "Princeton", "Jersey",
    "Skylands", "Boardwalk", "Ridgewood", "Monmouth", "Ocean", "Ramapo", "Millstone", "Kittatinny",
    "Barnegat", "Hackensack", "Musconetcong", "Watchung", "Navesink", "Tuckahoe", "Batsto",
)  # fmt: skip
_NAME_TRADES: dict[str, tuple[str, ...]] = {
    "general": (
        "Hardware", "Logistics", "Printing", "Cleaning Services", "Packaging", "Auto Repair",
        "Pharmacy", "Bakery", "Laundry", "Office Supply", "Recycling", "Assembly", "Bookbinding",
    ),
    "tipped": ("Diner", "Bistro", "Grill", "Tavern", "Pizzeria", "Car Wash", "Salon", "Cafe"),
    "seasonal_small": (
        "Boardwalk Games", "Ice Cream", "Beach Rentals", "Marina", "Mini Golf", "Surf Shop",
        "Water Park", "Christmas Trees",
    ),
    "agricultural": ("Farms", "Orchards", "Blueberry Farm", "Cranberry Bogs", "Nursery", "Dairy"),
}  # fmt: skip
_NAME_SUFFIXES = ("LLC", "Inc.", "Co.", "Corp.", "LLC", "& Sons", "Group", "LLC")


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


# --- helpers ------------------------------------------------------------------------------------


def _rng(seed: int, stream: str) -> np.random.Generator:
    """An independent, stable stream per aspect, so changing one aspect leaves the others alone."""
    return np.random.default_rng(
        [int(seed) & 0xFFFFFFFF, int(seed) >> 32, zlib.crc32(stream.encode())]
    )


def _load_params(params: Parameters | None) -> Parameters:
    if params is not None:
        return params
    from transforms.params import load_parameters

    return load_parameters()


def _dates(offsets: np.ndarray, d0: date) -> pl.Series:
    """Day offsets from d0 -> a polars Date series."""
    epoch = (d0 - date(1970, 1, 1)).days
    return pl.Series(np.asarray(offsets, dtype=np.int64) + epoch, dtype=pl.Int32).cast(pl.Date)


def _zfill(values: np.ndarray, width: int) -> pl.Expr:
    return pl.lit(pl.Series(values.astype(np.int64))).cast(pl.String).str.zfill(width)


def _pick(
    rng: np.random.Generator, mask: np.ndarray, k: int = 1, exclude: np.ndarray | None = None
) -> np.ndarray:
    """k random indices where mask holds (fewer if not enough), avoiding ``exclude``."""
    cand = np.flatnonzero(mask)
    if exclude is not None and exclude.size:
        cand = np.setdiff1d(cand, exclude, assume_unique=False)
    if cand.size == 0:
        return cand
    return rng.choice(cand, size=min(k, cand.size), replace=False)


def _mw_day_table(params: Any, lo: date, hi: date, strict_lo: date, strict_hi: date) -> np.ndarray:
    """Minimum wage in cents, shape (4 categories, days lo..hi), from ``params.schedule``.

    The wider window [lo, hi] is asked first; if the reference data does not reach that far (a
    period running into the year after the tax year), the table is built from [strict_lo,
    strict_hi] (which must be covered) and held constant at the edges. Days outside the three
    payroll years are never priced by the credit.
    """
    n = (hi - lo).days + 1
    table = np.zeros((len(WAGE_CATEGORIES), n), dtype=np.int64)
    for c, cat in enumerate(WAGE_CATEGORIES):
        name = f"minimum_wage.{cat}"
        try:
            pieces = params.schedule(name, lo, hi)
        except (ValueError, LookupError):  # the wide window is optional; the strict one must work
            pieces = params.schedule(name, strict_lo, strict_hi)
        row = np.full(n, -1, dtype=np.int64)
        for start, end, value in pieces:
            a = max((start - lo).days, 0)
            b = min((end - lo).days, n - 1)
            if b >= a:
                row[a : b + 1] = round(float(value) * 100)
        known = np.flatnonzero(row >= 0)
        if known.size == 0:
            raise ValueError(f"{name}: no minimum wage between {strict_lo} and {strict_hi}")
        # hold the first/last known value outside the covered window
        row[: known[0]] = row[known[0]]
        row[known[-1] + 1 :] = row[known[-1]]
        if (row[known[0] : known[-1] + 1] < 0).any():
            raise ValueError(f"{name}: the schedule has a gap between {lo} and {hi}")
        table[c] = row
    return table


def _calendar_periods(d0: date, years: range, semimonthly: bool) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = [], []
    for y in years:
        for m in range(1, 13):
            first = date(y, m, 1)
            last = (date(y + (m == 12), m % 12 + 1, 1)) - timedelta(days=1)
            if semimonthly:
                starts += [first, date(y, m, 16)]
                ends += [date(y, m, 15), last]
            else:
                starts.append(first)
                ends.append(last)
    s = np.array([(d - d0).days for d in starts], dtype=np.int64)
    e = np.array([(d - d0).days for d in ends], dtype=np.int64)
    return s, e


def _write(frame: pl.DataFrame, path: Path, *, float_precision: int | None = None) -> None:
    frame.write_csv(
        path,
        float_precision=float_precision,
        date_format="%Y-%m-%d",
        datetime_format="%Y-%m-%dT%H:%M:%S",
        null_value="",
    )


# --- the generator ----------------------------------------------------------------------------


def generate_submission(
    out_dir: Path,
    *,
    employers: int,
    seed: int,
    tax_year: int = 2023,
    params: Parameters | None = None,
    impaired_share: float = 0.15,
) -> GenerateSummary:
    """Write a synthetic canonical submission folder for ``tax_year`` into ``out_dir``.

    Payroll covers the calendar years tax_year-2 .. tax_year; applications are for tax_year.
    Stale ``payroll/payroll_*.csv`` files from an earlier run in the same folder are removed so
    that the folder always reflects exactly one generation. The realism features listed in the
    module docstring are guaranteed from about 20 employers on.
    """
    if employers < 1:
        raise ValueError("employers must be at least 1")
    if not 0.0 <= impaired_share <= 1.0:
        raise ValueError("impaired_share must be between 0 and 1")
    p = _load_params(params)
    out_dir = Path(out_dir)
    E = int(employers)
    t = int(tax_year)
    d0 = date(t - 2, 1, 1)
    d_end = date(t, 12, 31)
    end_off = (d_end - d0).days
    jan1 = np.array([(date(t - 1, 1, 1) - d0).days, (date(t, 1, 1) - d0).days], dtype=np.int64)

    # ---------------------------------------------------------------- employers
    r = _rng(seed, "employers")
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
    place = r.integers(0, len(_NAME_PLACES), size=E)
    trade_u = r.random(E)
    suffix = r.integers(0, len(_NAME_SUFFIXES), size=E)
    names = np.empty(E, dtype=object)
    for c, cat_name in enumerate(WAGE_CATEGORIES):
        m = dom_cat == c
        trades = np.array(_NAME_TRADES[cat_name], dtype=object)
        names[m] = (
            np.array(_NAME_PLACES, dtype=object)[place[m]]
            + " "
            + trades[(trade_u[m] * len(trades)).astype(np.int64)]
            + " "
            + np.array(_NAME_SUFFIXES, dtype=object)[suffix[m]]
        )

    # ---------------------------------------------------------------- employees
    r = _rng(seed, "employees")
    n_emp = 1 + r.geometric(1.0 / (MEAN_EMPLOYEES - 1), size=E)
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
    cat = dom_cat[emp_of].copy()
    other = rostered & (r.random(N) < 0.08)  # an employer mostly has one category
    cat[other] = r.integers(0, 4, size=int(other.sum()))
    for c in range(len(WAGE_CATEGORIES)):  # every category on some roster
        if not (rostered & (cat == c)).any():
            pool = rostered & (np.bincount(emp_of, weights=rostered, minlength=E)[emp_of] > 1)
            idx = _pick(r, pool if pool.any() else rostered)
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

    # hours per week by year: a trend (steady, growing, shrinking) on a part-time base
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
    weekly_h = np.clip(weekly_h, *WEEKLY_HOURS_RANGE)

    # features guaranteed among rostered employees with payroll (disjoint picks)
    taken = np.empty(0, dtype=np.int64)

    def force(mask: np.ndarray, k: int = 1) -> np.ndarray:
        nonlocal taken
        idx = _pick(r, mask, k, taken)
        taken = np.concatenate([taken, idx])
        return idx

    ros_pay = rostered & ~no_payroll
    if not no_payroll.any():
        idx = force(rostered & (n_emp[emp_of] > 1))
        no_payroll[idx] = True
        ros_pay = rostered & ~no_payroll
    for kind, sign in ((1, 1.0), (2, -1.0)):
        idx = force(ros_pay)
        trend[idx] = kind
        hire[idx], leave[idx] = -10_000, 10_000
        weekly_h[idx, 0] = 25.0
        weekly_h[idx, 1] = 25.0 + sign * 4.0
        weekly_h[idx, 2] = 25.0 + sign * 8.0

    # ---------------------------------------------------------------- minimum wage tables
    lo = d0 - timedelta(days=40)
    hi = d_end + timedelta(days=40)
    mw_day = _mw_day_table(p, lo, hi, d0 - timedelta(days=14), d_end)
    shift = (d0 - lo).days  # day offset -> column of mw_day
    year_bounds = [(0, jan1[0] - 1), (jan1[0], jan1[1] - 1), (jan1[1], end_off)]
    mw_year_max = np.stack(
        [mw_day[:, a + shift : b + shift + 1].max(axis=1) for a, b in year_bounds], axis=1
    )  # (4, 3) cents

    # nominal hourly rate (cents) per employee and year; 0 = paid the minimum wage
    r = _rng(seed, "rates")
    premium = (r.random(N) < np.where(rostered, 0.2, 0.4)) & ~np.isin(np.arange(N), taken)
    reducer = premium & (r.random(N) < 0.08)
    extra = r.integers(50, 600, size=N)
    nominal = np.zeros((N, 3), dtype=np.int64)
    nominal[:, 0] = mw_year_max[cat, 0] + extra
    raise_c = r.integers(0, 120, size=(N, 2))
    nominal[:, 1] = np.maximum(nominal[:, 0] + raise_c[:, 0], mw_year_max[cat, 1] + extra // 2)
    nominal[:, 2] = np.maximum(nominal[:, 1] + raise_c[:, 1], mw_year_max[cat, 2] + extra // 2)
    # wage reductions: a cut in one year, kept above that year's minimum wage
    if not (reducer & rostered).any():
        idx = force(ros_pay)
        premium[idx] = reducer[idx] = True
        hire[idx], leave[idx] = -10_000, 10_000  # paid in every year, so the cut shows
    cut_year = r.integers(1, 3, size=N)
    cut = r.integers(25, 150, size=N)
    red_idx = np.flatnonzero(reducer)
    rise = mw_year_max[cat[red_idx], 2] - mw_year_max[cat[red_idx], 0]
    nominal[red_idx, 0] = mw_year_max[cat[red_idx], 0] + rise + 300 + extra[red_idx]
    cy = cut_year[red_idx]
    nominal[red_idx, 1] = np.where(cy == 1, nominal[red_idx, 0] - cut[red_idx], nominal[red_idx, 0])
    nominal[red_idx, 2] = np.where(cy == 2, nominal[red_idx, 1] - cut[red_idx], nominal[red_idx, 1])
    nominal[~premium] = 0

    # ---------------------------------------------------------------- pay periods per employer
    semi_s, semi_e = _calendar_periods(d0, range(t - 2, t + 1), semimonthly=True)
    mon_s, mon_e = _calendar_periods(d0, range(t - 2, t + 1), semimonthly=False)
    n_per = np.where(
        freq <= 1,
        (end_off - anchor) // period_len + 1,
        np.where(freq == 2, semi_s.size, mon_s.size),
    )
    P = int(n_per.sum())
    per_emp = np.repeat(np.arange(E), n_per)
    per_first = np.concatenate([[0], np.cumsum(n_per)[:-1]])
    k = np.arange(P) - per_first[per_emp]
    f = freq[per_emp]
    kc = np.minimum(k, semi_s.size - 1)
    km = np.minimum(k, mon_s.size - 1)
    p_start = np.where(
        f <= 1, anchor[per_emp] + period_len[per_emp] * k, np.where(f == 2, semi_s[kc], mon_s[km])
    )
    p_end = np.where(
        f <= 1, p_start + period_len[per_emp] - 1, np.where(f == 2, semi_e[kc], mon_e[km])
    )
    # highest minimum wage on any day of each distinct period, per category
    ukey, uinv = np.unique((p_start + 64) * 64 + (p_end - p_start), return_inverse=True)
    us = ukey // 64 - 64
    ue = us + ukey % 64
    period_mw = np.zeros((4, ukey.size), dtype=np.int64)
    for d in range(32):
        col = np.minimum(us + d, ue) + shift
        period_mw = np.maximum(period_mw, mw_day[:, col])

    # ---------------------------------------------------------------- payroll rows
    BIG = np.int64(1 << 20)
    key_start = per_emp * BIG + (p_start + 64)
    key_end = per_emp * BIG + (p_end + 64)
    lo_key = emp_of * BIG + np.clip(hire, -63, end_off + 64) + 64
    hi_key = emp_of * BIG + np.clip(leave, -63, end_off + 64) + 64
    first_p = np.searchsorted(key_end, lo_key, side="left")
    last_p = np.searchsorted(key_start, hi_key, side="right")
    count = np.where(no_payroll, 0, np.maximum(last_p - first_p, 0))
    R = int(count.sum())
    row_emp = np.repeat(np.arange(N), count)
    row_first = np.concatenate([[0], np.cumsum(count)[:-1]])
    pidx = first_p[row_emp] + (np.arange(R) - row_first[row_emp])
    s = p_start[pidx]
    e = p_end[pidx]
    days = e - s + 1
    overlap = np.minimum(e, leave[row_emp]) - np.maximum(s, hire[row_emp]) + 1
    yidx = (s >= jan1[0]).astype(np.int64) + (s >= jan1[1])

    r = _rng(seed, "hours")
    noise = np.clip(1.0 + 0.05 * r.standard_normal(R), 0.7, 1.3)
    hours = weekly_h[row_emp, yidx] * days / 7.0 * (overlap / days) * noise
    hours_c = np.rint(hours * 100).astype(np.int64)
    hours_c[r.random(R) < 0.003] = 0  # an unpaid period now and then
    rate_c = np.maximum(nominal[row_emp, yidx], period_mw[cat[row_emp], uinv[pidx]])
    wages_c = (hours_c * rate_c + 50) // 100  # round half up to the cent
    taxes_c = (wages_c * tax_bp[emp_of[row_emp]] + 5_000) // 10_000

    # ---------------------------------------------------------------- frames
    employer_id_s = pl.Series("employer_id", employer_num.astype(np.int64)).cast(pl.String)
    employee_id_s = pl.select(
        pl.format("E{}", _zfill(employee_no, 6)).alias("employee_id")
    ).to_series()
    area_s, group_s, serial_s = (_zfill(ssn_area, 3), _zfill(ssn_group, 2), _zfill(ssn_serial, 4))
    ssn_parts = pl.select(
        pl.concat_str([area_s, pl.lit("-"), group_s, pl.lit("-"), serial_s]).alias("dashed"),
        pl.concat_str([area_s, group_s, serial_s]).alias("plain"),
    )
    ssn_dashed = ssn_parts["dashed"]
    ssn_plain = ssn_parts["plain"]
    people = pl.DataFrame(
        {
            "employer_id": employer_id_s.gather(emp_of),
            "employee_id": employee_id_s,
            "ssn": pl.select(
                pl.when(pl.lit(pl.Series(dashed_ssn[emp_of])))
                .then(pl.lit(ssn_dashed))
                .otherwise(pl.lit(ssn_plain))
            ).to_series(),
        }
    )
    payroll = pl.DataFrame(
        {
            "employer_id": people["employer_id"].gather(row_emp),
            "employee_id": people["employee_id"].gather(row_emp),
            "ssn": people["ssn"].gather(row_emp),
            "period_start": _dates(s, d0),
            "period_end": _dates(e, d0),
            "hours": hours_c / 100.0,
            "gross_wages": wages_c / 100.0,
            "employer_taxes": taxes_c / 100.0,
        }
    ).select(SUBMITTED_COLUMNS["payroll"])

    # ---------------------------------------------------------------- applications
    r = _rng(seed, "applications")
    recv_day = r.integers(
        (date(t + 1, 1, 15) - d0).days, (date(t + 1, 6, 30) - d0).days + 1, size=E
    )
    late = r.random(E) < 0.02
    # late matters for general and tipped (their deadline is the earlier one)
    gt = np.bincount(emp_of, weights=rostered & np.isin(cat, (0, 1)), minlength=E) > 0
    if not (late & gt).any():
        late[_pick(r, gt)] = True
    late_lo, late_hi = (date(t + 2, 1, 2) - d0).days, (date(t + 2, 3, 31) - d0).days
    recv_day[late] = r.integers(late_lo, late_hi + 1, size=int(late.sum()))
    recv_sec = recv_day * 86_400 + r.integers(8 * 60, 18 * 60, size=E) * 60
    dup = r.random(E) < 0.02
    if not dup.any():
        dup[_pick(r, np.ones(E, dtype=bool))] = True
    dup_idx = np.flatnonzero(dup)
    # a later day, again in office hours (a time of day from the clock would fall, once in a
    # while, in the hour skipped when daylight saving time starts: not a real New Jersey time)
    dup_days = r.integers(1, 60, size=dup_idx.size)
    dup_sec = (recv_day[dup_idx] + dup_days) * 86_400 + r.integers(8 * 60, 18 * 60, size=dup_idx.size) * 60
    app_emp = np.concatenate([np.arange(E), dup_idx])
    app_sec = np.concatenate([recv_sec, dup_sec])
    order = np.lexsort((employer_num[app_emp], app_sec))  # ids follow the order of receipt
    app_emp, app_sec = app_emp[order], app_sec[order]
    A = app_emp.size
    app_no = np.arange(1, A + 1)
    epoch_sec = (d0 - date(1970, 1, 1)).days * 86_400
    applications = pl.DataFrame(
        {
            "application_id": pl.select(pl.format(f"APP-{t}-{{}}", _zfill(app_no, 6))).to_series(),
            "employer_id": employer_id_s.gather(app_emp),
            "employer_name": pl.Series(names[app_emp].astype(str)),
            "county": pl.Series(np.array(NJ_COUNTIES)[county[app_emp]]),
            "tax_type": pl.Series(tax_type[app_emp]),
            "tax_year": pl.Series(np.full(A, t, dtype=np.int64)),
            "received_at": pl.Series((app_sec + epoch_sec) * 1_000_000).cast(pl.Datetime("us")),
        }
    ).select(SUBMITTED_COLUMNS["applications"])

    # ---------------------------------------------------------------- roster
    ros_idx = np.flatnonzero(rostered)
    # each application lists the rostered employees of its employer
    app_of_emp_order = np.argsort(app_emp, kind="stable")
    ros_per_emp = np.bincount(emp_of[ros_idx], minlength=E)
    ros_first = np.concatenate([[0], np.cumsum(ros_per_emp)[:-1]])
    # ros_idx is sorted by employee index, hence grouped by employer in employer order
    a_sorted = app_of_emp_order  # applications grouped by employer
    a_emp = app_emp[a_sorted]
    n_rows_per_app = ros_per_emp[a_emp]
    roster_app = np.repeat(a_sorted, n_rows_per_app)
    rfirst = np.concatenate([[0], np.cumsum(n_rows_per_app)[:-1]])
    rk = np.arange(int(n_rows_per_app.sum())) - np.repeat(rfirst, n_rows_per_app)
    roster_emp = ros_idx[ros_first[app_emp[roster_app]] + rk]
    rorder = np.lexsort((roster_emp, roster_app))
    roster_app, roster_emp = roster_app[rorder], roster_emp[rorder]
    roster = pl.DataFrame(
        {
            "application_id": applications["application_id"].gather(roster_app),
            "employee_id": employee_id_s.gather(roster_emp),
            "wage_category": pl.Series(np.array(WAGE_CATEGORIES)[cat[roster_emp]]),
        }
    )

    # ---------------------------------------------------------------- certifications
    r = _rng(seed, "certifications")
    tstart = (date(t, 1, 1) - d0).days
    kind = r.choice(7, size=ros_idx.size, p=(0.70, 0.08, 0.05, 0.05, 0.04, 0.03, 0.05))
    # 0 certified open-ended, 1 certified with an end after the tax year, 2 pending,
    # 3 revoked, 4 certified only after the tax year, 5 expired before it, 6 no certification
    must_fail = _pick(r, ros_pay[ros_idx] & ~np.isin(ros_idx, taken))
    kind[must_fail] = 6
    taken = np.concatenate([taken, ros_idx[must_fail]])
    at_mw = _pick(r, ros_pay[ros_idx] & ~premium[ros_idx] & ~np.isin(ros_idx, taken))
    kind[at_mw] = 0  # certified and at the minimum wage (nominal 0): a plain eligible case
    for k_ in (2, 3, 4, 6):  # every kind of certification problem at least once
        if not (kind == k_).any():
            kind[_pick(r, (kind == 0) & ~np.isin(np.arange(kind.size), at_mw))] = k_
    before = r.integers(tstart - 8 * 365, tstart - 30, size=ros_idx.size)
    vf = before.copy()
    vt = np.full(ros_idx.size, -1_000_000, dtype=np.int64)  # sentinel: open-ended
    vt[kind == 1] = r.integers(end_off + 30, end_off + 3 * 365, size=int((kind == 1).sum()))
    m = kind == 2
    vf[m] = r.integers(tstart, end_off + 180, size=int(m.sum()))
    m = kind == 3
    vt[m] = r.integers(tstart - 400, end_off, size=int(m.sum()))
    vt[m] = np.maximum(vt[m], vf[m] + 30)
    m = kind == 4
    vf[m] = r.integers(end_off + 1, end_off + 200, size=int(m.sum()))
    m = kind == 5
    vf[m] = r.integers(tstart - 8 * 365, tstart - 2 * 365, size=int(m.sum()))
    vt[m] = r.integers(tstart - 365, tstart - 1, size=int(m.sum()))
    status = np.array(["CERTIFIED"] * ros_idx.size, dtype=object)
    status[kind == 2] = "PENDING"
    status[kind == 3] = "REVOKED"
    keep = kind != 6
    c_person, c_vf, c_vt, c_status = ros_idx[keep], vf[keep], vt[keep], status[keep]
    # renewals: an older expired certification before the current one
    renew = (kind[keep] == 0) & (r.random(c_person.size) < 0.05)
    old_vf = c_vf[renew] - r.integers(365, 4 * 365, size=int(renew.sum()))
    old_vt = c_vf[renew] - 1
    # certified people who are not claimed (the State's file covers everyone)
    nonros = np.flatnonzero(~rostered)
    extra_p = nonros[r.random(nonros.size) < 0.02]
    c_person = np.concatenate([c_person, c_person[renew], extra_p])
    c_vf = np.concatenate(
        [c_vf, old_vf, r.integers(tstart - 6 * 365, tstart + 200, size=extra_p.size)]
    )
    c_vt = np.concatenate([c_vt, old_vt, np.full(extra_p.size, -1_000_000)])
    c_status = np.concatenate(
        [c_status, np.full(int(renew.sum()) + extra_p.size, "CERTIFIED", dtype=object)]
    )
    corder = np.lexsort((c_person, c_vf))  # ids in order of issue
    c_person, c_vf, c_vt, c_status = c_person[corder], c_vf[corder], c_vt[corder], c_status[corder]
    C = c_person.size
    c_dashed = r.random(C) < 0.5
    cert_no = int(r.integers(1, 1_000)) + np.arange(C) + np.cumsum(r.integers(0, 3, size=C))
    certifications = pl.DataFrame(
        {
            "ssn": pl.select(
                pl.when(pl.lit(pl.Series(c_dashed)))
                .then(pl.lit(ssn_dashed.gather(c_person)))
                .otherwise(pl.lit(ssn_plain.gather(c_person)))
            ).to_series(),
            "certification_id": pl.select(pl.format("C-{}", _zfill(cert_no, 6))).to_series(),
            "status": pl.Series(c_status.astype(str)),
            "valid_from": _dates(c_vf, d0),
            "valid_to": _dates(np.where(c_vt < -500_000, 0, c_vt), d0),
        }
    ).with_columns(
        pl.when(pl.lit(pl.Series(c_vt < -500_000)))
        .then(None)
        .otherwise(pl.col("valid_to"))
        .alias("valid_to")
    )

    # ---------------------------------------------------------------- employer rates
    r = _rng(seed, "employer_rates")
    rate_emp = np.repeat(np.arange(E), 3)
    rate_year = np.tile(np.arange(3), E)
    missing = r.random(E) < 0.03
    if not missing.any():
        missing[_pick(r, np.ones(E, dtype=bool))] = True
    miss_year = r.integers(0, 3, size=E)
    keep_r = ~(missing[rate_emp] & (miss_year[rate_emp] == rate_year))
    ui = np.round(r.uniform(*UI_RATE_RANGE, size=3 * E), 4)
    di = np.round(r.uniform(*DI_RATE_RANGE, size=3 * E), 4)
    july1 = np.array([(date(t - 2 + y, 7, 1) - d0).days for y in range(3)])
    employer_rates = pl.DataFrame(
        {
            "employer_id": employer_id_s.gather(rate_emp[keep_r]),
            "rate_year_start": _dates(july1[rate_year[keep_r]], d0),
            "ui_rate": ui[keep_r],
            "di_rate": di[keep_r],
        }
    )

    # ---------------------------------------------------------------- write
    out_dir.mkdir(parents=True, exist_ok=True)
    pay_dir = out_dir / "payroll"
    pay_dir.mkdir(exist_ok=True)
    for stale in pay_dir.glob("payroll_*.csv"):
        stale.unlink()
    n_files = (E + EMPLOYERS_PER_FILE - 1) // EMPLOYERS_PER_FILE
    width = max(3, len(str(n_files)))
    # rows are grouped by employer in employer order: slice at employer boundaries
    rows_per_employer = np.bincount(emp_of, weights=count, minlength=E).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(rows_per_employer)])
    for i in range(n_files):
        a = int(bounds[i * EMPLOYERS_PER_FILE])
        b = int(bounds[min((i + 1) * EMPLOYERS_PER_FILE, E)])
        _write(
            payroll.slice(a, b - a), pay_dir / f"payroll_{i + 1:0{width}d}.csv", float_precision=2
        )
    _write(applications, out_dir / "applications.csv")
    _write(roster.select(SUBMITTED_COLUMNS["roster"]), out_dir / "roster.csv")
    _write(
        certifications.select(SUBMITTED_COLUMNS["certifications"]), out_dir / "certifications.csv"
    )
    _write(
        employer_rates.select(SUBMITTED_COLUMNS["employer_rates"]),
        out_dir / "employer_rates.csv",
        float_precision=4,
    )

    return GenerateSummary(
        out_dir=out_dir,
        employers=E,
        employees=N,
        payroll_rows=R,
        applications=A,
        rostered=int(ros_idx.size),
        files=n_files,
        roster_rows=roster.height,
        certifications=C,
        employer_rates=employer_rates.height,
    )
