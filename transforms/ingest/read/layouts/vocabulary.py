"""Headers matched by meaning: a header cell read as a set of words in one spelling.

Payroll reports name the same column many ways (``SOCIAL SECURITY - EMPLOYER TAX``, ``Employer
Social Security Tax``, ``ER Social Security``, ``Soc Sec ER Amt``). The vocabulary
(``data/vendors/vocabulary.yaml``, data beside the profiles) maps the usual words and phrases of
payroll reports to one spelling and names the filler words that say nothing of which column it is;
a header and a profile's alias reach the same field when they read as the same set of words.

    words("SOCIAL SECURITY - EMPLOYER TAX") == words("Soc Sec ER Amt") == {"employer", "social_security"}

A profile may add phrases and words of its own (its ``vocabulary`` key), read on top of the shared
ones for that profile's aliases and the headers matched against it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


# libyaml where the wheel has it (about ten times the pure-Python loader), the safe loader either way
def yaml_loader():
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


VOCABULARY_FILE = Path(__file__).resolve().parents[4] / "data" / "vendors" / "vocabulary.yaml"

_TOKEN = re.compile(r"^[a-z0-9][a-z0-9_]*$")


def _plain(text: str) -> str:
    """Accents removed, lower case, every run of other characters one space ("#" and "/" kept:
    "File #", "O/T")."""
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode().lower()
    text = text.replace("#", " # ")
    return re.sub(r"[^a-z0-9#/]+", " ", text).strip()


class Vocabulary(BaseModel):
    """Phrases and words mapped to one spelling (the key), and the filler words dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    phrases: dict[str, list[str]] = Field(default_factory=dict)
    words: dict[str, list[str]] = Field(default_factory=dict)
    filler: list[str] = Field(default_factory=list)

    @field_validator("phrases", "words")
    @classmethod
    def _keys(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for key, spellings in value.items():
            if not _TOKEN.match(key):
                raise ValueError(f"{key!r}: a spelling is lower-case letters, digits and _ (write e.g. social_security)")
            for s in spellings:
                if not _plain(s):
                    raise ValueError(f"{key}: {s!r} reads as nothing (letters or digits are needed)")
        return value

    def merged(self, other: Vocabulary | None) -> Vocabulary:
        """This vocabulary with ``other``'s phrases and words added (a profile's own)."""
        if other is None or other == Vocabulary():
            return self
        phrases = {k: list(v) for k, v in self.phrases.items()}
        for k, v in other.phrases.items():
            phrases[k] = [*phrases.get(k, []), *v]
        words = {k: list(v) for k, v in self.words.items()}
        for k, v in other.words.items():
            words[k] = [*words.get(k, []), *v]
        return Vocabulary(phrases=phrases, words=words, filler=[*self.filler, *other.filler])

    def reader(self) -> Reader:
        return _reader(self)


class Reader:
    """A vocabulary compiled: ``words(header)`` is the header's set of words in one spelling."""

    def __init__(self, vocab: Vocabulary):
        spellings: dict[str, str] = {}
        for key, written in vocab.words.items():
            for w in [key, *written]:
                p = _plain(w)
                if spellings.setdefault(p, key) != key:
                    raise ValueError(f"words: {w!r} is given two spellings ({spellings[p]} and {key})")
        self.words_map = spellings
        phrases: dict[str, str] = {}
        for key, written in vocab.phrases.items():
            for w in written:
                p = _plain(w)
                if phrases.setdefault(p, key) != key:
                    raise ValueError(f"phrases: {w!r} is given two spellings ({phrases[p]} and {key})")
        ordered = sorted(phrases, key=len, reverse=True)
        self.phrases = phrases
        self.pattern = re.compile(r"(?<![a-z0-9#/])(" + "|".join(re.escape(p) for p in ordered) + r")(?![a-z0-9#/])") \
            if ordered else None
        self.filler = {self._word(_plain(f)) for f in vocab.filler if _plain(f)} | {""}
        self._seen: dict[str, frozenset[str]] = {}

    def _word(self, w: str) -> str:
        if w in self.words_map:
            return self.words_map[w]
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss") and "_" not in w:
            s = w[:-1]
            return self.words_map.get(s, s)
        return w

    def words(self, header: str) -> frozenset[str]:
        """The header's words in one spelling, filler dropped where other words remain ("Amount"
        alone is {amount}; empty: a header of punctuation only)."""
        got = self._seen.get(header)
        if got is None:
            got = self._read(header)
            if len(self._seen) < 100_000:  # headers repeat; cells of data rows tried as headers need not stay
                self._seen[header] = got
        return got

    def _read(self, header: str) -> frozenset[str]:
        text = _plain(header)
        if self.pattern is not None:
            text = self.pattern.sub(lambda m: f" {self.phrases[m.group(1)]} ", text)
        out = {self._word(w) for w in re.split(r"[\s/]+", text)} - {""}
        meaning = out - self.filler
        return frozenset(meaning or out)  # "Amount" alone is the word amount


@lru_cache(maxsize=64)
def _reader(vocab: Vocabulary) -> Reader:
    return Reader(vocab)


class VocabularyError(ValueError):
    """The vocabulary file cannot be used: one line naming the file, the key and what to write."""


@lru_cache(maxsize=4)
def load_vocabulary(path: Path = VOCABULARY_FILE) -> Vocabulary:
    """The shared vocabulary (``data/vendors/vocabulary.yaml``), strictly."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=yaml_loader()) or {}
        vocab = Vocabulary.model_validate(data)
        vocab.reader()
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        raise VocabularyError(f"{path}: {key}: {err['msg']}") from None
    except (yaml.YAMLError, ValueError, OSError) as exc:
        raise VocabularyError(f"{path}: {str(exc).splitlines()[0]}") from None
    return vocab


# Python's hash of a frozen pydantic model with dict fields fails; hash by its JSON
Vocabulary.__hash__ = lambda self: hash(self.model_dump_json())  # type: ignore[method-assign]

__all__ = ["Reader", "Vocabulary", "VocabularyError", "load_vocabulary"]
