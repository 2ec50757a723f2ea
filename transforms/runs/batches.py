"""The employer batches of a run's credit computation (a fan-out on the flow's task runner: threads,
or a Dask cluster). Credits are per application and duplicates are per employer (and per group
of employers under common control), so a batch of whole employers (and whole groups) computes
exactly its own rows; ``merge_results`` puts the batches' results back together."""

from __future__ import annotations

import polars as pl

from transforms.rules.engine import CreditResult


def _units(employers: list[str], groups: pl.DataFrame) -> list[list[str]]:
    """The employers in units that never split a group (connected through control_groups)."""
    parent = {e: e for e in employers}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, members in groups.group_by("group_id", maintain_order=True):
        ids = members.get_column("employer_id").to_list()
        for other in ids[1:]:
            parent[find(other)] = find(ids[0])
    units: dict[str, list[str]] = {}
    for e in sorted(parent):
        units.setdefault(find(e), []).append(e)
    wanted = set(employers)  # once: built per unit it made the Dask fan-out at 20,000 employers quadratic (23 s)
    return [u for u in units.values() if any(e in wanted for e in u)]


def employer_batches(frames: dict[str, pl.DataFrame], n: int) -> list[dict[str, pl.DataFrame]]:
    """Split staged frames into ``n`` batches of whole groups of employers (round robin over
    sorted units); each batch holds the payroll of its employers and of the employers its
    rosters name (for the person's ssn), and the certifications of the ssns it holds.

    A lazy payroll (the lake's, as runs stage it) stays lazy: each batch is the plan of its own
    rows, read where the batch runs (a Dask worker reads the lake itself: no payroll row passes
    through the driver), and the batch holds every certification (a few per claimed person; the
    credit joins them to its own claims, so the rows are the same)."""
    if n <= 1:
        return [frames]
    lazy_payroll = isinstance(frames["payroll"], pl.LazyFrame)
    frames = {k: v.collect() if isinstance(v, pl.LazyFrame) and k != "payroll" else v for k, v in frames.items()}
    groups = frames.get("control_groups", pl.DataFrame(schema={"group_id": pl.String, "employer_id": pl.String}))
    units = sorted(_units(sorted(set(frames["applications"]["employer_id"].to_list())), groups), key=lambda u: u[0])
    n = min(n, len(units))
    if n <= 1:
        return [frames]
    out = []
    for i in range(n):
        ids = pl.Series("employer_id", [e for u in units[i::n] for e in u], dtype=pl.String)
        apps = frames["applications"].filter(pl.col("employer_id").is_in(ids.implode()))
        roster = frames["roster"].filter(pl.col("application_id").is_in(apps["application_id"].implode()))
        named = pl.concat([ids, roster.get_column("employer_id").drop_nulls()]).unique().sort()
        payroll = frames["payroll"].filter(pl.col("employer_id").is_in(named.implode()))
        if lazy_payroll:
            certifications = frames["certifications"]
        else:
            ssns = pl.concat([payroll.get_column("ssn_hash"), roster.get_column("ssn_hash")]).drop_nulls().unique()
            certifications = frames["certifications"].filter(pl.col("ssn_hash").is_in(ssns.implode()))
        out.append({
            "payroll": payroll,
            "applications": apps,
            "roster": roster,
            "certifications": certifications,
            "employer_rates": frames["employer_rates"].filter(pl.col("employer_id").is_in(named.implode())),
            "control_groups": groups.filter(pl.col("employer_id").is_in(ids.implode())),
        })
    return out


def merge_results(parts: list[CreditResult]) -> CreditResult:
    if len(parts) == 1:
        return parts[0]
    year = next((p.year for p in parts if p.year is not None), None)

    def cat(name: str) -> pl.DataFrame | None:
        frames = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        return pl.concat(frames, how="diagonal_relaxed") if frames else None

    emp = pl.concat([p.employees for p in parts], how="diagonal_relaxed")
    apps = pl.concat([p.applications for p in parts], how="diagonal_relaxed").sort("received_at", "application_id")
    recon = cat("reconciliation")
    return CreditResult(emp, apps, year, cat("members"), sum(p.waiting for p in parts), cat("claims"),
                        cat("group_members"), None if recon is None else recon.sort(
                            "application_id", "roster_employer_id", "employee_id", "figure"),
                        max(p.reconcile_s for p in parts), cat("lacking_rates"))
