"""What a draft takes from the submission its file sits in: the employer is the one its folder or
``payroll/files.csv`` gives, never a FEIN column that disagrees (a PEO prints its own EIN); the
employee is the employer's own id column (``Work ID``, ``Employee Number``, ``Emp #``) before
printed names and the PEO's member number, and where the roster is given, the column whose values
are the roster's ids, else the names as printed; a report with only check dates gets the
``payroll/files.csv`` lines that give its pay frequency, read from the check dates' spacing."""

from __future__ import annotations

import csv
import datetime as dt
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
IDISH = re.compile(r"\b(?:id|ids|number|no|num|code|employee|emp|member|worker|associate|file|badge|payroll)\b|#", re.I)


@dataclass(frozen=True)
class Submission:
    """What the draft knows of the submission its file sits in."""

    employer: str | None = None  # 9 digits
    employer_from: str = ""  # "folder payroll/100000001", "payroll/files.csv line 2", "--employer"
    roster_ids: frozenset[str] = frozenset()
    roster_from: str = ""
    rel: str = ""  # the file's path under payroll/ (a line of files.csv names it so)
    frequency: str | None = None  # files.csv's pay_frequency and pay_lag_days for the file
    lag_days: str | None = None


def submission_of(path: Path, employer: str | None = None, roster: Path | None = None) -> Submission:
    """The employer and roster of the submission ``path`` sits in (``<root>/payroll/.../FILE``:
    the folder named by the employer, ``payroll/files.csv``, ``<root>/roster.csv``), each overridden
    where given."""
    path = path.resolve()
    root = next((p.parent for p in path.parents if p.name == "payroll"), None)
    emp, emp_from, rel, freq, lag = None, "", "", None, None
    if root is not None:
        rel = path.relative_to(root).as_posix()
        got, _ = ctx.contexts(root, [rel])
        if rel in got and (value := got[rel].get("employer_id")):
            emp, emp_from = value, got[rel].source
        if rel in got:
            freq, lag = got[rel].get("pay_frequency"), got[rel].get("pay_lag_days")
    if employer:
        emp, emp_from = re.sub(r"\D", "", employer), "--employer"
    if roster is None and root is not None and (root / "roster.csv").is_file():
        roster = root / "roster.csv"
    ids: frozenset[str] = frozenset()
    if roster is not None and roster.is_file():
        text, _ = rd.decode(roster.read_bytes(), ["utf-8-sig", "cp1252"])
        ids = frozenset((r.get("employee_id") or "").strip().lower() for r in csv.DictReader(text.splitlines())) - {""}
    return Submission(emp, emp_from, ids, str(roster) if ids else "", rel.removeprefix("payroll/"), freq, lag)


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
    named = [k for k in filled if IDISH.search(header[k])]  # a column headed as an id (not a department's number)
    current = d.fields.get("employee_id")
    if sub.roster_ids:
        def share(k: int) -> float:
            vals = [v.strip().lower() for v in values[k] if v and v.strip()]
            return sum(v in sub.roster_ids for v in vals) / len(vals) if vals else 0.0
        best = max(named, key=share, default=None)
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


def unknown_to_the_roster(d, header: list[str], values: list[list[str]], sub: Submission) -> None:
    """An employee id (a column, or the names as printed) none of whose values the roster has is not
    proposed: read, it would pay no claimed employee and decide a wrong NO_CREDIT_DUE; the draft then
    does not load until the column is named (said at the foot)."""
    f = d.fields
    source = f.get("employee_id") if "employee_id" in f else (f.get("employee_name") if d.ids_from == ["employee_name"]
                                                             else None)
    if not sub.roster_ids or not isinstance(source, str) or source not in header:
        return
    vals = {v.strip().lower() for v in values[header.index(source)] if v and v.strip()}
    if not vals or vals & sub.roster_ids:
        return
    f.pop("employee_id", None)
    d.ids_from = []
    d.check = [c for c in d.check if not c.startswith(("no employee id: the name as printed", f"'{source}' is read as"))]
    d.check.append(f"'{source}' is not read as the employee id: none of its values is a roster's id "
                   f"({sub.roster_from}); name the column that holds them")


