"""A report's lines walked as one Polars frame: what ``report_walk.shape_report`` does line by line in
Python, done as column expressions over every line at once (a journal of a million lines in
about the time the canonical layout takes), with exactly its result.

In: every non-blank line of the file as text cells ``c0..cW`` with its physical ``__line`` (the
header found among them, ``header.Found``). Out: the table of the data rows (the columns of every
section's header, the fields carried from block lines, labelled values and the file's name), and
the ``report_walk.Shape`` of the other lines (counted; the totals lines checked). ``None`` when the
profile asks for what only the line-by-line walk does (a block label anywhere on a line, a
pattern the Rust regex engine does not take, sections of a two-row header or labels restricted to
columns that move between sections, a totals label in any cell): the caller then walks the lines in
Python.
"""

from __future__ import annotations

import re

import polars as pl

from transforms.ingest.read.cast.parsing import date_expr, number_expr
from transforms.ingest.read.cast.row_checks import CellError
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.layouts import header as hd
from transforms.ingest.read.reports import report_lines as ln
from transforms.ingest.read.reports import report_walk as sh

SEP = r"(?:\s*[:#=-]?\s+|\s*[:#=]\s*)"  # between a label and its value in one cell
MAX_SECTIONS = 500_000


def _rx(pattern: str, case: bool = False) -> str:
    return ("(?i)" if case else "") + pattern


def _ok(patterns: list[str]) -> bool:
    """Whether the Rust regex engine takes every pattern (lookarounds and backreferences it does not)."""
    try:
        pl.select(pl.lit("x").str.contains(_rx(p, True)).alias(f"p{i}") for i, p in enumerate(patterns))
    except pl.exceptions.PolarsError:
        return False
    return True


def walk(frame: pl.DataFrame, found: hd.Found, records, rel: str, sheet: str | None,
         delimiter: str | None) -> tuple[tuple[rd.RawTable, hd.Match], sh.Shape] | None:
    """The report ``frame`` (its non-blank lines, ``records`` the first of them as Python cells)
    walked as ``report_walk.shape_report`` walks it, or None (see the module's docstring)."""
    match = found.match
    profile, layout = match.profile, match.profile.report
    if any(not b.first for b in layout.blocks) or any(not t.first for t in layout.totals) or not _ok(
            [*(b.label for b in layout.blocks), *(b.value for b in layout.blocks), *(t.label for t in layout.totals),
             *layout.notes, *layout.end, *(v.label for v in layout.labels), *(v.value for v in layout.labels)]):
        return None
    width = len([c for c in frame.columns if c.startswith("c") and c[1:].isdigit()])
    cols = [f"c{i}" for i in range(width)]
    s = [pl.col(c).str.strip_chars() for c in cols]
    f = frame if "__first" in frame.columns else _first_cells(frame.lazy(), width).collect()
    if "__i" not in f.columns:
        f = f.with_row_index("__i")
    head_key = sh._header_key(records[found.index][1])
    upper_key = sh._header_key(records[found.first][1]) if found.first != found.index else None

    def same(key: list[str]) -> pl.Expr:
        return pl.all_horizontal([(s[i].fill_null("").str.to_lowercase() == k) if i < width else pl.lit(k == "")
                                  for i, k in enumerate(key)])

    # every header line after the first starts a section (its columns may differ: a journal prints an
    # Overtime column only where a payroll has one); the line above a two-row header repeats too
    upper = same(upper_key) if upper_key is not None else pl.lit(False)
    first_pos, first_text = ln.first_cell(records[found.index][1])
    after = pl.col("__i") > found.index
    cand = f.lazy().filter(after & (pl.col("__pos") == first_pos)
                           & (pl.col("__first").str.to_lowercase() == first_text.lower())).collect()
    if cand.height > MAX_SECTIONS or (cand.height and match.header_rows == 2 and not cand.select(
            same(head_key).all()).item()):
        return None
    first_names = sh._section_header(records, found.index, match.header_rows)
    sections = [(found.index, first_names)]
    known: dict[tuple, bool] = {}
    for row in cand.select("__i", *cols).iter_rows():
        cells = tuple((c or "").strip() for c in row[1:])
        if cells not in known:
            known[cells] = hd.match_headers(profile, list(cells)).ok if match.header_rows == 1 else True
        if known[cells]:
            names = sh._section_header([(0, list(cells))], 0, 1, len(first_names)) if match.header_rows == 1 else first_names
            sections.append((row[0], names))
    repeat = upper
    return _walk_sections(f, s, width, found, sections, repeat, records, rel, sheet, delimiter)


