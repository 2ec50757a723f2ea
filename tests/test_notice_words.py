"""Documents that say what to do (issue 36, part 3), end to end from submission folders (the spec's
common data, ``tests/test_readings.py``): each remedy is what the process does (a held application
is decided by the next run from corrected files, without reopening; a decided one only by the
Department's reopening after the employer writes to it; the agency's own gaps need nothing from the
employer); a held notice never says nothing was rejected; every "above" and "below" points at a
section that is there; every code in words with the code beside it; one date format; and the notice
of an audit finding opens with what happened, states the penalty and marks the certificate it
supersedes. HTML and PDF (pypdf's text) alike."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.test_readings import EMPLOYER, EXAMPLE_A, run, write_submission

AS_OF = dt.date(2024, 7, 1)
ISO_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")


def pdf_text(path: Path) -> str:
    return " ".join(" ".join(p.extract_text() for p in PdfReader(path).pages).split())


class Flow(HTMLParser):
    """A page's text in reading order (whitespace normalised) and where each h2 heading starts in it."""

    def __init__(self):
        super().__init__()
        self.chunks: list[tuple[str, int | None]] = []  # (text, the h2 it belongs to)
        self._h2, self._n = None, 0

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self._h2, self._n = self._n, self._n + 1

    def handle_endtag(self, tag):
        if tag == "h2":
            self._h2 = None

    def handle_data(self, data):
        self.chunks.append((data, self._h2))


def flow(html: str) -> tuple[str, dict[str, int]]:
    """(the text, heading -> where it starts in the text)."""
    f = Flow()
    f.feed(html)
    text, starts, names = "", {}, {}
    for data, h2 in f.chunks:
        c = " ".join(data.split())
        if not c:
            continue
        text += (" " if text else "")
        if h2 is not None and h2 not in starts:
            starts[h2] = len(text)
        if h2 is not None:
            names[h2] = (names.get(h2, "") + " " + c).strip()
        text += c
    return text, {names[k]: starts[k] for k in names}


def assert_pointers_true(html: str) -> None:
    """Every “Section” above/below names a section heading on that side; the address "at the end of
    this notice" is its last paragraph; no bare "below"/"above" that names nothing."""
    text, headings = flow(html)
    refs = list(re.finditer(r"\u201c([^\u201d]+)\u201d (above|below)", text))
    for m in refs:
        name, side = m.group(1), m.group(2)
        assert name in headings, f"{name!r} is not a section of this notice"
        where = headings[name]
        assert (where < m.start()) if side == "above" else (where > m.start()), f"{name!r} is not {side}"
    for bare in ("listed below", "listed above", "contact below", "see below", "see above", "(below)", "(above)",
                 "see why below"):
        assert bare not in text, bare
    if "at the end of this notice" in text:  # the address closes the notice
        assert re.search(r"Write to: [^.]+, \d [^.]*\.", text[-500:]), text[-500:]


