"""N.J.S.A. 34:11-56a39: "'Employer' means any nongovernmental business entity ... and shall
include all entities related by common ownership or control"; the employee is a person.

Spec section 1 ("The employer and its tax year", "One person, one identity"); register I-14.

- ``group_members``: the applicant and every employer in the same group as the applicant on at
  least one day of T (``control_groups``). A member's rows count on every day (I-14 default) or,
  with ``group_days=membership_days``, only on the days of its membership.
- ``claims``: one row per roster line (``__claim``), naming the member that employs the person
  (``roster_employer_id``, default the applicant).
- ``claim_persons``: the person (``ssn``) of each claim: the ssn on the payroll rows of the
  roster's employer and employee id, else the roster's own ``ssn``.
- ``not_in_control_group``: a roster line whose employer is neither the applicant nor a member.
- ``duplicate_employee``: two roster lines of one application that are the same person, both in
  the group: the first in (employer_id, employee_id) order counts.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

FAR = dt.date(9999, 12, 31)
CLAIM_KEYS = ["application_id", "roster_employer_id", "employee_id"]


def group_members(apps: pl.DataFrame, groups: pl.DataFrame) -> pl.DataFrame:
    """``application_id, member_id, win_from, win_to``: the applicant (no window) and each
    employer in the same group as the applicant on at least one day of T, with the window of
    its membership (``win_to`` null = open). ``apps``: application_id, employer_id, T_start, T_end."""
    own = apps.select(
        "application_id",
        pl.col("employer_id").alias("member_id"),
        pl.lit(None, dtype=pl.Date).alias("win_from"),
        pl.lit(None, dtype=pl.Date).alias("win_to"),
    )
    if groups.height == 0:
        return own
    g = groups.select("group_id", "employer_id", "member_from", "member_to")
    # the applicant's own memberships that overlap T: the days it shares a group with others
    mine = (
        apps.select("application_id", "employer_id", "T_start", "T_end")
        .join(g, on="employer_id", how="inner")
        .with_columns(
            pl.max_horizontal("T_start", "member_from").alias("__a"),
            pl.min_horizontal("T_end", pl.col("member_to").fill_null(FAR)).alias("__b"),
        )
        .filter(pl.col("__a") <= pl.col("__b"))
    )
    others = (
        mine.select("application_id", pl.col("employer_id").alias("__applicant"), "group_id", "__a", "__b")
        .join(g.rename({"employer_id": "member_id"}), on="group_id", how="inner")
        .filter(
            (pl.col("member_from") <= pl.col("__b"))
            & (pl.col("member_to").fill_null(FAR) >= pl.col("__a"))
            & (pl.col("member_id") != pl.col("__applicant"))
        )
        .select("application_id", "member_id", pl.col("member_from").alias("win_from"),
                pl.col("member_to").alias("win_to"))
    )
    return pl.concat([own, others]).unique(maintain_order=True)


def claims(roster: pl.LazyFrame, apps: pl.DataFrame) -> pl.DataFrame:
    """One row per roster line of the applications (the first of exact repeats), numbered
    ``__claim``: the application's columns, ``roster_employer_id`` (default the applicant),
    ``employee_id``, ``wage_category`` and the roster's ``roster_ssn`` (hash, may be null)."""
    app_cols = [c for c in apps.columns if c != "application_id"]
    out = (
        roster.select("application_id", "employee_id", "wage_category",
                      pl.col("employer_id").alias("__roster_employer"), pl.col("ssn_hash").alias("roster_ssn"))
        .join(apps.lazy(), on="application_id", how="inner")
        .with_columns(pl.coalesce("__roster_employer", "employer_id").alias("roster_employer_id"))
        .drop("__roster_employer")
        .unique(CLAIM_KEYS, keep="first", maintain_order=True)
        .collect()
    )
    return out.select("application_id", *app_cols, "roster_employer_id", "employee_id", "wage_category",
                      "roster_ssn").with_row_index("__claim").with_columns(pl.col("__claim").cast(pl.Int64))


