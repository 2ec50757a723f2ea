"""The polars suite engine returns exactly what Great Expectations returns (real GX runs, no mocks)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms import schema
from transforms.ingest.validate import engines as va

NOW = datetime(2026, 1, 1, 12, 0)
NAN, INF = float("nan"), float("inf")
ROOT = Path(__file__).resolve().parents[1]


def line_numbers(n: int) -> list[int]:
    """Lines deliberately not ascending, so that 'frame order' is what is checked."""
    return [1000 - 7 * i if i % 2 else 11 + 5 * i for i in range(n)]


TEXT_COLUMNS = ("valid_to", "member_to", "period_start", "period_end", *schema.DECLARED)


def gx_frame(dataset: str, rows: list[dict], raw_valid_to: list | None = None) -> pl.DataFrame:
    """Staged rows (+ lineage, ``__line``) through ``helper_columns``, as ``validate_table`` does.
    ``raw_valid_to``: per row, the submitted text of ``valid_to`` and ``member_to`` (a string), or
    of any text column (a dict); a period column's text is its value's by default."""
    values = {c: t for c, t in schema.STAGED[dataset].items() if c not in schema.LINEAGE}
    lines = line_numbers(len(rows))
    staged = pl.DataFrame(rows, schema=values)
    staged = staged.with_columns(
        pl.lit("f.csv").alias("source_file"), pl.lit(None, dtype=pl.String).alias("source_sheet"),
        pl.Series("source_line", lines, dtype=pl.Int64), pl.Series("__line", lines, dtype=pl.Int64),
    )
    if dataset in ("roster", "payroll"):
        staged = staged.with_columns(pl.Series("__ssn_given", [bool(r.get("__ssn_given")) for r in rows], dtype=pl.Boolean))
    raws = raw_valid_to or [None] * len(rows)

    def text_of(col: str, row: dict, raw) -> str | None:
        if isinstance(raw, dict) and col in raw:
            return raw[col]
        if col in ("valid_to", "member_to"):
            return None if isinstance(raw, dict) else raw
        v = row.get(col)
        return None if v is None else str(v)

    text = pl.DataFrame({**{c: [text_of(c, r, raw) for r, raw in zip(rows, raws, strict=True)] for c in TEXT_COLUMNS},
                         "__line": lines}, schema={**dict.fromkeys(TEXT_COLUMNS, pl.String), "__line": pl.Int64})
    return va.helper_columns(dataset, staged, text, NOW)


def as_tuples(failures: list[va.Failure]) -> list[tuple]:
    return [(f.rule, f.column, f.message, f.severity, f.lines, f.unexpected_percent) for f in failures]


def assert_parity(dataset: str, frame: pl.DataFrame) -> list[va.Failure]:
    """Both engines on ``frame``: identical results. Returns them."""
    gx = va.run_suite(dataset, frame, run_name="x", docs_dir=None)
    fast = va.run_suite_polars(dataset, frame)
    assert as_tuples(fast) == as_tuples(gx)
    assert fast == gx
    return fast


def by_rule(failures: list[va.Failure]) -> dict[tuple[str, str], va.Failure]:
    out = {(f.rule, f.column): f for f in failures}
    assert len(out) == len(failures)
    return out


# --- hand-built frames: good rows and rows breaking every expectation -------------------------

GOOD = {
    "payroll": dict(employer_id="123456789", employee_id="E1", ssn_hash="ab" * 32, period_start=date(2024, 1, 1),
                    period_end=date(2024, 1, 14), hours=80.0, gross_wages=1600.0, employer_taxes=120.0,
                    check_id="CHK-1", pay_date=date(2024, 1, 19), line_count=1),
    "applications": dict(application_id="A-1", employer_id="123456789", employer_name="Acme", county="Essex",
                         tax_type="CBT", tax_year=2024, received_at=datetime(2025, 3, 1, tzinfo=UTC),
                         received_date=date(2025, 3, 1)),
    "roster": dict(application_id="A-1", employee_id="E1", wage_category="general", employer_id=None, ssn_hash=None),
    "certifications": dict(ssn_hash="ab" * 32, certification_id="C-1", status="CERTIFIED",
                           valid_from=date(2024, 1, 1), valid_to=date(2024, 12, 31)),
    "employer_rates": dict(employer_id="123456789", rate_year_start=date(2024, 7, 1), ui_rate=0.03, di_rate=0.005),
    "control_groups": dict(group_id="G1", employer_id="123456789", member_from=date(2020, 1, 1),
                           member_to=date(2024, 12, 31)),
}
# text is data (spec section 1): formula-like starts and a tab are valid; C0 controls other
# than tab and bidirectional controls are not printable; ids are at most 64 characters
FORMULAS = ["=SUM(A1)", "+1", "@x", "\tx", "-x"]
UNPRINTABLE = ["a\rb", "\x00x", "x\x1f", "a\nb", "x\u202e", "\u2066x", "x\ufffe", "\uffffx"]
EMPLOYER_IDS = {"none": None, "8digits": "12345678", "10digits": "1234567890", "letters": "12345678X",
                "empty": "", "space": " 123456789", "newline": "123456789\n", "arabic": "١٢٣٤٥٦٧٨٩"}


def cases(dataset: str) -> list[tuple[str, dict, str | None]]:
    """(label, row, raw valid_to text) for a dataset: good rows first, then the bad ones."""
    good = GOOD[dataset]
    out: list[tuple[str, dict, str | None]] = [(f"good{i}", dict(good), "2024-12-31") for i in range(3)]

    def add(label: str, raw: str | None = "2024-12-31", **changes) -> None:
        out.append((label, {**good, **changes}, raw))

    if "employer_id" in good:
        for k, v in EMPLOYER_IDS.items():
            add(f"employer_{k}", employer_id=v)
    for c in ("application_id", "employee_id", "employer_name", "county", "certification_id", "check_id", "group_id"):
        if c in good:
            if c != "check_id":
                add(f"{c}_none", **{c: None})
            add(f"{c}_inner_eq", **{c: "X=1"})
            for j, v in enumerate(FORMULAS):
                add(f"{c}_formula{j}", **{c: v})
            for j, v in enumerate(UNPRINTABLE):
                add(f"{c}_unprintable{j}", **{c: v})
            add(f"{c}_64", **{c: "é" * 64})
            add(f"{c}_65", **{c: "x" * 65})
    if dataset == "payroll":
        add("ssn_none", ssn_hash=None)  # an export without ssns: the roster gives them (spec section 1)
        add("ssn_masked", ssn_hash=None, ssn_last4_hash="cd" * 32, __ssn_given=True)
        add("ssn_unreadable", ssn_hash=None, __ssn_given=True)
        add("start_none", period_start=None)
        add("end_none", period_end=None)
        add("end_before_start", period_start=date(2024, 1, 10), period_end=date(2024, 1, 9))
        add("one_day", period_start=date(2024, 1, 10), period_end=date(2024, 1, 10), hours=8.0, gross_wages=160.0)
        add("days_31", period_end=date(2024, 1, 31))
        add("days_32", period_end=date(2024, 2, 1))
        for c in ("hours", "gross_wages", "employer_taxes"):
            add(f"{c}_none", **{c: None})
            add(f"{c}_nan", **{c: NAN})
            add(f"{c}_negative", **{c: -0.01})
            add(f"{c}_zero", **{c: 0.0})
            add(f"{c}_minus_zero", **{c: -0.0})
            add(f"{c}_inf", **{c: INF})
        add("per_day_24", hours=336.0, gross_wages=6720.0)
        add("per_day_over_24", hours=336.5, gross_wages=6730.0)
        add("rate_1", gross_wages=80.0)
        add("rate_500", gross_wages=40000.0)
        add("rate_below_1", gross_wages=79.99)
        add("rate_above_500", gross_wages=40000.8)
        add("reversal", hours=-80.0, gross_wages=-1600.0, employer_taxes=-120.0)
        add("reversal_rate_above_500", hours=-1.0, gross_wages=-600.0)
        add("hours_only", gross_wages=0.0)
        add("wages_1e308", gross_wages=1e308)  # beyond any real payroll: a reject of the row, never a crash
        add("wages_100m", gross_wages=100_000_000.0, hours=160.0)
        add("taxes_over_100m", employer_taxes=-100_000_000.01)
        add("hours_over_100k", hours=100_000.5)
        add("wages_3_decimals", gross_wages=1600.005)
        add("taxes_float_noise", employer_taxes=0.1 + 0.2)  # a spreadsheet cell's float noise: whole cents
        add("taxes_3_decimals", employer_taxes=120.125)
        add("wages_only", hours=0.0, gross_wages=600.0)
    elif dataset == "applications":
        add("tax_type_lower", tax_type="cbt")
        add("tax_type_other", tax_type="CIT")
        add("tax_type_none", tax_type=None)
        add("git", tax_type="GIT")
        add("year_none", tax_year=None)
        for y in (1999, 2000, 2100, 2101):
            add(f"year_{y}", tax_year=y)
        add("received_none", received_at=None)
        add("received_now", received_at=NOW.replace(tzinfo=UTC))
        add("received_1us_later", received_at=NOW.replace(tzinfo=UTC) + timedelta(microseconds=1))
        add("received_next_year", received_at=datetime(2027, 1, 1, tzinfo=UTC))
        add("fiscal_12_months", tax_year=2023, period_start=date(2023, 7, 1), period_end=date(2024, 6, 30))
        add("fiscal_52_weeks", tax_year=2023, period_start=date(2023, 7, 2), period_end=date(2024, 6, 29))
        add("address_ok", employer_address="1 Main Street; Suite 200; Trenton, NJ 08608")
        add("address_300", employer_address="x" * 300)
        add("address_301", employer_address="x" * 301)
        add("address_newline", employer_address="1 Main Street\nTrenton")
        add("fiscal_53_weeks", tax_year=2023, period_start=date(2023, 7, 2), period_end=date(2024, 7, 6))
        add("fiscal_365_days", tax_year=2023, period_start=date(2023, 7, 1), period_end=date(2024, 6, 29))
        add("fiscal_other_year", tax_year=2024, period_start=date(2023, 7, 1), period_end=date(2024, 6, 30))
        add("fiscal_start_only", tax_year=2023, period_start=date(2023, 7, 1))
        add("fiscal_start_invalid", raw={"period_start": "2023-13-01", "period_end": "2024-06-30"}, tax_year=2023,
            period_end=date(2024, 6, 30))
        add("fiscal_end_invalid", raw={"period_start": "2023-07-01", "period_end": "2024-06-31"}, tax_year=2023,
            period_start=date(2023, 7, 1))
    elif dataset == "roster":
        for v in ("General", " general", "other", None, "tipped", "seasonal_small", "agricultural"):
            add(f"category_{v}", wage_category=v)
        add("ssn_given", ssn_hash="ab" * 32, __ssn_given=True)
        add("ssn_not_9_digits", ssn_hash=None, __ssn_given=True)
        # the employer's declared totals (spec section 1): blank declares nothing; a number; never negative
        for c in schema.DECLARED:
            add(f"{c}_given", **{c: 1040.04 if "hours" in c else 13520.52})
            add(f"{c}_blank", raw={c: ""}, **{c: None})
            add(f"{c}_not_a_number", raw={c: "14695.8O"}, **{c: None})
            add(f"{c}_negative", **{c: -5.0})
            add(f"{c}_huge", **{c: 1e9})
            if "hours" in c:
                add(f"{c}_fraction_of_an_hour", **{c: 1040.045})
            else:
                add(f"{c}_fraction_of_a_cent", **{c: 12.345})
    elif dataset == "control_groups":
        add("from_none", member_from=None)
        add("to_open", raw="", member_to=None)
        add("to_invalid", raw="2024-02-30", member_to=None)
        add("to_same_day", member_to=date(2020, 1, 1))
        add("to_before", member_to=date(2019, 12, 31))
    elif dataset == "certifications":
        add("ssn_none", ssn_hash=None)
        for v in ("certified", "EXPIRED", None, "REVOKED", "PENDING"):
            add(f"status_{v}", status=v)
        add("from_none", valid_from=None)
        add("to_open", raw="", valid_to=None)
        add("to_blank", raw="   ", valid_to=None)
        add("to_invalid", raw="2024-02-30", valid_to=None)
        add("to_same_day", valid_to=date(2024, 1, 1))
        add("to_before", valid_to=date(2023, 12, 31))
    elif dataset == "employer_rates":
        add("start_none", rate_year_start=None)
        add("start_july_2", rate_year_start=date(2024, 7, 2))
        add("start_jan_1", rate_year_start=date(2024, 1, 1))
        for c in ("ui_rate", "di_rate"):
            for k, v in {"none": None, "nan": NAN, "zero": 0.0, "minus_zero": -0.0, "one": 1.0,
                         "above_one": 1.0000001, "negative": -1e-9, "inf": INF}.items():
                add(f"{c}_{k}", **{c: v})
    return out


def build(dataset: str, cs: list[tuple[str, dict, str | None]]) -> tuple[pl.DataFrame, dict[str, int]]:
    frame = gx_frame(dataset, [r for _, r, _ in cs], [raw for _, _, raw in cs])
    return frame, dict(zip([label for label, _, _ in cs], line_numbers(len(cs)), strict=True))


def file_columns(dataset: str) -> list[str]:
    doc = va.load_suite_json(dataset)
    return [e["kwargs"]["column"] for e in doc["expectations"] if e["meta"]["severity"] == "file"]


def mostly_frame(dataset: str, n_missing: int, n: int = 10, all_missing: bool = False) -> pl.DataFrame:
    """``n`` good rows; the first file-severity column missing in ``n_missing`` of them (NaN for
    floats in every other one), the second one (if ``all_missing``) missing everywhere."""
    cols = file_columns(dataset)
    rows = [dict(GOOD[dataset]) for _ in range(n)]
    for i in range(n_missing):
        c = cols[0]
        rows[i * n // n_missing][c] = NAN if isinstance(GOOD[dataset][c], float) and i % 2 else None
    if all_missing:
        for r in rows:
            r[cols[1]] = None
    return gx_frame(dataset, rows, ["2024-12-31"] * n)


DATASETS = ["payroll", "applications", "roster", "certifications", "employer_rates", "control_groups"]


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_expectation_broken(dataset):
    cs = cases(dataset)
    frame, line = build(dataset, cs)
    failures = assert_parity(dataset, frame)
    got = by_rule(failures)
    assert all(f.severity == "row" for f in failures)
    # every row expectation of the suite is broken by some row
    doc = va.load_suite_json(dataset)
    wanted = {(e["meta"]["rule"], e["meta"]["column"]) for e in doc["expectations"] if e["meta"]["severity"] == "row"}
    assert set(got) == wanted
    for (rule, column), f in got.items():
        assert f.lines and not any(line[f"good{i}"] in f.lines for i in range(3)), (rule, column)
    if "employer_id" in GOOD[dataset] and dataset != "roster":  # the roster's employer_id may be empty
        fmt = got[("employer_id_format", "employer_id")]
        # re.search semantics: '$' also matches before a final newline; \d is any Unicode digit
        assert fmt.lines == [line[f"employer_{k}"] for k in ("8digits", "10digits", "letters", "empty", "space")]
        assert fmt.unexpected_percent == 5 / (len(cs) - 1) * 100  # one employer_id is missing
        assert got[("missing_value", "employer_id")].lines == [line["employer_none"]]
        assert got[("missing_value", "employer_id")].unexpected_percent == 1 / len(cs) * 100
    if dataset == "payroll":
        assert got[("not_a_number", "hours")].lines == [line["hours_none"], line["hours_nan"]]
        assert ("hours_negative", "hours") not in got and ("wages_negative", "gross_wages") not in got
        assert got[("period_order", "period_end")].lines == [line["end_before_start"]]
        # a period of any length is read, spread over its days (spec section 3): no rule on its length
        assert not any(line["days_32"] in f.lines for f in failures)
        assert got[("hours_per_day", "hours")].lines == [line["hours_inf"], line["per_day_over_24"], line["hours_over_100k"]]
        # beyond any real payroll, or a third decimal of a cent: a reject of the row (spec, preamble)
        assert got[("amount_range", "gross_wages")].lines == [line["gross_wages_inf"], line["wages_1e308"]]
        assert got[("amount_range", "employer_taxes")].lines == [line["employer_taxes_inf"], line["taxes_over_100m"]]
        assert got[("hours_range", "hours")].lines == [line["hours_inf"], line["hours_over_100k"]]
        assert got[("amount_decimals", "gross_wages")].lines == [line["wages_3_decimals"]]
        assert got[("amount_decimals", "employer_taxes")].lines == [line["taxes_3_decimals"]]
        for c in ("employee_id", "check_id"):
            assert got[("unprintable_character", c)].lines == [line[f"{c}_unprintable{j}"] for j in range(len(UNPRINTABLE))]
            assert got[("id_too_long", c)].lines == [line[f"{c}_65"]]
        # the hourly rate is a rule of a pay period over all its lines (cross_rows), not of a line
        assert ("hourly_rate", "gross_wages") not in got
    if dataset == "applications":
        assert sorted(got[("tax_year_range", "tax_year")].lines) == sorted([line["year_1999"], line["year_2101"]])
        for c in ("application_id", "employer_name", "county"):
            assert got[("unprintable_character", c)].lines == [line[f"{c}_unprintable{j}"] for j in range(len(UNPRINTABLE))]
        assert got[("id_too_long", "application_id")].lines == [line["application_id_65"]]
        assert ("id_too_long", "employer_name") not in got  # a name may be longer than an id
        assert got[("text_too_long", "employer_address")].lines == [line["address_301"]]
        assert got[("unprintable_character", "employer_address")].lines == [line["address_newline"]]
        assert got[("received_in_future", "received_at")].lines == [line["received_1us_later"], line["received_next_year"]]
    if dataset == "roster":
        assert got[("unknown_wage_category", "wage_category")].lines == [line[f"category_{v}"] for v in ("General", " general", "other")]
    if dataset == "certifications":
        assert got[("invalid_date", "valid_to")].lines == [line["to_invalid"]]
        assert got[("validity_order", "valid_to")].lines == [line["to_before"]]
    if dataset == "employer_rates":
        assert got[("rate_range", "ui_rate")].lines == [line["ui_rate_above_one"], line["ui_rate_negative"], line["ui_rate_inf"]]
        assert got[("rate_year_not_july_1", "rate_year_start")].lines == [line["start_july_2"], line["start_jan_1"]]


@pytest.mark.parametrize("dataset", DATASETS)
def test_mostly_fails_and_just_passes(dataset):
    col = file_columns(dataset)[0]
    failing = assert_parity(dataset, mostly_frame(dataset, 6, all_missing=True))  # 40% present < mostly 0.5
    files = [f for f in failing if f.severity == "file"]
    assert [f.column for f in files][:1] == [va.load_suite_json(dataset)["expectations"][0]["meta"]["column"]]
    assert files[0].unexpected_percent == 60.0 and len(files[0].lines) == 6
    assert len(files) == 2 and files[1].unexpected_percent == 100.0  # the all-missing column
    passing = assert_parity(dataset, mostly_frame(dataset, 5))  # exactly 50% present: mostly 0.5 holds
    assert not any(f.severity == "file" for f in passing)
    assert any(f.unexpected_percent == 50.0 and len(f.lines) == 5 for f in passing), col


# --- random payroll frames -----------------------------------------------------------------

_num = st.one_of(st.none(), st.just(NAN), st.sampled_from([0.0, -0.0, 1.0, 24.0, 500.0, 31.0, INF, -INF]),
                 st.floats(min_value=-100, max_value=50_000, allow_nan=False))
_row = st.fixed_dictionaries({
    "employer_id": st.sampled_from(["123456789", "123456789", "12345678", "123456789\n", "", None]),
    "employee_id": st.sampled_from(["E1", "E2", "=E", "+1", " E", None]),
    "ssn_hash": st.sampled_from(["h", None]),
    "period_start": st.one_of(st.none(), st.dates(date(2023, 1, 1), date(2024, 12, 31))),
    "length": st.one_of(st.none(), st.integers(-3, 40)),
    "hours": _num, "gross_wages": _num, "employer_taxes": _num,
})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_row, min_size=1, max_size=25))
def test_random_payroll_frames(rows):
    staged = []
    for r in rows:
        r = dict(r)
        length = r.pop("length")
        start = r["period_start"]
        r["period_end"] = start + timedelta(days=length) if start is not None and length is not None else None
        staged.append(r)
    frame = gx_frame("payroll", staged)
    failures = assert_parity("payroll", frame)
    # the batch screen of ingest: the rows it flags cover every failure, and a frame it does
    # not flag at all has none (whatever the ``mostly`` of the file-severity expectations)
    flagged = set(frame.filter(va.unexpected_rows("payroll", frame)).get_column("__line").to_list())
    assert {ln for f in failures for ln in f.lines} <= flagged
    assert flagged or not failures
    if flagged:  # the same frame without the flagged rows passes
        assert va.run_suite_polars("payroll", frame.filter(~pl.col("__line").is_in(sorted(flagged)))) == []


# --- the suite compiler ------------------------------------------------------------------------

def _suite_copy(tmp_path: Path, change) -> Path:
    doc = va.load_suite_json("payroll")
    change(doc["expectations"])
    (tmp_path / "payroll.json").write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


def test_unknown_expectation_type_raises(tmp_path):
    meta = {"rule": "dup", "column": "employee_id", "severity": "row", "message": "duplicate"}
    d = _suite_copy(tmp_path, lambda ex: ex.insert(3, {"type": "expect_column_values_to_be_unique",
                                                           "kwargs": {"column": "employee_id"}, "meta": meta}))
    with pytest.raises(va.SuiteError, match=r"payroll\.json expectation #4 \(expect_column_values_to_be_unique\)"):
        va.compile_suite("payroll", directory=d)


@pytest.mark.parametrize("kwargs, match", [
    ({"row_condition": "hours > 0"}, "unknown kwarg.*row_condition"),
    ({"regex": "^x"}, "unknown kwarg.*regex"),
    ({"mostly": 1.5}, "mostly"),
    ({"max_value": None}, "cannot both be absent"),
    ({"min_value": "0"}, "min_value must be a number"),
    ({"min_value": 50, "max_value": 10}, "greater than max_value"),
])
def test_bad_kwargs_raise(tmp_path, kwargs, match):
    def change(ex):
        hours = next(e for e in ex if e["type"] == "expect_column_values_to_be_between" and e["kwargs"]["column"] == "__hours_per_day")
        hours["kwargs"].update(kwargs)
    d = _suite_copy(tmp_path, change)
    with pytest.raises(va.SuiteError, match=rf"payroll\.json expectation #\d+ \(expect_column_values_to_be_between\).*{match}"):
        va.compile_suite("payroll", directory=d)


def test_untranslatable_regex_raises(tmp_path):
    def change(ex):
        next(e for e in ex if e["type"] == "expect_column_values_to_match_regex")["kwargs"]["regex"] = r"\bx(?=y)"
    with pytest.raises(va.SuiteError, match="expect_column_values_to_match_regex.*cannot be evaluated"):
        va.compile_suite("payroll", directory=_suite_copy(tmp_path, change))


def test_compiled_once_per_file(tmp_path):
    d = _suite_copy(tmp_path, lambda ex: None)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: va.compile_suite("payroll", directory=d), range(16)))
    assert len({id(g) for g in got}) == 1 and len(got[0]) == len(va.load_suite_json("payroll")["expectations"])


@pytest.mark.filterwarnings("ignore::FutureWarning")  # Python's own warning on '[[' in a class
@pytest.mark.parametrize("pattern", [r"^\d{9}$", r"^[=+@\t\r]", r"a$", r"^$", r"(?m)^a$", r"[]a]", r"[[&~]",
                                     r"\s", r"[^\w]", r"a\Z", r"\<a\>", r"[\b]", r"(a|b$)"])
def test_regex_translation_matches_python(pattern):
    texts = ["", "a", "a\n", "\n", "a\nb", "b\na\n", "123456789", "123456789\n", "=x", "\tx", "]", "[", "&", "~",
             "<a>", "\x08", "\x1c", " ", "é", "a\n\n", "b"]
    got = pl.Series(texts).str.contains(va.python_regex_to_polars(pattern)).to_list()
    assert got == [re.search(pattern, t) is not None for t in texts]


def test_polars_engine_never_imports_gx():
    code = (
        "import sys\nfrom datetime import date\nimport polars as pl\n"
        "from transforms.ingest.validate import engines as va\n"
        "f = pl.DataFrame({'employer_id': ['123456789', None], 'rate_year_start': [date(2024, 7, 1)] * 2,"
        " 'ui_rate': [0.1, 2.0], 'di_rate': [0.1, float('nan')], '__july_first': [True, True], '__line': [2, 3]})\n"
        "out = va.run_suite_polars('employer_rates', f)\n"
        "assert [(x.rule, x.column, x.lines) for x in out] == [('missing_value', 'employer_id', [3]),"
        " ('rate_range', 'ui_rate', [3]), ('not_a_number', 'di_rate', [3])], out\n"
        "assert 'great_expectations' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


def test_all_missing_column():
    frame = gx_frame("payroll", [dict(GOOD["payroll"], hours=None)] * 3)
    out = assert_parity("payroll", frame)
    assert [(f.rule, f.column, f.severity) for f in out] == [("wrong_types", "hours", "file"), ("not_a_number", "hours", "row")]
    assert math.isclose(out[0].unexpected_percent, 100.0)
