"""Every output parses, whatever text reaches it (spec section 1: what cannot be printed is
rejected at input; each writer is also safe on its own): awards.xlsx reads back in openpyxl, the
charts in an XML parser, CSV files in the csv module, pages hold nothing an XML 1.0 parser refuses."""

from __future__ import annotations

import csv
import re
from xml.etree import ElementTree as ET

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.outputs import XML_INVALID, write_csv, xml_safe
from transforms.products import charts
from transforms.products._html import env
from transforms.products.workbook import write_workbook

# any text: controls, U+FFFE/U+FFFF, bidirectional controls, markup, formula starts
hostile = st.text(alphabet=st.characters(codec="utf-8", categories=None), max_size=40) | st.sampled_from(
    ["\ufffe", "\uffff", "a\x00b", "\x1f", "<script>x</script>", "=HYPERLINK(\"x\")", "&amp;", "]]>", "\u202e"])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(hostile, min_size=1, max_size=5))
def test_any_text_through_the_workbook_reads_back(tmp_path_factory, texts):
    import openpyxl

    path = tmp_path_factory.mktemp("wb") / "awards.xlsx"
    write_workbook(path, {"awards": pl.DataFrame({"employer_name": texts, "n": list(range(len(texts)))}),
                          texts[0][:20] or "x": pl.DataFrame({"a": [1]})})
    wb = openpyxl.load_workbook(path, read_only=True)
    got = [r[0] for r in wb["awards"].iter_rows(min_row=2, values_only=True)]
    # XML reads a carriage return as a line feed (end-of-line handling, XML 1.0 section 2.11)
    assert [g or "" for g in got] == [xml_safe(t).replace("\r\n", "\n").replace("\r", "\n") for t in texts]
    assert len(wb.sheetnames) == 2


@SETTINGS
@given(hostile, st.lists(hostile, min_size=1, max_size=4))
def test_any_text_through_the_charts_parses(tmp_path_factory, title, labels):
    path = tmp_path_factory.mktemp("svg") / "chart.svg"
    charts.bars(path, labels, {"awarded": [100 * (i + 1) for i in range(len(labels))]}, title)
    ET.parse(path)  # a well-formed XML document
    assert not re.search(XML_INVALID, path.read_text(encoding="utf-8"))


@SETTINGS
@given(st.lists(hostile, min_size=1, max_size=5))
def test_any_text_through_a_csv_reads_back(tmp_path_factory, texts):
    path = tmp_path_factory.mktemp("csv") / "x.csv"
    write_csv(pl.DataFrame({"name": texts}), path)
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["name"] and len(rows) == len(texts) + 1
    for t, (got,) in zip(texts, rows[1:], strict=True):
        assert got in (t, "'" + t) or (t == "" and got == "")


@SETTINGS
@given(hostile)
def test_any_text_on_a_page_is_printable(text):
    page = env().from_string("<p>{{ name }}</p><p title=\"{{ name }}\">x</p>").render(name=text)
    assert not re.search(XML_INVALID, page) and "<script>" not in page


@settings(max_examples=300, deadline=None)
@given(hostile | st.text(alphabet=st.characters(max_codepoint=0x7f), max_size=30))
def test_xml_safe_replaces_exactly_what_xml_cannot_carry(text):
    """The printable-ASCII shortcut of ``xml_safe`` gives the regex's result on any text."""
    assert xml_safe(text) == re.sub(XML_INVALID, "\ufffd", text)
    assert xml_safe("a\x7fb\tc\r\n") == "a\x7fb\tc\r\n" and xml_safe("a\x00b\x1f") == "a\ufffdb\ufffd"
