"""No decision on input it could not read (spec section 7): the applications a rejected line holds.

An application whose credit could depend on a rejected line is ``HELD``: not decided, no cap used,
nothing final. A rejected payroll, roster or application line holds the applications it could
belong to:
- those of its employer (and of the employer's group) when its employer id is readable and its
  employee id or ssn is that of a person the application claims, or is unreadable;
- every application of the employers named in the same file when its employer id is unreadable
  (a payroll, roster or application line alike: a totals line with ``TOTAL`` in the employer id
  column; the employers a file names are those of its rows and the applicants of the applications
  it names);
- a roster line: its application (every application the file names when its application id is
  unreadable); an application line: the application it gives again and the applications of its
  employer's group (one of them could be a duplicate of it).
An exact copy of a line (``duplicate_row``) holds nothing: the first copy is read. The lines are
the lake's standing rejects (``ingest.lake.standing_rejects``): a corrected file that supersedes
them, or a later roster or application of the same application, releases the applications they
held, and the next run decides those like new ones. Pure functions over Polars frames.
"""

from __future__ import annotations

import polars as pl

from transforms.rules.reasons import INPUT_REJECTED

HOLDING_DATASETS = ("payroll", "roster", "applications")
NOT_HOLDING_RULES = frozenset({"duplicate_row"})
HELD_SCHEMA = {"application_id": pl.String, "file": pl.String, "line": pl.Int64, "columns": pl.String,
               "rules": pl.String, "messages": pl.String}
_LINE = ["file", "line", "columns", "rules", "messages"]


def holding_lines(standing: pl.DataFrame) -> pl.DataFrame:
    """The standing rejected lines that can hold an application (payroll, roster, applications;
    not an exact copy of another line)."""
    rules = pl.col("rules").fill_null("").str.split(";")
    only_copies = rules.list.eval(pl.element().is_in(list(NOT_HOLDING_RULES))).list.all()
    return standing.filter(pl.col("dataset").is_in(HOLDING_DATASETS) & ~(only_copies & (pl.col("rules") != "")))


def _readable_employer() -> pl.Expr:
    return pl.col("employer_id").fill_null("").str.contains(r"^\d{9}$")


def held_applications(
    apps: pl.DataFrame,
    members: pl.DataFrame,
    claims: pl.DataFrame,
    identities: pl.DataFrame,
    lines: pl.DataFrame,
    named: dict[str, dict[str, list[str]]],
) -> pl.DataFrame:
    """``HELD_SCHEMA``: each application of ``apps`` (application_id, employer_id) with the
    rejected ``lines`` (``holding_lines``) that hold it.

    ``members``: application_id, member_id (the applicant and its group, ``employer.group_members``);
    ``claims``: application_id, roster_employer_id, employee_id, ssn (the claimed persons);
    ``identities``: employer_id, employee_id, ssn_hash of the payroll rows read (to know whose a
    line without a readable ssn is); ``named``: path -> {employers, applications} of each file."""
    if lines.height == 0 or apps.height == 0:
        return pl.DataFrame(schema=HELD_SCHEMA)
    app_ids = apps.select("application_id")
    mem = members.select("application_id", "member_id").unique()
    named_emp = pl.DataFrame(
        [(p, e) for p, ids in named.items() for e in ids.get("employers", [])],
        schema={"path": pl.String, "named_employer": pl.String}, orient="row")
    named_app = pl.DataFrame(
        [(p, a) for p, ids in named.items() for a in ids.get("applications", [])],
        schema={"path": pl.String, "named_application": pl.String}, orient="row")
    # the employers a file names: those of its rows, and the applicants of the applications it names
    applicants = apps.select(pl.col("application_id").alias("named_application"),
                             pl.col("employer_id").alias("named_employer"))
    named_emp = pl.concat([named_emp, named_app.join(applicants, on="named_application", how="inner").select(
        "path", "named_employer")]).unique()
    # the line's own application id (roster and application lines) beside the applications it holds
    lines = lines.with_row_index("__l").rename({"application_id": "line_app"})
    out: list[pl.DataFrame] = []

    def by_named_employers(sel: pl.DataFrame) -> pl.DataFrame:
        return sel.join(named_emp, on="path", how="inner").join(
            mem, left_on="named_employer", right_on="member_id", how="inner").select("__l", "application_id")

    def by_named_applications(sel: pl.DataFrame) -> pl.DataFrame:
        return sel.join(named_app, on="path", how="inner").select(
            "__l", pl.col("named_application").alias("application_id"))

    pay = lines.filter(pl.col("dataset") == "payroll")
    out.append(_payroll_holds(pay.filter(_readable_employer()), mem, claims, identities))
    out.append(by_named_employers(pay.filter(~_readable_employer())))
    # roster: its application (every one the file names when its id is unreadable); a line that gives
    # an employer id it cannot read (empty is the applicant) holds every application of the file's employers
    ros = lines.filter(pl.col("dataset") == "roster")
    out.append(ros.filter(pl.col("line_app").is_not_null()).select("__l", pl.col("line_app").alias("application_id")))
    out.append(by_named_applications(ros.filter(pl.col("line_app").is_null())))
    out.append(by_named_employers(ros.filter(pl.col("employer_id").is_not_null() & ~_readable_employer())))
    # applications: the one it gives again and those of its employer's group; an unreadable employer
    # id (whether or not its application id is readable) holds every application of the file's employers
    app = lines.filter(pl.col("dataset") == "applications")
    out.append(app.filter(pl.col("line_app").is_not_null()).select("__l", pl.col("line_app").alias("application_id")))
    out.append(app.filter(_readable_employer()).join(mem, left_on="employer_id", right_on="member_id", how="inner")
               .select("__l", "application_id"))
    out.append(by_named_applications(app.filter(pl.col("line_app").is_null() & ~_readable_employer())))
    out.append(by_named_employers(app.filter(~_readable_employer())))
    pairs = pl.concat(out).unique().join(app_ids, on="application_id", how="semi")
    return (
        pairs.join(lines.select("__l", *_LINE), on="__l", how="left")
        .select(list(HELD_SCHEMA))
        .cast(HELD_SCHEMA)
        .unique()
        .sort("application_id", "file", "line")
    )