def _walk_sections(f: pl.DataFrame, s, width, found, sections, repeat, records, rel, sheet, delimiter):
    match = found.match
    profile, layout = match.profile, match.profile.report
    shape = sh.Shape()
    section_rows = [i for i, _ in sections[1:]]
    is_section = pl.col("__i").is_in(section_rows)
    after = pl.col("__i") > found.index
    pre = pl.col("__i") < found.first
    first = pl.col("__first")
    end_rows = f.lazy().filter(after & ~repeat & ~is_section & pl.any_horizontal(
        [first.str.contains(_rx(f"^(?:{e})$", True)) for e in layout.end] or [pl.lit(False)])).select("__i").collect(
    ).get_column("__i")
    end_at = int(end_rows.min()) if end_rows.len() else None
    live = after & (pl.col("__i") < end_at if end_at is not None else pl.lit(True)) & ~repeat & ~is_section
    total_kind = pl.lit(None, dtype=pl.Int32)
    for k in reversed(range(len(layout.totals))):
        total_kind = pl.when(first.str.contains(_rx(f"^(?:{layout.totals[k].label})$", True))).then(k).otherwise(total_kind)
    note = pl.any_horizontal([first.str.contains(_rx(f"^(?:{n})$", True)) for n in layout.notes] or [pl.lit(False)])
    carried = list(dict.fromkeys([*(x for b in layout.blocks for x in b.sets), *(v.field for v in layout.labels)]))
    f = f.with_columns(total_kind.alias("__total"), note.alias("__note"))
    f = f.with_columns(
        (live & pl.col("__total").is_not_null()).alias("__is_total"),
        (live & pl.col("__total").is_null() & pl.col("__note")).alias("__is_note"))
    maybe_block = (pre | live) & ~pl.col("__is_total") & ~pl.col("__is_note")
    hits = _blocks(f, s, width, layout, profile, maybe_block)
    values = [c.removeprefix("__set_") for c in hits.columns if c.startswith("__set_")]
    f = f.join(hits, on="__i", how="left", maintain_order="left")
    f = f.with_columns((live & pl.col("__block").is_null() & ~pl.col("__is_total") & ~pl.col("__is_note")).alias("__data"),
                       pl.col("__block").is_not_null().alias("__is_block"))
    f = f.with_columns(*[pl.col(f"__set_{x}").forward_fill().alias(f"__block_{x}") for x in values])
    counts = f.select(
        (pre & ~pl.col("__is_block")).sum().alias("pre"), pl.col("__is_total").sum().alias("totals"),
        pl.col("__is_block").sum().alias("blocks"), (after & (repeat | is_section) & (
            pl.col("__i") < end_at if end_at is not None else pl.lit(True))).sum().alias("repeats"),
        pl.col("__is_note").sum().alias("notes")).row(0, named=True)
    shape.totals, shape.blocks, shape.notes, shape.repeated_headers = (counts["totals"], counts["blocks"], counts["notes"],
                                                                       counts["repeats"])
    shape.summary = int(f.select((pl.col("__i") >= end_at).sum()).item()) if end_at is not None else 0
    shape.preamble = [" ".join(c.strip() for c in cells if c and c.strip()) for _, cells in records[:found.first]
                      if ln.block(cells, layout, profile, dict.fromkeys(carried)) is None]
    f = _labels(f, s, width, layout, profile, sections, values, carried)
    # each line's header: its section's, one of a few distinct headers (a variant)
    variants: dict[tuple, int] = {}
    starts = pl.DataFrame({"__i": [i for i, _ in sections],
                           "__variant": [variants.setdefault(tuple(n), len(variants)) for _, n in sections]},
                          schema={"__i": pl.UInt32, "__variant": pl.Int32})
    f = f.join_asof(starts, on="__i", strategy="backward", check_sortedness=False).with_columns(
        pl.col("__variant").fill_null(0))
    walk = sh._Walk([], {}, carried, {})
    positions = [walk.positions(list(names)) for names in variants]
    umatch = walk.match(match)
    f = f.filter(pl.col("__data") | pl.col("__is_total") | pl.col("__is_block"))  # what is left to read
    f, ragged = _place(f, width, positions, len(walk.names))
    checked = _totals(f, layout, umatch, f"{rel}[{sheet}]" if sheet else rel)
    if isinstance(checked, TotalsPlan):
        shape.totals_plan = checked  # checked on the staged rows (``tables``)
    else:
        shape.errors += checked
    u = len(walk.names)
    extra = [f"__block_{x}" for x in carried if f"__block_{x}" in f.columns]
    table_frame = f.lazy().filter(pl.col("__data") & ~pl.col("__ragged")).select(
        *[pl.when(pl.col(f"u{j}") != "").then(pl.col(f"u{j}")).alias(f"c{j}") for j in range(u)],  # "" is no value
        pl.col("__line").cast(pl.Int64), *extra).collect()
    for k2, v2 in ln.name_fields(profile, rel, sheet).items():
        table_frame = table_frame.with_columns(pl.lit(v2, dtype=pl.String).alias(f"__name_{k2}"))
    table = rd.RawTable(list(walk.names), records[found.index][0], table_frame, ragged, sheet=sheet, delimiter=delimiter)
    return sh._as_cells(table, umatch), shape


