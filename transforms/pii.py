"""The ssn never goes further than this module: it becomes a keyed hash (HMAC-SHA256) on first read.

The key is read at the edge (``flows._env.load_key``: the environment's ``IMPCREDIT_HMAC_KEY``, the
key itself, at least 32 characters, or ``IMPCREDIT_HMAC_KEY_FILE``, a file outside the repository
holding it) and passed here. The demo and the tests use a built-in demo key (``demo_key``) and say
so; a deployment, and a run with ``IMPCREDIT_REQUIRE_KEY=1``, refuses it.

The key is a secret: with it, every hashed ssn is recovered by trying the 10^9 possible numbers.
It is held as a ``SecretBytes`` (its repr and str are masked) and is read where it is used
(``flows._env.hash_key``), never passed to a Prefect flow or task, where parameters are stored in the
API's database.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

import polars as pl
from pydantic import SecretBytes

DEMO_KEY = b"impcredit-demo-key-not-for-production-use-0001"
# what a lake and its ledger record of the key they were written with (spec section 8): the HMAC
# of this label under the key, never the key (``HashKey.fingerprint``, ``transforms.one_key``)
FINGERPRINT_LABEL = b"impcredit key fingerprint v1"


@dataclass(frozen=True)
class HashKey:
    """The ssn hash key (masked in repr and str) and where it came from."""

    secret: SecretBytes = field(repr=False)
    source: str  # "env", "file:<path>", "block:<name>" or "demo"

    def __init__(self, key: bytes | SecretBytes, source: str):
        object.__setattr__(self, "secret", key if isinstance(key, SecretBytes) else SecretBytes(bytes(key)))
        object.__setattr__(self, "source", source)

    @property
    def key(self) -> bytes:
        return self.secret.get_secret_value()

    def __reduce__(self):  # never pickled (a Dask worker, a cache): read the key where it is used
        raise TypeError("the ssn hash key is not serialised; load it where it is needed (flows._env.hash_key)")

    @property
    def is_demo(self) -> bool:
        return self.source == "demo"

    @property
    def key_id(self) -> str:
        """A short fingerprint of the key for manifests (not the key, not reversible)."""
        return hashlib.sha256(b"impcredit-key-id:" + self.key).hexdigest()[:12]

    @property
    def fingerprint(self) -> str:
        """The HMAC of ``FINGERPRINT_LABEL`` under the key: what a lake and its ledger record of
        the key they were written with (not the key, not reversible)."""
        return hmac.digest(self.key, FINGERPRINT_LABEL, "sha256").hex()


class KeyError_(RuntimeError):
    pass


def demo_key() -> HashKey:
    """The built-in demo key (the demo, the tests; a deployment refuses it)."""
    return HashKey(DEMO_KEY, "demo")


def key_of(value: bytes, source: str) -> HashKey:
    """A configured key (``source``: where it was read), at least 32 characters long. The demo
    key's text given as a key is the demo key (refused where the demo key is)."""
    if len(value) < 32:
        raise KeyError_("the ssn hash key must be at least 32 characters long")
    return HashKey(value, "demo" if value == DEMO_KEY else source)


def normalize_ssn_expr(col: str | pl.Expr) -> pl.Expr:
    """Digits only ('123-45-6789' -> '123456789'); 7 or 8 bare digits are an ssn whose leading
    zeros a numeric spreadsheet cell dropped ('12345678' -> '012345678'; spec section 1);
    anything else that is not 9 digits becomes null."""
    expr = pl.col(col) if isinstance(col, str) else col
    raw = expr.cast(pl.String).str.strip_chars()
    digits = raw.str.replace_all(r"[\s-]", "")
    return (pl.when(digits.str.contains(r"^\d{9}$")).then(digits)
            .when(raw.str.contains(r"^\d{7,8}$")).then(raw.str.zfill(9)).otherwise(None))


def padded_ssns(values: pl.Series) -> int:
    """How many cells hold an ssn of 7 or 8 digits (padded with leading zeros by ``normalize_ssn_expr``)."""
    return int(values.cast(pl.String).str.strip_chars().str.contains(r"^\d{7,8}$").sum())


