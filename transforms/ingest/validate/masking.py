"""Masking: no ssn of a submitted file reaches a reject, the quarantine, the suite or Data Docs.

Cells kept for a reject or the quarantine have every ssn-shaped value masked; the suite sees
each text column with the file's own ssns masked; what cannot be printed is shown escaped.
"""

from __future__ import annotations

import json
import re

import polars as pl

SSN_LIKE = re.compile(r"^\s*\d{3}[- ]?\d{2}[- ]?\d{4}\s*$")
MASK = "[ssn masked]"
MAX_VALUE_CHARS = 200


# ssn-shaped: 9 digits, bare or written with dashes, dots or spaces between the groups
_SSN_SHAPED = re.compile(r"(?<!\d)\d{3}[-. ]?\d{2}[-. ]?\d{4}(?!\d)")
_NINE = re.compile(r"(?<!\d)\d{9}(?!\d)")


def mask_value(value: str | None) -> str | None:
    """Mask every ssn-shaped value (9 digits, bare, dashed, dotted or spaced) in a cell kept for
    a reject or the quarantine, whatever column it is in and whatever the row's own ssn cell
    holds: a row whose ssn and employee id are swapped, or an ssn written ``987.65.4322``, keeps
    no ssn in clear. Employer ids in those cells are masked too (the record's own
    ``employer_id`` field keeps the employer)."""
    if value is None:
        return None
    return _SSN_SHAPED.sub(MASK, value)


def mask_employer(value: str | None, ssn_digits: frozenset[str]) -> str | None:
    """The ``employer_id`` field of a quarantine record: kept unless it is one of the file's
    ssns (a shifted column); a dashed ssn pattern is always masked."""
    if value is None:
        return None
    out = _SSN_SHAPED.sub(lambda m: m.group(0) if m.group(0).isdigit() else MASK, value)
    return _NINE.sub(lambda m: MASK if m.group(0) in ssn_digits else m.group(0), out)


# what cannot be printed (C0 controls but tab, DEL, bidirectional controls) is shown escaped
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")


def printable(v: str) -> str:
    """``v`` with each character that cannot be printed written as its escape (``\\x01``,
    ``\\u202e``): a reject or a log line never carries raw control bytes."""
    return _UNPRINTABLE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), v)


def short(v: str | None) -> str | None:
    """A submitted value as a reject shows it: escaped, at most ``MAX_VALUE_CHARS`` long."""
    if v is None:
        return v
    v = printable(v)
    if len(v) <= MAX_VALUE_CHARS:
        return v
    return v[:MAX_VALUE_CHARS] + f"... ({len(v):,} characters)"


def cells_json(row: dict) -> str:
    return json.dumps({k: mask_value(v) for k, v in row.items() if k != "__line"}, ensure_ascii=False)


def masked_ssns(values: pl.Series, ssn_digits: frozenset[str]) -> pl.Series:
    """``values`` with every cell that is one of the file's ssns (digits, dashes, spaces) and
    every dashed ssn pattern inside a cell replaced by ``MASK``.

    Worked out on the distinct values (an id column of 25,000 rows has a few hundred), then
    mapped back only when something changed, so the regex work does not grow with the rows.
    """
    longest = values.str.len_bytes().max()
    if longest is None or longest < (9 if ssn_digits else 11):  # too short to hold 9 digits, or a dashed ssn
        return values
    distinct = values.unique().drop_nulls()
    m = distinct.to_frame("v")
    if ssn_digits:
        m = m.with_columns(
            pl.when(pl.col("v").str.replace_all(r"[\s-]", "").is_in(pl.Series(list(ssn_digits), dtype=pl.String)))
            .then(pl.lit(MASK)).otherwise(pl.col("v")).alias("m")
        )
    else:
        m = m.with_columns(pl.col("v").alias("m"))
    m = m.with_columns(pl.col("m").str.replace_all(r"\b\d{3}[- ]\d{2}[- ]\d{4}\b", MASK)).filter(pl.col("m") != pl.col("v"))
    if m.height == 0:
        return values
    return values.replace(m.get_column("v"), m.get_column("m"))


# Ids whose valid values have the form of an ssn (9 digits). One that equals some ssn of the
# file is a coincidence, not an ssn to hide: at state scale (20,000 employer ids, 120,000 ssns
# in one export) some do coincide, and masking them failed valid rows on the employer_id
# format. Only a dashed ssn pattern is masked in them (it fails that format anyway); an employer
# id that is its own row's ssn is rejected before the suite (``staging``: employer_id_is_ssn).
NINE_DIGIT_IDS = frozenset({"employer_id"})


def maskable(frame: pl.DataFrame, ssn_digits: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """(column, ssns masked in it) for the text columns masked before the suite sees them (the
    hash is not an ssn)."""
    return [(c, frozenset() if c in NINE_DIGIT_IDS else ssn_digits)
            for c, t in frame.schema.items() if t == pl.String and c != "ssn_hash"]
