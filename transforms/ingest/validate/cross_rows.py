"""Rules over the rows of a whole run that passed the suites (Polars, vectorised), spec section 1
("Payroll as employers' systems write it").

- every dataset: an exact copy of a whole line (every value equal, the check or line id and any
  other column of the file included) is a file sent twice: the later copy is rejected, pointing
  at the first (``duplicate_row``). Values, not how they are written: typed fields as typed, a
  check id of digits without its leading zeros, the other cells as ``cell_values.compared``
  reads them (a file saved again by a spreadsheet is still a copy). Payroll rows of one employee
  that merely cover the same days (an off-cycle or bonus check, a manual check, a correction, one
  line per earnings code) add;
- other datasets: a key given more than once with different values (``duplicate_key``);
- payroll of a line-per-code export: the code lines of one check are summed into one canonical
  row (``aggregate_lines``), every line kept for rejects and ``explain``;
- payroll: negative lines (reversals, voids) net against the rest; an employee-year whose net
  hours, wages or employer taxes come out negative is an error naming its lines
  (``negative_nets``, rule ``negative_net``);
- payroll: the hourly rate of a pay period is plausible (wages / hours between $1 and $500) over
  all the lines of the employee for that period (``implausible_rates``, rule ``hourly_rate``):
  one line of a period may be a correction of hours only or of pay only, or a piece of a check
  split over several lines; the period's sum is what was paid for it.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from transforms import schema
from transforms.ingest.read.cast.cell_values import check_value

CROSS_SCHEMA = {"__order": pl.Int64, "rule": pl.String, "column": pl.String, "message": pl.String}
ORDER_BASE = 10_000_000_000  # __order = file index * ORDER_BASE + line

UNIQUE_KEYS = {
    "applications": ["application_id"],
    "roster": ["application_id", "employer_id", "employee_id"],
    "certifications": ["certification_id"],
    "employer_rates": ["employer_id", "rate_year_start"],
    "control_groups": ["group_id", "employer_id", "member_from"],
    "estimate_requests": ["request_id"],
}
# columns a staged line carries beside its schema (transforms.ingest.read.cast.canonical): the code, its hours and
# amount cells and what it counts as (long layouts), a hash of the values of the cells no field maps
LINE_EXTRAS = ("__code", "__counts", "__hours_cell", "__amount", "__extra", "__ssn_given")
NET_EPS = 1e-6  # dollars or hours: a net of exactly zero summed in floating point is not negative
# plausible hourly rate of a pay period (catches hours and wages swapped, a lost decimal point)
RATE_RANGE = (1.0, 500.0)
RUN_COLUMNS = {"__order": pl.Int64, "employer_id": pl.String, "employee_id": pl.String, "period_start": pl.Date,
               "period_end": pl.Date, "hours": pl.Float64, "gross_wages": pl.Float64, "employer_taxes": pl.Float64,
               "source_file": pl.String, "source_line": pl.Int64}


def cross_row_rejects(dataset: str, rows: pl.DataFrame) -> pl.DataFrame:
    """Exact copies of a line (the later copy) and conflicting keys (all rows).

    ``rows``: staged rows of the run that passed the suite, with ``__order`` (file order, line).
    Returns ``__order, rule, column, message``.
    """
    if rows.height == 0:
        return pl.DataFrame(schema=CROSS_SCHEMA)
    values = [c for c in rows.columns if c not in schema.LINEAGE and c != "__order"]
    if dataset == "payroll":  # a check id by its value (``000123`` saved again as ``123``)
        if "check_id" in rows.columns:
            rows = rows.with_columns(check_value(pl.col("check_id")))
        return _payroll_duplicates(rows, values)
    dup = _exact_duplicates(rows, values)
    rest = rows.sort("__order").filter(pl.struct(values).is_first_distinct())
    key = UNIQUE_KEYS[dataset]
    conflict = rest.filter(pl.len().over(key) > 1).select(
        "__order", pl.lit("duplicate_key").alias("rule"), pl.lit(key[-1]).alias("column"),
        pl.format("{} appears more than once with different values", pl.lit(" + ".join(key))).alias("message"),
    )
    return pl.concat([dup.cast(CROSS_SCHEMA), conflict.cast(CROSS_SCHEMA)])


def _exact_duplicates(rows: pl.DataFrame, values: list[str]) -> pl.DataFrame:
    """Every later copy of a row (same values), pointing at the first copy (in ``__order``)."""
    rows = rows.sort("__order")
    file = pl.col("source_file")
    if "source_sheet" in rows.columns:  # a workbook's line is a sheet's: file[sheet]
        file = pl.when(pl.col("source_sheet").is_null()).then(file).otherwise(
            pl.format("{}[{}]", file, pl.col("source_sheet")))
    where = pl.format("line {} of {}", pl.col("source_line"), file)
    first = rows.with_columns(where.first().over(values, mapping_strategy="group_to_rows").alias("__first"))
    return first.filter(~pl.struct(values).is_first_distinct()).select(
        "__order", pl.lit("duplicate_row").alias("rule"), pl.lit(None, dtype=pl.String).alias("column"),
        pl.format("exact duplicate of {}", pl.col("__first")).alias("message"),
    )


def _same_as_prev(cols: list[str]) -> pl.Expr:
    return pl.all_horizontal([pl.col(c) == pl.col(c).shift(1) for c in cols]).fill_null(False)


def _repeated(h: pl.Series) -> pl.Series | None:
    """Where a value of ``h`` occurs more than once (None: nowhere). By a sort (Polars sorts on
    every core: a third of ``is_duplicated``'s time at 5M values) and the sorted neighbours."""
    s = h.sort().to_numpy()
    same = s[1:] == s[:-1]
    if not same.any():
        return None
    return h.is_in(pl.Series(np.unique(s[1:][same])).implode())


def _payroll_duplicates(rows: pl.DataFrame, values: list[str]) -> pl.DataFrame:
    """Exact copies among payroll rows, looked for only among rows whose values hash alike (one
    hash of each row's values; a copy hashes as its original, and rows that merely collide are
    told apart by comparing their values): a line-per-code export's lines all share an employee
    and a period, so that key alone would compare every line."""
    h = rows.select(values).hash_rows()
    cand = _repeated(h)
    if cand is None:
        return pl.DataFrame(schema=CROSS_SCHEMA)
    return _exact_duplicates(rows.filter(cand), values).cast(CROSS_SCHEMA)


# --- line-per-code exports -----------------------------------------------------------------------

# a canonical row is a copy of one an earlier run stored when all of these are equal (spec section 1)
RESENT_KEY = ["employer_id", "employee_id", "ssn_hash", "ssn_last4_hash", "period_start", "period_end", "hours",
              "gross_wages", "employer_taxes", "check_id", "pay_date", "line_count"]
CHECK_KEY = ["employer_id", "employee_id", "ssn_hash", "ssn_last4_hash", "period_start", "period_end", "check_id", "pay_date"]


def _split(rows: pl.DataFrame, mask: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows where not ``mask``, rows where ``mask``), each in the rows' order. The rows of a run
    come file by file, a line-per-code export's all lines: the two are a few runs of rows, taken
    as slices (no copy of a column) where they are few, else filtered."""
    runs = mask.rle()
    if runs.len() > 64:
        return rows.filter(~mask), rows.filter(mask)
    parts: dict[bool, list[pl.DataFrame]] = {False: [], True: []}
    offset = 0
    for length, value in runs.struct.unnest().iter_rows():
        parts[bool(value)].append(rows.slice(offset, length))
        offset += length
    empty = rows.clear()
    return (pl.concat(parts[False], rechunk=False) if parts[False] else empty,
            pl.concat(parts[True], rechunk=False) if parts[True] else empty)


def aggregate_lines(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(canonical rows, code lines): the code lines of each check of a long-layout file (rows
    with ``__code``) summed into one canonical row per file, employee, check and period
    (``source_line`` its first line, ``line_count`` its lines, ``__order`` its first line's);
    the other rows as they are. Code lines: ``schema.PAYROLL_LINES`` + ``__order``, each with
    the ``row_line`` of its row. Both without the line extras."""
    base = [c for c in rows.columns if c not in LINE_EXTRAS]
    if "__code" not in rows.columns:
        return rows.select(base), pl.DataFrame(schema={**schema.PAYROLL_LINES, "__order": pl.Int64})
    wide, lines = _split(rows, rows.get_column("__code").is_not_null())
    wide = wide.select(base)
    lines = lines.with_columns((pl.col("__order") // ORDER_BASE).alias("__fileno"))
    if lines.height == 0:
        return wide, pl.DataFrame(schema={**schema.PAYROLL_LINES, "__order": pl.Int64})
    key = ["__fileno", *CHECK_KEY]
    agg = lines.with_row_index("__r").group_by(key, maintain_order=True).agg(
        pl.col("hours").sum(), pl.col("gross_wages").sum(), pl.col("employer_taxes").sum(),
        pl.len().cast(pl.Int32).alias("line_count"), pl.col("source_file").first(), pl.col("source_sheet").first(),
        pl.col("source_line").min(), pl.col("__order").min(), pl.col("__r"),
    )
    # each line's row (its check's first line), from the one grouping: the lines' places, scattered
    places = agg.select(pl.col("__r").explode(), pl.col("source_line").repeat_by(pl.col("line_count")).explode())
    row_line = np.empty(lines.height, dtype=np.int64)
    row_line[places.get_column("__r").to_numpy()] = places.get_column("source_line").to_numpy()
    lines = lines.with_columns(pl.Series("row_line", row_line))
    agg = agg.drop("__r")
    canon = pl.concat([wide, agg.select(base).cast(wide.schema)], how="vertical")
    code_lines = lines.select(
        *[c for c in schema.PAYROLL_LINES if c in CHECK_KEY], pl.col("__code").alias("code"),
        pl.col("__counts").alias("counts_as"), pl.col("__hours_cell").alias("hours"), pl.col("__amount").alias("amount"),
        "row_line", *schema.LINEAGE, "__order",
    ).select(*schema.PAYROLL_LINES, "__order").cast({**schema.PAYROLL_LINES, "__order": pl.Int64})
    return canon, code_lines


# --- reversals net -------------------------------------------------------------------------------

def _year_parts(rows: pl.DataFrame) -> pl.DataFrame:
    """Each row's share of its hours, wages and taxes on days of each calendar year it touches
    (spread evenly over its days, spec section 3): ``__order, employer_id, employee_id, year,
    hours, gross_wages, employer_taxes``."""
    n = (pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1
    y0 = pl.col("period_start").dt.year()
    y1 = pl.col("period_end").dt.year()
    base = rows.select("__order", "employer_id", "employee_id", "period_start", "period_end", "hours", "gross_wages",
                       "employer_taxes", n.alias("__n"), y0.alias("__y0"), y1.alias("__y1"))
    parts = base.with_columns(pl.int_ranges("__y0", pl.col("__y1") + 1).alias("year")).explode("year")
    first = pl.max_horizontal("period_start", pl.date(pl.col("year"), 1, 1))
    last = pl.min_horizontal("period_end", pl.date(pl.col("year"), 12, 31))
    frac = ((last - first).dt.total_days() + 1) / pl.col("__n")
    return parts.select("__order", "employer_id", "employee_id", pl.col("year").cast(pl.Int32),
                        *[(pl.col(c) * frac).alias(c) for c in ("hours", "gross_wages", "employer_taxes")])


def negative_years(rows: pl.DataFrame) -> pl.DataFrame:
    """The employee-years whose net hours, wages or employer taxes are negative:
    ``employer_id, employee_id, year, hours, gross_wages, employer_taxes`` (the nets)."""
    # only an employee with a negative line can net negative: the others are not looked at (at
    # state scale the sums of every employee-year cost more than the rest of these rules)
    neg = pl.any_horizontal(pl.col(c) < 0 for c in ("hours", "gross_wages", "employer_taxes"))
    who = rows.filter(neg).select("employer_id", "employee_id").unique()
    if who.height == 0:
        return pl.DataFrame(schema={"employer_id": pl.String, "employee_id": pl.String, "year": pl.Int32,
                                    "hours": pl.Float64, "gross_wages": pl.Float64, "employer_taxes": pl.Float64})
    rows = rows.join(who, on=["employer_id", "employee_id"], how="semi")
    nets = _year_parts(rows).group_by("employer_id", "employee_id", "year").agg(
        pl.col("hours").sum(), pl.col("gross_wages").sum(), pl.col("employer_taxes").sum())
    return nets.filter(pl.any_horizontal(pl.col(c) < -NET_EPS for c in ("hours", "gross_wages", "employer_taxes")))


def negative_nets(rows: pl.DataFrame, earlier: pl.DataFrame | None = None, *, max_lines: int = 10) -> pl.DataFrame:
    """``negative_net`` rejects (CROSS_SCHEMA) of this run's canonical payroll ``rows``: every
    row of an employee-year whose net hours, wages or employer taxes, over this run's rows and
    ``earlier`` ones (the lake's rows of the same employees; never rejected here), are negative.
    The message names the net and up to ``max_lines`` of the lines involved. ``earlier`` needs
    no ``__order`` (its rows get negative ones)."""
    allrows = _with_earlier(rows, earlier)
    neg = negative_years(allrows)
    if neg.height == 0:
        return pl.DataFrame(schema=CROSS_SCHEMA)
    parts = _year_parts(allrows).join(neg.select("employer_id", "employee_id", "year"), on=["employer_id", "employee_id", "year"],
                                     how="semi")
    where = allrows.select("__order", pl.format("{}:{}", "source_file", "source_line").alias("__where"))
    involved = parts.join(where, on="__order", how="left").sort("__order")
    listing = involved.group_by("employer_id", "employee_id", "year").agg(
        pl.col("__where").unique(maintain_order=True).head(max_lines).str.join(", ").alias("__lines"),
        pl.col("__where").n_unique().alias("__n"))
    first_neg = (pl.when(pl.col("hours") < -NET_EPS).then(pl.lit("hours"))
                 .when(pl.col("gross_wages") < -NET_EPS).then(pl.lit("gross_wages")).otherwise(pl.lit("employer_taxes")))
    desc = neg.join(listing, on=["employer_id", "employee_id", "year"], how="left").with_columns(
        first_neg.alias("column"),
        pl.format("{} h, {} wages, {} employer taxes", pl.col("hours").round(2), pl.col("gross_wages").round(2),
                  pl.col("employer_taxes").round(2)).alias("__nets"),
    )
    mine = involved.filter(pl.col("__order").is_in(rows.get_column("__order").implode())).select(
        "__order", "employer_id", "employee_id", "year").unique()
    out = mine.join(desc, on=["employer_id", "employee_id", "year"], how="left").sort("__order", "year")
    more = pl.when(pl.col("__n") > max_lines).then(pl.format(" and {} more", pl.col("__n") - max_lines)).otherwise(pl.lit(""))
    return out.unique("__order", keep="first", maintain_order=True).select(
        "__order", pl.lit("negative_net").alias("rule"), "column",
        pl.format("the payroll of employee {} nets negative in {} ({}) over lines {}{}: a reversal or void "
                  "without the check it reverses, or a sign error; send the missing line or correct the sign",
                  "employee_id", "year", "__nets", "__lines", more).alias("message"),
    ).cast(CROSS_SCHEMA)


def _with_earlier(rows: pl.DataFrame, earlier: pl.DataFrame | None) -> pl.DataFrame:
    """``rows`` and ``earlier`` (given negative ``__order``s) in ``RUN_COLUMNS``."""
    allrows = rows.select(list(RUN_COLUMNS)).cast(RUN_COLUMNS)
    if earlier is not None and earlier.height:
        old = earlier.with_columns((-pl.int_range(1, pl.len() + 1, dtype=pl.Int64)).alias("__order"))
        allrows = pl.concat([allrows, old.select(list(RUN_COLUMNS)).cast(RUN_COLUMNS)], how="vertical")
    return allrows


PERIOD = ["employer_id", "employee_id", "period_start", "period_end"]


def _two(e: pl.Expr) -> pl.Expr:
    """A number as text with two decimals (64.00, not 64.0)."""
    return e.round(2).cast(pl.Decimal(20, 2)).cast(pl.String)


def _period_rates(rows: pl.DataFrame) -> pl.DataFrame:
    """The pay periods (employee + period) whose hourly rate, over all their lines, is
    implausible: ``PERIOD`` + ``hours``, ``gross_wages`` (sums). A period with hours and no pay
    (or pay and no hours, or sums of opposite signs) has no rate to check."""
    h, w = pl.col("hours"), pl.col("gross_wages")
    lo, hi = RATE_RANGE
    # a period whose every line is paid at a plausible rate (or is empty) has a plausible rate
    # (a sum of such lines is a weighted mean of their rates): only the other periods are summed
    plain = ((h > 0) & (w > 0) & (w / h >= lo) & (w / h <= hi)) | ((h == 0) & (w == 0))
    suspects = rows.filter(~plain.fill_null(False)).select(PERIOD).unique()
    if suspects.height == 0:
        return pl.DataFrame(schema={**dict.fromkeys(PERIOD[:2], pl.String), "period_start": pl.Date, "period_end": pl.Date,
                                    "hours": pl.Float64, "gross_wages": pl.Float64})
    sums = rows.join(suspects, on=PERIOD, how="semi").group_by(PERIOD).agg(h.sum(), w.sum())
    same_sign = ((h > NET_EPS) & (w > NET_EPS)) | ((h < -NET_EPS) & (w < -NET_EPS))
    return sums.filter(same_sign & ((w / h < lo) | (w / h > hi)))


def implausible_rates(rows: pl.DataFrame, earlier: pl.DataFrame | None = None, *, max_lines: int = 10) -> pl.DataFrame:
    """``hourly_rate`` rejects (CROSS_SCHEMA) of this run's canonical payroll ``rows``: every row
    of a pay period (employee + period_start..period_end) whose wages over hours, summed over this
    run's rows and ``earlier`` ones (the lake's), fall outside ``RATE_RANGE``."""
    allrows = _with_earlier(rows, earlier)
    bad = _period_rates(allrows)
    if bad.height == 0:
        return pl.DataFrame(schema=CROSS_SCHEMA)
    involved = allrows.join(bad.select(PERIOD), on=PERIOD, how="semi").sort("__order")
    listing = involved.group_by(PERIOD).agg(
        pl.format("{}:{}", "source_file", "source_line").head(max_lines).str.join(", ").alias("__lines"))
    desc = bad.join(listing, on=PERIOD, how="left")
    mine = involved.filter(pl.col("__order") >= 0).select("__order", *PERIOD).join(desc, on=PERIOD, how="left")
    lo, hi = RATE_RANGE
    return mine.select(
        "__order", pl.lit("hourly_rate").alias("rule"), pl.lit("gross_wages").alias("column"),
        pl.format("implausible hourly rate over the pay period {} to {} (wages {} / hours {} = ${} an hour, outside "
                  "${} to ${}; lines {}): hours and wages swapped, or a decimal point lost? If it is what was paid (a "
                  "14(c) certificate or a special licence before 2019), the Department confirms the line",
                  "period_start", "period_end", _two(pl.col("gross_wages")), _two(pl.col("hours")),
                  _two(pl.col("gross_wages") / pl.col("hours")), pl.lit(f"{lo:g}"), pl.lit(f"{hi:g}"),
                  "__lines").alias("message"),
    ).cast(CROSS_SCHEMA)

