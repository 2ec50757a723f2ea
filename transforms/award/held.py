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

from transforms.rules.declared import FIGURES
from transforms.rules.reasons import DECLARED_TOTALS_DIFFER, INPUT_REJECTED, MISSING_EMPLOYER_RATES
from transforms.schema import DOUBTFUL_RULES

HOLDING_DATASETS = ("payroll", "roster", "applications")
NOT_HOLDING_RULES = frozenset({"duplicate_row"})
# why an application is held (held.csv's ``source``): a line not read (``input``), a line read but
# doubtful (``doubtful``), the employer's declared totals that differ from what was read
# (``declared_totals``), the agency's own missing data (``agency``); listed for the analyst agency first
SOURCES = ("agency", "input", "doubtful", "declared_totals")
HELD_SCHEMA = {"application_id": pl.String, "source": pl.String, "file": pl.String, "line": pl.Int64,
               "columns": pl.String, "rules": pl.String, "messages": pl.String, "employee_id": pl.String,
               "figure": pl.String, "declared": pl.Float64, "read": pl.Float64,
               "file_sha256": pl.String, "source_sheet": pl.String, "rate_years": pl.String}
# what held.csv shows (an agency row's message names its ``rate_years``: the run page shows them alone)
HELD_CSV = [c for c in HELD_SCHEMA if c not in ("file_sha256", "source_sheet", "rate_years")]
_LINE = ["file", "line", "columns", "rules", "messages", "employee_id", "file_sha256", "source_sheet"]
LINE_KEY = ["file_sha256", "source_sheet", "line"]


def holding_lines(standing: pl.DataFrame, confirmed: pl.DataFrame | None = None) -> pl.DataFrame:
    """The standing rejected lines that can hold an application (payroll, roster, applications;
    not an exact copy of another line; not a doubtful line a release confirmed: ``confirmed``,
    ``LINE_KEY`` of ``acts.confirmed_lines``)."""
    rules = pl.col("rules").fill_null("").str.split(";")
    only_copies = rules.list.eval(pl.element().is_in(list(NOT_HOLDING_RULES))).list.all()
    out = standing.filter(pl.col("dataset").is_in(HOLDING_DATASETS) & ~(only_copies & (pl.col("rules") != "")))
    if confirmed is not None and confirmed.height:
        out = out.join(confirmed.select(LINE_KEY).cast({"line": pl.Int64}), on=LINE_KEY, how="anti", nulls_equal=True)
    return out


def line_source() -> pl.Expr:
    """``doubtful`` for a line rejected only because its values look unlikely (``schema.DOUBTFUL_RULES``:
    read, stored, held until confirmed), else ``input`` (not read)."""
    rules = pl.col("rules").fill_null("").str.split(";").list.eval(pl.element().filter(pl.element() != ""))
    doubtful = rules.list.eval(pl.element().is_in(list(DOUBTFUL_RULES))).list.all() & (rules.list.len() > 0)
    return pl.when(doubtful).then(pl.lit("doubtful")).otherwise(pl.lit("input"))


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
        .with_columns(line_source().alias("source"), *[pl.lit(None, dtype=HELD_SCHEMA[c]).alias(c)
                                                        for c in ("figure", "declared", "read", "rate_years")])
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

def by_file(held: pl.DataFrame, named: dict[str, dict]) -> pl.DataFrame:
    """``held`` with the lines of each file none of whose lines was read said once per application
    and file (``named``: path -> its ``unread`` reason and ``sha256``): the file, no line, why no
    line was read (the PEO's EIN, a column missing from every line); the other rows as they are."""
    unread = pl.DataFrame([(ids["sha256"], path, ids["unread"]) for path, ids in named.items() if ids.get("unread")],
                          schema={"file_sha256": pl.String, "__path": pl.String, "__why": pl.String}, orient="row")
    if not unread.height or not held.height:
        return held
    whole = (pl.col("source") == "input") & pl.col("file_sha256").is_in(unread.get_column("file_sha256").implode())
    said = held.filter(whole).join(unread, on="file_sha256").group_by("application_id", "file_sha256").agg(
        pl.col("__path").first().alias("file"), pl.col("rules").unique().sort().str.join(";").alias("rules"),
        pl.col("__why").first().alias("messages"))
    said = said.with_columns(pl.lit("input").alias("source"), *[pl.lit(None, dtype=HELD_SCHEMA[c]).alias(c) for c in (
        "line", "columns", "employee_id", "figure", "declared", "read", "source_sheet", "rate_years")]).select(list(HELD_SCHEMA))
    return pl.concat([held.filter(~whole), said.cast(HELD_SCHEMA)]).sort("application_id", "file", "line", nulls_last=False)


