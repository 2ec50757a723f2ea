"""A submitted value and what is wrong with it, as an employer reads them (a notice's rejected
lines, the check page): the value quoted exactly as written with every character visible (a tab,
a no-break space, a character that prints nothing is named in brackets), the letters that look like
digits said (``"O7.04"``: the letter O, not the digit 0), and one message per problem (the column
is said once: ``hours``, ``not a number``, never ``hours: hours: not a number``)."""

from __future__ import annotations

import re
import unicodedata

# characters that print nothing or look like a plain space, named where they stand
INVISIBLE = {"\t": "[tab]", "\u00a0": "[no-break space]", "\u200b": "[zero-width space]", "\u2009": "[thin space]",
             "\u202f": "[narrow no-break space]", "\u2007": "[figure space]", "\ufeff": "[byte order mark]",
             "\r": "[carriage return]", "\n": "[line break]"}
# letters a number or date cell holds where a digit was meant
LOOK_ALIKES = {"O": "the letter O, not the digit 0", "o": "the letter o, not the digit 0",
               "l": "the letter l, not the digit 1", "I": "the letter I, not the digit 1"}


def visible(value: str | None) -> str:
    """``value`` with each character that prints nothing or looks like a space named in brackets."""
    out = []
    for ch in value or "":
        if ch in INVISIBLE:
            out.append(INVISIBLE[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"[U+{ord(ch):04X}]")
        else:
            out.append(ch)
    return "".join(out)


def quoted(value: str | None) -> str:
    """The value exactly as written, in quotes, every character visible (empty: ``(empty)``)."""
    if value is None:
        return ""
    if value == "":
        return "(empty)"
    return f"\u201c{visible(value)}\u201d"


def look_alikes(value: str | None) -> list[str]:
    """What in a value meant as a number or date is a letter that looks like a digit: only where
    the value is otherwise digits (``O7.04``, ``1l.5``), not a word (``abc``)."""
    v = (value or "").strip()
    if not v or not any(ch.isdigit() for ch in v):
        return []
    letters = [ch for ch in v if ch.isalpha()]
    if not letters or any(ch not in LOOK_ALIKES for ch in letters):
        return []
    return [LOOK_ALIKES[ch] for ch in dict.fromkeys(letters)]


_ISO_DATE = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)\b")


def long_dates(text: str) -> str:
    """Every ISO date in a message written as an employer reads dates (``February 1, 2024``)."""
    import datetime as dt

    def one(m: re.Match) -> str:
        try:
            d = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return m.group(0)
        return f"{d.strftime('%B')} {d.day}, {d.year}"

    return _ISO_DATE.sub(one, text)


def plain_message(column: str | None, message: str | None) -> str:
    """The message of a rejected cell without the column it already names (rejects.csv writes
    ``hours: not a number`` beside the column ``hours``), its dates written as an employer reads them."""
    m = message or ""
    if column and m.startswith(f"{column}: "):
        m = m[len(column) + 2:]
    # several messages (" | "): a column named twice ("employer_id: employer_id must be 9 digits") once
    m = " | ".join(re.sub(r"^([\w#. -]+): (\1\b)", r"\2", part) for part in m.split(" | "))
    return long_dates(m)


def what_to_fix(column: str | None, message: str | None, value: str | None) -> str:
    """One message per problem: the rule's words (the column said once) and, for a value with a
    letter that looks like a digit, which letter."""
    m = plain_message(column, message)
    alike = look_alikes(value) if value is not None else []
    return f"{m}: it holds {' and '.join(alike)}" if alike else m


def line_problem(file: str, line, columns: str | None, messages: str | None) -> str:
    """A line that holds an application, said once: ``payroll/a.csv line 3, hours: not a number``
    (one column), ``payroll/a.csv line 3: hours: not a number | gross_wages: empty`` (several: each
    message names its own), dates written as an employer reads them."""
    where = f"{file} line {line}" if line is not None else file
    cols = [c for c in (columns or "").split(";") if c]
    if len(cols) == 1:
        return f"{where}, {cols[0]}: {plain_message(cols[0], messages)}"
    return f"{where}: {plain_message(None, messages)}"
