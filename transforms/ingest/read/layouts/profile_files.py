"""Where profiles come from: the shipped ``data/vendors/`` and the agency's own folder.

The agency's folder (``--profiles DIR`` on every command that reads payroll, ``IMPCREDIT_PROFILES``
or ``profiles`` in ``impcredit.toml``: the run's settings, ``flows/settings.py``) holds profiles
written by its analysts, read through the same strict schema; one with a shipped profile's name
replaces it. A ``vocabulary.yaml`` there adds phrases and words to the shipped vocabulary. Each
profile knows its file (``Profile.source``). The profiles in effect (``load_profiles``: a tuple,
``Layouts``) are loaded once at the edge and passed to what reads files (``layouts=``); none given
means the shipped ones.

A profile that cannot be used stops the run before anything is read, with one line naming the file,
the key and what to write (``ProfileError``): a run never reads a submission with half its layouts.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import ValidationError

from transforms import schema
from transforms.ingest.read.layouts.profiles import Profile
from transforms.ingest.read.layouts.vocabulary import (
    VOCABULARY_FILE,
    Vocabulary,
    VocabularyError,
    load_vocabulary,
    yaml_loader,
)

VENDORS_DIR = Path(__file__).resolve().parents[4] / "data" / "vendors"
VOCABULARY = VOCABULARY_FILE.name


class ProfileError(ValueError):
    """A profile (or the profiles folder) cannot be used: one line, file, key and what to write."""


def _fingerprint(d: Path | None) -> tuple:
    if d is None:
        return ()
    if not d.is_dir():
        raise ProfileError(f"{d}: the profiles folder does not exist (set by --profiles, IMPCREDIT_PROFILES or profiles in impcredit.toml)")
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(d.glob("*.yaml")))


def _explain(exc: ValidationError) -> str:
    """The first error of a profile as ``key: what is wrong; what to write``."""
    err = exc.errors()[0]
    # a union's branch (``profile_keys._tagged``) is no key of the file
    loc = ".".join(str(x) for x in err["loc"] if not str(x).startswith("~"))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        parent = Profile
        for part in [x for x in err["loc"][:-1] if not str(x).startswith("~")]:
            field = getattr(parent, "model_fields", {}).get(str(part))
            ann = getattr(field, "annotation", None) if field else None
            parent = next((a for a in getattr(ann, "__args__", (ann,)) if hasattr(a, "model_fields")), ann)
        keys = ", ".join(getattr(parent, "model_fields", {}) or [])
        return f"{loc}: unknown key" + (f"; the keys here are {keys}" if keys else "")
    if err["type"] == "missing":
        return f"{loc}: required: write it"
    if not err["loc"]:
        return msg
    if err["type"] == "literal_error":
        return f"{loc}: {msg}"
    return f"{loc}: {msg}"


def read_profile(path: Path, base: Vocabulary | None = None) -> Profile:
    """One profile file, strictly (``ProfileError`` naming the file and the key); ``base``: the
    vocabulary in effect when it is not the shipped one."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml_loader())
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProfileError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile is a mapping of keys (name, description, fields, ...), not {type(data).__name__}")
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(f"{path}: {_explain(exc)}") from None
    except VocabularyError as exc:
        raise ProfileError(str(exc)) from None
    except ValueError as exc:  # a vocabulary of the profile with a word given two spellings
        raise ProfileError(f"{path}: vocabulary: {str(exc).splitlines()[0]}") from None
    profile._source = str(path)
    if base is not None:
        try:
            profile.with_vocabulary(base)
        except ValueError as exc:
            raise ProfileError(f"{path}: {exc}") from None
    return profile


def _read_dir(d: Path, base: Vocabulary | None) -> list[Profile]:
    out: list[Profile] = []
    seen: dict[str, Path] = {}
    for path in sorted(d.glob("*.yaml")):
        if path.name == VOCABULARY:
            continue
        p = read_profile(path, base)
        if p.name in seen:
            raise ProfileError(f"{path}: name: {p.name!r} is also the name of {seen[p.name]}: give each profile its own name")
        seen[p.name] = path
        out.append(p)
    return out