def _blocks(f: pl.DataFrame, s, width: int, layout, profile, maybe_block: pl.Expr) -> pl.DataFrame:
    """The block lines (``__i``, ``__block``: the kind of each, ``__set_<field>``: each field it
    sets). Which lines they are is read on every line (the first cell against each label); what
    they set, on those lines only, a step at a time (a date in the layout's formats costs a parse)."""
    first = pl.col("__first")
    steps, any_hit = [], pl.lit(False)
    for k in reversed(range(len(layout.blocks))):
        b = layout.blocks[k]
        rest = first.str.extract(_rx(f"^(?:{b.label}){SEP}(.+)$", True), re.compile(b.label).groups + 1).str.strip_chars()
        steps += [first.str.contains(_rx(f"^(?:{b.label})$", True)).alias(f"__whole{k}"), rest.alias(f"__rest{k}")]
        any_hit = any_hit | pl.col(f"__whole{k}") | (pl.col(f"__rest{k}").is_not_null() & (pl.col(f"__rest{k}") != ""))
    hits = f.lazy().with_columns(steps).filter(maybe_block & any_hit).collect()
    filled = [pl.col(f"c{i}").str.strip_chars().fill_null("") != "" for i in range(width)]
    hits = hits.with_columns(pl.sum_horizontal(filled).alias("__filled"))  # for a line alone
    kind = pl.lit(None, dtype=pl.Int32)
    for k in reversed(range(len(layout.blocks))):
        hit = pl.col(f"__whole{k}") | (pl.col(f"__rest{k}").is_not_null() & (pl.col(f"__rest{k}") != ""))
        if layout.blocks[k].alone:
            hit = hit & (pl.col("__filled") == 1)
        kind = pl.when(hit).then(k).otherwise(kind)
    hits = hits.with_columns(kind.alias("__block")).filter(pl.col("__block").is_not_null())
    nxt = pl.coalesce([pl.lit(None, dtype=pl.String)] + [
        pl.when((pl.col("__pos") < i) & s[i].is_not_null() & (s[i] != "")).then(s[i]) for i in range(width)])
    hits = hits.with_columns(nxt.alias("__next"))
    values: dict[str, list[pl.Expr]] = {}
    for k in reversed(range(len(layout.blocks))):
        b = layout.blocks[k]
        hit = pl.col(f"__whole{k}") | (pl.col(f"__rest{k}").is_not_null() & (pl.col(f"__rest{k}") != ""))
        if b.alone:
            hit = hit & (pl.col("__filled") == 1)
        hits = hits.with_columns(hit.alias(f"__hit{k}"), pl.when(pl.col(f"__whole{k}")).then(pl.col("__next"))
                                 .otherwise(pl.col(f"__rest{k}")).alias(f"__value{k}"))
        for name in b.named:
            g = pl.coalesce(first.str.extract(_rx(f"^(?:{b.label})$", True), re.compile(b.label).groupindex[name]),
                            first.str.extract(_rx(f"^(?:{b.label}){SEP}.+$", True), re.compile(b.label).groupindex[name]))
            values.setdefault(name, []).append(pl.when(pl.col(f"__hit{k}")).then(g.str.strip_chars()))
        value = pl.col(f"__value{k}")
        groups = re.compile(b.value).groups
        for i, x in enumerate(x for x in b.fields if x not in b.named):
            got = value.str.extract(f"^(?:{b.value})$", i + 1) if groups > i else None
            v = pl.coalesce(pl.when(got != "").then(got.str.strip_chars()), value) if got is not None else value
            values.setdefault(x, []).append(pl.when(pl.col(f"__hit{k}")).then(v))
    hits = hits.with_columns(pl.coalesce(exprs).alias(f"__raw_{x}") for x, exprs in values.items())
    return hits.select("__i", "__block", *[(_iso(pl.col(f"__raw_{x}"), profile) if x in ln.DATES else pl.col(f"__raw_{x}"))
                                          .alias(f"__set_{x}") for x in values])


