"""Bounds, never crashes (spec section 1; issue 21): whatever number a payroll cell holds, in a
CSV or a workbook, the run completes; a value beyond the spec's bounds (amounts over
$100,000,000, hours over 100,000 on one row, more than 2 decimals of an amount, not a finite
number) is a reject naming the file, the line and the column, and it never reaches the lake."""

from __future__ import annotations

import datetime as dt
import math
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = demo_key()
PARAMS = load_parameters()
COLUMNS = ("hours", "gross_wages", "employer_taxes")
LIMIT = {"hours": 100_000, "gross_wages": 100_000_000, "employer_taxes": 100_000_000}

extreme = st.one_of(
    st.sampled_from(["1e308", "-1e308", "1e26", "inf", "-inf", "nan", "NaN", "1.7976931348623157e308",
                     "100000000.01", "-100000000.01", "100000.5", "0.001", "12.345", "1e-300", "4.9e-324",
                     "99999999.99", "(1,000.00)", "$1,234.56", "1e2"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-10**12, max_value=10**12).map(str),
)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("bounds")
    sub = root / "sub"
    generate_submission(sub, employers=3, seed=5, tax_year=2023, groups_and_fiscal=False)
    return sub


def in_bounds(column: str, text: str) -> bool | None:
    """True/False when the text reads as a number (in/out of bounds), None when it does not."""
    t = text.strip().replace("$", "").replace(",", "")
    neg = t.startswith("(") and t.endswith(")")
    try:
        v = float(t.strip("()"))
    except ValueError:
        return None
    v = -v if neg else v
    if not math.isfinite(v) or abs(v) > LIMIT[column]:
        return False
    # more than 2 decimals of an amount, read as the value (12.3400 is 12.34; 1e-05 is not whole
    # cents): within a millionth of a cent, as the suite says
    return not (column != "hours" and abs(v * 100 - round(v * 100)) > 1e-6)


def _write(sub: Path, fmt: str, column: str, value: str) -> tuple[str, int]:
    """One payroll row's ``column`` set to ``value``, in a CSV or an xlsx; (file, line)."""
    src = sorted((sub / "payroll").glob("*.csv"))[0]
    frame = pl.read_csv(src, infer_schema=False)
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))
    if fmt == "csv":
        frame.write_csv(src)
        return src.relative_to(sub).as_posix(), 5
    import xlsxwriter

    src.unlink()
    target = sub / "payroll" / "payroll.xlsx"
    wb = xlsxwriter.Workbook(str(target))
    ws = wb.add_worksheet("Payroll")
    ws.write_row(0, 0, frame.columns)
    for r, row in enumerate(frame.iter_rows(), start=1):
        for c, v in enumerate(row):
            name = frame.columns[c]
            try:  # numbers as numeric cells where the value is a finite float; text otherwise
                num = float(v) if name in COLUMNS else None
            except (TypeError, ValueError):
                num = None
            if num is not None and math.isfinite(num) and v.strip() == repr(num):
                ws.write_number(r, c, num)
            else:
                ws.write_string(r, c, v if v is not None else "")
    wb.close()
    return "payroll/payroll.xlsx", 5


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(["csv", "xlsx"]), column=st.sampled_from(COLUMNS), value=extreme)
def test_any_number_in_any_reader_completes_the_run(base, tmp_path_factory, fmt, column, value):
    root = tmp_path_factory.mktemp("ex")
    sub = root / "sub"
    shutil.copytree(base, sub)
    file, line = _write(sub, fmt, column, value)
    work = root / "w"
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, dt.date(2024, 7, 1), PARAMS, Settings())
    assert result is not None
    lake = scan_lake(work, "payroll").select(*COLUMNS).collect()
    for c in COLUMNS:  # nothing out of bounds reaches the lake
        col = lake.get_column(c).cast(pl.Float64)
        assert col.is_finite().all() and (col.abs() <= LIMIT[c]).all()
    mine = staged.rejects.filter(pl.col("file").str.starts_with(file) & (pl.col("line") == line))
    verdict = in_bounds(column, value)
    if verdict is False:
        assert mine.height >= 1 and mine.get_column("column").is_not_null().all(), (value, mine)
    if verdict is True and fmt == "csv":  # no bounds reject (a rate implausible per hour is another rule)
        bounds = ("amount_range", "amount_decimals", "hours_range", "not_a_number", "wrong_types")
        assert mine.filter(pl.col("column").str.contains(column) & pl.col("rule").is_in(bounds)).height == 0, (value, mine)
