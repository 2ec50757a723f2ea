"""A report's lines walked as one Polars frame: what ``shape.shape_report`` does line by line in
Python, done as column expressions over every line at once (a journal of a million lines in
about the time the canonical layout takes), with exactly its result.

In: every non-blank line of the file as text cells ``c0..cW`` with its physical ``__line`` (the
header found among them, ``header.Found``). Out: the table of the data rows (the columns of every
section's header, the fields carried from block lines, labelled values and the file's name), and
the ``shape.Shape`` of the other lines (counted; the totals lines checked). ``None`` when the
profile asks for what only the line-by-line walk does (a block label anywhere on a line, a
pattern the Rust regex engine does not take, sections of a two-row header or labels restricted to
columns that move between sections): the caller then walks the lines in Python.
"""

from __future__ import annotations

import re

import polars as pl

from transforms.ingest.read import header as hd
from transforms.ingest.read import lines as ln
from transforms.ingest.read import readers as rd
from transforms.ingest.read.parsing import date_expr, number_expr
from transforms.ingest.read.row_checks import CellError
from transforms.ingest.read.shape import Shape, _as_cells, _header_key, _section_header, _Walk

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
         delimiter: str | None) -> tuple[tuple[rd.RawTable, hd.Match], Shape] | None:
    """The report ``frame`` (its non-blank lines, ``records`` the first of them as Python cells)
    walked as ``shape.shape_report`` walks it, or None (see the module's docstring)."""
    match = found.match
    profile, layout = match.profile, match.profile.report
    if any(not b.first for b in layout.blocks) or not _ok(
            [*(b.label for b in layout.blocks), *(b.value for b in layout.blocks), *(t.label for t in layout.totals),
             *layout.notes, *layout.end, *(v.label for v in layout.labels), *(v.value for v in layout.labels)]):
        return None
    width = len([c for c in frame.columns if c.startswith("c")])
    cols = [f"c{i}" for i in range(width)]
    s = [pl.col(c).str.strip_chars() for c in cols]
    filled = [x.is_not_null() & (x != "") for x in s]
    f = frame.with_row_index("__i").with_columns(
        pl.coalesce([pl.when(b).then(pl.lit(i)) for i, b in enumerate(filled)]).alias("__pos"),
        pl.coalesce([pl.when(b).then(x) for b, x in zip(filled, s, strict=True)]).alias("__first"),
        pl.sum_horizontal(filled).alias("__filled"),
    )
    head_key = _header_key(records[found.index][1])
    upper_key = _header_key(records[found.first][1]) if found.first != found.index else None

    def same(key: list[str]) -> pl.Expr:
        return pl.all_horizontal([(s[i].fill_null("").str.to_lowercase() == k) if i < width else pl.lit(k == "")
                                  for i, k in enumerate(key)])

    # every header line after the first starts a section (its columns may differ: a journal prints an
    # Overtime column only where a payroll has one); the line above a two-row header repeats too
    upper = same(upper_key) if upper_key is not None else pl.lit(False)
    first_pos, first_text = ln.first_cell(records[found.index][1])
    after = pl.col("__i") > found.index
    cand = f.filter(after & (pl.col("__pos") == first_pos)
                    & (pl.col("__first").str.to_lowercase() == first_text.lower()))
    if cand.height > MAX_SECTIONS or (cand.height and match.header_rows == 2 and not cand.select(
            same(head_key).all()).item()):
        return None
    sections = [(found.index, _section_header(records, found.index, match.header_rows))]
    known: dict[tuple, bool] = {}
    for row in cand.select("__i", *cols).iter_rows():
        cells = tuple((c or "").strip() for c in row[1:])
        if cells not in known:
            known[cells] = hd.match_headers(profile, list(cells)).ok if match.header_rows == 1 else True
        if known[cells]:
            names = list(cells) if match.header_rows == 1 else sections[0][1]
            sections.append((row[0], names))
    repeat = upper
    return _walk_sections(f, s, filled, width, found, sections, repeat, records, rel, sheet, delimiter)