def employee(d, header: list[str], values: list[list[str]]) -> None:
    """The employee's id: its column (a column of names under an id's header is the name), or the
    name as printed (``employee_id_from``), or a guess said at the foot."""
    col = {h: k for k, h in enumerate(header) if h}
    f = d.fields
    for have, other, test in (("employee_id", "employee_name", dg.looks_like_names),
                              ("employee_name", "employee_id", dg.looks_like_ids)):
        alias = f.get(have)
        if isinstance(alias, str) and other not in f and test(values[col[alias]]):
            f[other] = f.pop(have)
            d.guessed.append(f"'{alias}' holds {'names' if other == 'employee_name' else 'ids'}: read as {other}")
    if "employee_id" in f:
        return
    if "employee_name" not in f and header and not header[0] and d.transposed_spec[1] is not None and dg.looks_like_names(
            values[0]):  # a transposed table's names across the top with no label: the group's first cell
        f["employee_name"] = {"column": 1}
    if "last_name" in f and "first_name" in f:
        d.ids_from = ["last_name", "first_name"]
    elif "employee_name" in f:
        d.ids_from = ["employee_name"]
    else:
        used = {a for a in f.values() if isinstance(a, str)}
        for k, h in enumerate(header):
            if h and h not in used and dg.kind(values[k]) == "text" and (
                    dg.looks_like_names(values[k]) or dg.looks_like_ids(values[k])) and not dates(values[k]):
                f["employee_name"] = h
                d.ids_from = ["employee_name"]
                d.guessed.append(f"no employee column named as such: '{h}' is taken for the employee (check it "
                                 "names each person, and that the roster names them the same way)")
                break
    if d.ids_from:
        d.check.append("no employee id: the name as printed is the id; the roster must name each employee the same way")


def dates(values: list[str]) -> bool:
    """Whether a column holds dates (not names, not ids)."""
    return any(re.fullmatch(r"\d{1,4}[-/]\d{1,2}[-/]\d{1,4}( 00:00:00)?", v.strip()) for v in values if v)


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


def frequency_of(dates: list[dt.date]) -> str | None:
    """The pay frequency the check dates' spacing says (one employee's or the payroll's): 7 days
    weekly, 14 biweekly, twice a month on two days of the month semimonthly, 28-31 days monthly."""
    days = sorted(set(dates))
    gaps = sorted((b - a).days for a, b in zip(days, days[1:], strict=False))
    if len(gaps) < 2:
        return None
    mid = gaps[len(gaps) // 2]
    if mid == 7:
        return "weekly"
    if mid == 14 and gaps[0] >= 13:
        return "biweekly"
    if 12 <= mid <= 18 and len({d.day for d in days} - {28, 29, 30, 31}) <= 2:
        return "semimonthly"
    return "monthly" if 28 <= mid <= 31 else None


def files_csv_lines(d, header: list[str], values: list[list[str]], sub: Submission) -> None:
    """A report with only check dates (``period_from_pay_date`` without a frequency): the lines of
    ``payroll/files.csv`` that give its pay frequency and lag, said at the draft's foot; none where
    files.csv already gives them."""
    have = set(d.fields) | {x for _, fields, _ in d.blocks for x in fields}
    have |= set(re.findall(r"\(\?P<(\w+)>", d.file_date[0])) if d.file_date else set()
    if have & {"period_start", "period_end", "pay_period", "pay_frequency"} or not (
            "pay_date" in have or d.sheet_date):
        return
    dates = []
    if isinstance(d.fields.get("pay_date"), str) and d.fields["pay_date"] in header:
        for v in values[header.index(d.fields["pay_date"])]:
            try:
                dates.append(dt.datetime.strptime(v.strip().removesuffix(" 00:00:00"), d.date_format).date())
            except ValueError:
                continue
    if sub.frequency:
        d.guessed.append(f"the pay frequency is {sub.frequency} (payroll/files.csv, for {sub.rel or 'this file'}), "
                         f"the check {sub.lag_days or 0} day(s) after the period's end")
        return
    freq = frequency_of(dates) if len(dates) >= 3 else None
    said = freq or "biweekly"
    d.files_csv = ["file,employer_id,pay_frequency,pay_lag_days",
                   f"{_csv(sub.rel or d.source)},{sub.employer or '<the employer FEIN>'},{said},0"]
    d.check.append("the check dates' spacing says " + (freq if freq else "no frequency (biweekly written: correct it)") +
                    f": write {'these' if sub.rel else 'these (the file as it sits under payroll/)'} lines to "
                    "payroll/files.csv, pay_lag_days the days from a period's last day to its check date "
                    "(0: paid on it; check a pay stub)")


def _csv(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if re.search(r'[",\n]', text) else text


__all__ = ["dates", "employee", "unknown_to_the_roster", "frequency_of", "files_csv_lines", "OWN_ID", "Submission", "employee_column", "employer_column", "submission_of"]
