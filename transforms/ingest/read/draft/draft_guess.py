"""What ``draft`` guesses from an export's cells: the unit of a column (hours or money, from its
header's words and its values), which field a header reaches (by meaning), the section a column
sits in where its own name repeats (``Earnings | Hours | Amount | ... | Employer Taxes |
Amount``), the totals lines whatever column their label is in, block lines above the table
(``Pay Date: 01/06/2023``) and the name patterns of the sheets read and passed over."""

from __future__ import annotations

import os
import re
from collections import Counter

from transforms.ingest.read import figures as fg
from transforms.ingest.read.layouts.vocabulary import _plain

# what payrolls call each field (read by meaning: "EE Name" is "Employee Name")
LEXICON: dict[str, list[str]] = {
    "employer_id": ["FEIN", "Federal ID", "Employer ID", "EIN", "Company FEIN"],
    "employee_id": ["Employee ID", "Employee Number", "Employee #", "Employee Code", "File Number", "Emp ID", "ID",
                    "Associate ID", "Team Member ID", "Employee No"],
    "employee_name": ["Employee", "Employee Name", "Name", "Full Name", "Team Member", "Worker", "Associate Name"],
    "last_name": ["Last Name"],
    "first_name": ["First Name"],
    "ssn": ["SSN", "Social Security Number", "Tax ID"],
    "period_start": ["Period Start", "Period Beginning", "Period Start Date", "Start Date", "Period From"],
    "period_end": ["Period End", "Period Ending", "Period End Date", "End Date", "Period To"],
    "pay_period": ["Pay Period", "Period", "Pay Period Dates"],
    "pay_date": ["Pay Date", "Check Date"],
    "check_id": ["Check Number", "Check #", "Voucher Number", "Check/Voucher Number", "Check No"],
    "pay_frequency": ["Pay Frequency", "Frequency"],
    "hours": ["Hours", "Total Hours", "Hours Worked"],
    "regular_hours": ["Regular Hours"],
    "overtime_hours": ["Overtime Hours"],
    "double_time_hours": ["Double Time Hours"],
    "gross_wages": ["Gross Pay", "Gross Wages", "Gross Earnings", "Gross", "Total Earnings", "Total Gross Pay",
                    "Earnings", "Earnings Amount", "Total Wages", "Hours and Earnings Amount", "Hours & Earnings Amount",
                    "Earnings and Hours Amount"],
    "employer_taxes": ["Employer Taxes", "Total Employer Taxes", "Total Employer Tax", "Employer Tax Total",
                       "Total Employer Liability", "Employer Liability", "Employer Taxes Amount",
                       "Total Employer Taxes and Contributions", "Employer Taxes and Contributions",
                       "Employer Liabilities", "Total Employer Liabilities", "Employer Liabilities Amount"],
}
HOURS_FIELDS = {"hours", "regular_hours", "overtime_hours", "double_time_hours"}
ER_TAXES = ("social_security", "medicare", "futa", "sui", "sdi", "wf_swf", "fli")
SAYS_NOTHING = {"usd", "dollars"}  # a currency in a header ("Employer taxes (USD)") says nothing of the column
EARNINGS = {"regular", "overtime", "double_time", "bonus", "holiday", "vacation", "sick", "pto", "commission",
            "commissions", "tip", "tips", "salary", "shift", "premium", "retro", "severance", "differential",
            "double", "personal", "bereavement", "jury"}
NOT_EARNINGS = {"net", "gross", "deduction", "deductions", "employer", "employee", "withholding", "ytd", "total",
                "rate", "cost", "reimbursement", "401k", "k", "taxable", "federal", "state", "sui", "sdi", "fli",
                "futa", "medicare", "social_security", "check", "number", "id", "date", "hour"}
MONEY = {"pay", "paid", "wage", "wages", "earning", "earnings", "gross", "net", "salary", "amount", "amt", "cost",
         "dollars", "usd", "tax", "taxes", "liability", "contribution", "contributions", "bonus", "tips",
         "commission", "social", "security", "medicare", "futa", "sui", "sdi", "fli", "unemployment", "disability",
         "insurance", "oasdi", "withholding"}
