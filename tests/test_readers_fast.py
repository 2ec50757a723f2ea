"""``read_delimited_fast`` gives exactly what ``decode`` + ``read_delimited`` give, or None."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files.arrow_csv import read_delimited_arrow
from transforms.ingest.read.files.readers import (
    FileUnreadable,
    RawTable,
    decode,
    read_delimited,
    read_delimited_fast,
)
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

TESTS = Path(__file__).parent
DELIMITERS = [",", ";", "|", "\t"]
ENCODING_LISTS = [["utf-8"], ["utf-8", "cp1252"], ["cp1252"], ["latin-1"], ["utf-16"]]


def slow(data: bytes, delimiter: str, encodings: list[str]) -> tuple[RawTable, str] | None:
    """The reference route; None when it rejects the file."""
    try:
        text, enc = decode(data, encodings)
        return read_delimited(text, delimiter), enc
    except FileUnreadable:
        return None


def check(data: bytes, delimiter: str, encodings: list[str] | None = None) -> bool:
    """Assert the fast route is None or equal to the slow one; True when it was taken."""
    encodings = ["utf-8"] if encodings is None else encodings
    fast = read_delimited_fast(data, delimiter, list(encodings))
    if fast is None:
        return False
    ref = slow(data, delimiter, encodings)
    assert ref is not None, "fast path read a file the slow route rejects"
    (t, enc), (r, ref_enc) = fast, ref
    assert enc == ref_enc
    assert t.headers == r.headers
    assert t.header_line == r.header_line
    assert t.ragged == r.ragged == []
    assert t.frame.schema == r.frame.schema
    assert t.frame.equals(r.frame)
    assert (t.sheet, t.encoding, t.delimiter) == (r.sheet, r.encoding, r.delimiter)
    return True


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    """A generated submission, plus its payroll rewritten in the vendor layouts under ``mix/``."""
    out = tmp_path_factory.mktemp("rf") / "sample"
    generate_submission(out, employers=60, seed=7)
    write_vendor_mix(out, out / "mix", seed=7)
    return out


def _text_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".csv", ".txt") and p.is_file())


def test_fixture_files_fast_or_equal() -> None:
    files = _text_files(TESTS)
    assert any(p.parent.name == "bad" for p in files)
    for path in files:
        data = path.read_bytes()
        for d in DELIMITERS:
            for encs in ENCODING_LISTS:
                check(data, d, encs)


def test_generated_files_fast_or_equal(sample: Path) -> None:
    files = _text_files(sample)
    assert len(files) >= 8
    for path in files:
        data = path.read_bytes()
        for d in DELIMITERS:
            for encs in ENCODING_LISTS[:3]:
                check(data, d, encs)


def test_generated_payroll_takes_fast_path(sample: Path) -> None:
    payroll = sorted((sample / "payroll").glob("*.csv"))
    assert payroll
    for path in payroll:
        data = path.read_bytes()
        assert b'"' not in data and b"\r" not in data
        for encs in (["utf-8"], ["utf-8", "cp1252"]):
            assert check(data, ",", encs), path
    for name in ("roster.csv", "certifications.csv", "employer_rates.csv"):
        assert check((sample / name).read_bytes(), ","), name
    # addresses hold commas, so applications.csv is quoted: the slow route reads it (a small file)
    apps = (sample / "applications.csv").read_bytes()
    assert b'"' in apps and not check(apps, ",")


def test_vendor_crlf_and_pipe_take_fast_path(sample: Path) -> None:
    mix = sample / "mix" / "payroll"
    crlf = [p for p in _text_files(mix) if b"\r\n" in p.read_bytes() and b'"' not in p.read_bytes()]
    assert crlf
    for path in crlf:
        delim = "|" if path.suffix == ".txt" else ","
        assert check(path.read_bytes(), delim), path


@pytest.mark.parametrize(
    ("data", "encodings"),
    [
        (b"a,b,c\n1,2,3\n", ["utf-8"]),
        (b"a,b,c\n1,2,3", ["utf-8"]),  # no final newline
        (b"a,b,c\r\n1,2,3\r\n,x,\r\n", ["utf-8"]),  # CRLF
        (b"a,b,c\r\n1,2,3\n4,5,6\r\n", ["utf-8"]),  # mixed line ends
        (b"\xef\xbb\xbf a ,b, c \n1,,\n", ["cp1252"]),  # BOM, stripped headers, empty cells
        (b" a ,b,\n1,2,\n", ["latin-1"]),  # ASCII under latin-1; empty last header
        ("n,é\n\u2028,x\x85\n".encode(), ["utf-8", "cp1252"]),  # non-ASCII, exotic line breaks
        (b"a,b\n", ["utf-8"]),  # header only
        (b"a,b", ["utf-8"]),
        (b"a\n1\n 2 \n", ["utf-8"]),  # one column
        (b"a,b\n ,x\n", ["utf-8"]),
        (b'a,b\n"x",2\n', ["utf-8"]),  # quoted cells: every field, or only some
        (b'"a","b"\r\n"1","2"\r\n"3",""\r\n" ","x"\r\n', ["utf-8"]),
        ('"n","name"\n"1"," Café "\n2,"x"'.encode(), ["utf-8", "cp1252"]),
        (b'\xef\xbb\xbf"a","b"\n"1",2\n', ["utf-8"]),
        (b'"a"\n"x"\n" y"\nz\n', ["utf-8"]),
    ],
)
def test_simple_files_take_fast_path(data: bytes, encodings: list[str]) -> None:
    assert check(data, ",", encodings)


@pytest.mark.parametrize(
    ("data", "encodings"),
    [
        (b'a,b\n"x\ny",2\n3,4\n', ["utf-8"]),  # quoted field with an embedded newline
        (b'a,b\n"x""y",2\n', ["utf-8"]),  # a doubled quote inside a quoted cell
        (b'a,b\nx"y,2\n', ["utf-8"]),  # a quote inside a plain cell
        (b'a,b\n "x",2\n', ["utf-8"]),  # a space before the opening quote
        (b'a,b\n"x" ,2\n', ["utf-8"]),  # ... after the closing one
        (b'a,b\n",2\n', ["utf-8"]),  # a lone quote
        (b'a,b\n"x,2\n', ["utf-8"]),  # an unclosed quote
        (b'a,b\n"x,y",2\n', ["utf-8"]),  # a delimiter inside quotes
        (b'"a"b,c\n1,2\n', ["utf-8"]),  # a quote in the header
        (b'"a\n",b\n1,2\n', ["utf-8"]),
        (b'a,b\n"",""\n', ["utf-8"]),  # a blank record, quoted
        (b'a\n"', ["utf-8"]),
        (b'"a"\n"x"\n""\n', ["utf-8"]),  # a blank record, one column
        (b"a,b\n1,2\n\n3,4\n", ["utf-8"]),  # blank line in the middle
        (b"a,b\n1,2\r\n\r\n3,4\n", ["utf-8"]),
        (b"a\n1\n\n3\n", ["utf-8"]),  # blank line, one column
        (b"a\n1\n  \n3\n", ["utf-8"]),  # whitespace-only line, one column
        (b"a,b\n1,2\n , \t\n3,4\n", ["utf-8"]),  # blank record (only whitespace cells)
        (b"a,b\n1,2\n,\n", ["utf-8"]),
        (b"\na,b\n1,2\n", ["utf-8"]),  # leading blank line
        (b"\r\na,b\n1,2\n", ["utf-8"]),
        (b" , \na,b\n1,2\n", ["utf-8"]),  # blank first record
        (b"\xef\xbb\xbf\na,b\n1,2\n", ["utf-8"]),
        (b"a,b\n1,2,3\n4,5\n", ["utf-8"]),  # too many fields
        (b"a,b,c\n1,2\n4,5,6\n", ["utf-8"]),  # too few
        (b"a,b,c\n1,2,3,4\n4,5\n", ["utf-8"]),  # one too many, one too few: same delimiter total
        (b"a,b,c\n4,5\n1,2,3,\n", ["utf-8"]),  # ... the long one last, its extra cell empty
        (b"a,b,c\n4,5\n1,2,3,4", ["utf-8"]),  # ... no final newline
        (b",,1\n,,1\n,1\n,,1,", ["utf-8"]),  # ... its extra cell empty, no final newline (Polars drops it)
        (b"a,b,c\n4,5\n1,2,3,", ["utf-8"]),
        (b"a,b\n1,2\r3,4\n", ["utf-8"]),  # lone CR
        (b"a,b\n1,2\r", ["utf-8"]),
        (b"a,b\n1,\x002\n", ["utf-8"]),  # NUL
        ("n,name\n1,Café Dûpont\n".encode("latin-1"), ["utf-8", "cp1252"]),  # latin-1 file
        ("n,name\n1,Café\n".encode(), ["latin-1", "utf-8"]),  # UTF-8 bytes, latin-1 first
        ("n,name\n1,x\n".encode("utf-16"), ["utf-8"]),  # UTF-16 BOM
        (b"a,b\n1,2\n", ["utf-16"]),  # ASCII under an encoding that is not ASCII-compatible
        (b"a,b\n1,2\n", []),
        (b"", ["utf-8"]),
        (b"\xef\xbb\xbf", ["utf-8"]),
        (b"a\n\xef\xbb\xbf1\n", ["utf-8"]),  # Polars would drop this BOM
        (b"a,b\n1,\xef\xbb\xbf2\n", ["utf-8"]),  # any U+FEFF but a leading BOM
        (b"\xef\xbb\xbf\xef\xbb\xbfa,b\n1,2\n", ["utf-8"]),
    ],
)
def test_unsimple_files_return_none(data: bytes, encodings: list[str]) -> None:
    assert read_delimited_fast(data, ",", encodings) is None


@pytest.mark.parametrize("delimiter", ["", ",,", "\n", "\r", '"', "é"])
def test_odd_delimiters_return_none(delimiter: str) -> None:
    assert read_delimited_fast(b"a,b\n1,2\n", delimiter, ["utf-8"]) is None


def test_python_whitespace_set() -> None:
    expected = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    assert expected == rd._PY_WHITESPACE


def test_large_file_ragged_pair_returns_none() -> None:
    """Polars refuses a longer line anywhere in a many-chunk file (the delimiter total cannot tell)."""
    lines = [b"h1,h2,h3"] + [b"%d,x,y" % i for i in range(300_000)]
    for long_at, short_at in [(150_000, 250_000), (299_999, 2), (1, 300_000), (300_000, 1)]:
        bad = list(lines)
        bad[long_at] += b",z"
        bad[short_at] = bad[short_at].rsplit(b",", 1)[0]
        data = b"\n".join(bad) + b"\n"
        assert data.count(b",") == 2 * len(bad)
        assert read_delimited_fast(data, ",", ["utf-8"]) is None
        assert read_delimited_fast(data.rstrip(b"\n"), ",", ["utf-8"]) is None
    assert check(b"\n".join(lines) + b"\n", ",")


def test_line_numbers_are_physical() -> None:
    table, enc = read_delimited_fast(b"a;b\r\n1;2\r\n3;4", ";", ["utf-8"]) or pytest.fail("not fast")
    assert enc == "utf-8"
    assert table.frame["__line"].to_list() == [2, 3]
    assert table.frame.schema == pl.Schema({"c0": pl.String, "c1": pl.String, "__line": pl.Int64})


# --- property: random small tables ----------------------------------------------------------------

WILD = [",", ";", "|", "\t", '"', " ", "\n", "\r", "a", "1", "é", "\ufeff", "\x85", "\u2028", "\x1c"]
TAME = [c for c in WILD if c not in '"\n\r\ufeff'] + ["a", "1"] * 4  # weighted towards plain cells


@st.composite
def tables(draw: st.DrawFn) -> tuple[bytes, str, list[str]]:
    """Delimited bytes: often simple (tame cells, no delimiter in a cell), sometimes anything."""
    delimiter = draw(st.sampled_from(DELIMITERS))
    wild = draw(st.integers(0, 3)) == 0
    cells = st.text(alphabet=WILD if wild else [c for c in TAME if c != delimiter], max_size=4)
    ncols = draw(st.integers(1, 4))
    nrows = draw(st.integers(0, 5))
    ragged = draw(st.integers(0, 3)) == 0
    rows = [
        draw(st.lists(cells, min_size=max(1, ncols - 1) if ragged else ncols,
                      max_size=ncols + 1 if ragged else ncols))
        for _ in range(nrows + 1)
    ]
    terminator = draw(st.sampled_from(["\n", "\r\n"]))
    if draw(st.booleans()):
        buf = io.StringIO()
        quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]))
        csv.writer(buf, delimiter=delimiter, lineterminator=terminator, quoting=quoting).writerows(rows)
        text = buf.getvalue()
    else:
        text = "".join(delimiter.join(r) + terminator for r in rows)
    if draw(st.booleans()):
        text = text.removesuffix(terminator)
    if draw(st.integers(0, 5)) == 0:
        text = draw(st.sampled_from(["\n", "\r\n", " \n", delimiter + "\n"])) + text
    prefix = draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf"]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "cp1252"] if wild else ["utf-8"]))
    try:
        data = prefix + text.encode(encoding)
    except UnicodeEncodeError:
        data = prefix + text.encode("utf-8")
    encodings = draw(st.sampled_from(ENCODING_LISTS[:4] if wild else [["utf-8"], ["utf-8", "cp1252"]]))
    return data, delimiter, encodings


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_random_tables_fast_or_equal(case: tuple[bytes, str, list[str]]) -> None:
    data, delimiter, encodings = case
    check(data, delimiter, encodings)


def check_arrow(data: bytes, delimiter: str, encodings: list[str]) -> bool:
    """Assert Arrow's route (a spreadsheet's CSV) is None or equal to the csv module's; True when taken."""
    ref = slow(data, delimiter, encodings)
    if ref is None:
        return False
    text, enc = decode(data, encodings)
    got = read_delimited_arrow(data, text, enc, delimiter)
    if got is None:
        return False
    r = ref[0]
    assert (got.headers, got.header_line, got.ragged) == (r.headers, r.header_line, r.ragged)
    assert got.frame.schema == r.frame.schema and got.frame.equals(r.frame)
    return True


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_random_tables_arrow_or_equal(case: tuple[bytes, str, list[str]]) -> None:
    check_arrow(*case)


