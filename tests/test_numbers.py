"""Numbers as exports write them: the vectorised readers (``parsing.number_expr`` over a column,
``parsing.numbers`` cell by the steps it needs) against the plain Python reading of one cell
(``parsing.parse_number``, a regex of what a number is) on any text, under every format."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.ingest.read.cast.parsing import PLAIN, number_expr, numbers, parse_number
from transforms.ingest.read.layouts.profiles import NumberFormat

# what number cells hold, and what breaks them: digits, signs, exponents, separators, currency,
# parentheses, words a cast knows (inf, nan), spaces, underscores
ALPHABET = "0123456789.,+-eE$() _infaINFAxX€\t"
cells = st.lists(st.one_of(st.text(alphabet=ALPHABET, max_size=12),
                           st.from_regex(r"\A\(?-?\$?[0-9]{1,7}(,[0-9]{3})*(\.[0-9]{1,3})?\)?-?\Z"),
                           st.none()), min_size=1, max_size=60)
formats = st.builds(NumberFormat, thousands=st.sampled_from([None, ",", "."]), decimal=st.sampled_from([".", ","]),
                    currency=st.sampled_from([[], ["$"], ["$", "€"]]), parentheses_negative=st.booleans(),
                    trailing_minus=st.booleans()).filter(lambda f: f.thousands != f.decimal)


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, rel_tol=0, abs_tol=0))


@settings(max_examples=300, deadline=None)
@given(values=cells, fmt=formats)
def test_vectorised_numbers_read_as_one_cell_is_read(values, fmt):
    series = pl.Series("v", values, dtype=pl.String)
    by_column = pl.DataFrame({"v": series}).select(number_expr(pl.col("v"), fmt)).to_series().to_list()
    by_steps = numbers(series, fmt).to_list()
    for text, a, b in zip(values, by_column, by_steps, strict=True):
        want = None if text is None else parse_number(text, fmt)
        assert _same(a, want), (text, a, want, fmt)
        assert _same(b, want), (text, b, want, fmt)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="0123456789.+-eE_ infaINFAxXdD,", max_size=10), min_size=1, max_size=80))
def test_a_finite_cast_is_exactly_a_plain_number(texts):
    """``number_expr`` trusts Polars' cast to a float where it gives a finite number (no regex
    pass): that holds only while the cast accepts exactly the PLAIN numbers (ASCII digits)."""
    s = pl.Series(texts, dtype=pl.String).str.strip_chars()
    finite = s.cast(pl.Float64, strict=False).is_finite().fill_null(False)
    assert finite.to_list() == s.str.contains(PLAIN).to_list()


def test_known_cells():
    fmt = NumberFormat()
    got = numbers(pl.Series(["$1,234.50", "(12.50)", "1,2345", "12,34", " 7 ", "", None, "inf", "1e3", "$-3"]), fmt)
    assert got.to_list() == [1234.5, -12.5, 12345.0, None, 7.0, None, None, None, 1000.0, -3.0]


odd_formats = st.builds(NumberFormat, thousands=st.sampled_from([None, ",", ".", " ", "e"]),
                        decimal=st.sampled_from([".", ","]),
                        currency=st.sampled_from([[], ["$"], ["USD"], ["e"], ["1"], ["$", "-"]]),
                        parentheses_negative=st.booleans(), trailing_minus=st.booleans(),
                        blank=st.sampled_from(["missing", "zero"])).filter(lambda f: f.thousands != f.decimal)


@settings(max_examples=300, deadline=None)
@given(values=cells, fmt=odd_formats)
def test_the_cast_first_reading_is_the_columns_reading_under_any_format(values, fmt):
    """``numbers`` (a cast first, the steps for the cells it does not read) gives ``number_expr``'s
    value for every cell, under formats whose currency or separator a number's own characters
    could hold (then it reads by the steps) and with blank cells read as zero."""
    series = pl.Series("v", values, dtype=pl.String)
    want = pl.DataFrame({"v": series}).select(number_expr(pl.col("v"), fmt)).to_series().to_list()
    got = numbers(series, fmt).to_list()
    assert all(_same(a, b) for a, b in zip(got, want, strict=True)), (values, got, want, fmt)


def test_mostly_plain_cells_with_a_few_that_need_steps():
    cells = pl.Series(["12.5", " 3 ", "$1,234.50", "", None, "(2.00)", "7", "1e2", "nan", "8"])
    assert numbers(cells, NumberFormat()).to_list() == [12.5, 3.0, 1234.5, None, None, -2.0, 7.0, 100.0, None, 8.0]
    zero = NumberFormat(blank="zero")
    assert numbers(cells, zero).to_list() == [12.5, 3.0, 1234.5, 0.0, 0.0, -2.0, 7.0, 100.0, None, 8.0]
