"""What a synthetic submission holds: the payroll rows of every pay period, the applications,
the roster, the certifications and the employer rates, built from the population
(``population``) with one random stream each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import polars as pl

from transforms.schema import SUBMITTED_COLUMNS, WAGE_CATEGORIES
from transforms.synthetic.knobs import (
    COUNTY_SEATS,
    DI_RATE_RANGE,
    NJ_COUNTIES,
    STREETS,
    UI_RATE_RANGE,
    calendar_periods,
    day_dates,
    pick,
    stream,
    zfill,
)
from transforms.synthetic.population import (
    Calendar,
    Employees,
    Employers,
    MinimumWage,
    Picks,
    Wages,
)


@dataclass
class PayPeriods:
    """Every pay period of every employer (grouped by employer, in order)."""

    p_start: np.ndarray  # day offsets
    p_end: np.ndarray
    per_emp: np.ndarray  # employer of each period
    uinv: np.ndarray  # index of each period into the distinct periods of period_mw
    period_mw: np.ndarray  # (4, distinct periods): highest minimum wage on any day, cents


def build_pay_periods(er: Employers, cal: Calendar, mw: MinimumWage) -> PayPeriods:
    """Weekly and biweekly periods from each employer's anchor (they run across January 1 and
    July 1); semimonthly and monthly periods on the calendar."""
    t, d0, end_off, freq, anchor, period_len = cal.t, cal.d0, cal.end_off, er.freq, er.anchor, er.period_len
    semi_s, semi_e = calendar_periods(d0, range(t - 2, t + 1), semimonthly=True)
    mon_s, mon_e = calendar_periods(d0, range(t - 2, t + 1), semimonthly=False)
    n_per = np.where(
        freq <= 1,
        (end_off - anchor) // period_len + 1,
        np.where(freq == 2, semi_s.size, mon_s.size),
    )
    P = int(n_per.sum())
    per_emp = np.repeat(np.arange(er.E), n_per)
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
        col = np.minimum(us + d, ue) + mw.shift
        period_mw = np.maximum(period_mw, mw.mw_day[:, col])
    return PayPeriods(p_start, p_end, per_emp, uinv, period_mw)


@dataclass
class Ids:
    """The submitted identifiers: employer ids, employee ids, each employee's ssn (two ways)."""

    employer_id: pl.Series
    employee_id: pl.Series
    ssn_dashed: pl.Series
    ssn_plain: pl.Series

    @classmethod
    def of(cls, er: Employers, emp: Employees) -> Ids:
        employer_id_s = pl.Series("employer_id", er.employer_num.astype(np.int64)).cast(pl.String)
        employee_id_s = pl.select(
            pl.format("E{}", zfill(emp.employee_no, 6)).alias("employee_id")
        ).to_series()
        area_s, group_s, serial_s = (zfill(emp.ssn_area, 3), zfill(emp.ssn_group, 2), zfill(emp.ssn_serial, 4))
        ssn_parts = pl.select(
            pl.concat_str([area_s, pl.lit("-"), group_s, pl.lit("-"), serial_s]).alias("dashed"),
            pl.concat_str([area_s, group_s, serial_s]).alias("plain"),
        )
        return cls(employer_id_s, employee_id_s, ssn_parts["dashed"], ssn_parts["plain"])


@dataclass
class Payroll:
    frame: pl.DataFrame  # the payroll rows, grouped by employer in employer order
    count: np.ndarray  # rows per employee