def fill_ssn_from_roster(payroll: pl.LazyFrame, roster: pl.LazyFrame, apps: pl.LazyFrame) -> pl.LazyFrame:
    """Payroll rows without an ssn take the ``ssn`` of the roster line of the same employer and
    employee id (spec section 1: exports that carry none, or a masked one). Only the rows without
    one are joined (a roster that gives no ssn leaves the payroll as it is)."""
    given = (
        roster.filter(pl.col("ssn_hash").is_not_null())
        .join(apps.select("application_id", pl.col("employer_id").alias("__applicant")), on="application_id", how="inner")
        .select(pl.coalesce("employer_id", "__applicant").alias("employer_id"), "employee_id",
                pl.col("ssn_hash").alias("__roster_ssn"))
        .unique(["employer_id", "employee_id"], keep="first", maintain_order=True)
        .collect()
    )
    if given.height == 0:
        return payroll
    blank = payroll.filter(pl.col("ssn_hash").is_null()).join(given.lazy(), on=["employer_id", "employee_id"], how="left")
    return pl.concat([
        payroll.filter(pl.col("ssn_hash").is_not_null()),
        blank.with_columns(pl.col("__roster_ssn").alias("ssn_hash")).drop("__roster_ssn"),
    ])


def claim_persons(claims_: pl.DataFrame, payroll: pl.LazyFrame) -> pl.DataFrame:
    """``claims_`` with ``ssn``: the one on the payroll rows of the roster's employer and
    employee id (any year), else the roster's own ssn; null when neither has one."""
    keys = claims_.select(pl.col("roster_employer_id").alias("employer_id"), "employee_id").unique()
    on_rows = (
        payroll.select("employer_id", "employee_id", "ssn_hash")
        .join(keys.lazy(), on=["employer_id", "employee_id"], how="semi")
        .filter(pl.col("ssn_hash").is_not_null())
        .group_by("employer_id", "employee_id")
        .agg(pl.col("ssn_hash").min().alias("__row_ssn"))
        .collect()
    )
    return (
        claims_.join(on_rows, left_on=["roster_employer_id", "employee_id"], right_on=["employer_id", "employee_id"],
                     how="left")
        .with_columns(pl.coalesce("__row_ssn", "roster_ssn").alias("ssn"))
        .drop("__row_ssn")
    )


def in_group(claims_: pl.DataFrame, members: pl.DataFrame) -> pl.Series:
    """Whether each claim's ``roster_employer_id`` is the applicant or a member for T."""
    hits = claims_.select("__claim", "application_id", "roster_employer_id").join(
        members.select("application_id", pl.col("member_id").alias("roster_employer_id")).unique(),
        on=["application_id", "roster_employer_id"], how="semi",
    )
    return claims_.get_column("__claim").is_in(hits.get_column("__claim").implode())


def not_in_control_group() -> pl.Expr:
    """NOT_IN_CONTROL_GROUP: the roster's employer is neither the applicant nor a member of its
    group for T (the person is still measured on the group's rows)."""
    return ~pl.col("__in_group")


def duplicate_employee() -> pl.Expr:
    """DUPLICATE_EMPLOYEE: a roster line of the application that is the same person as an
    earlier one in (employer_id, employee_id) order, both employed in the group (a line that is
    NOT_IN_CONTROL_GROUP, or whose person is unknown, takes no part in the test)."""
    eligible = pl.col("__in_group") & pl.col("ssn").is_not_null()
    person = pl.when(eligible).then(pl.col("ssn"))
    # employer ids are 9 digits: the concatenation sorts as the pair does
    order = pl.concat_str([pl.col("roster_employer_id"), pl.col("employee_id")], separator="\x1f")
    first = order.filter(eligible).min().over(["application_id", person])
    return (eligible & (order != first)).fill_null(False)