def _walk_sections(f: pl.DataFrame, s, filled, width, found, sections, repeat, records, rel, sheet, delimiter):
    match = found.match
    profile, layout = match.profile, match.profile.report
    shape = Shape()
    section_rows = [i for i, _ in sections[1:]]
    is_section = pl.col("__i").is_in(section_rows)
    after = pl.col("__i") > found.index
    pre = pl.col("__i") < found.first
    first = pl.col("__first")
    end_rows = f.filter(after & ~repeat & ~is_section & pl.any_horizontal(
        [first.str.contains(_rx(f"^(?:{e})$", True)) for e in layout.end] or [pl.lit(False)])).get_column("__i")
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
    block_kind, values = _blocks(f, s, width, layout, profile, carried)
    maybe_block = (pre | live) & ~pl.col("__is_total") & ~pl.col("__is_note")
    # what block lines set is read on those lines only (a date in the layout's formats costs a parse each)
    hits = f.with_columns(pl.when(maybe_block).then(block_kind).alias("__block")).filter(pl.col("__block").is_not_null())
    hits = hits.select("__i", "__block", *[v.alias(f"__set_{x}") for x, v in values.items()])
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
    shape.summary = int(f.filter(pl.col("__i") >= end_at).height) if end_at is not None else 0
    shape.preamble = [" ".join(c.strip() for c in cells if c and c.strip()) for _, cells in records[:found.first]
                      if ln.block(cells, layout, profile, dict.fromkeys(carried)) is None]
    f = _labels(f, s, width, layout, profile, sections, values, carried)
    variant = pl.lit(0, dtype=pl.Int32)
    for v, (start, _) in enumerate(sections[1:], start=1):
        variant = pl.when(pl.col("__i") > start).then(v).otherwise(variant)
    f = f.with_columns(variant.alias("__variant"))
    walk = _Walk([], {}, carried, {})
    positions = [walk.positions(names) for _, names in sections]
    umatch = walk.match(match)
    f = f.filter(pl.col("__data") | pl.col("__is_total") | pl.col("__is_block"))  # what is left to read
    f, ragged = _place(f, width, positions, len(walk.names))
    shape.errors += _totals(f, layout, umatch, f"{rel}[{sheet}]" if sheet else rel)
    data = f.filter(pl.col("__data") & ~pl.col("__ragged"))
    u = len(walk.names)
    extra = [f"__block_{x}" for x in carried if f"__block_{x}" in data.columns]
    table_frame = data.select(*[pl.col(f"u{j}").alias(f"c{j}") for j in range(u)], pl.col("__line").cast(pl.Int64),
                              *extra)
    for k2, v2 in ln.name_fields(profile, rel).items():
        table_frame = table_frame.with_columns(pl.lit(v2, dtype=pl.String).alias(f"__name_{k2}"))
    table = rd.RawTable(list(walk.names), records[found.index][0], table_frame, ragged, sheet=sheet, delimiter=delimiter)
    return _as_cells(table, umatch), shape


def _blocks(f, s, width, layout, profile, carried) -> tuple[pl.Expr, dict[str, pl.Expr]]:
    """(the kind of block line each line is, or null; each carried field's value on those lines)."""
    first = pl.col("__first")
    nxt = pl.coalesce([pl.lit(None, dtype=pl.String)] + [
        pl.when((pl.col("__pos") < i) & s[i].is_not_null() & (s[i] != "")).then(s[i]) for i in range(width)])
    kind = pl.lit(None, dtype=pl.Int32)
    values: dict[str, list[pl.Expr]] = {}
    for k in reversed(range(len(layout.blocks))):
        b = layout.blocks[k]
        whole = first.str.contains(_rx(f"^(?:{b.label})$", True))
        rest = first.str.extract(_rx(f"^(?:{b.label}){SEP}(.+)$", True), re.compile(b.label).groups + 1).str.strip_chars()
        hit = whole | (rest.is_not_null() & (rest != ""))
        if b.alone:
            hit = hit & (pl.col("__filled") == 1)
        kind = pl.when(hit).then(k).otherwise(kind)
        for name in b.named:
            g = pl.coalesce(first.str.extract(_rx(f"^(?:{b.label})$", True), re.compile(b.label).groupindex[name]),
                            first.str.extract(_rx(f"^(?:{b.label}){SEP}.+$", True), re.compile(b.label).groupindex[name]))
            values.setdefault(name, []).append(pl.when(hit).then(g.str.strip_chars()))
        wanted = [x for x in b.fields if x not in b.named]
        value = pl.when(whole).then(nxt).otherwise(rest)
        groups = re.compile(b.value).groups
        for i, x in enumerate(wanted):
            got = value.str.extract(f"^(?:{b.value})$", i + 1) if groups > i else None
            v = pl.coalesce(pl.when(got != "").then(got.str.strip_chars()), value) if got is not None else value
            values.setdefault(x, []).append(pl.when(hit).then(v))
    out = {}
    for x, exprs in values.items():
        v = pl.coalesce(exprs)
        out[x] = _iso(v, profile) if x in ln.DATES else v
    return kind, out


def _iso(v: pl.Expr, profile) -> pl.Expr:
    """A date value as ISO when the layout's formats read it (as ``lines.parse_date``), else as given."""
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
        e = pl.lit(None, dtype=pl.String)
        for v, pos in enumerate(positions):
            if j in pos:
                e = pl.when(pl.col("__variant") == v).then(pl.col(f"c{pos.index(j)}")).otherwise(e)
        exprs.append(e.alias(f"u{j}"))
    beyond = pl.lit(False)
    for v, pos in enumerate(positions):
        extra = [pl.col(f"c{i}").str.strip_chars().fill_null("") != "" for i in range(len(pos), width)]
        if extra:
            beyond = pl.when(pl.col("__variant") == v).then(pl.any_horizontal(extra)).otherwise(beyond)
    f = f.with_columns(*exprs, (pl.col("__data") & beyond).alias("__ragged"))
    rag = f.filter(pl.col("__ragged"))
    ragged = [(int(r["__line"]), [c or "" for c in (r[f"c{i}"] for i in range(width))]) for r in rag.iter_rows(named=True)]
    return f, ragged


