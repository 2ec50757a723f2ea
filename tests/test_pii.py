"""The keyed ssn hash: one normalising for a column and for one value, exact however the column
is chunked, keyed, and null for anything that is not 9 digits."""

from __future__ import annotations

import hashlib
import hmac

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.pii import HashKey, hash_one, hash_ssn_column

KEY = HashKey(b"k" * 32, "test")
OTHER = HashKey(b"o" * 32, "test")


def oracle(digits: str, key: HashKey = KEY) -> str:
    return hmac.new(key.key, digits.encode(), hashlib.sha256).hexdigest()


def test_normalising_and_nulls():
    values = ["123-45-6789", " 123 45 6789 ", "123456789", "12345678", "1234567890", "abc", "", None, "123-45-678x"]
    got = hash_ssn_column(pl.DataFrame({"ssn": values, "n": range(len(values))}), KEY)
    assert got.columns == ["n", "ssn_hash"]  # the ssn column is gone
    # 8 digits: an ssn whose leading zero a numeric cell dropped (spec section 1), padded
    assert got.get_column("ssn_hash").to_list() == [oracle("123456789")] * 3 + [oracle("012345678")] + [None] * 5
    assert [hash_one(v, KEY) for v in values] == got.get_column("ssn_hash").to_list()
    assert hash_one("123-45-6789", OTHER) == oracle("123456789", OTHER) != hash_one("123-45-6789", KEY)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["123-45-6789", "987654321", "555 12 3456", "bad", None]), min_size=10, max_size=40))
def test_many_chunks_give_the_single_chunk_result(values: list[str | None]):
    """A column of many chunks (a big file read whole) takes another branch: same hashes."""
    many = pl.concat([pl.DataFrame({"ssn": values}, schema={"ssn": pl.String})] * 20, rechunk=False)
    one = many.rechunk()
    assert many.get_column("ssn").n_chunks() > 16 >= one.get_column("ssn").n_chunks()
    got, want = hash_ssn_column(many, KEY), hash_ssn_column(one, KEY)
    assert got.equals(want)
    assert got.get_column("ssn_hash").to_list() == [hash_one(v, KEY) for v in values] * 20