def test_a_spreadsheets_csv_takes_arrows_route():
    rows = [["employer_id", "hours", "gross_wages"], ["10-0000001", "1.5", "$1,234.56"], ["10-0000001", "2", '"x" y']]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    assert check_arrow(buf.getvalue().encode(), ",", ["utf-8"])
    assert not check_arrow((buf.getvalue() + "a,b\r\n").encode(), ",", ["utf-8"])  # a short line: the csv route


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab1 é,;", max_size=3), min_size=3, max_size=3), min_size=1, max_size=6),
       st.sampled_from(["|", "\t"]))
def test_plain_random_tables_take_fast_path(rows: list[list[str]], delimiter: str) -> None:
    rows = [["h1", "h2", "h3"]] + [r if any(c.strip() for c in r) else ["x", *r[1:]] for r in rows]
    data = "".join(delimiter.join(r) + "\n" for r in rows).encode()
    assert check(data, delimiter)
    # the same exported with every field quoted (unless a field holds the delimiter)
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(rows)
    assert check(buf.getvalue().encode(), delimiter)


# --- many files, one read -------------------------------------------------------------------------

def same(a: tuple[RawTable, str] | None, b: tuple[RawTable, str] | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    (t, e), (u, f) = a, b
    return (e, t.headers, t.header_line, t.ragged, t.delimiter) == (f, u.headers, u.header_line, u.ragged, u.delimiter) \
        and t.frame.schema == u.frame.schema and t.frame.equals(u.frame)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tables(), min_size=1, max_size=6))
