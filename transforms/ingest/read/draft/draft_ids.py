"""The ids a draft takes where the submission is known (a PEO's or a bureau's export): the
employer is the one its folder or ``payroll/files.csv`` gives, never a FEIN column that
disagrees (a PEO prints its own EIN); the employee is the employer's own id column (``Work ID``,
``Employee Number``, ``Emp #``) before printed names and the PEO's member number, and where the
roster is given, the column whose values are the roster's ids."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from transforms.ingest.read.draft import draft_guess as dg
from transforms.ingest.read.files import context as ctx
from transforms.ingest.read.files import readers as rd

# the employer's own id of an employee, as a PEO's or a payroll product's report heads it
OWN_ID = re.compile(r"^\s*(?:work\s*id|emp(?:loyee)?\.?\s*(?:number|no\.?|num|#)|employee\s*code|file\s*(?:number|#))\s*$",
                    re.I)
MEMBER = re.compile(r"\bmember\b", re.I)  # a PEO's own number of its worksite employee


@dataclass(frozen=True)
class Submission:
    """What the draft knows of the submission its file sits in."""

    employer: str | None = None  # 9 digits
    employer_from: str = ""  # "folder payroll/100000001", "payroll/files.csv line 2", "--employer"
    roster_ids: frozenset[str] = frozenset()
    roster_from: str = ""


def submission_of(path: Path, employer: str | None = None, roster: Path | None = None) -> Submission:
    """The employer and roster of the submission ``path`` sits in (``<root>/payroll/.../FILE``:
    the folder named by the employer, ``payroll/files.csv``, ``<root>/roster.csv``), each overridden
    where given."""
    path = path.resolve()
    root = next((p.parent for p in path.parents if p.name == "payroll"), None)
    emp, emp_from = None, ""
    if root is not None:
        rel = path.relative_to(root).as_posix()
        got, _ = ctx.contexts(root, [rel])
        if rel in got and (value := got[rel].get("employer_id")):
            emp, emp_from = value, got[rel].source
    if employer:
        emp, emp_from = re.sub(r"\D", "", employer), "--employer"
    if roster is None and root is not None and (root / "roster.csv").is_file():
        roster = root / "roster.csv"
    ids: frozenset[str] = frozenset()
    if roster is not None and roster.is_file():
        text, _ = rd.decode(roster.read_bytes(), ["utf-8-sig", "cp1252"])
        ids = frozenset((r.get("employee_id") or "").strip().lower() for r in csv.DictReader(text.splitlines())) - {""}
    return Submission(emp, emp_from, ids, str(roster) if ids else "")


def employer_column(d, header: list[str], values: list[list[str]], sub: Submission) -> None:
    """A FEIN column whose values are not the submission's employer (a PEO's or a bureau's own
    EIN) is not taken: the folder or files.csv names the employer, the foot says so."""
    alias = d.fields.get("employer_id")
    if not isinstance(alias, str) or alias not in header:
        return
    printed = sorted({re.sub(r"\D", "", v) for v in values[header.index(alias)] if v and v.strip()} - {""})
    if sub.employer is None:
        d.check.append(f"'{alias}' is read as the employer's FEIN: check it is the employer's own, not a PEO's or a "
                       "payroll bureau's (the folder payroll/<FEIN>/ or files.csv then names the employer)")
        return
    if printed and printed != [sub.employer]:
        d.fields.pop("employer_id")
        d.unmatched.append(alias)
        d.guessed.append(f"'{alias}' prints {', '.join(printed[:3])}, not the employer {sub.employer} of "
                         f"{sub.employer_from} (a PEO's or a bureau's own EIN): not read as employer_id; the "
                         f"employer is the one {sub.employer_from} gives")


def employee_column(d, header: list[str], values: list[list[str]], sub: Submission) -> None:
    """The employee's id: the column whose values are the roster's ids (most of them), else the
    employer's own id column (``Work ID``, ``Employee Number``) before a PEO's member number and
    printed names; said at the foot."""
    filled = [k for k, h in enumerate(header) if h and dg.kind(values[k]) != "empty"]
    current = d.fields.get("employee_id")
    if sub.roster_ids:
        def share(k: int) -> float:
            vals = [v.strip().lower() for v in values[k] if v and v.strip()]
            return sum(v in sub.roster_ids for v in vals) / len(vals) if vals else 0.0
        best = max(filled, key=share, default=None)
        if best is not None and share(best) > 0.5 and not dg.looks_like_names(values[best]):
            _take(d, header[best], f"its values are the roster's employee ids ({sub.roster_from})")
        elif current is not None and isinstance(current, str) and current in header and share(header.index(current)) == 0:
            d.check.append(f"'{current}' is read as the employee id but none of its values is a roster's id "
                           f"({sub.roster_from}): check which column the roster's ids are in")
        return
    own = [k for k in filled if OWN_ID.match(header[k]) and dg.looks_like_ids(values[k])]
    if own and (current is None or (isinstance(current, str) and not OWN_ID.match(current))):
        _take(d, header[own[0]], "the employer's own id of each employee (not a PEO's member number, nor a name)")
    if isinstance(d.fields.get("employee_id"), str) and MEMBER.search(d.fields["employee_id"]):
        d.check.append(f"'{d.fields['employee_id']}' is a PEO's member number: the roster must list the same ids")


def _take(d, h: str, why: str) -> None:
    """``h`` read as the employee id; the names and the member number it displaces, not."""
    for f in ("employee_id", "employee_name"):
        if d.fields.get(f) == h:
            d.fields.pop(f)
    if d.fields.get("employee_id") not in (None, h):
        d.unmatched.append(d.fields["employee_id"])
    if h in d.unmatched:
        d.unmatched.remove(h)
    d.fields["employee_id"] = h
    d.guessed.append(f"the employee id is '{h}': {why}")


__all__ = ["OWN_ID", "Submission", "employee_column", "employer_column", "submission_of"]