def build_payroll(seed: int, er: Employers, emp: Employees, wages: Wages, periods: PayPeriods, cal: Calendar,
                  ids: Ids) -> Payroll:
    """One row per pay period an employee is employed in: hours from the weekly hours of the
    period's year (prorated at hire and leave, with noise; now and then an unpaid period), paid
    at the higher of the nominal rate and the period's minimum wage; employer taxes at the
    employer's rate."""
    BIG = np.int64(1 << 20)
    p_start, p_end, end_off, emp_of = periods.p_start, periods.p_end, cal.end_off, emp.emp_of
    key_start = periods.per_emp * BIG + (p_start + 64)
    key_end = periods.per_emp * BIG + (p_end + 64)
    lo_key = emp_of * BIG + np.clip(emp.hire, -63, end_off + 64) + 64
    hi_key = emp_of * BIG + np.clip(emp.leave, -63, end_off + 64) + 64
    first_p = np.searchsorted(key_end, lo_key, side="left")
    last_p = np.searchsorted(key_start, hi_key, side="right")
    count = np.where(emp.no_payroll, 0, np.maximum(last_p - first_p, 0))
    R = int(count.sum())
    row_emp = np.repeat(np.arange(emp.N), count)
    row_first = np.concatenate([[0], np.cumsum(count)[:-1]])
    pidx = first_p[row_emp] + (np.arange(R) - row_first[row_emp])
    s = p_start[pidx]
    e = p_end[pidx]
    days = e - s + 1
    overlap = np.minimum(e, emp.leave[row_emp]) - np.maximum(s, emp.hire[row_emp]) + 1
    yidx = (s >= cal.jan1[0]).astype(np.int64) + (s >= cal.jan1[1])

    r = stream(seed, "hours")
    noise = np.clip(1.0 + 0.05 * r.standard_normal(R), 0.7, 1.3)
    hours = emp.weekly_h[row_emp, yidx] * days / 7.0 * (overlap / days) * noise
    hours_c = np.rint(hours * 100).astype(np.int64)
    hours_c[r.random(R) < 0.003] = 0  # an unpaid period now and then
    rate_c = np.maximum(wages.nominal[row_emp, yidx], periods.period_mw[emp.cat[row_emp], periods.uinv[pidx]])
    wages_c = (hours_c * rate_c + 50) // 100  # round half up to the cent
    taxes_c = (wages_c * er.tax_bp[emp_of[row_emp]] + 5_000) // 10_000

    people = pl.DataFrame(
        {
            "employer_id": ids.employer_id.gather(emp_of),
            "employee_id": ids.employee_id,
            "ssn": pl.select(
                pl.when(pl.lit(pl.Series(er.dashed_ssn[emp_of])))
                .then(pl.lit(ids.ssn_dashed))
                .otherwise(pl.lit(ids.ssn_plain))
            ).to_series(),
        }
    )
    frame = pl.DataFrame(
        {
            "employer_id": people["employer_id"].gather(row_emp),
            "employee_id": people["employee_id"].gather(row_emp),
            "ssn": people["ssn"].gather(row_emp),
            "period_start": day_dates(s, cal.d0),
            "period_end": day_dates(e, cal.d0),
            "hours": hours_c / 100.0,
            "gross_wages": wages_c / 100.0,
            "employer_taxes": taxes_c / 100.0,
        }
    ).select(SUBMITTED_COLUMNS["payroll"])
    return Payroll(frame, count)


@dataclass
class Applications:
    frame: pl.DataFrame
    app_emp: np.ndarray  # employer of each application (ids follow the order of receipt)


