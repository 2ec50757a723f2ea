"""``impcredit layouts``: the payroll layouts (vendor profiles) ingest reads, with the product each follows."""

from __future__ import annotations

from flows.cli import common


def layouts() -> None:
    """List the payroll layouts ingest reads: each profile, the product whose export it follows and
    what it reads (data/vendors/*.yaml). A file no layout reads is rejected naming the nearest.

    Example: impcredit layouts
    """
    from rich.markup import escape

    from transforms.ingest.profiles import load_profiles

    common.console.print("Payroll layouts (data/vendors/*.yaml): a file is read by the one whose header it holds.")
    for p in load_profiles():
        kind = ", ".join(p.extensions) + ("; a report" if p.shaped else "") + ("; a line per code" if p.long else "")
        product = p.product or ("spec section 1" if p.name == "canonical" else "")
        common.console.print(f"[bold]{p.name}[/]  {escape(product)}  ({kind})", soft_wrap=True)
        common.console.print(f"    {escape(p.description)}", soft_wrap=True)