def test_many_files_read_at_once_equal_one_by_one(cases: list[tuple[bytes, str, list[str]]]) -> None:
    _, delimiter, encodings = cases[0]
    datas = [d for d, _, _ in cases]
    many = rd.read_delimited_fast_many(datas, delimiter, encodings)
    assert len(many) == len(datas)
    for data, got in zip(datas, many, strict=True):
        assert same(got, read_delimited_fast(data, delimiter, encodings))


def test_many_generated_files_equal_one_by_one(sample: Path) -> None:
    files = sorted((sample / "payroll").glob("*.csv")) + sorted((sample / "mix").rglob("*.csv"))
    datas = [p.read_bytes() for p in files]
    many = rd.read_delimited_fast_many(datas, ",", ["utf-8"])
    assert all(same(a, read_delimited_fast(d, ",", ["utf-8"])) for a, d in zip(many, datas, strict=True))
    assert sum(x is not None for x in many) >= 6


def test_many_files_take_one_read(monkeypatch) -> None:
    datas = [("h1,h2,h3\n" + "".join(f"{i},x{j},{j}.5\n" for j in range(i % 7 + 1))).encode() for i in range(30)]
    odd = [
        b'"h1","h2","h3"\n"1","x",""\n',  # quoted cells: joined, then its quotes checked and taken off
        b"h1,h2,h3\n1,2,3\n , ,\n",  # a blank record: joined, then found (None)
        b"h1,h2,h3\n1,2,3",  # no final newline: read alone
        b"h1,h2,h3\n",  # header only: nothing to read
        b'h1,h2,h3\n"1,2",3\n',  # a delimiter inside quotes: None before any read
    ]
    datas = odd[:2] + datas + odd[2:]
    one = [read_delimited_fast(d, ",", ["utf-8"]) for d in datas]
    calls = []
    real = rd._read_rows
    monkeypatch.setattr(rd, "_read_rows", lambda *a: calls.append(1) or real(*a))
    many = rd.read_delimited_fast_many(datas, ",", ["utf-8"])
    assert all(same(a, b) for a, b in zip(many, one, strict=True))
    assert [x is None for x in many] == [False, True] + [False] * 30 + [False, False, True]
    assert many[0][0].frame.row(0) == ("1", "x", "", 2)
    assert [t.frame.height for t, _ in many[2:32]] == [i % 7 + 1 for i in range(30)]
    assert len(calls) == 2  # one joint read, and the file without a final newline
