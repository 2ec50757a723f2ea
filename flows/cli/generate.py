"""``impcredit generate``: a synthetic submission folder (the demo's and the bench's input)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli import common


def generate(
    employers: Annotated[int, typer.Option("--employers", min=1, help="Number of employers.", metavar="N")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same files).", metavar="N")] = 1,
    out: Annotated[Path, typer.Option("--out", help="Folder to write the submission into.", metavar="DIR")] = common.DATA / "sample",
    tax_year: Annotated[int, typer.Option("--tax-year", help="Tax year the applications claim.", metavar="YEAR")] = 2023,
    vendor_mix: Annotated[bool, typer.Option("--vendor-mix", help="Write payroll in several vendor layouts.")] = False,
) -> None:
    """Write a realistic synthetic submission folder."""
    try:
        from transforms.synthetic.generate import generate_submission

        summary = generate_submission(out, employers=employers, seed=seed, tax_year=tax_year)
        if vendor_mix:
            import shutil
            import tempfile

            from transforms.synthetic.vendors import write_vendor_mix

            with tempfile.TemporaryDirectory() as tmp:
                canon = Path(tmp) / "canonical"
                shutil.move(str(out), canon)
                write_vendor_mix(canon, out, seed=seed)
    except common.known_errors() as exc:
        common.fail(str(exc))
        return
    common.console.print(
        f"wrote {out}: {summary.employers:,} employers, {summary.payroll_rows:,} payroll rows in "
        f"{summary.files} files, {summary.applications:,} applications, {summary.rostered:,} rostered employees"
        + (f", {summary.groups} groups of employers under common control (control_groups.csv), "
           f"{summary.fiscal_filers} fiscal-year filers, {summary.estimate_requests} estimate requests received during "
           "the tax year" if summary.groups or summary.fiscal_filers else "")
    )
