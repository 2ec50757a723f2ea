"""Groups of employers under common ownership or control, and fiscal-year filers, laid over a
generated submission (N.J.S.A. 34:11-56a39; spec section 1, "The employer and its tax year").

- Groups: pairs of employers (about one in forty) are members of one group from 2015 on. The
  first of a pair applies for the group: the second files no application of its own, and its
  rostered employees are claimed on the first's roster with the roster's ``employer_id`` naming
  the member that employs them. One pair (when there is one) also shares a person: an employee of
  the second member is paid by the first too, under another employee id (one person, counted once
  over the group).
- Estimate requests (56a40(e); spec section 9): about one employer in twenty asks for help
  estimating its credit during t (``estimate_requests.csv``, received March to September of t), its
  roster repeated under the request id.
- Fiscal filers: a few corporation business tax filers (about one in fifty) apply for the
  privilege period July 1 of t to June 30 of t+1 (tax year t, the year it begins), received July
  1 of t+1; their payroll of January-June of t+1 is written to a file of its own
  (``payroll/payroll_fiscal_<t+1>.csv``), a year after January-June of t with 12% more hours, at
  t+1's minimum wage.

Vectorised over the frames the builders return; deterministic for a seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import polars as pl

from transforms.synthetic.knobs import stream

GROUP_SHARE = 1 / 40
FISCAL_SHARE = 1 / 50
GROWTH = 1.12  # a fiscal filer's hours in January-June of t+1 over those of t


@dataclass
class Layered:
    applications: pl.DataFrame  # with period_start, period_end
    roster: pl.DataFrame  # with employer_id
    control_groups: pl.DataFrame
    fiscal_payroll: pl.DataFrame  # payroll rows of t+1 for the fiscal filers (may be empty)
    shared_payroll: pl.DataFrame  # the rows of the person paid by two members (may be empty)
    groups: int
    fiscal: int
    estimate_requests: pl.DataFrame | None = None  # requests for estimates during t (56a40(e))


def _plain_employers(apps: pl.DataFrame) -> list[str]:
    """Employers with exactly one application (no duplicate), in id order."""
    n = apps.group_by("employer_id").len()
    return sorted(n.filter(pl.col("len") == 1).get_column("employer_id").to_list())


def layer(seed: int, t: int, applications: pl.DataFrame, roster: pl.DataFrame, payroll: pl.DataFrame,
          mw_ratio: float) -> Layered:
    """Groups and fiscal filers over the builders' frames (see the module docstring).
    ``mw_ratio``: t+1's minimum wage over t's (fiscal filers' pay in t+1)."""
    r = stream(seed, "groups")
    plain = _plain_employers(applications)
    n_groups = max(1, int(len(plain) * GROUP_SHARE)) if len(plain) >= 4 else 0
    chosen = sorted(r.choice(len(plain) // 2, size=min(n_groups, len(plain) // 2), replace=False).tolist()) if n_groups else []
    pairs = [(plain[2 * i], plain[2 * i + 1]) for i in chosen]
    groups = pl.DataFrame(
        [(f"G{k + 1:03d}", e, "2015-01-01", None) for k, (a, b) in enumerate(pairs) for e in (a, b)],
        schema={"group_id": pl.String, "employer_id": pl.String, "member_from": pl.String, "member_to": pl.String},
        orient="row",
    )
    apps = applications.with_columns(pl.lit(None, dtype=pl.Date).alias("period_start"),
                                     pl.lit(None, dtype=pl.Date).alias("period_end"))
    ros = roster.with_columns(pl.lit(None, dtype=pl.String).alias("employer_id"))
    app_of = dict(apps.select("employer_id", "application_id").iter_rows())
    if pairs:
        first = {b: a for a, b in pairs}
        second_apps = [app_of[b] for _, b in pairs]
        moved = ros.filter(pl.col("application_id").is_in(second_apps)).with_columns(
            pl.col("application_id").replace_strict({app_of[b]: app_of[a] for a, b in pairs}).alias("application_id"),
            pl.col("application_id").replace_strict({app_of[b]: b for _, b in pairs}).alias("employer_id"),
        )
        ros = pl.concat([ros.filter(~pl.col("application_id").is_in(second_apps)), moved])
        apps = apps.filter(~pl.col("employer_id").is_in(list(first)))
    shared = _shared_person(pairs, roster, app_of, payroll)
    in_groups = {e for p in pairs for e in p}
    cbt = [e for e in plain if e not in in_groups and apps.filter(pl.col("employer_id") == e).get_column(
        "tax_type").to_list() == ["CBT"]]
    n_fiscal = max(1, int(len(plain) * FISCAL_SHARE)) if cbt else 0
    fiscal = sorted(r.choice(cbt, size=min(n_fiscal, len(cbt)), replace=False).tolist()) if n_fiscal else []
    if fiscal:
        fiscal_app = pl.col("employer_id").is_in(fiscal)
        # July 1 of t+1 in office hours, a few minutes apart
        nth = fiscal_app.cast(pl.Int64).cum_sum() - 1
        received = pl.lit(datetime(t + 1, 7, 1, 9, 0)) + pl.duration(minutes=(nth * 7) % 480)
        apps = apps.with_columns(
            pl.when(fiscal_app).then(pl.lit(date(t, 7, 1))).otherwise(pl.col("period_start")).alias("period_start"),
            pl.when(fiscal_app).then(pl.lit(date(t + 1, 6, 30))).otherwise(pl.col("period_end")).alias("period_end"),
            pl.when(fiscal_app).then(received.cast(apps.schema["received_at"])).otherwise(pl.col("received_at"))
            .alias("received_at"),
        )
    reqs, req_roster = _estimate_requests(r, t, apps, ros)
    ros = pl.concat([ros, req_roster]).sort("application_id", "employer_id", "employee_id", nulls_last=False)
    return Layered(apps.sort("application_id"), ros, groups, _next_half_year(payroll, fiscal, t, mw_ratio), shared,
                   len(pairs), len(fiscal), reqs)


REQUEST_SHARE = 1 / 20


def _estimate_requests(r, t: int, apps: pl.DataFrame, roster: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Requests for help estimating the credit during t (about one employer in twenty, received
    from March to September of t), each claiming the employees of the employer's application."""
    cal = apps.filter(pl.col("period_start").is_null()).unique("employer_id", keep="first").sort("application_id")
    n = max(1, int(cal.height * REQUEST_SHARE)) if cal.height else 0
    if n == 0:
        return pl.DataFrame(), roster.clear()
    pick = cal[sorted(r.choice(cal.height, size=n, replace=False).tolist())]
    days = r.integers(0, 200, size=n)
    days[0] %= 30  # one in March: the first quarter's estimate has a request
    minutes = r.integers(9 * 60, 17 * 60, size=n)
    received = [datetime(t, 3, 1) + timedelta(days=int(d), minutes=int(m)) for d, m in zip(days, minutes, strict=True)]
    reqs = pick.select(
        pl.format("EST-{}-{}", pl.lit(t), pl.int_range(1, n + 1).cast(pl.String).str.zfill(4)).alias("request_id"),
        "employer_id", "employer_name", "tax_type", "tax_year",
        pl.Series("received_at", received).dt.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    claimed = roster.join(pick.select("application_id", pl.Series("__req", reqs["request_id"])), on="application_id",
                          how="inner").with_columns(pl.col("__req").alias("application_id")).drop("__req")
    return reqs, claimed


def _shared_person(pairs: list[tuple[str, str]], roster: pl.DataFrame, app_of: dict[str, str],
                   payroll: pl.DataFrame) -> pl.DataFrame:
    """A rostered employee of the first pair's second member, paid by the first member too in
    January-March of each year under another id (``X-`` + the id), with the same ssn."""
    if not pairs:
        return payroll.clear()
    a, b = pairs[0]
    ids = roster.filter(pl.col("application_id") == app_of[b]).get_column("employee_id").sort()
    rows = payroll.filter((pl.col("employer_id") == b) & pl.col("employee_id").is_in(ids.implode()))
    if rows.height == 0:
        return payroll.clear()
    who = rows.get_column("employee_id").sort()[0]
    mine = rows.filter((pl.col("employee_id") == who) & (pl.col("period_start").cast(pl.String).str.slice(5, 2) <= "03"))
    return mine.with_columns(pl.lit(a).alias("employer_id"), pl.lit(f"X-{who}").alias("employee_id"),
                             (pl.col("hours").cast(pl.Float64) / 4).round(2).alias("hours"),
                             (pl.col("gross_wages").cast(pl.Float64) / 4).round(2).alias("gross_wages"),
                             (pl.col("employer_taxes").cast(pl.Float64) / 4).round(2).alias("employer_taxes"))


def _next_half_year(payroll: pl.DataFrame, fiscal: list[str], t: int, mw_ratio: float) -> pl.DataFrame:
    """The fiscal filers' payroll of January-June of t+1: their periods starting in January-June
    of t moved a year on (52 weeks for weekly and biweekly periods, a calendar year for the
    others), paid at t+1's minimum wage."""
    if not fiscal:
        return payroll.clear()
    start, end = pl.col("period_start").cast(pl.Date), pl.col("period_end").cast(pl.Date)
    rows = payroll.filter(pl.col("employer_id").is_in(fiscal) & (start >= date(t, 1, 1)) & (start <= date(t, 6, 30)))
    days = (end - start).dt.total_days() + 1
    weekly = days.is_in([7, 14])
    moved_start = pl.when(weekly).then(start + pl.duration(days=364)).otherwise(start.dt.offset_by("1y"))
    moved_end = pl.when(weekly).then(end + pl.duration(days=364)).otherwise(
        pl.when(end == end.dt.month_end()).then(end.dt.offset_by("1y").dt.month_end()).otherwise(end.dt.offset_by("1y")))
    # the filer grew: 12% more hours in t+1, paid at t+1's minimum wage
    money = lambda c: (pl.col(c).cast(pl.Float64) * mw_ratio * GROWTH).round(2)  # noqa: E731
    return rows.with_columns(moved_start.alias("period_start"), moved_end.alias("period_end"),
                             money("gross_wages").alias("gross_wages"), money("employer_taxes").alias("employer_taxes"),
                             (pl.col("hours").cast(pl.Float64) * GROWTH).round(2).alias("hours")).filter(pl.col("period_end") <= date(t + 1, 6, 30)).sort(
        "employer_id", "employee_id", "period_start")


__all__ = ["Layered", "layer"]