def _totals(f: pl.DataFrame, layout, match: hd.Match, where: str) -> list[CellError]:
    """Each totals line's checked fields against the lines it totals (to the cent)."""
    if not layout.totals or not f.select(pl.col("__is_total").any()).item():
        return []
    names = sorted({n for t in layout.totals for n in t.checks})
    nf = match.profile.number
    vals = {}
    for name in names:
        parts = match.profile.derived.get(name, [name])
        nums = [(number_expr(pl.col(f"u{match.columns[p]}"), nf), pl.col(f"u{match.columns[p]}").str.strip_chars())
                for p in parts if p in match.columns]
        if not nums:
            continue
        bad = pl.any_horizontal([(t.is_not_null() & (t != "")) & n.is_null() for n, t in nums])
        seen = pl.any_horizontal([t.is_not_null() & (t != "") for _, t in nums])
        vals[name] = pl.when(seen & ~bad).then(pl.sum_horizontal([n.fill_null(0.0) for n, _ in nums]))
    if not vals:
        return []
    # the sums a totals line is compared with, by running sums over the file (no window): since the
    # last totals or block line, since the last block line of the first kind (a payroll), the file's
    data = pl.col("__data")
    since = pl.col("__is_total") | pl.col("__is_block")
    block = (pl.col("__block") == 0).fill_null(False)
    run = []
    for k, v in [*vals.items(), ("n", pl.lit(1.0))]:
        dv = pl.when(data).then(v.fill_null(0.0) if k != "n" else v).otherwise(0.0)
        run.append(dv.cum_sum().alias(f"__g_{k}"))
        if k != "n":
            run.append(pl.when(data).then(v).sum().alias(f"__f_{k}"))
    f = f.with_columns(*[v.alias(f"__v_{k}") for k, v in vals.items()], *run, data.sum().alias("__f_n"))
    base = []
    for k in [*vals, "n"]:
        g = pl.col(f"__g_{k}")
        base += [(g - pl.when(since).then(g).forward_fill().shift(1).fill_null(0.0)).alias(f"__s_{k}"),
                 (g - pl.when(block).then(g).forward_fill().shift(1).fill_null(0.0)).alias(f"__b_{k}")]
    f = f.filter(pl.col("__is_total") | since | block).with_columns(base).filter(pl.col("__is_total"))
    errors = []
    for r in f.iter_rows(named=True):
        rule = layout.totals[r["__total"]]
        scope = {"since_last": "s", "block": "b", "file": "f"}[rule.scope]
        for name in rule.checks:
            said = r.get(f"__v_{name}")
            if said is None or f"__{scope}_{name}" not in r:
                continue
            summed = r[f"__{scope}_{name}"] or 0.0
            if abs(said - summed) > 0.005 + 1e-9:
                errors.append(CellError(where, r["__line"], name, f"{said:.2f}", "totals_mismatch",
                                        f"{name}: the totals line says {said:,.2f}; the {int(r[f'__{scope}_n'])} line(s) it "
                                        f"totals sum to {summed:,.2f}: a line is missing or was changed"))
    return errors


def frame_of(text: str, delimiter: str, width: int) -> pl.DataFrame | None:
    """Every non-blank line of a delimited text as cells ``c0..c<width-1>`` and its physical
    ``__line``, by Polars' reader; None when a record is not one line (a quoted cell holding a
    newline, a lone CR) or a line has more cells than ``width``."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None
    try:
        frame = pl.read_csv(text.encode("utf-8"), has_header=False, separator=delimiter, quote_char='"',
                            new_columns=[f"c{i}" for i in range(width)], schema_overrides=dict.fromkeys(
                                (f"c{i}" for i in range(width)), pl.String), infer_schema=False,
                            truncate_ragged_lines=False, row_index_name="__line", empty_string_is_null=False,
                            missing_columns="insert", raise_if_empty=False, comment_prefix=None, null_values=None)
    except (pl.exceptions.PolarsError, ValueError):
        return None
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if frame.height != lines or frame.width != width + 1:
        return None
    cols = [f"c{i}" for i in range(width)]
    if frame.select(pl.any_horizontal(pl.col(c).str.contains("\n").any() for c in cols)).item():
        return None
    if cols:
        frame = frame.with_columns(pl.col("c0").str.strip_prefix("\ufeff"))
    blank = pl.all_horizontal([pl.col(c).fill_null("").str.strip_chars() == "" for c in cols])
    return frame.filter(~blank).select(*cols, (pl.col("__line").cast(pl.Int64) + 1).alias("__line"))


__all__ = ["frame_of", "walk"]