def _iso(v: pl.Expr, profile) -> pl.Expr:
    """A date value as ISO when the layout's formats read it (as ``report_lines.parse_date``), else as given."""
    t = v.str.strip_chars()
    t = pl.when(t.str.contains(r"^\d{4}-\d{2}-\d{2}[ T]00:00:00$")).then(t.str.slice(0, 10)).otherwise(t)
    return pl.coalesce(date_expr(t, profile.date_formats).cast(pl.String), t)


def _labels(f, s, width, layout, profile, sections, values, carried) -> pl.DataFrame:
    """The labelled values of each group of lines (``report.labels``) on every line of the group."""
    if not layout.labels:
        return f
    boundary = pl.col("__is_total") | pl.col("__is_block") | pl.col("__i").is_in([i for i, _ in sections[1:]])
    f = f.with_columns(boundary.cum_sum().alias("__group"))
    names = sections[0][1]
    for v in layout.labels:
        allowed = [i for i, h in enumerate(names) if h in v.columns] if v.columns else list(range(width))
        per = []
        for i in allowed:
            if i >= width:
                continue
            own = s[i].str.extract(_rx(f"^(?:{v.label})$", True), 1) if re.compile(v.label).groups else None
            whole = s[i].str.contains(_rx(f"^(?:{v.label})$", True))
            nxt = s[i + 1] if i + 1 < width else pl.lit(None, dtype=pl.String)
            rest = s[i].str.extract(_rx(f"^(?:{v.label}){SEP}(.*)$", True), re.compile(v.label).groups + 1)
            value = pl.when(whole).then(pl.when(nxt != "").then(nxt)).otherwise(pl.when(rest != "").then(rest))
            got = value.str.extract(f"^(?:{v.value})$", 1) if re.compile(v.value).groups else \
                pl.when(value.str.contains(f"^(?:{v.value})$")).then(value)
            per.append(pl.when(s[i].is_not_null() & (s[i] != "")).then(
                own.str.strip_chars() if own is not None else got.str.strip_chars()))
        val = pl.coalesce(per) if per else pl.lit(None, dtype=pl.String)
        val = _iso(val, profile) if v.field in ln.DATES else val
        f = f.with_columns(pl.when(pl.col("__data")).then(val).drop_nulls().first().over("__group")
                           .alias(f"__block_{v.field}"))
    return f


def _place(f: pl.DataFrame, width: int, positions: list[list[int]], u: int) -> tuple[pl.DataFrame, list]:
    """Each line's cells in the table's columns ``u0..`` by its section's header; a data line with a
    non-blank cell beyond its header is ragged (kept aside, as the line walk keeps it)."""
    exprs = []
    for j in range(u):
        where = [(v, pos.index(j)) for v, pos in enumerate(positions) if j in pos]
        if len(where) == len(positions) and len({i for _, i in where}) == 1:  # the same cell in every header
            exprs.append(pl.col(f"c{where[0][1]}").alias(f"u{j}"))
            continue
        e = pl.lit(None, dtype=pl.String)
        for v, i in where:
            e = pl.when(pl.col("__variant") == v).then(pl.col(f"c{i}")).otherwise(e)
        exprs.append(e.alias(f"u{j}"))
    beyond = pl.lit(False)
    for v, pos in enumerate(positions):
        extra = [pl.col(f"c{i}").str.strip_chars().fill_null("") != "" for i in range(len(pos), width)]
        if extra:
            beyond = pl.when(pl.col("__variant") == v).then(pl.any_horizontal(extra)).otherwise(beyond)
    f = f.lazy().with_columns(*exprs, (pl.col("__data") & beyond).alias("__ragged")).collect()
    rag = f.lazy().filter(pl.col("__ragged")).collect()
    ragged = [(int(r["__line"]), [c or "" for c in (r[f"c{i}"] for i in range(width))]) for r in rag.iter_rows(named=True)]
    return f, ragged


