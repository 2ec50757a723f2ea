"""The consoles the impcredit commands print to, and the panels they print: a run's summary and
any (label, value) rows, fitted to the width without breaking an id or a path."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from flows import api


class _Console(Console):
    """rich's console, but piped or redirected (not a terminal) a sentence printed is one line, never
    broken at the width (its ids and paths whole for grep and scripts); tables and panels still lay
    out to the width (``listing.print_table``, ``fitted_panel``)."""

    def print(self, *objects, soft_wrap: bool | None = None, **options) -> None:
        if soft_wrap is None and not self.is_terminal and all(isinstance(o, str | Text) for o in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **options)


console = _Console()
err = Console(stderr=True, soft_wrap=True)


class Whole(str):
    """A panel value printed whole, on one line: an id, a path, a URL, a file name."""


def _plain(value) -> str:
    return Text.from_markup(value).plain if not isinstance(value, Whole) else str(value)


def fitted_panel(title: str, rows: list[tuple[str, str]], justify: str = "right") -> None:
    """Rows of (label, value) in a panel at the console's width (a terminal's, else COLUMNS or 80)
    that keeps every ``Whole`` value (ids, paths) whole on one line: the labels wrap first, then the
    other values. When a ``Whole`` value is too long for any panel of that width, the rows are
    plain aligned lines instead (no box, nothing wrapped: a pipe, grep or a copy gets them whole)."""
    width = console.width
    frame = 4 + 2  # the panel's border and padding, the space between the columns
    labels = max((len(k) for k, _ in rows), default=0)
    values = max((len(_plain(v)) for _, v in rows), default=0)
    whole = max((len(v) for _, v in rows if isinstance(v, Whole)), default=0)
    words = max((len(w) for k, _ in rows for w in k.split()), default=0)
    t = Table(show_header=False, box=None, pad_edge=False)
    if labels + values + frame <= width:
        t.add_column(style="bold")
        t.add_column(justify=justify)
    else:
        label_w = min(labels, width - frame - whole)
        if label_w < words:
            console.print(f"[bold]{title}[/]", soft_wrap=True)
            for k, v in rows:
                console.print(f"  [bold]{escape(k.ljust(labels))}[/]  " + (escape(v) if isinstance(v, Whole) else v),
                              soft_wrap=True, highlight=False)
            return
        t.add_column(style="bold", width=label_w)
        t.add_column(justify=justify, width=width - frame - label_w)
    for k, v in rows:
        t.add_row(k, Text(v, no_wrap=True) if isinstance(v, Whole) else v)
    console.print(Panel(t, title=title, expand=False))


def print_summary(summary, elapsed: float | None = None) -> None:
    rows: list[tuple[str, str]] = []

    def add(label: str, value: str) -> None:
        rows.append((label, value))

    whatif = summary.kind == "whatif"  # decides nothing: its amounts are what would be, the ledger only read
    add("Run", Whole(summary.run_id))
    add("Tax year / approval year", f"{summary.tax_year} / {summary.approval_year} (as of {summary.as_of})")
    add("Policy", summary.policy)
    add("Applications", f"{summary.applications:,}  " + ", ".join(f"{k} {v}" for k, v in summary.statuses.items()))
    add("Employee-years (eligible)", f"{summary.employee_years:,} ({summary.eligible_employee_years:,})")
    add("Requested" + (" (as decided)" if summary.awarded_earlier else ""), f"${summary.requested:,.2f}")
    differ = (getattr(summary, "changes_counts", None) or {}).get("requests_differ_from_decision", 0)
    if differ:
        add("  computed now, differs", f"[yellow]{differ:,}[/] applications (changes.csv; impcredit reopen "
            "to decide one again)")
    if whatif:
        add("Would be awarded (nothing recorded)", f"${summary.awarded:,.2f}")
        add("  decided anew by the what-if", f"${summary.awarded_now:,.2f}")
        add("  kept as the ledger decided them", f"${summary.awarded_earlier:,.2f}")
    else:
        add("Awarded (these applications)", f"${summary.awarded:,.2f}")
        add("  by this run", f"${summary.awarded_now:,.2f}")
        add("  by earlier runs (kept)", f"${summary.awarded_earlier:,.2f}")
    add("Approved earlier this approval year", f"${summary.approved_before:,.2f}")
    add("Cap / cap left" + (" if so decided" if whatif else ""), f"${summary.cap:,.2f} / ${summary.cap_left:,.2f}")
    if summary.rejected_rows:
        add("Rejected input rows", f"[yellow]{summary.rejected_rows:,}[/] (see rejects.csv)")
    if getattr(summary, "held", 0):
        add("Held, not decided", f"[yellow]{summary.held:,}[/] (held.csv says why"
            + (")" if whatif else ", index.html what decides each)"))
        from transforms.products.run_page import HELD_SHORT

        for source, n in sorted((getattr(summary, "held_by", None) or {}).items(),
                                key=lambda kv: list(HELD_SHORT).index(kv[0]) if kv[0] in HELD_SHORT else 99):
            add(f"  {HELD_SHORT.get(source, source)}", f"{n:,}")
    add("Received after the as-of date", f"{summary.received_after_as_of:,}, not seen")
    add("Outputs", Whole(summary.out_dir))
    groups: dict[str, int] = {}
    for p in summary.outputs:  # a local path or an object's URL under the output folder
        rel = str(p)[len(str(summary.out_dir)):].strip("/").split("/")
        name = rel[0] + ("/" if len(rel) > 1 else "")
        groups[name] = groups.get(name, 0) + 1
    documents = {"certificates/": "certificate", "notices/": "notice"}  # counted as documents, not files
    for name, n in sorted(groups.items()):
        if name in documents:
            k = sum(1 for p in summary.outputs if str(p).endswith(".html") and
                    str(p)[len(str(summary.out_dir)):].strip("/").count("/") == 1 and f"/{name}" in str(p))
            add("", Whole(f"{name} ({k:,} {documents[name]}{'' if k == 1 else 's'}, {n:,} files)"))
        else:
            add("", Whole(f"{name} ({n} files)" if name.endswith("/") else name))
    docs = f"{str(summary.out_dir).rstrip('/')}/data_docs/index.html"
    if any(str(p).replace(os.sep, "/") == docs.replace(os.sep, "/") for p in summary.outputs):
        add("Data Docs (Great Expectations)", Whole(docs))
    add("Ledger" + (" (read, not written)" if whatif else ""), Whole(Path(summary.workdir) / "impcredit.duckdb"))
    link = api.flow_run_link(getattr(summary, "prefect_flow_run", None))
    if link:
        add("Prefect flow run", Whole(link))
    if elapsed is not None:
        add("Total time", f"{elapsed:.1f} s")
    status = "completed with rejections" if summary.rejected_rows else "completed"
    if getattr(summary, "held", 0):
        status += f", {summary.held:,} held"
    fitted_panel(f"impcredit {summary.kind}: {status}", rows)
    changes = getattr(summary, "changes", None) or []
    if changes:
        console.print("[bold]What changed[/] (changes.csv): " + changes[0])
        for line in changes[1:]:
            console.print(f"  {line}")
    if summary.key_source == "demo":
        console.print("[yellow]note:[/] ssn hashes use the built-in demo key; set IMPCREDIT_HMAC_KEY_FILE for real data.")


def panel(title: str, rows: list[tuple[str, str]], files: list[str] | None = None) -> None:
    """A run's summary: ``rows``, then the names of its ``files`` (whole)."""
    fitted_panel(title, rows + [("", Whole(Path(p).name)) for p in files or []])