def ssn_map(values: pl.Series) -> pl.DataFrame:
    """``raw, norm``: each distinct non-null value once, with its normalised ssn (or null).

    Payroll repeats an employee's ssn on every row, so normalising the distinct values (a few
    hundred per file) instead of every cell keeps the regex work off the row count.
    """
    raw = values.cast(pl.String).drop_nulls().unique(maintain_order=True)
    return pl.DataFrame({"raw": raw}).with_columns(normalize_ssn_expr("raw").alias("norm"))


def hash_ssn_column(frame: pl.DataFrame, key: HashKey, col: str = "ssn", out: str = "ssn_hash",
                    mapping: pl.DataFrame | None = None) -> pl.DataFrame:
    """Replace ``col`` by ``out``: the HMAC of the normalised ssn (null when not 9 digits).

    Hashes each distinct ssn once (a few hundred thousand at state scale) and maps it back, so
    the cost does not grow with the number of payroll rows per person. ``mapping``: the column's
    ``ssn_map`` when the caller already has it.
    """
    m = mapping if mapping is not None else ssn_map(frame.get_column(col))
    norms = m.get_column("norm").drop_nulls().unique().to_list()
    secret = key.key
    # hmac.digest: OpenSSL's one-shot HMAC, the same digest as hmac.new(...).hexdigest() in a third of the time
    hashes = pl.DataFrame({"norm": norms, out: [hmac.digest(secret, v.encode(), "sha256").hex() for v in norms]},
                          schema={"norm": pl.String, out: pl.String})
    m = m.join(hashes, on="norm", how="left")
    if frame.get_column(col).n_chunks() > 16:
        # Polars 2.1 builds replace_strict's mapping once per chunk: 10M ssns in 1,600 chunks
        # (a big file read whole) took 32 s against 1.2 s after one copy into a single chunk
        frame = frame.with_columns(frame.get_column(col).rechunk())
    mapped = pl.col(col).cast(pl.String).replace_strict(m.get_column("raw"), m.get_column(out), default=None,
                                                        return_dtype=pl.String)
    return frame.with_columns(mapped.alias(out)).drop(col)


# a masked ssn as exports print it: XXX-XX-1234, ***-**-1234, xxxxx1234 (the last four digits shown)
MASKED_SSN = r"^[Xx*#]{3}[- ]?[Xx*#]{2}[- ]?(\d{4})$"


def masked_last4(col: str | pl.Expr) -> pl.Expr:
    """The four digits a masked ssn shows, or null when the cell is not a masked ssn."""
    expr = pl.col(col) if isinstance(col, str) else col
    return expr.cast(pl.String).str.strip_chars().str.extract(MASKED_SSN, 1)


LAST4_DOMAIN = b"impcredit-ssn-last4:"  # what the last four digits' hash begins with (apart from the ssn hash)


def hash_last4(frame: pl.DataFrame, key: HashKey, col: str, out: str) -> pl.DataFrame:
    """``out``: the keyed hash of the four digits in ``col`` (null where null), to compare a masked
    ssn with the last four digits of the roster's ssn without storing either. Domain-separated from
    the ssn hash."""
    values = frame.get_column(col).drop_nulls().unique().to_list()
    secret = key.key

    def digest(v: str) -> str:  # the HMAC of LAST4_DOMAIN + the digits (one shot, as hash_ssn_column)
        return hmac.digest(secret, LAST4_DOMAIN + v.encode(), "sha256").hex()

    if not values:
        return frame.with_columns(pl.lit(None, dtype=pl.String).alias(out)).drop(col)
    mapped = pl.col(col).replace_strict(values, [digest(v) for v in values], default=None, return_dtype=pl.String)
    return frame.with_columns(mapped.alias(out)).drop(col)


def hash_one(ssn: str | None, key: HashKey) -> str | None:
    """The ``hash_ssn_column`` of one value (the same normalising: spaces and dashes dropped)."""
    return hash_ssn_column(pl.DataFrame({"ssn": [ssn]}, schema={"ssn": pl.String}), key).item(0, "ssn_hash")
