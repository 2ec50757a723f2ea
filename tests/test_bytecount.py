"""``read.bytecount``: the counts the fast readers' checks take are ``bytes.count``'s."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given

from transforms.ingest.read.files import bytecount

BYTES = st.binary(max_size=400) | st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b'"', b",", b"a", b"\xc3\xa9"]),
                                           max_size=200).map(b"".join)


@given(data=BYTES)
def test_counts_and_lone_crs_are_those_of_bytes_count(data):
    for byte in (b"\n", b'"', b",", b"|", b"\t", b"\r"):
        assert bytecount.count(data, byte) == data.count(byte)
    assert bytecount.lone_cr(data) == (data.count(b"\r") != data.count(b"\r\n"))


def test_examples():
    assert bytecount.lone_cr(b"a\r\nb\r") and bytecount.lone_cr(b"a\rb\r\n") and not bytecount.lone_cr(b"a\r\nb\r\n")
    assert bytecount.count(b"", b"\n") == 0 and bytecount.count(b"a,b,,\n", b",") == 3