def build_applications(seed: int, er: Employers, emp: Employees, cal: Calendar, ids: Ids) -> Applications:
    """One application per employer received in the first half of t+1, a few late (after the
    general and tipped deadline, guaranteed once where it matters) and a few duplicates (a later
    application of the same employer, guaranteed once)."""
    t, d0, E = cal.t, cal.d0, er.E
    r = stream(seed, "applications")
    recv_day = r.integers(
        (date(t + 1, 1, 15) - d0).days, (date(t + 1, 6, 30) - d0).days + 1, size=E
    )
    late = r.random(E) < 0.02
    # late matters for general and tipped (their deadline is the earlier one)
    gt = np.bincount(emp.emp_of, weights=emp.rostered & np.isin(emp.cat, (0, 1)), minlength=E) > 0
    if not (late & gt).any():
        late[pick(r, gt)] = True
    late_lo, late_hi = (date(t + 2, 1, 2) - d0).days, (date(t + 2, 3, 31) - d0).days
    recv_day[late] = r.integers(late_lo, late_hi + 1, size=int(late.sum()))
    recv_sec = recv_day * 86_400 + r.integers(8 * 60, 18 * 60, size=E) * 60
    dup = r.random(E) < 0.02
    if not dup.any():
        dup[pick(r, np.ones(E, dtype=bool))] = True
    dup_idx = np.flatnonzero(dup)
    # a later day, again in office hours (a time of day from the clock would fall, once in a
    # while, in the hour skipped when daylight saving time starts: not a real New Jersey time)
    dup_days = r.integers(1, 60, size=dup_idx.size)
    dup_sec = (recv_day[dup_idx] + dup_days) * 86_400 + r.integers(8 * 60, 18 * 60, size=dup_idx.size) * 60
    app_emp = np.concatenate([np.arange(E), dup_idx])
    app_sec = np.concatenate([recv_sec, dup_sec])
    order = np.lexsort((er.employer_num[app_emp], app_sec))  # ids follow the order of receipt
    app_emp, app_sec = app_emp[order], app_sec[order]
    A = app_emp.size
    app_no = np.arange(1, A + 1)
    epoch_sec = (d0 - date(1970, 1, 1)).days * 86_400
    frame = pl.DataFrame(
        {
            "application_id": pl.select(pl.format(f"APP-{t}-{{}}", zfill(app_no, 6))).to_series(),
            "employer_id": ids.employer_id.gather(app_emp),
            "employer_name": pl.Series(er.names[app_emp].astype(str)),
            "county": pl.Series(np.array(NJ_COUNTIES)[er.county[app_emp]]),
            "tax_type": pl.Series(er.tax_type[app_emp]),
            "tax_year": pl.Series(np.full(A, t, dtype=np.int64)),
            "received_at": pl.Series((app_sec + epoch_sec) * 1_000_000).cast(pl.Datetime("us")),
        }
    ).select(SUBMITTED_COLUMNS["applications"])
    # the employer's mailing address (optional column, for its documents): a street of the
    # employer's number in its county seat (no draw of the generator: the rest stays as it was)
    num = er.employer_num[app_emp]
    frame = frame.with_columns(pl.Series("employer_address", [
        f"{10 + n % 890} {STREETS[n % len(STREETS)]}; {COUNTY_SEATS[c]}" for n, c in zip(num, er.county[app_emp], strict=True)]))
    return Applications(frame, app_emp)


def build_roster(er: Employers, emp: Employees, apps: Applications, ids: Ids) -> pl.DataFrame:
    """Each application lists the rostered employees of its employer (a duplicate repeats them)."""
    ros_idx = np.flatnonzero(emp.rostered)
    app_emp = apps.app_emp
    app_of_emp_order = np.argsort(app_emp, kind="stable")
    ros_per_emp = np.bincount(emp.emp_of[ros_idx], minlength=er.E)
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
    return pl.DataFrame(
        {
            "application_id": apps.frame["application_id"].gather(roster_app),
            "employee_id": ids.employee_id.gather(roster_emp),
            "wage_category": pl.Series(np.array(WAGE_CATEGORIES)[emp.cat[roster_emp]]),
        }
    )


