"""The bench's second data set: the same payroll shaped as employers send it (issue 28).

From a generated (clean) submission: every payroll file keeps its employers (about 50 a file) and
is written again in one of the layouts employers' systems write (rotating over the files): the
canonical columns as a spreadsheet saves them (dates ``1/13/2023``, money ``$1,234.56`` with
thousands and ``($12.50)`` for a negative, the FEIN ``10-0000001``, CRLF, quoted where a cell
holds a comma), a register with a line per earnings, tax and deduction code (``register_lines``),
a journal keyed by check date (``journal_lines``), a PEO's pipe-delimited export (``peo_export``).
The other files are the clean set's. Per-employer report exports (one workbook per payroll) are
measured apart (``formats.py``): their cost is per file, not per row.

The files are written by Polars expressions (vectorised formatting, ``write_csv``): the bytes
``transforms.synthetic.vendors`` writes row by row with the csv module for the same rows (its
``write_long`` and ``write_layout``; checked with ``cmp`` on the 1M set), in seconds instead of
minutes at 10M rows. What is vectorised replays the row-by-row arithmetic exactly: the same float
operations in the same order (a Python ``round`` is Polars' half-to-even, an ``int()`` a cast),
the deductions' random shares drawn from the same ``random.Random(0)`` sequence per file.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import polars as pl

LAYOUTS = ("canonical", "register_lines", "journal_lines", "peo_export")

S, I64, F64 = pl.String, pl.Int64, pl.Float64
CRLF = "\r\n"


# --- the formatting of transforms.synthetic.vendors and the spreadsheet, as expressions ----------

def _cents(x: pl.Expr) -> pl.Expr:
    """``vendors._cents``: '1234.5' -> 123450 exactly (a sign, whole part, first two decimals)."""
    body = x.str.strip_chars_start("+-")
    whole = body.str.extract(r"^([^.]*)", 1)
    frac = body.str.extract(r"^[^.]*\.(.*)$", 1).fill_null("")
    v = (pl.when(whole == "").then(0).otherwise(whole.cast(I64)) * 100
         + (frac + "00").str.slice(0, 2).cast(I64))
    return pl.when(x.str.starts_with("-")).then(-v).otherwise(v)


def _dec(c: pl.Expr) -> pl.Expr:
    """``vendors._dec``: cents -> '-12.50'."""
    a = c.abs()
    return (pl.when(c < 0).then(pl.lit("-")).otherwise(pl.lit(""))
            + (a // 100).cast(S) + "." + (a % 100).cast(S).str.zfill(2))


def _thousands(n: pl.Expr) -> pl.Expr:
    """A non-negative integer with a comma every three digits (Python's ``f"{n:,}"``)."""
    return n.cast(S).str.reverse().str.replace_all(r"(\d{3})", "$1,").str.strip_chars_end(",").str.reverse()


def _money(c: pl.Expr) -> pl.Expr:
    """``vendors._money_adp`` (and the spreadsheet's money): cents -> '$1,234.56', '($12.50)'."""
    a = c.abs()
    s = "$" + _thousands(a // 100) + "." + (a % 100).cast(S).str.zfill(2)
    return pl.when(c < 0).then("(" + s + ")").otherwise(s)


def _date(x: pl.Expr) -> pl.Expr:
    return x.str.to_date("%Y-%m-%d")


def _day(d: pl.Expr) -> pl.Expr:
    """A spreadsheet's date: 1/13/2023."""
    return d.dt.month().cast(S) + "/" + d.dt.day().cast(S) + "/" + d.dt.year().cast(S)


def _dashed(digits: pl.Expr) -> pl.Expr:
    return digits.str.slice(0, 3) + "-" + digits.str.slice(3, 2) + "-" + digits.str.slice(5)


def _split(frame: pl.DataFrame, hours_c: pl.Expr, pay_c: pl.Expr, start: pl.Expr, end: pl.Expr) -> pl.DataFrame:
    """``vendors._split`` (reg_h, ot_h, reg_p, ot_p) of each row: hours above 40 a week are
    overtime. The overtime pay is Python's ``round(pay * ot / hours)``: an int product, a true
    division in floats, half to even; a float holds the product exactly below 2**53 (a row would
    need millions of dollars and hours to come near), checked."""
    days = (end - start).dt.total_days() + 1
    cap = 4000 * days // 7
    ot_h = pl.when(hours_c > 0).then(pl.max_horizontal(pl.lit(0, I64), hours_c - cap)).otherwise(0)
    with_ot = frame.select(hours_c.alias("h"), pay_c.alias("p"), ot_h.alias("ot_h"))
    product = pl.col("p").cast(pl.Int128) * pl.col("ot_h").cast(pl.Int128)
    if with_ot.height and with_ot.select(product.abs().max()).item() >= 2**53:
        raise ValueError("a row's pay times overtime hours is beyond 2**53: a float would not hold it exactly")
    ot_p = pl.when(pl.col("h") > 0).then(
        ((pl.col("p") * pl.col("ot_h")).cast(F64) / pl.col("h").cast(F64)).round(0).cast(I64)).otherwise(0)
    return with_ot.select((pl.col("h") - pl.col("ot_h")).alias("reg_h"), "ot_h", (pl.col("p") - ot_p).alias("reg_p"),
                          ot_p.alias("ot_p"))


def _cells(frame: pl.DataFrame, *cells: pl.Expr | str) -> pl.DataFrame:
    """The cells of each line, in order (named by position: the header is given when written)."""
    return frame.select((pl.col(c) if isinstance(c, str) else c).alias(f"c{i}") for i, c in enumerate(cells))


def _write(frame: pl.DataFrame, header: list[str], path: Path, *, separator: str = ",") -> Path:
    """The csv module's ``writer(lineterminator="\\r\\n")``: quotes only where needed; an empty
    cell is a null here (Polars writes an empty string as ``""``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.columns = header
    frame.write_csv(path, separator=separator, line_terminator=CRLF, quote_style="necessary")
    return path


# --- the layouts -------------------------------------------------------------------------------

SPREADSHEET_COLS = ["employer_id", "employee_id", "ssn", "period_start", "period_end", "hours", "gross_wages",
                    "employer_taxes"]


def write_spreadsheet_csv(rows: pl.DataFrame, path: Path) -> Path:
    """The canonical columns as a spreadsheet saves them to CSV."""
    e = pl.col("employer_id")

    def money(c: str) -> pl.Expr:  # round(float(v) * 100): a float product, half to even
        return _money((pl.col(c).cast(F64) * 100).round(0).cast(I64))

    out = _cells(rows, e.str.slice(0, 2) + "-" + e.str.slice(2), "employee_id", "ssn",
                      _day(_date(pl.col("period_start"))), _day(_date(pl.col("period_end"))), "hours",
                      money("gross_wages"), money("employer_taxes"))
    return _write(out, SPREADSHEET_COLS, path)


PEO_HEADER = ["CLIENT_ID", "CLIENT_FEIN", "WSE_ID", "WSE_SSN", "PER_BEG_DT", "PER_END_DT", "REG_HRS", "OT_HRS",
              "REG_WAGES", "OT_WAGES", "ER_TAX_TOTAL", "WORKSITE_ST"]


def write_peo_export(rows: pl.DataFrame, path: Path) -> Path:
    """``vendors.write_layout("peo_export", ...)``: pipe-delimited, periods as YYYYMMDD, hours and
    wages split into regular and overtime."""
    s, e = _date(pl.col("period_start")), _date(pl.col("period_end"))
    split = _split(rows, _cents(pl.col("hours")), _cents(pl.col("gross_wages")), s, e)
    ein = pl.col("employer_id")
    out = _cells(
        pl.concat([rows, split], how="horizontal"), "C" + ein.str.tail(4), ein, "employee_id", pl.col("ssn").str.replace_all("-", "", literal=True),
        s.dt.strftime("%Y%m%d"), e.dt.strftime("%Y%m%d"), _dec(pl.col("reg_h")), _dec(pl.col("ot_h")),
        _dec(pl.col("reg_p")), _dec(pl.col("ot_p")), _dec(_cents(pl.col("employer_taxes"))), pl.lit("NJ"))
    return _write(out, PEO_HEADER, path.with_suffix(".txt"), separator="|")


# vendors._TAX_SPLIT and vendors._CODES
TAX_SPLIT = {
    "register_lines": (("FICA-ER", 0.56), ("MED-ER", 0.13), ("FUTA", 0.05), ("SDI-ER", 0.02), ("SUI-ER", None)),
    "journal_lines": (("SOC SEC ER", 0.56), ("MEDICARE ER", 0.13), ("FUTA", 0.05), ("NJ SDI ER", 0.02), ("NJ SUI ER", None)),
}
CODES = {
    "register_lines": ("REG", "OT", (("FIT", 0.09), ("FICA-EE", 0.062), ("401K", 0.03))),
    "journal_lines": ("REGULAR", "OVERTIME", (("FED WH", 0.09), ("SOC SEC EE", 0.062), ("HEALTH", 0.02))),
}
LONG_HEADERS = {
    "register_lines": ["Co FEIN", "File #", "Tax ID (SSN)", "Check #", "Pay Date", "Period Beginning Date",
                       "Period Ending Date", "Line Type", "Code", "Hours", "Amount"],
    "journal_lines": ["Company Tax ID", "Employee No", "Social Security No", "Check Date", "Pay Frequency", "Check No",
                      "Code Type", "Code", "Hours", "Amount"],
}
KINDS = {"register_lines": ("E", "T", "D"), "journal_lines": ("Earning", "Employer Tax", "Deduction")}
FREQUENCY_WORDS = {"weekly": "Weekly", "biweekly": "Bi-Weekly", "semimonthly": "Semi-Monthly", "monthly": "Monthly"}

_DRAWS: list[float] = []  # random.Random(0)'s sequence: every file's deductions start it again


def _draws(n: int) -> pl.Series:
    if len(_DRAWS) < n:
        rng = random.Random(0)
        _DRAWS[:] = [rng.random() for _ in range(n)]
    return pl.Series("r", _DRAWS[:n], dtype=F64)


def _check(rows: pl.DataFrame) -> pl.Expr:
    """``r.get("check_id") or f"{700000 + i}"``."""
    number = (700000 + pl.col("row")).cast(S)
    if "check_id" not in rows.columns:
        return number.alias("check")
    return pl.when(pl.col("check_id").fill_null("") != "").then(pl.col("check_id")).otherwise(number).alias("check")


def _frequency(s: pl.Expr, e: pl.Expr) -> pl.Expr:
    """``vendors.period_frequency`` as its words (null: no pay period ending on ``e``)."""
    days = (e - s).dt.total_days() + 1
    month_end = e.dt.month_end().dt.day()
    sd, ed, same_month = s.dt.day(), e.dt.day(), s.dt.month() == e.dt.month()
    return (pl.when(days == 7).then(pl.lit(FREQUENCY_WORDS["weekly"]))
            .when(days == 14).then(pl.lit(FREQUENCY_WORDS["biweekly"]))
            .when((sd == 1) & (ed == 15) | (sd == 16) & (ed == month_end) & same_month)
            .then(pl.lit(FREQUENCY_WORDS["semimonthly"]))
            .when((sd == 1) & (ed == month_end) & same_month).then(pl.lit(FREQUENCY_WORDS["monthly"]))
            .otherwise(pl.lit(None, S)))


def write_long(layout: str, rows: pl.DataFrame, path: Path) -> Path:
    """``vendors.write_long(layout, rows, path)`` (seed 0): per row a regular and an overtime
    earnings line, employer tax lines adding up to the row's taxes, employee tax and deduction
    lines; the register writes the file's earnings lines, then its tax lines, then its deductions;
    the journal each check's lines together (earnings, taxes, the rest), no period."""
    reg_code, ot_code, ignored = CODES[layout]
    n = rows.height
    s, e = _date(pl.col("period_start")), _date(pl.col("period_end"))
    hours_c, pay_c, tax_c = _cents(pl.col("hours")), _cents(pl.col("gross_wages")), _cents(pl.col("employer_taxes"))
    draws = _draws(len(ignored) * n)  # row by row, code by code
    base = rows.with_row_index("row").with_columns(
        pl.col("row").cast(I64), hours_c.alias("hc"), pay_c.alias("pc"), tax_c.alias("tc"),
        s.alias("s"), e.alias("e"), pl.col("ssn").str.replace_all("-", "", literal=True).alias("digits"),
    ).with_columns(
        pl.when(pl.col("hc") < 0).then(-1).otherwise(1).alias("sh"),
        pl.when(pl.col("pc") < 0).then(-1).otherwise(1).alias("sp"),
        pl.when(pl.col("tc") < 0).then(-1).otherwise(1).alias("st"),
        _check(rows),
    )
    base = pl.concat([base, _split(base, pl.col("hc").abs(), pl.col("pc").abs(), pl.col("s"), pl.col("e"))],
                     how="horizontal")
    ein = pl.col("employer_id")
    if layout == "register_lines":
        key = [(ein.str.slice(0, 2) + "-" + ein.str.slice(2)).alias("k0"), pl.col("employee_id").alias("k1"),
               _dashed(pl.col("digits")).alias("k2"), pl.col("check").alias("k3"),
               pl.col("e").dt.strftime("%m/%d/%Y").alias("k4"), pl.col("s").dt.strftime("%m/%d/%Y").alias("k5"),
               pl.col("e").dt.strftime("%m/%d/%Y").alias("k6")]
        money, check = _money, "k3"
    else:
        freq = base.select(_frequency(pl.col("s"), pl.col("e"))).to_series()
        if freq.null_count():
            bad = base.filter(freq.is_null()).row(0, named=True)
            raise ValueError(f"{layout}: the period {bad['s']}..{bad['e']} is no pay period ending on its check date")
        base = base.with_columns(freq.alias("freq"))
        key = [ein.alias("k0"), pl.col("employee_id").alias("k1"), pl.col("digits").alias("k2"),
               pl.col("e").dt.strftime("%m/%d/%Y").alias("k3"), pl.col("freq").alias("k4"), pl.col("check").alias("k5")]
        money, check = _dec, "k5"
    keyed = base.select("row", *key, "sh", "sp", "st", "reg_h", "ot_h", "reg_p", "ot_p", "tc", "pc")
    kinds = KINDS[layout]

    def lines(frame: pl.DataFrame, kind: int, sub: int, code: str, hours: pl.Expr | None, cents: pl.Expr) -> pl.DataFrame:
        return frame.select("row", pl.lit(sub, I64).alias("sub"), pl.lit(kind, I64).alias("kind_order"),
                            pl.col("^k\\d$"), pl.lit(kinds[kind]).alias("kind"), pl.lit(code).alias("code"),
                            (hours if hours is not None else pl.lit(None, S)).alias("hours"), cents.alias("cents"))

    earn = pl.concat([
        lines(keyed, 0, 0, reg_code, _dec(pl.col("sh") * pl.col("reg_h")), pl.col("sp") * pl.col("reg_p")),
        lines(keyed.filter((pl.col("ot_h") != 0) | (pl.col("ot_p") != 0)), 0, 1, ot_code,
              _dec(pl.col("sh") * pl.col("ot_h")), pl.col("sp") * pl.col("ot_p")),
    ]).sort("row", "sub")
    # employer taxes: int(|taxes| * share) per code, the last code what the others leave
    parts, taken = [], pl.lit(0, I64)
    for k, (code, share) in enumerate(TAX_SPLIT[layout]):
        part = (pl.col("tc").abs() - taken) if share is None else (pl.col("tc").abs().cast(F64) * share).cast(I64)
        taken = taken + part
        with_part = keyed.with_columns(part.alias("part"))
        parts.append(lines(with_part.filter(pl.col("part") != 0), 1, k, code, None, pl.col("st") * pl.col("part")))
    taxes = pl.concat(parts).sort("row", "sub")
    # deductions: sp * int(|pay| * share * (0.8 + 0.4 * r)), r the file's draws in row, code order
    deds = []
    for k, (code, share) in enumerate(ignored):
        cents = pl.col("pc").abs().cast(F64) * share * (0.8 + 0.4 * pl.col("r"))
        with_c = keyed.with_columns(draws.gather_every(len(ignored), offset=k)).with_columns(
            (pl.col("sp") * cents.cast(I64)).alias("ded"))
        deds.append(lines(with_c.filter(pl.col("ded") != 0), 2, k, code, None, pl.col("ded")))
    deductions = pl.concat(deds).sort("row", "sub")
    out = pl.concat([earn, taxes, deductions])
    if layout == "journal_lines":
        out = out.sort(check, "kind_order", maintain_order=True)
    out = out.select(pl.col("^k\\d$"), "kind", "code", "hours", money(pl.col("cents")))
    return _write(out, LONG_HEADERS[layout], path.with_suffix(".csv"))


def write_layout(layout: str, rows: pl.DataFrame, path: Path) -> Path:
    if layout == "canonical":
        return write_spreadsheet_csv(rows, path.with_suffix(".csv"))
    if layout == "peo_export":
        return write_peo_export(rows, path)
    return write_long(layout, rows, path)


def shaped(clean: Path) -> Path:
    """The shaped copy of the clean submission ``clean`` (made once, beside it)."""
    out = clean.with_name(clean.name + "-shaped")
    marker = out / ".bench.json"
    info = json.loads((clean / ".bench.json").read_text())
    if marker.exists() and json.loads(marker.read_text()).get("generator") == info.get("generator"):
        return out
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(clean, out, ignore=shutil.ignore_patterns("payroll"))
    (out / "payroll").mkdir()
    for k, src in enumerate(sorted((clean / "payroll").glob("*.csv"))):
        rows = pl.read_csv(src, infer_schema=False)
        layout = LAYOUTS[k % len(LAYOUTS)]
        name = src.name if layout == "canonical" else f"{src.stem}_{layout}"
        write_layout(layout, rows, out / "payroll" / name)
    marker.write_text(json.dumps({**info, "shaped": list(LAYOUTS)}, indent=1))
    return out