STAGED_SUMS = ("hours", "gross_wages", "employer_taxes")  # what the staging already reads of every row


def _totals(f: pl.DataFrame, layout, match: hd.Match, where: str) -> list[CellError] | TotalsPlan:
    """Each totals line's checked fields against the lines it totals (to the cent): a plan checked
    once the rows are staged (their hours, wages and taxes are read once, by the staging), or,
    where a totals line checks another field or the layout is a line per code, the rejects now."""
    if not layout.totals or not f.select(pl.col("__is_total").any()).item():
        return []
    names = sorted({n for t in layout.totals for n in t.checks})
    if not names:
        return []
    since = pl.col("__is_total") | pl.col("__is_block")
    block = (pl.col("__block") == 0).fill_null(False)
    f = f.with_columns((since.cum_sum() - since.cast(pl.UInt32)).alias("__since"), block.cum_sum().alias("__bseg"))
    totals = f.lazy().filter(pl.col("__is_total")).collect()
    lines = f.lazy().filter(pl.col("__data")).select("__line", "__since", "__bseg").collect()
    plan = TotalsPlan(layout, where, lines, totals.select("__line", "__total", "__since", "__bseg",
                                                          *_values(totals, names, match)))
    if set(names) <= set(STAGED_SUMS) and match.profile.long is None:
        return plan
    data = f.lazy().filter(pl.col("__data")).collect()
    values = data.select("__line", *_values(data, names, match))
    return plan.check(values)


def _values(f: pl.DataFrame, names: list[str], match: hd.Match) -> list[pl.Series]:
    """Each checked field's number on each line of ``f``: its cell, or a derived field's parts
    summed (a blank part counts nothing; a part that is no number makes the line's value none)."""
    nf = match.profile.number
    out = []
    for name in names:
        parts = match.derived.get(name, [name])
        nums = [(number_expr(pl.col(f"u{match.columns[p]}"), nf), pl.col(f"u{match.columns[p]}").str.strip_chars())
                for p in parts if p in match.columns]
        if not nums:
            out.append(pl.Series(name, [None] * f.height, dtype=pl.Float64))
            continue
        bad = pl.any_horizontal([(t.is_not_null() & (t != "")) & n.is_null() for n, t in nums])
        seen = pl.any_horizontal([t.is_not_null() & (t != "") for _, t in nums])
        value = pl.when(seen & ~bad).then(pl.sum_horizontal([n.fill_null(0.0) for n, _ in nums]))
        out.append(f.lazy().select(value.alias(name)).collect().to_series())
    return out