def build_certifications(seed: int, emp: Employees, wages: Wages, cal: Calendar, ids: Ids,
                         picks: Picks) -> pl.DataFrame:
    """The State's certifications of the rostered employees' impairments: mostly certified, some
    pending, revoked, granted only after the tax year, expired before it or missing (each
    guaranteed once), with renewals, and certified people nobody claims (the State's file covers
    everyone)."""
    r = stream(seed, "certifications")
    ros_idx = np.flatnonzero(emp.rostered)
    tstart = (date(cal.t, 1, 1) - cal.d0).days
    end_off = cal.end_off
    kind = r.choice(7, size=ros_idx.size, p=(0.70, 0.08, 0.05, 0.05, 0.04, 0.03, 0.05))
    # 0 certified open-ended, 1 certified with an end after the tax year, 2 pending,
    # 3 revoked, 4 certified only after the tax year, 5 expired before it, 6 no certification
    must_fail = pick(r, emp.ros_pay[ros_idx] & ~np.isin(ros_idx, picks.taken))
    kind[must_fail] = 6
    picks.taken = np.concatenate([picks.taken, ros_idx[must_fail]])
    at_mw = pick(r, emp.ros_pay[ros_idx] & ~wages.premium[ros_idx] & ~np.isin(ros_idx, picks.taken))
    kind[at_mw] = 0  # certified and at the minimum wage (nominal 0): a plain eligible case
    for k_ in (2, 3, 4, 6):  # every kind of certification problem at least once
        if not (kind == k_).any():
            kind[pick(r, (kind == 0) & ~np.isin(np.arange(kind.size), at_mw))] = k_
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
    return _certification_rows(r, emp, ros_idx[keep], vf[keep], vt[keep], status[keep], kind[keep] == 0, tstart,
                               cal, ids)


def _certification_rows(r: np.random.Generator, emp: Employees, c_person, c_vf, c_vt, c_status, open_ended,
                        tstart: int, cal: Calendar, ids: Ids) -> pl.DataFrame:
    """The certification file: the rostered employees' certifications, renewals (an older
    expired certification before some current ones) and certified people nobody claims, in
    order of issue."""
    renew = open_ended & (r.random(c_person.size) < 0.05)
    old_vf = c_vf[renew] - r.integers(365, 4 * 365, size=int(renew.sum()))
    old_vt = c_vf[renew] - 1
    # certified people who are not claimed (the State's file covers everyone)
    nonros = np.flatnonzero(~emp.rostered)
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
    return pl.DataFrame(
        {
            "ssn": pl.select(
                pl.when(pl.lit(pl.Series(c_dashed)))
                .then(pl.lit(ids.ssn_dashed.gather(c_person)))
                .otherwise(pl.lit(ids.ssn_plain.gather(c_person)))
            ).to_series(),
            "certification_id": pl.select(pl.format("C-{}", zfill(cert_no, 6))).to_series(),
            "status": pl.Series(c_status.astype(str)),
            "valid_from": day_dates(c_vf, cal.d0),
            "valid_to": day_dates(np.where(c_vt < -500_000, 0, c_vt), cal.d0),
        }
    ).with_columns(
        pl.when(pl.lit(pl.Series(c_vt < -500_000)))
        .then(None)
        .otherwise(pl.col("valid_to"))
        .alias("valid_to")
    )


def build_employer_rates(seed: int, er: Employers, cal: Calendar, ids: Ids) -> pl.DataFrame:
    """UI and DI rates of each employer for the rate years from July 1 of t-2, t-1 and t; a few
    employers miss one rate year (guaranteed once)."""
    E, t, d0 = er.E, cal.t, cal.d0
    r = stream(seed, "employer_rates")
    rate_emp = np.repeat(np.arange(E), 3)
    rate_year = np.tile(np.arange(3), E)
    missing = r.random(E) < 0.03
    if not missing.any():
        missing[pick(r, np.ones(E, dtype=bool))] = True
    miss_year = r.integers(0, 3, size=E)
    keep_r = ~(missing[rate_emp] & (miss_year[rate_emp] == rate_year))
    ui = np.round(r.uniform(*UI_RATE_RANGE, size=3 * E), 4)
    di = np.round(r.uniform(*DI_RATE_RANGE, size=3 * E), 4)
    july1 = np.array([(date(t - 2 + y, 7, 1) - d0).days for y in range(3)])
    return pl.DataFrame(
        {
            "employer_id": ids.employer_id.gather(rate_emp[keep_r]),
            "rate_year_start": day_dates(july1[rate_year[keep_r]], d0),
            "ui_rate": ui[keep_r],
            "di_rate": di[keep_r],
        }
    )