HOURS = {"hours", "hour", "hrs", "hr", "units"}
SHORT = {"hol": "holiday", "vac": "vacation", "dt": "double_time", "hldy": "holiday", "bereav": "bereavement"}


def unit(header: str, values: list[str]) -> str | None:
    """``hours``, ``money``, ``mixed`` (the header says one and the values the other: taken for
    neither) or None (cannot tell) of a column. The header's words: hours words and no money word,
    or money words and no hours word; the values: a currency sign or thousands separators say
    money, three decimals or more say hours (a time clock's 7.667), amounts over 200 a line say
    money."""
    plain = [w for w in re.split(r"[\s/]+", _plain(header)) if w]
    words = set(plain)
    h, m = bool(words & HOURS), bool(words & MONEY) or "$" in header
    said = "hours" if h and not m else "money" if m and not h else None
    if h and m and plain[-1] in HOURS:  # an item's hours column: "Total Gross Pay Hours"
        said = "hours"
    elif h and m and plain[-1] in {"amount", "amt", "pay", "wages", "earnings"}:  # "Hours and Earnings Amount"
        said = "money"
    nums = [v.strip() for v in values if fg.figure(v)]
    seen = None
    if any("$" in v or re.search(r"\d,\d{3}", v) for v in nums):
        seen = "money"
    elif any(re.search(r"\.\d{3,}$", v) for v in nums):
        seen = "hours"
    elif nums and said is None:
        big = sorted(abs(float(re.sub(r"[^\d.]", "", v) or 0)) for v in nums)
        seen = "money" if big[len(big) // 2] > 200 else None
    if said and seen and said != seen:
        return "mixed"
    return said or seen


def fits(field: str, column_unit: str | None) -> bool:
    """Whether a column of this unit may carry the field (never hours for money or the reverse)."""
    if column_unit is None:
        return True
    if column_unit == "mixed":
        return not counted(field)
    if field in HOURS_FIELDS:
        return column_unit == "hours"
    if field in ("gross_wages", "employer_taxes") or field.startswith(("er_", "earn_")):
        return column_unit == "money"
    return True


def no_place(header: str) -> str:
    """A transposed group's cell name without its place (``Total Gross Pay +4``: ``Total Gross Pay``)."""
    return re.sub(r"\s*\+\d+$", "", header)


_SHEET_DATES = [("%Y-%m-%d", r"\d{4}-\d{2}-\d{2}"), ("%m-%d-%Y", r"\d{2}-\d{2}-\d{4}"), ("%m-%d-%y", r"\d{2}-\d{2}-\d{2}"),
                ("%b %d, %y", r"[A-Z][a-z]{2} \d{1,2}, \d{2}"), ("%b %d, %Y", r"[A-Z][a-z]{2} \d{1,2}, \d{4}"),
                ("%m.%d.%Y", r"\d{2}\.\d{2}\.\d{4}")]


def sheet_dates(names: list[str]) -> tuple[str, str] | None:
    """(pattern, date format) of a date that every sheet's name holds, or None."""
    import datetime as dt

    for fmt, rx in _SHEET_DATES:
        ok = True
        for name in names:
            m = re.search(rf"(?<![\w-]){rx}(?![\w-])", name)
            try:
                dt.datetime.strptime(m.group(0), fmt) if m else None
            except ValueError:
                m = None
            ok = ok and m is not None
        if ok and names:
            return rf"(?P<pay_date>{rx})", fmt
    return None


def counted(field: str) -> bool:
    """Whether the field is hours or money (its column holds figures)."""
    return field in HOURS_FIELDS or field in ("gross_wages", "employer_taxes") or field.startswith(("er_", "earn_"))


# employer taxes as reports name them without the vocabulary's spelling ("NJ - Unemployment Company")
TAX_WORDS = {"unemployment": "sui", "disability": "sdi", "family": "fli", "oasdi": "social_security"}
# employer tax codes as registers print them (``ER FICA``, ``MEDCR ER``, ``Co SOCSEC``): FICA is the
# code of Social Security where Medicare has its own (``MEDI``, ``MEDCR``), both summed either way
TAX_CODES = {"fica": "fica", "socsec": "social_security", "ss": "social_security", "medcr": "medicare",
             "medi": "medicare", "med": "medicare", "suta": "sui", "futa": "futa", "sui": "sui", "sdi": "sdi"}
# a tax only an employer pays, alone in a header (``FUTA``, ``SUTA``): a column of the employer's taxes
EMPLOYER_ONLY = {"futa", "suta"}


def reach(words, header: str, *, loose: bool = True) -> str | None:
    """The lexicon's field a header reaches, or an employer tax (``er_<tax>``), or None;
    ``loose``: also a header that only says gross, or total hours."""
    w = words.words(header) - SAYS_NOTHING
    for f, names in LEXICON.items():
        if any(words.words(n) == w for n in names):
            return f
    if loose and "gross" in w and "hour" not in w and not ({"ytd", "taxable", "net", "adjusted", "rate"} & w):
        return "gross_wages"  # "Employee gross pay": the gross
    if loose and "hour" in w and "total" in w and not ({"rate", "ytd", "overtime", "regular"} & w):
        return "hours"  # "Total Gross Pay Hours": the hours of the total
    raw = set(_plain(header).split())
    employer_only = (w - {"nj"}) == {"futa"} or ((w - {"nj"}) == {"sui"} and bool(raw & EMPLOYER_ONLY))
    if "employer" in w or "company" in raw or "co" in raw or employer_only:
        if {"employee", "taxable", "wage", "ytd", "total"} & (w | raw):
            return None
        for tax in ER_TAXES:
            if tax in w:
                return f"er_{tax}"
        for code, tax in TAX_CODES.items():
            if code in raw or code in w:
                return f"er_{tax}"
        if "federal" in raw and "unemployment" in raw:
            return "er_futa"
        for word, tax in TAX_WORDS.items():
            if word in raw:
                return f"er_{tax}"
        if raw & {"tax", "taxes"}:  # "Employer additional taxes"
            return "er_" + "_".join(sorted(raw - {"employer", "company", "tax", "taxes"})) if raw - {
                "employer", "company", "tax", "taxes"} else None
    return None


def earning(words, header: str) -> str | None:
    """A field name for a column of one kind of earnings (``pay_regular``), or None."""
    w = (set(words.words(header)) | set(re.split(r"[\s/]+", _plain(header)))) - SAYS_NOTHING  # "Bonus", read "bonu"
    w = {SHORT.get(x, x) for x in w}  # "Hol", "Vac"
    kinds = sorted(w & EARNINGS)
    if not kinds or w & NOT_EARNINGS:
        return None
    return "earn_" + "_".join(kinds)


def hours_of(words, header: str) -> str | None:
    """The field of one kind of earnings' hours in a pivot (``Hol Hrs``: ``hours_holiday``; ``DT
    Hrs``: ``double_time_hours``), or None (not hours, or a total, a rate, a year to date)."""
    w = set(words.words(header)) | set(re.split(r"[\s/]+", _plain(header)))
    if not w & (HOURS | {"hour"}) or w & {"total", "ytd", "rate", "amount", "pay"}:
        return None
    kinds = sorted({SHORT.get(x, x) for x in w} & EARNINGS)
    if kinds in (["double_time"], ["double"], ["double", "double_time"]):
        return "double_time_hours"
    return "hours_" + "_".join(kinds) if kinds else None


def hours_twin(words, header: list[str], values: list[list[str]], k: int) -> bool:
    """Whether column ``k`` (one kind of earnings by its name, ``Overtime``) has a column of its hours
    beside it (``OT Hrs``): a pivot's pair, hours and amount, so ``k`` is the amount."""
    own = earning(words, header[k])
    return own is not None and any(
        j != k and h and unit(h, values[j]) == "hours" and earning(words, re.sub(r"(?i)\b(?:hours?|hrs?)\b", " ", h)) == own
        for j, h in enumerate(header))


def kind(values: list[str]) -> str:
    """``figures`` (most of a column's values are numbers), ``empty`` or ``text``."""
    vals = [v for v in values if v and v.strip()]
    if not vals:
        return "empty"
    return "figures" if sum(1 for v in vals if fg.figure(v)) * 2 > len(vals) else "text"


def sections(header: list[str], kinds: list[str]) -> list[str | None]:
    """The section of each column of figures: the nearest column before it that holds no figures
    (a code column, ``Earnings`` over ``Regular``, ``Overtime``; or a transposed table's row with no
    value, ``Employer Taxes`` above its items), by its header."""
    out: list[str | None] = []
    current: str | None = None
    for h, k in zip(header, kinds, strict=True):
        if k == "figures":
            out.append(current)
        else:
            out.append(None)
            current = h or current
    return out


TOTAL = re.compile(r"(?:\b(?:grand\s+)?totals?\b|\bsubtotals?\b)", re.I)


def _num(v: str) -> float | None:
    t = v.strip()
    neg = t.startswith("(") or t.startswith("-") or t.endswith("-")
    try:
        x = float(re.sub(r"[^\d.]", "", t))
    except ValueError:
        return None
    return -x if neg else x


def _pattern(label: str) -> str:
    """A totals label as a pattern: a word holding digits (an id, a date) is any word
    (``Totals For Associate ID G3K2A7P1:`` is every associate's)."""
    return " ".join(r"\S+" if re.search(r"\d", w) else re.escape(w) for w in label.lower().split())


def totals(rows, width: int) -> list[tuple[str, str, bool]]:
    """(label, scope, first) of the lines below the header that total others: a cell (in any
    column) saying total, where the line holds a figure or the label opens it; or a line whose
    figures are the sums of the lines above it (since the last such line: ``All | All | 9985.5``),
    by its first word. ``first``: the label is the line's first non-blank cell. Once in the file:
    its total; more often: since the last one (labels once each that differ past their first two
    words, a group's total naming its group, are one label: ``total department .+``)."""
    labels: Counter = Counter()
    first_of: dict[str, bool] = {}
    sums: dict[int, float] = {}
    for _, cells in rows:
        filled = [(i, c.strip()) for i, c in enumerate(cells[:width]) if c and c.strip()]
        if not filled:
            continue
        figs = {i: _num(c) for i, c in filled if fg.figure(c)}
        hit = next(((i, c) for i, c in filled if not fg.figure(c) and TOTAL.search(c) and len(c) < 60
                    and (figs or i == filled[0][0])), None)
        if hit is None and len(figs) >= 2 and all(
                x is not None and i in sums and abs(sums[i] - x) < 0.005 for i, x in figs.items()):
            hit = next(((i, c) for i, c in filled if not fg.figure(c)), None)
        if hit is None:
            for i, x in figs.items():
                sums[i] = sums.get(i, 0.0) + (x or 0.0)
            continue
        sums = {}
        label = _pattern(hit[1])
        labels[label] += 1
        first_of[label] = first_of.get(label, True) and hit[0] == filled[0][0]
    for head in {" ".join(x.split()[:2]) for x, n in labels.items() if n == 1 and len(x.split()) > 2}:
        once = [x for x, n in labels.items() if n == 1 and x.startswith(head + " ")]
        if len(once) > 1:  # a total per group, each group named ("Total Department 100 Baking"): one label
            labels[head + r" .+"] = len(once)
            first_of[head + r" .+"] = all(first_of[x] for x in once)
            for x in once:
                del labels[x]
    return [(label, "file" if n == 1 else "since_last", first_of[label]) for label, n in labels.items()]


_LABELLED = re.compile(r"^\s*([A-Za-z][A-Za-z .#/]{1,40}?)\s*:\s*(\S.*)$")
_TWO_DATES = re.compile(r"^\s*(\S+)\s*(?:-|to|through|thru)\s*(\S+)\s*$", re.I)


def blocks(words, lines) -> list[tuple[str, list[str], str | None]]:
    """(label, fields, value pattern) of the lines that set a pay date or a period for the rows
    below them (above the header, or between a report's sections): ``Pay Date: 01/06/2023``,
    ``Payroll period | 12/24/2022 - 01/06/2023`` (the label and its value in one cell, or in the
    next; a line of at most two cells), each once."""
    out: list[tuple[str, list[str], str | None]] = []
    for _, cells in lines:
        filled = [c.strip() for c in cells if c and c.strip()]
        if not filled or len(filled) > 2:
            continue
        m = _LABELLED.match(filled[0])
        label, value = (m.group(1), m.group(2)) if m else (filled[0].rstrip(":"), filled[1] if len(filled) > 1 else "")
        f, plain = reach(words, label), set(_plain(label).split())
        got = None
        if f == "pay_date" and value and not _TWO_DATES.match(value):
            got = (label.lower(), ["pay_date"], None)
        elif (f in ("pay_period", "period_start") or "period" in plain) and _TWO_DATES.match(value):
            got = (label.lower(), ["period_start", "period_end"], r"(\S+)\s*(?:-|to|through|thru)\s*(\S+)")
        if got is not None and got[0] not in {b[0] for b in out} and not {x for b in out for x in b[1]} & set(got[1]):
            out.append(got)
    return out


def notes(rows, taken: set[str], kept: frozenset[str] = frozenset()) -> list[str]:
    """Patterns of the lines below a header that hold one cell of text and nothing else (a
    section's title, a footnote, ``Page 1 of 3``), but those ``taken`` (block and totals labels)
    and the texts ``kept`` (an employee named on a line of their own): skipped as notes. Words
    holding digits are any word."""
    out: list[str] = []
    for _, cells in rows:
        filled = [c.strip() for c in cells if c and c.strip()]
        if len(filled) != 1 or fg.figure(filled[0]) or len(filled[0]) > 120 or filled[0] in kept:
            continue
        pat = _pattern(filled[0])
        if pat not in out and not any(re.fullmatch(x, filled[0], re.I) or re.match(rf"(?i){x}\b", filled[0])
                                      for x in taken):
            out.append(pat)
    return out[:10]


def sheet_patterns(read: list[str], others: list[str]) -> tuple[list[str], list[str]]:
    """(read, skip) name patterns: the sheets read by their common beginning and ``*`` where
    several share one (``Run *``), else by name; the others by name."""
    prefix = os.path.commonprefix(read) if len(read) > 1 else ""
    if prefix and not all(len(r) == len(prefix) for r in read):  # cut at a word's start: "Run 2023-01-" is "Run "
        cut = max(prefix.rfind(" "), prefix.rfind("_")) + 1
        prefix = prefix[:cut] if cut > 0 else re.match(r"[A-Za-z]*", prefix).group(0)
    if len(prefix.strip()) >= 2 and not any(o.lower().startswith(prefix.lower()) for o in others):
        return [prefix + "*"], list(others)
    if len(read) > 3 and others:  # many sheets with no name in common: every sheet but those skipped
        return [], list(others)
    return list(read), list(others)


def looks_like_names(values: list[str]) -> bool:
    """Most values hold letters and no digit (a person's name as printed)."""
    vals = [v.strip() for v in values if v and v.strip()]
    named = [v for v in vals if re.search(r"[A-Za-z]", v) and not re.search(r"\d", v)]
    return bool(vals) and len(named) * 2 > len(vals)


def looks_like_ids(values: list[str]) -> bool:
    vals = [v.strip() for v in values if v and v.strip()]
    ids = [v for v in vals if re.search(r"\d", v) and len(v) <= 20 and " " not in v]
    return bool(vals) and len(ids) * 2 > len(vals)


__all__ = ["EARNINGS", "HOURS_FIELDS", "LEXICON", "blocks", "counted", "earning", "hours_of", "hours_twin", "no_place", "sheet_dates", "fits", "kind", "looks_like_ids",
           "looks_like_names", "notes", "reach", "sections", "sheet_patterns", "totals", "unit"]