@lru_cache(maxsize=8)
def _load(agency: Path | None, _fp: tuple) -> tuple[Profile, ...]:
    base = vocabulary(agency) if agency is not None and (agency / VOCABULARY).is_file() else None
    shipped = {p.name: p for p in _read_dir(VENDORS_DIR, base)}
    if "canonical" not in shipped:
        raise ProfileError(f"{VENDORS_DIR}: the canonical profile (canonical.yaml) is missing")
    if agency is not None:
        for p in _read_dir(agency, base):
            if p.name == "canonical":
                raise ProfileError(f"{p.source}: name: 'canonical' is the spec's own layout and cannot be replaced: "
                                   "give the profile another name")
            shipped[p.name] = p
    return tuple(sorted(shipped.values(), key=lambda p: (p.name != "canonical", p.name)))


Layouts = tuple[Profile, ...]  # the payroll profiles in effect, ``canonical`` first


def load_profiles(agency: Path | None = None) -> Layouts:
    """All payroll profiles, ``canonical`` first: the shipped ones and, over them, the agency's
    folder ``agency`` (None: the shipped ones alone)."""
    d = agency.resolve() if agency is not None else None
    return _load(d, _fingerprint(d))


def vocabulary(agency: Path | None = None) -> Vocabulary:
    """The shipped vocabulary with the agency's ``vocabulary.yaml`` (if any) on top."""
    shared = load_vocabulary()
    d = agency
    if d is None or not (d / VOCABULARY).is_file():
        return shared
    try:
        return shared.merged(load_vocabulary(d / VOCABULARY))
    except VocabularyError as exc:
        raise ProfileError(str(exc)) from None


_CANONICAL: dict[tuple[str, int], tuple[Profile, Profile]] = {}


def _canonical(dataset: str, base: Profile) -> Profile:
    if dataset == "payroll":
        return base
    got = _CANONICAL.get((dataset, id(base)))
    if got is not None and got[0] is base:
        return got[1]
    cols = [*schema.SUBMITTED_COLUMNS[dataset], *schema.OPTIONAL_COLUMNS.get(dataset, [])]
    made = base.model_copy(
        update={"dataset": dataset, "fields": {c: [c] for c in cols}, "derived": {},
                "optional": list(schema.OPTIONAL_COLUMNS.get(dataset, [])), "layout": "wide",
                "long": None, "period_from_pay_date": None, "split": {}, "employee_id_from": []}
    )
    made._index = made._reader = made._flat = made._either = made._refs = None
    _CANONICAL[(dataset, id(base))] = (base, made)
    return made


def canonical_profile(dataset: str, layouts: Layouts | None = None) -> Profile:
    """The canonical CSV layout of ``dataset`` (payroll: canonical.yaml; others: the schema)."""
    base = next(p for p in (layouts or load_profiles()) if p.name == "canonical")
    return _canonical(dataset, base)


def profiles_for(dataset: str, fmt: str, layouts: Layouts | None = None) -> list[Profile]:
    """The layouts a file of ``dataset`` in format ``fmt`` may be (``layouts``: those in effect;
    None: the shipped ones)."""
    if dataset != "payroll":
        return [canonical_profile(dataset, layouts)] if fmt == "csv" else []
    return [p for p in (layouts or load_profiles()) if fmt in p.formats]


def origin(profile: Profile) -> str:
    """``shipped`` or ``agency (<file>)``."""
    src = Path(profile.source) if profile.source else None
    if src is None or src.parent.resolve() == VENDORS_DIR:
        return "shipped"
    return f"agency ({src})"


__all__ = ["VENDORS_DIR", "Layouts", "ProfileError", "canonical_profile", "load_profiles", "origin",
           "profiles_for", "read_profile", "vocabulary"]