@pytest.fixture(scope="module")
def held_total(tmp_path_factory):
    """A payroll file of two employers with a ``TOTAL`` line (no readable employer id): both
    applications held by that line, and the line names no employer."""
    root = tmp_path_factory.mktemp("total")
    sub = write_submission(root / "sub", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00")
    pay = sub / "payroll" / "payroll.csv"
    lines = pay.read_text().splitlines()
    other = [ln.replace(EMPLOYER, "100000002").replace(",E1,111-22-3333,", ",E2,111-22-4444,") for ln in lines[1:]]
    pay.write_text("\n".join([*lines, *other, "TOTAL,,,,,2080.08,27041.04,2961.00"]) + "\n")
    (sub / "applications.csv").write_text((sub / "applications.csv").read_text()
                                          + "A2,100000002,Second Employer Inc,Mercer,GIT,2023,2024-02-02T09:00:00\n")
    (sub / "roster.csv").write_text((sub / "roster.csv").read_text() + "A2,E2,general\n")
    (sub / "certifications.csv").write_text((sub / "certifications.csv").read_text()
                                            + "111-22-4444,C2,CERTIFIED,2018-01-01,\n")
    rates = (sub / "employer_rates.csv").read_text()
    (sub / "employer_rates.csv").write_text(rates + "".join(
        ln.replace(EMPLOYER, "100000002") + "\n" for ln in rates.splitlines()[1:]))
    awards, _ = run(sub, root / "w", root / "o", 2023, AS_OF)
    return {"out": root / "o", "awards": awards, "line": len(lines) + len(other) + 1}


def test_a_held_notice_never_says_nothing_was_rejected(held_total):
    out = held_total["out"]
    assert dict(held_total["awards"].select("application_id", "status").iter_rows()) == {"A1": "HELD", "A2": "HELD"}
    for app in ("A1", "A2"):
        html = (out / "notices" / f"{app}.html").read_text()
        text = pdf_text(out / "notices" / f"{app}.pdf")
        assert f"payroll/payroll.csv</td><td class=\"num\">{held_total['line']}<" in html  # the TOTAL line holds it
        for doc in (html, text):
            assert "None of your submitted rows were rejected" not in doc and "were rejected." not in doc
            assert "Lines to correct before a decision" in doc
            # the held remedy: corrected files, the next run decides, no reopening and no hearing on nothing decided
            assert "the next run decides the application like a new one" in doc.replace("The next run", "the next run")
            assert "reopen" not in doc and "Your right to a hearing" not in doc
            assert "employer_id: employer_id" not in doc  # one message per problem: the column said once
            # where and by when (data/agency.yaml's resubmission: 30 days from the notice's date), in plain words
            flat = " ".join(re.sub(r"<[^>]+>", " ", doc).split())
            dated = re.search(r"Date of this notice ?([A-Z][a-z]+ \d{1,2}, \d{4})", flat)
            assert dated, flat[:600]
            by = dt.datetime.strptime(dated.group(1), "%B %d, %Y").date() + dt.timedelta(days=30)
            assert f"send the corrected files by {by:%B} {by.day}, {by.year}, the way you sent your submission" in flat
            assert "is not proven" not in flat and "the end of this notice; the next run decides" in flat
        assert_pointers_true(html)


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """One notice of each kind: held by a doubtful line (L2), by declared totals (M2), by the agency's
    own gap (N), and decided (A, approved; L2 released: rejected with reasons)."""
    from tests.test_readings import release

    root = tmp_path_factory.mktemp("variants")
    out = {}
    cases = {"doubtful": ({2018: (80, 0.80), 2019: (80, "1-3:0.80")}, 2019, "2020-02-01T09:00:00", {}, True),
             "declared": (EXAMPLE_A, 2023, "2024-02-01T09:00:00", {"declared_wages_prior": "10816.42"}, True),
             "agency": (EXAMPLE_A, 2023, "2024-02-01T09:00:00", {}, False),
             "approved": (EXAMPLE_A, 2023, "2024-02-01T09:00:00", {}, True)}
    for name, (months, year, received, declared, rates) in cases.items():
        sub = write_submission(root / name, months=months, tax_year=year, received=received, rates=rates,
                               declared=declared or None)
        as_of = dt.date(year + 1, 7, 1)
        run(sub, root / f"w-{name}", root / f"o-{name}", year, as_of)
        out[name] = root / f"o-{name}" / "notices"
        if name == "doubtful":  # released: decided with the line as read, INELIGIBLE (below minimum wage in 2019)
            release(root / f"w-{name}", "A1")
            run(sub, root / f"w-{name}", root / "o-rejected", year, as_of)
            out["rejected"] = root / "o-rejected" / "notices"
    return out


@pytest.mark.parametrize("kind", ["doubtful", "declared", "agency", "approved", "rejected"])
def test_every_remedy_is_what_the_process_does_and_every_pointer_is_true(variants, kind):
    html = (variants[kind] / "A1.html").read_text()
    text = pdf_text(variants[kind] / "A1.pdf")
    assert_pointers_true(html)
    held = kind in ("doubtful", "declared", "agency")
    for doc in (html, text):
        assert "contact below" not in doc and "Ask the contact" not in doc
        if held:
            assert "reopen" not in doc  # held: the next run decides it, nothing to reopen
            assert "None of your submitted rows were rejected" not in doc
        if kind == "agency":
            assert "Nothing is needed from you" in doc and "employer_rates.csv" not in doc
            assert "January 1, 2023 to December 31, 2023" in doc
        if kind == "doubtful":
            assert "Lines read but doubtful" in doc and "the Department confirms it" in doc
        if kind == "declared":
            assert "Your declared totals and what was read" in doc and "corrected roster.csv" in doc
        if kind == "rejected":  # decided: a corrected file alone changes nothing; the Department reopens
            assert "Below minimum wage on February 4, 2019 (SUBMINIMUM_ON_EFFECTIVE_DATE)" in doc
            assert "changes only if the Department reopens it" in doc
            assert "Your right to a hearing" in doc


@pytest.mark.parametrize("kind", ["doubtful", "declared", "agency", "approved", "rejected"])
def test_codes_in_words_and_one_date_format(variants, kind):
    html = (variants[kind] / "A1.html").read_text()
    text = pdf_text(variants[kind] / "A1.pdf")
    for doc in (re.sub(r"<[^>]+>", " ", html), text):
        assert not ISO_DATE.search(doc), ISO_DATE.search(doc)
        assert re.search(r"Received:? February 1, 20(20|24), 9:00 a\.m\. \(New Jersey time\)", " ".join(doc.split()))
        assert "General minimum wage (general)" in doc
        status = {"doubtful": "Held, not decided (HELD)", "declared": "Held, not decided (HELD)",
                  "agency": "Held, not decided (HELD)", "approved": "Approved (APPROVED)",
                  "rejected": "Not approved (REJECTED)"}[kind]
        assert status in " ".join(doc.split())
        assert not re.search(r"(?<![(A-Z_])(INPUT_REJECTED|MISSING_EMPLOYER_RATES|DECLARED_TOTALS_DIFFER|"
                             r"SUBMINIMUM_ON_EFFECTIVE_DATE|NO_CREDIT_DUE)(?!\))", doc)  # a code only beside its words


def test_a_totals_line_is_one_problem(held_total):
    """Issue 44: a totals line (``TOTAL`` in the employer id column, its other id cells empty) is one
    problem, "a totals line: remove it", in rejects.csv, on the notices and on the run page, not
    four (employer id, employee id, two dates); it still holds both applications."""
    import polars as pl

    out, line = held_total["out"], held_total["line"]
    rejects = pl.read_csv(out / "rejects.csv", infer_schema=False).filter(pl.col("line") == str(line))
    assert rejects.select("column", "value", "rule").rows() == [("employer_id", "TOTAL", "totals_line")]
    assert rejects["message"][0] == "employer_id: a totals line: remove it (the credit is computed from the lines themselves)"
    page = " ".join((out / "index.html").read_text().split())
    assert f"payroll/payroll.csv:{line} employer_id: a totals line: remove it" in page
    assert "employer_id: employer_id" not in page and "period_start: empty" not in page
    for app in ("A1", "A2"):
        notice = flow((out / "notices" / f"{app}.html").read_text())[0]
        assert notice.count("a totals line: remove it") == 1 and "period_start" not in notice


def test_one_message_per_problem_and_the_first_application_named(tmp_path):
    """Issue 44: the run page says a rejected cell's column once ("hours: not a number", never
    "hours: hours: not a number"); the notice of a duplicate application names the first one."""

    sub = write_submission(tmp_path / "sub", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00")
    pay = sub / "payroll" / "payroll.csv"
    lines = pay.read_text().splitlines()
    cells = lines[3].split(",")
    cells[5] = "eighty"
    lines[3] = ",".join(cells)
    pay.write_text("\n".join(lines) + "\n")
    run(sub, tmp_path / "w", tmp_path / "o", 2023, AS_OF)
    page = " ".join((tmp_path / "o" / "index.html").read_text().split())
    assert "payroll/payroll.csv:4 hours: not a number" in page and "hours: hours" not in page
    sub = write_submission(tmp_path / "dup", months=EXAMPLE_A, tax_year=2023, received="2024-02-01T09:00:00")
    (sub / "applications.csv").write_text((sub / "applications.csv").read_text()
                                          + f"A0,{EMPLOYER},Example Employer LLC,Mercer,CBT,2023,2024-01-15T09:00:00\n")
    (sub / "roster.csv").write_text((sub / "roster.csv").read_text() + "A0,E1,general\n")
    awards, _ = run(sub, tmp_path / "w2", tmp_path / "o2", 2023, AS_OF)
    assert dict(awards.select("application_id", "reasons").iter_rows())["A1"] == "DUPLICATE_APPLICATION"
    notice = flow((tmp_path / "o2" / "notices" / "A1.html").read_text())[0]
    assert ("The employer already filed an earlier application for the same tax year (application A0); only the "
            "first one is considered.") in notice


def test_a_wage_reduction_notice_names_whose_rate_fell_with_both_rates(tmp_path):
    """Issue 44: A1's E1 fell from $20.00 an hour (2022) to $19.57 (2023) and E2 rose: the notice
    names E1 with both rates, marks E2 as another employee's reduction, not "Wages reduced"."""
    import calendar

    import polars as pl

    from tests.test_findings import annual, submission

    sub = submission(tmp_path / "sub")
    rows = []
    for emp, ssn, rates in (("E1", "111-22-0001", {2021: 19.0, 2022: 20.0, 2023: 19.57}),
                            ("E2", "111-22-0002", {2021: 19.0, 2022: 20.0, 2023: 21.0})):
        for y, rate in rates.items():
            for m in range(1, 13):
                s, e = dt.date(y, m, 1), dt.date(y, m, calendar.monthrange(y, m)[1])
                w = round(100 * rate, 2)
                rows.append(f"100000001,{emp},{ssn},{s},{e},100,{w:.2f},{round(w * 0.1095, 2):.2f}\n")
    pay = sub / "payroll" / "payroll.csv"
    old = pay.read_text().splitlines(keepends=True)
    pay.write_text(old[0] + "".join(rows) + "".join(ln for ln in old[1:] if not ln.startswith("100000001")))
    awards = annual(sub, tmp_path / "w", tmp_path / "o")
    assert awards.filter(pl.col("application_id") == "A1")["reasons"].to_list() == ["WAGE_REDUCTION"]
    html = (tmp_path / "o" / "notices" / "A1.html").read_text()
    text = flow(html)[0].replace("\u2019", "'")
    assert ("The average hourly rate (wages / hours) of employee E1 fell from $20.00 in 2022 to $19.57 in 2023: by "
            "more than half a cent") in text
    assert "Wages reduced from $20.00 in 2022 to $19.57 in 2023 (WAGE_REDUCTION)" in text
    assert "Another employee's wages reduced (WAGE_REDUCTION)" in text
    assert "employee E2" not in text
    pdf = pdf_text(tmp_path / "o" / "notices" / "A1.pdf")
    assert "E1 fell from $20.00 in 2022 to $19.57 in 2023" in pdf


def test_a_released_notice_names_the_lines_confirmed_and_what_changed_counts_the_decision(variants):
    """Issue 44: after a release, the notice lists the doubtful line the release confirmed (never "None
    of your submitted rows were rejected"), and the rerun's "What changed" counts the decision it made."""
    import polars as pl

    out = variants["rejected"].parent
    html = (out / "notices" / "A1.html").read_text()
    text = flow(html)[0]
    assert "Lines the Department confirmed" in text and 'id="confirmed_lines"' in html
    confirmed = html.split('id="confirmed_lines"')[1].split("</table>")[0]
    assert '<td>payroll/payroll.csv</td><td class="num">3</td><td>gross_wages</td>' in confirmed
    assert "= $0.80 an hour, outside $1 to $500" in confirmed
    assert "None of your submitted rows were rejected" not in text
    assert "No other line of your submission was left out." in text
    pdf = pdf_text(out / "notices" / "A1.pdf")
    assert "Lines the Department confirmed" in pdf and "None of your submitted rows were rejected" not in pdf
    page = " ".join((out / "index.html").read_text().split())
    assert "applications decided by this run: 1 (A1), $0.00 awarded" in page
    changes = pl.read_csv(out / "changes.csv", infer_schema=False)
    assert changes.filter(pl.col("change") == "decided by this run").select("application_id", "after").rows() == [
        ("A1", "REJECTED $0.00")]