def declared_holds(reconciliation: pl.DataFrame | None) -> pl.DataFrame:
    """``HELD_SCHEMA`` rows of the declared totals that differ from what was read (spec section 1):
    the roster line that declares them, the person, the figure, declared and read."""
    if reconciliation is None or not reconciliation.height:
        return pl.DataFrame(schema=HELD_SCHEMA)
    differ = reconciliation.filter(pl.col("differs"))
    words = pl.col("figure").replace_strict(FIGURE_WORDS, default=pl.col("figure"))
    unit = pl.when(pl.col("figure").str.contains("hours")).then(pl.lit(" h")).otherwise(pl.lit(""))
    return differ.select(
        "application_id", pl.lit("declared_totals").alias("source"), pl.col("source_file").alias("file"),
        pl.col("source_line").alias("line"), pl.col("figure").alias("columns"), pl.lit(DECLARED_TOTALS_DIFFER).alias("rules"),
        pl.format("{} of employee {} ({} to {}): declared {}{}, read {}{}; they differ by {}, more than the {}{} allowed",
                  words, "employee_id", "period_start", "period_end", _fmt("declared"), unit, _fmt("read"), unit,
                  _fmt_expr((pl.col("declared") - pl.col("read")).abs()), _fmt("tolerance"), unit).alias("messages"),
        "employee_id", "figure", "declared", "read", pl.lit(None, dtype=pl.String).alias("file_sha256"),
        pl.lit(None, dtype=pl.String).alias("source_sheet"), pl.lit(None, dtype=pl.String).alias("rate_years"),
    ).cast(HELD_SCHEMA)


FIGURE_WORDS = {c: ("hours" if FIGURES[c][0] == "hours" else "gross wages" if FIGURES[c][0] == "gross_wages"
                    else "employer payroll taxes") + (" of the prior calendar year" if FIGURES[c][1] == "prior"
                                                       else " of the tax period") for c in FIGURES}


def _fmt(col: str) -> pl.Expr:
    return _fmt_expr(pl.col(col))


def _fmt_expr(e: pl.Expr) -> pl.Expr:
    return e.round(2).cast(pl.Decimal(20, 2)).cast(pl.String)


def rate_years(lacking: pl.DataFrame | None) -> pl.DataFrame:
    """``application_id, rate_years``: the rate years the agency's table lacks for each application
    (``rules.eligibility.lacking_rates``), in words: "the rate year starting 2022-07-01 of employer
    855543765", ``;``-joined."""
    if lacking is None or not lacking.height:
        return pl.DataFrame(schema={"application_id": pl.String, "rate_years": pl.String})
    per_year = lacking.group_by("application_id", "rate_year_start").agg(pl.col("member_id").unique().sort())
    return per_year.sort("application_id", "rate_year_start").group_by("application_id", maintain_order=True).agg(
        pl.format("the rate year starting {} of employer {}", pl.col("rate_year_start").cast(pl.String),
                  pl.col("member_id").list.join(", ")).str.join("; ").alias("rate_years"))