class TotalsPlan:
    """The totals lines of a report and the lines each totals (since the last totals or block
    line, since the last block line of the first kind, the file's), to check against the values of
    those lines (``check``: the staged rows, or values read here)."""

    def __init__(self, layout, where: str, lines: pl.DataFrame, totals: pl.DataFrame):
        self.layout, self.where, self.lines, self.totals = layout, where, lines, totals

    def check(self, values: pl.DataFrame) -> list[CellError]:
        """The rejects of the totals lines that disagree with ``values`` (``__line`` and the checked
        fields of the data lines; a line missing from it, rejected before, counts nothing)."""
        names = [c for c in values.columns if c != "__line" and c in self.totals.columns]
        rows = self.lines.join(values.select("__line", *names), on="__line", how="left").sort("__line")
        agg = [pl.col(n).sum() for n in names] + [pl.len().alias("__n")]
        since = rows.group_by("__since").agg(agg)
        cum = rows.with_columns(*[pl.col(n).fill_null(0.0).cum_sum().over("__bseg") for n in names],
                                pl.int_range(1, pl.len() + 1).over("__bseg").alias("__n"))
        block = self.totals.select("__line", "__bseg").sort("__line").join_asof(
            cum.select("__line", "__bseg", *names, "__n").sort("__line"), on="__line", by="__bseg", strategy="backward", check_sortedness=False)
        whole = rows.select(agg).row(0, named=True)
        since_of = {r["__since"]: r for r in since.iter_rows(named=True)}
        block_of = {r["__line"]: r for r in block.iter_rows(named=True)}
        errors = []
        for t in self.totals.iter_rows(named=True):
            rule = self.layout.totals[t["__total"]]
            got = (since_of.get(t["__since"]) if rule.scope == "since_last" else
                   block_of.get(t["__line"]) if rule.scope == "block" else whole) or {}
            for name in rule.checks:
                said = t.get(name)
                if said is None or name not in names:
                    continue
                summed, n = got.get(name) or 0.0, got.get("__n") or 0
                if abs(said - summed) > 0.005 + 1e-9:
                    errors.append(CellError(self.where, t["__line"], name, f"{said:.2f}", "totals_mismatch",
                                            f"{name}: the totals line says {said:,.2f}; the {n} line(s) it totals sum "
                                            f"to {summed:,.2f}: a line is missing or was changed"))
        return errors


def _first_cells(lines: pl.LazyFrame, width: int) -> pl.LazyFrame:
    """Each line's first non-blank cell (``__first``, stripped) and where it is (``__pos``), the
    blank lines left out. Most lines' first cell is filled: the other cells are stripped and
    looked at only on the lines whose first cell is blank (a Polars ``when`` evaluates every
    branch on every line)."""
    frame = lines.collect()
    first = frame.get_column("c0").str.strip_chars()
    filled = first.is_not_null() & (first != "")
    pos = pl.Series("__pos", [0] * frame.height, dtype=pl.Int32)
    rest = (~filled).arg_true()
    if rest.len() and width == 1:
        pos = pos.scatter(rest, None)
    elif rest.len():
        s = [pl.col(f"c{i}").str.strip_chars() for i in range(1, width)]
        given = [x.is_not_null() & (x != "") for x in s]
        other = frame.gather(rest).select(
            pl.coalesce([pl.when(b).then(pl.lit(i + 1, dtype=pl.Int32)) for i, b in enumerate(given)]).alias("__pos"),
            pl.coalesce([pl.when(b).then(x) for b, x in zip(given, s, strict=True)]).alias("__first"))
        pos = pos.scatter(rest, other.get_column("__pos"))
        first = first.scatter(rest, other.get_column("__first"))
    return frame.with_columns(pos, first.alias("__first")).filter(pl.col("__pos").is_not_null()).lazy()


def frame_of(text: str, delimiter: str, width: int, data: bytes | None = None) -> pl.DataFrame | None:
    """Every non-blank line of a delimited text as cells ``c0..c<width-1>`` with its physical
    ``__line``, its first cell and where it is, by Polars' reader (``data``: the file's bytes when
    they are that text in UTF-8); None when a record is not one line (a quoted cell holding a
    newline, a lone CR) or a line has more cells than ``width``."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None
    try:
        frame = pl.read_csv(data if data is not None else text.encode("utf-8"), has_header=False, separator=delimiter,
                            quote_char='"', new_columns=[f"c{i}" for i in range(width)], schema_overrides=dict.fromkeys(
                                (f"c{i}" for i in range(width)), pl.String), infer_schema=False,
                            truncate_ragged_lines=False, row_index_name="__line", empty_string_is_null=False,
                            missing_columns="insert", raise_if_empty=False, comment_prefix=None, null_values=None)
    except (pl.exceptions.PolarsError, ValueError):
        return None
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if frame.height != lines or frame.width != width + 1:  # a quoted cell holding a newline joins two lines
        return None
    cols = [f"c{i}" for i in range(width)]
    lazy = frame.lazy().with_columns(pl.col("c0").str.strip_prefix("\ufeff"), (pl.col("__line").cast(pl.Int64) + 1))
    return _first_cells(lazy.select(*cols, "__line"), width).with_row_index("__i").collect()


__all__ = ["frame_of", "walk"]
