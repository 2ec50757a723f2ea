"""A register printed as a line per code (``Code | Description | Hours | Amount``), drafted as ``layout: long``.

Each code is put in the code table by its name and its description, the words ``draft_guess``
reads a header with: an employer tax (``ER FICA``, ``FUTA``, ``SUTA``, ``MEDCR-ER``; a bare ``FICA``,
``MEDCR`` or ``MEDI`` where no employer's code of that tax is printed) in ``tax_codes``; the
employee's own taxes (``SS``, ``MED``, ``FIT``, ``EE FICA``) and deductions in ``ignore_codes``; a
kind of earnings in ``wage_codes``, and in ``hours_codes`` where its lines carry hours. A code
none of these reads is in no list: each of its lines is a reject (``unknown_code``) until the
analyst lists it, so a file is never decided on a code guessed. Where a column types each line
(``Earnings``, ``W/H Taxes``, ``Client Side Liabilities``) and a code is printed on both sides, the
type decides (``long.type``, ``type_counts``).
"""

from __future__ import annotations

import re
from collections import Counter

from transforms.ingest.read import figures as fg
from transforms.ingest.read.draft import draft_guess as dg
from transforms.ingest.read.layouts.vocabulary import _plain

EMPLOYER = {"employer", "er", "company", "co", "client"}
EMPLOYEE = {"employee", "ee", "w/h", "wh", "withholding", "withheld", "income", "fit", "sit", "lit", "fitw", "swt",
            "oasdi", "ss", "med", "social_security", "medicare"}
BARE_EMPLOYER = {"fica", "medcr", "medi"}  # the employer's codes in registers that print the employee's as SS, MED
TAXES = {"tax", "taxes", "fica", "medcr", "medi", "medicare", "social_security", "futa", "suta", "sui", "sdi", "fli",
         "wf", "swf", "ui", "di", "unemployment", "disability", "liability", "liabilities", "liabilitie"}
DEDUCTIONS = {"401k", "403b", "k", "roth", "deduction", "deductions", "ded", "dental", "vision", "medical", "ins",
              "insurance", "garn", "garnishment", "levy", "loan", "net", "deposit", "dd", "direct", "check", "reimb",
              "reimbursement", "mileage", "hsa", "fsa", "union", "dues", "support", "life", "benefit", "benefits"}
MEMO = {"tip", "tips", "memo"}  # reported tips: wages or not, the analyst says


def _words(words, text: str) -> set[str]:
    return set(words.words(text)) | {w for w in re.split(r"[\s/\-_()]+", _plain(text)) if w}


def _column(header: list[str], values: list[list[str]], taken: set[str], says: set[str], text: bool) -> int | None:
    """The untaken column whose header says one of ``says``: of codes (short texts, the most kinds) or of figures."""
    best = None
    for k, h in enumerate(header):
        if not h or h in taken or not (set(re.split(r"\W+", h.lower())) & says):
            continue
        vals = [v.strip() for v in values[k] if v and v.strip()]
        if text:
            if not vals or dg.kind(values[k]) != "text" or max(len(v) for v in vals) > 24:
                continue
            score = len(set(vals))
        else:
            if dg.kind(values[k]) != "figures":
                continue
            score = len(vals)
        if best is None or score > best[0]:
            best = (score, k)
    return None if best is None else best[1]


def side(words, code: str, desc: str, codes: set[str]) -> str | None:
    """``taxes`` (the employer's), ``ignored`` (the employee's taxes, deductions), ``wages`` or None."""
    w = _words(words, code) | _words(words, desc)
    f = dg.reach(words, code) or dg.reach(words, desc)
    if w & MEMO:
        return None
    if w & DEDUCTIONS and not (f or "").startswith("er_"):
        return "ignored"
    if (f or "").startswith("er_") or (w & EMPLOYER and w & TAXES and not w & {"employee", "ee"}):
        return "taxes"
    own = _words(words, code)
    if own <= BARE_EMPLOYER | {"nj"} and own & BARE_EMPLOYER and not any(
            c != code and _words(words, c) & own and _words(words, c) & EMPLOYER for c in codes):
        return "taxes"
    if own & TAXES and not own & (EMPLOYER | {"employee", "ee"}):  # a bare tax code beside its employee's twin:
        twins = [t for c in codes if c != code and (t := _words(words, c)) & own & TAXES]  # maybe the employer's
        if any(t & {"employee", "ee"} for t in twins) and not any(t & EMPLOYER for t in twins):
            return None
    if w & EMPLOYEE or w & TAXES:
        return "ignored"
    if dg.earning(words, code) or dg.earning(words, desc):
        return "wages"
    return None


