"""What a run may not decide (spec sections 1 and 7): the applications held, and why.

A decision must rest on a reading the run can prove. An application is held when a standing
rejected line could touch it (not read, or read but doubtful: ``transforms.award.held``), when the
employer's declared totals differ from what was read (``transforms.rules.declared``), or when the
agency's own data lacks the employer's rates; an analyst's release decides it as it stands, and the
doubtful lines and differing totals it then takes as read are kept in the ledger (confirmed). A
release never decides the agency's gap: one held by it alone is refused (``agency_only``, recorded
with the run), and a released application the gap also holds stays held by it alone.
"""

from __future__ import annotations

import polars as pl

from transforms.award.held import (
    SOURCES,
    agency_holds,
    by_file,
    declared_holds,
    held_applications,
    hold,
    holding_lines,
)
from transforms.rules.engine import CreditResult
from transforms.runs.inputs import RunInputs


def holds(result: CreditResult, staged: RunInputs, released: list[str],
          confirmed: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(the application totals with every hold applied, why each held one is held, what the
    released ones take as read), both in ``award.held.HELD_SCHEMA``, the agency's gaps listed first.
    ``confirmed``: the doubtful lines earlier releases confirmed (they hold nothing again)."""
    lines = holding_lines(staged.standing, confirmed)
    claims = result.claims if result.claims is not None else pl.DataFrame(
        schema={"application_id": pl.String, "roster_employer_id": pl.String, "employee_id": pl.String, "ssn": pl.String})
    members = result.group_members if result.group_members is not None else result.applications.select(
        "application_id", pl.col("employer_id").alias("member_id"))
    keys = lines.filter((pl.col("dataset") == "payroll") & pl.col("employee_id").is_not_null()).select(
        "employer_id", "employee_id").unique()
    identities = pl.DataFrame(schema={"employer_id": pl.String, "employee_id": pl.String, "ssn_hash": pl.String})
    if keys.height:  # (the payroll read where the run's cluster is, when it has one)
        identities = staged.collect(staged.frames["payroll"].lazy().join(
            keys.lazy(), on=["employer_id", "employee_id"], how="semi").select("employer_id", "employee_id", "ssn_hash").unique())
    by_lines = held_applications(result.applications.select("application_id", "employer_id"), members, claims,
                                 identities, lines, staged.named)
    apps = hold(result.applications, by_lines, released=released)
    every = pl.concat([agency_holds(apps, result.lacking_rates), by_file(by_lines, staged.named),
                       declared_holds(result.reconciliation)])
    was_released = pl.col("application_id").is_in(released)
    # a released application the agency's gap holds stays held by it alone (spec section 7)
    held = every.filter(~was_released | (pl.col("source") == "agency")).sort(
        pl.col("source").replace_strict(list(SOURCES), list(range(len(SOURCES)))), "application_id", "file", "line")
    return apps, held, every.filter(was_released & pl.col("source").is_in(["doubtful", "declared_totals"]))


def agency_only(held: pl.DataFrame | None) -> dict[str, str]:
    """application id -> the rate years missing (``award.held.rate_years``), for each application
    held by the agency's gap alone: a release cannot decide it (spec section 7)."""
    if held is None or not held.height:
        return {}
    per = held.group_by("application_id").agg((pl.col("source") == "agency").all().alias("__only"),
                                              pl.col("rate_years").drop_nulls().first())
    return dict(per.filter(pl.col("__only")).sort("application_id").select(
        "application_id", pl.col("rate_years").fill_null("a rate year its tax period needs")).iter_rows())


def reconciliation_counts(recon: pl.DataFrame | None, awards: pl.DataFrame) -> dict[str, int]:
    """How far the run's decisions rest on figures the employer declared (spec section 1): the
    applications decided (not held) with and without declared totals, those held because they
    differ, and the figures compared."""
    given = pl.DataFrame(schema={"application_id": pl.String, "differs": pl.Boolean}) if recon is None else recon.filter(
        pl.col("declared").is_not_null())
    declared = set(given.get_column("application_id").to_list())
    decided = awards.filter(pl.col("status") != "HELD").get_column("application_id").to_list()
    with_ = sum(1 for a in decided if a in declared)
    held = awards.filter((pl.col("status") == "HELD") & pl.col("reasons").str.contains("DECLARED_TOTALS_DIFFER"))
    return {"decided_with_declared_totals": with_, "decided_without_declared_totals": len(decided) - with_,
            "held_declared_totals_differ": held.height, "applications_declaring": len(declared),
            "applications_differing": given.filter(pl.col("differs")).get_column("application_id").n_unique(),
            "figures_compared": given.height, "figures_differing": int(given.get_column("differs").sum())}