def agency_holds(applications: pl.DataFrame, lacking: pl.DataFrame | None = None) -> pl.DataFrame:
    """``HELD_SCHEMA`` rows of the applications the agency's own missing data holds (spec sections
    5 and 7: ``MISSING_EMPLOYER_RATES`` while some person has no other reason), naming the rate
    years missing (``lacking``: ``rules.eligibility.lacking_rates``)."""
    if "hold_reasons" not in applications.columns:
        return pl.DataFrame(schema=HELD_SCHEMA)
    gap = applications.filter(pl.col("hold_reasons").str.split(";").list.contains(MISSING_EMPLOYER_RATES)).join(
        rate_years(lacking), on="application_id", how="left")
    years = pl.col("rate_years").fill_null(pl.format("a rate year of employer {} or of a member of its group", "employer_id"))
    return gap.select(
        "application_id", pl.lit("agency").alias("source"), pl.lit("employer_rates.csv").alias("file"),
        pl.lit(None, dtype=pl.Int64).alias("line"), pl.lit(None, dtype=pl.String).alias("columns"),
        pl.lit(MISSING_EMPLOYER_RATES).alias("rules"),
        pl.format("the Department's table of employer rates (employer_rates.csv) has no unemployment and disability "
                  "insurance rates for {}, which its tax period {} to {} needs", years, "period_start", "period_end"
                  ).alias("messages"),
        *[pl.lit(None, dtype=HELD_SCHEMA[c]).alias(c) for c in ("employee_id", "figure", "declared", "read",
                                                                 "file_sha256", "source_sheet")],
        years.alias("rate_years"),
    ).cast(HELD_SCHEMA)


def hold(applications: pl.DataFrame, held: pl.DataFrame, *, released: list[str] | None = None) -> pl.DataFrame:
    """The application totals of ``compute_credits`` with every hold applied (spec section 7): those
    the engine found (``hold_reasons``: no employee claimed, declared totals that differ, the
    agency's missing rates) and those of the rejected lines ``held`` (INPUT_REJECTED); a held
    application is ``HELD`` with its hold codes sorted and ``;``-joined, its request computed from
    the lines that were read. ``released``: applications an analyst released (``impcredit
    release``): decided as they stand (``decided_status``, ``decided_reasons``), never held by
    their lines or totals again; one the agency's gap holds stays held by it alone (a release
    cannot decide the Department's gap: spec section 7), decided by the first run with the rates."""
    released = released or []
    apps = _with_hold_columns(applications)
    by_lines = pl.col("application_id").is_in(held.filter(pl.col("source").is_in(["input", "doubtful"]) if "source" in held.columns
                                                          else pl.lit(True)).get_column("application_id").unique().implode())
    codes = pl.concat_list(pl.col("hold_reasons").str.split(";"), pl.when(by_lines).then(pl.lit(INPUT_REJECTED)))
    codes = codes.list.eval(pl.element().filter(pl.element().is_not_null() & (pl.element() != ""))).list.unique().list.sort()
    apps = apps.with_columns(codes.list.join(";").alias("hold_reasons"))
    was_released = pl.col("application_id").is_in(released)
    gap = pl.col("hold_reasons").str.split(";").list.contains(MISSING_EMPLOYER_RATES)
    is_held = (pl.col("hold_reasons") != "") & (~was_released | gap)
    why = pl.when(was_released).then(pl.lit(MISSING_EMPLOYER_RATES)).otherwise(pl.col("hold_reasons"))
    return apps.with_columns(
        pl.when(is_held).then(pl.lit("HELD")).otherwise(pl.col("decided_status")).alias("status"),
        pl.when(is_held).then(why).otherwise(pl.col("decided_reasons")).alias("reasons"),
    )


def _with_hold_columns(apps: pl.DataFrame) -> pl.DataFrame:
    """``apps`` with ``hold_reasons``, ``decided_status`` and ``decided_reasons`` (a frame made
    without them: a HELD row's reasons are its hold codes, released it is REJECTED, NO_CREDIT_DUE)."""
    if "hold_reasons" in apps.columns:
        return apps
    was_held = pl.col("status") == "HELD"
    return apps.with_columns(
        pl.when(was_held).then(pl.col("reasons")).otherwise(pl.lit("")).alias("hold_reasons"),
        pl.when(was_held).then(pl.lit("REJECTED")).otherwise(pl.col("status")).alias("decided_status"),
        pl.when(was_held).then(pl.lit("NO_CREDIT_DUE")).otherwise(pl.col("reasons")).alias("decided_reasons"),
    )