def _payroll_holds(readable: pl.DataFrame, mem: pl.DataFrame, claims: pl.DataFrame,
                   identities: pl.DataFrame) -> pl.DataFrame:
    """``__l, application_id``: the payroll lines with a readable employer id and the applications
    of that employer's group whose claimed person the line could be: its employee id is claimed,
    its ssn is a claimed person's, or it has no readable ssn and its employee id is unreadable,
    unknown, or carries a claimed person's ssn on its other rows."""
    cand = readable.join(mem, left_on="employer_id", right_on="member_id", how="inner")
    keys = claims.select("application_id", pl.col("roster_employer_id").alias("employer_id"), "employee_id",
                         pl.lit(True).alias("__key")).unique()
    persons = claims.filter(pl.col("ssn").is_not_null()).select(
        "application_id", pl.col("ssn").alias("ssn_hash"), pl.lit(True).alias("__person")).unique()
    ids = identities.filter(pl.col("ssn_hash").is_not_null()).select(
        "employer_id", "employee_id", pl.col("ssn_hash").alias("__id_ssn")).unique()
    cand = (
        cand.join(keys, on=["application_id", "employer_id", "employee_id"], how="left")
        .join(persons, on=["application_id", "ssn_hash"], how="left")
        .join(ids, on=["employer_id", "employee_id"], how="left")
        .join(persons.rename({"ssn_hash": "__id_ssn", "__person": "__id_person"}), on=["application_id", "__id_ssn"],
              how="left")
    )
    no_ssn = pl.col("ssn_hash").is_null()
    holds = (
        pl.col("__key").fill_null(False)
        | pl.col("__person").fill_null(False)
        | (no_ssn & pl.col("employee_id").is_null())
        | (no_ssn & pl.col("employee_id").is_not_null() & (pl.col("__id_ssn").is_null() | pl.col("__id_person").fill_null(False)))
    )
    return cand.filter(holds).select("__l", "application_id")

def hold(applications: pl.DataFrame, held: pl.DataFrame, *, released: list[str] | None = None) -> pl.DataFrame:
    """The application totals of ``compute_credits`` with the held ones ``HELD`` /
    ``INPUT_REJECTED`` (their request computed from the lines that were read). ``released``:
    applications an analyst released (``impcredit release``): decided as they stand, never held;
    one that claims no employee is then REJECTED (NO_CREDIT_DUE)."""
    released = released or []
    ids = held.get_column("application_id").unique().implode()
    is_released = pl.col("application_id").is_in(released)
    out = applications.with_columns(
        pl.when(pl.col("application_id").is_in(ids) & ~is_released).then(pl.lit("HELD"))
        .when(is_released & (pl.col("status") == "HELD")).then(pl.lit("REJECTED"))
        .otherwise(pl.col("status")).alias("status"),
        pl.when(pl.col("application_id").is_in(ids) & ~is_released).then(pl.lit(INPUT_REJECTED))
        .when(is_released & (pl.col("status") == "HELD")).then(pl.lit("NO_CREDIT_DUE"))
        .otherwise(pl.col("reasons")).alias("reasons"),
    )
    return out