def code_lines(d, words, header: list[str], values: list[list[str]]) -> None:
    """A register of a line per code (a code column, an amount column, no gross pay, no kinds of
    earnings as columns): the fields and the code table of ``layout: long`` (``d.codes``)."""
    if ({"gross_wages", "employer_taxes"} & set(d.fields) or d.pay_parts or d.er_parts or d.transposed
            or not isinstance(d.fields.get("hours", ""), str)):
        return
    taken = {h for h in d.fields.values() if isinstance(h, str)}
    code = _column(header, values, taken, {"code", "item", "earning", "earnings"}, text=True)
    amount = _column(header, values, taken, {"amount", "amt", "current", "dollars"}, text=False)
    hours = (header.index(d.fields["hours"]) if "hours" in d.fields  # else the hours of an earnings line: "Quantity"
             else _column(header, values, taken, {"quantity", "qty", "units", "hours", "hrs"}, text=False))
    if code is None or amount is None or hours is None:
        return
    kinds = _type_column(words, header, values, taken | {header[code]})
    desc = _column(header, values, taken | {header[code]} | ({kinds[0]} if kinds else set()),
                   {"description", "desc", "name"}, text=True)
    rows = range(len(values[code]))
    seen = {values[code][i].strip().upper() for i in rows if values[code][i].strip()}
    described = {c: Counter(values[desc][i].strip() for i in rows if values[code][i].strip().upper() == c).most_common(1)[0][0]
                 if desc is not None else "" for c in seen}
    with_hours = {values[code][i].strip().upper() for i in rows
                  if fg.figure(values[hours][i]) and re.sub(r"[^1-9]", "", values[hours][i])}
    table: dict[str, list[str]] = {"hours_codes": [], "wage_codes": [], "tax_codes": [], "ignore_codes": [], "unknown": []}
    twice = _twice(values, code, {code, hours, amount, desc})
    for c in sorted(seen):
        s = side(words, c, described[c], seen)
        if s in ("taxes", "ignored") and c in twice and _words(words, c) & (TAXES | EMPLOYEE):
            s = None  # the employee's and the employer's share under one code: the code cannot tell them apart
        key = {"taxes": "tax_codes", "ignored": "ignore_codes", "wages": "wage_codes"}.get(s, "unknown")
        if s is None and c in with_hours:
            key = "wage_codes"  # a code whose lines carry hours: a kind of earnings
        table[key].append(c)
        if key == "wage_codes" and c in with_hours:
            table["hours_codes"].append(c)
    d.fields.pop("hours", None)
    d.fields.update({"line_code": header[code], "line_hours": header[hours], "line_amount": header[amount]})
    d.unmatched = [h for h in d.unmatched if h not in (header[code], header[amount], header[hours])]
    d.codes = {"code": "line_code", "hours": "line_hours", "amount": "line_amount", **table}
    if kinds is not None:
        d.fields["line_type"] = kinds[0]
        d.unmatched = [h for h in d.unmatched if h != kinds[0]]
        d.codes.update({"type": "line_type", "type_counts": kinds[1]})
        if any(not values[hours][i].strip() and fg.figure(values[amount][i]) for i in rows) and not d.blank_zero:
            d.blank_zero = True  # a bonus's line: earnings without hours
            d.guessed.append("some lines give an amount and no hours (a bonus?): a blank is 0 (number: {blank: zero})")
    _say(d, header[code], table, kinds)


def _twice(values: list[list[str]], code: int, apart: set) -> set[str]:
    """The codes printed twice on one line's other cells (the same check, employee and dates)."""
    seen: Counter = Counter()
    for i in range(len(values[code])):
        if c := values[code][i].strip().upper():
            seen[(c, tuple(v[i] for k, v in enumerate(values) if k not in apart))] += 1
    return {c for (c, _), n in seen.items() if n > 1}


def _type_column(words, header, values, taken) -> tuple[str, dict[str, str]] | None:
    """(header, type_counts) of a column typing each line, one type the employer's taxes and one
    earnings (``Client Side Liabilities``, ``Earnings``), or None."""
    for k, h in enumerate(header):
        vals = {v.strip() for v in values[k] if v and v.strip()}
        if not h or h in taken or dg.kind(values[k]) != "text" or not 2 <= len(vals) <= 8:
            continue
        counts = {}
        for v in sorted(vals):
            w = _words(words, v)
            counts[v.upper()] = ("taxes" if w & EMPLOYER and (w & TAXES) else "hours+wages"
                                 if w & {"earning", "earnings", "wages", "pay"} and not w & {"net", "deduction"} else "ignored")
        if "taxes" in counts.values() and "hours+wages" in counts.values():
            return h, counts
    return None


def _say(d, code: str, table: dict[str, list[str]], kinds) -> None:
    if kinds is not None:
        d.guessed.append(f"a line per code; each line counted by its type in '{kinds[0]}': " + ", ".join(
            f"{t!r} {c}" for t, c in kinds[1].items()) + " (long.type_counts: check the employer's taxes are their own type)")
        return
    d.guessed.append(f"a line per code in '{code}' (layout: long): the employer's taxes are the codes "
                     f"{', '.join(table['tax_codes']) or '(none found)'}; wages {', '.join(table['wage_codes']) or '(none)'}"
                     f" (hours: {', '.join(table['hours_codes']) or 'none'}); ignored as the employee's taxes and "
                     f"deductions: {', '.join(table['ignore_codes']) or 'none'} (check each code's side)")
    if table["unknown"]:
        d.check.append(f"codes {', '.join(table['unknown'])} are in no list (a code printed twice on a check may be "
                       "the employee's and the employer's share): each of their lines is a reject (unknown_code) "
                       "until listed in wage_codes, tax_codes or ignore_codes")


def codes_yaml(d) -> list[str]:
    """The lines of ``layout: long`` for the draft's code table (none where it has none)."""
    c = getattr(d, "codes", None)
    if not c:
        return []
    keys = [f"code: {c['code']}", f"hours: {c['hours']}", f"amount: {c['amount']}"]
    if "type" in c:
        keys += [f"type: {c['type']}", "type_counts: {" + ", ".join(
            f'"{t}": {n}' for t, n in c["type_counts"].items()) + "}"]
    else:
        keys += [f"{k}: [{', '.join(repr(x).replace(chr(39), chr(34)) for x in c[k])}]"
                 for k in ("hours_codes", "wage_codes", "tax_codes", "ignore_codes") if c[k]]
    return ["# a line per code: each check's lines summed by the code table", "layout: long",
            "long:", *(f"  {k}" for k in keys)]


__all__ = ["code_lines", "codes_yaml", "side"]
