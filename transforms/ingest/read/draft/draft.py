"""A draft profile for a payroll export no profile reads (``impcredit layouts draft FILE``).

The sheet that holds the payroll is the one whose header reaches the most fields a payroll needs
over the most lines of figures (a Summary tab reaches few, over one column); the sheets laid out
like it are read and the others passed over (``sheets: {read, skip}``). The header is the row
among the first 60 whose cells reach the most fields, by meaning (the vocabulary), or the first
column when the items run down the side (``transposed``): the employee (an id, or the name as
printed), the pay period (its start and end, a period in one cell, only a pay date, or a pay date
or period printed above the table), hours (a total, or regular and overtime summed), gross wages
(a total, or each kind of earnings summed), the employer's taxes (a total, or each employer tax
summed), and where present the ssn, the FEIN, the check number and the pay frequency. A column is
never taken for money when its header or its values say hours, nor the reverse
(``draft_guess.unit``); a column whose name repeats is named by its section (the ``Amount`` after
``Employer Taxes``). Dates and numbers are read from the values; lines saying "total" in any
column become totals lines. The foot of the draft says what was guessed and what to check, and
whether the draft loads. The draft is YAML for an analyst to read, edit and put in the agency's
profiles folder; ``impcredit layouts check`` then verifies it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from transforms.ingest.read import figures as fg
from transforms.ingest.read.draft import draft_codes as dc
from transforms.ingest.read.draft import draft_guess as dg
from transforms.ingest.read.draft import draft_ids as di
from transforms.ingest.read.draft import draft_lines as dl
from transforms.ingest.read.draft import draft_tabs as dt
from transforms.ingest.read.draft.draft_yaml import draft_yaml
from transforms.ingest.read.files import readers as rd
from transforms.ingest.read.files import workbooks as wbk
from transforms.ingest.read.layouts import profile_files as pfiles
from transforms.ingest.read.reports import transpose as tp

Records = list[tuple[int, list[str | None]]]


@dataclass
class Draft:
    name: str
    source: str
    header_index: int
    header_line: int
    fields: dict[str, str | dict] = field(default_factory=dict)  # field -> the header as written, or a ColumnRef
    er_parts: list[tuple[str, str | dict]] = field(default_factory=list)  # (field, header) of each employer tax
    pay_parts: list[tuple[str, str | dict]] = field(default_factory=list)  # (field, header) of each kind of earnings
    unmatched: list[str] = field(default_factory=list)
    date_format: str = "%m/%d/%Y"
    totals: list[tuple[str, str, bool]] = field(default_factory=list)  # (label, scope, first)
    blocks: list[tuple[str, list[str], str | None]] = field(default_factory=list)  # (label, fields, value)
    title_lines: int = 0
    sheet: str | None = None
    sheets_read: list[str] = field(default_factory=list)  # name patterns (``sheets.read``)
    sheets_skip: list[str] = field(default_factory=list)
    transposed: bool = False
    transposed_spec: tuple[int, int | None, int | None] = (1, None, None)  # label columns, group row, heading row
    sheet_date: tuple[str, str] | None = None  # the pay date in the sheets' names: (pattern, date format)
    employee_block: str | None = None  # the label of a line naming the employee alone (a block per paycheck)
    end: list[str] = field(default_factory=list)  # a line from which on the report is its summary (report.end)
    ids_from: list[str] = field(default_factory=list)  # employee_id_from
    # a total seen on some of the sheets read and not on others: the field is its total or its parts
    either: dict[str, str] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)  # field -> its column
    blank_zero: bool = False  # lines that fill only some of the figures (number: {blank: zero})
    notes: list[str] = field(default_factory=list)  # lines of one text cell below the header (report.notes)
    guessed: list[str] = field(default_factory=list)  # what the draft guessed (said at its foot)
    check: list[str] = field(default_factory=list)  # what the analyst should check
    carry: list[str] = field(default_factory=list)  # dates on a check's first line only, carried down
    files_csv: list[str] = field(default_factory=list)  # the lines of payroll/files.csv to write (only check dates)
    units: dict[str, str] = field(default_factory=dict)  # hours fields written as hours and minutes
    fixed_width: list[str] | None = None  # printed in columns: cut at the heading (the continued columns)
    extension: str = ""
    codes: dict | None = None  # a line per code: layout: long's fields and code table (draft_codes)


SUMMARY_NAMES = re.compile(r"summary|totals?\b|notes?\b|criteria|cover|instructions|read ?me", re.I)


@dataclass
class _Candidate:
    sheet: str | None
    records: Records
    index: int
    reached: frozenset[str]
    rows: int
    transposed: bool
    spec: tuple[int, int | None, int | None] = (1, None, None)  # a transposed table's label columns, group and heading rows

    @property
    def rank(self) -> tuple:
        """A sheet named as a summary, notes or criteria comes last; then the header reaching most
        fields over most lines."""
        return (not (self.sheet and SUMMARY_NAMES.search(self.sheet)), len(self.reached) >= 3,
                len(self.reached) * min(self.rows, 3), len(self.reached), self.rows, not self.transposed)


def _tables(path: Path, words=None, d: dict | None = None) -> list[tuple[str | None, Records]]:
    """The tables of a file as records: a workbook's sheets, a delimited text, or a text printed in
    columns (its lines aligned under a heading line: ``fixed_width.aligned``, said in ``d``)."""
    if path.suffix.lower() in wbk.WORKBOOK_EXT:
        sheets = [(s.name, s.records) for s in wbk.read_workbook(path) if s.records]
        if not sheets:
            raise ValueError(f"{path}: the workbook has no sheet with a line")
        return sheets
    text, _ = rd.decode(path.read_bytes(), ["utf-8", "cp1252"])
    delims = [d for d in (",", ";", "\t", "|") if d in text[:20000]] or [","]
    best = max(delims, key=lambda x: max((len(c) for _, c in rd.delimited_records(text, x, limit=60)), default=0))
    records = rd.delimited_records(text, best)
    if words is not None and d is not None and (got := dl.printed(text, records, lambda c: _reached(words, c))):
        d["fixed_width"] = got[1]
        return [(None, got[0])]
    return [(None, records)]


def _reached(words, cells) -> frozenset[str]:
    got = {r for c in cells if c and c.strip() and (r := dg.reach(words, c) or dg.earning(words, c))}
    return frozenset(got)


def _candidate(words, sheet: str | None, records: Records) -> _Candidate | None:
    """The header of ``records`` reaching most fields: a line, or the first column (transposed)."""
    best: _Candidate | None = None
    for i, (_, cells) in enumerate(records[:60]):
        got = _reached(words, cells)
        rows = sum(1 for _, c in records[i + 1:i + 201] if any(fg.figure(x) for x in c))
        cand = _Candidate(sheet, records, i, got, rows, False)
        if got and (best is None or (len(got), -i) > (len(best.reached), -best.index)):
            best = cand
    n = dl.label_columns(records)
    start = tp.table_start(records, n)
    if start is not None:
        group = dl.groups(records[start:], n)
        turned = tp.transposed(records, n, group_row=group[0], heading_row=group[1])
        got = _reached(words, [dg.no_place(c) for c in turned[start][1] if c])
        cand = _Candidate(sheet, turned, start, got, len(turned) - start - 1, True, (n, *group))
        if got and (best is None or len(got) > len(best.reached) + 1):
            best = cand
    return best


def draft_profile(path: Path, name: str | None = None, agency: Path | None = None,
                  submission: di.Submission | None = None) -> Draft:
    """The draft of ``path``'s layout (see the module's docstring); ``agency``: the agency's
    profiles folder, whose vocabulary.yaml adds words; ``submission``: its employer and roster
    (default: those of the submission ``path`` sits in, ``draft_ids.submission_of``)."""
    words = pfiles.vocabulary(agency).reader()  # the shipped words and the agency's (not its profiles: one may be the draft)
    fixed: dict = {}
    tables = _tables(path, words, fixed)
    cands = [c for sheet, records in tables if (c := _candidate(words, sheet, records)) is not None]
    if not cands:
        raise ValueError(f"{path}: no line among the first 60 names a payroll column (employee, hours, gross pay ...)")
    best = max(cands, key=lambda c: c.rank)
    alike, repeats = (dt.one_of_each(words, _alike(best, cands)) if len(tables) > 1 else ([best], []))
    best = next((keep for keep, copies, _ in repeats if best in copies), best)  # the most detailed of its copies
    d = Draft(name or _slug(path.stem), path.name, best.index, best.records[best.index][0], title_lines=best.index,
              sheet=best.sheet, transposed=best.transposed, transposed_spec=best.spec,
              fixed_width=fixed.get("fixed_width"), extension=path.suffix.lower())
    if len(tables) > 1:
        _choose_sheets(d, alike, repeats, [s for s, _ in tables])
    header = [(c or "").strip() for c in best.records[best.index][1]]
    below = best.records[best.index + 1:best.index + 2001]
    values = [[cells[k] if k < len(cells) and cells[k] is not None else "" for _, cells in below]
              for k in range(len(header))]
    _columns(d, words, header, values)
    sub = submission if submission is not None else di.submission_of(path)
    di.employer_column(d, header, values, sub)
    di.employee_column(d, header, values, sub)
    di.employee(d, header, values)
    dc.code_lines(d, words, header, values)
    alone = dl.employee_lines(d, header, best.records[best.index + 1:])
    _totals_or_parts(d, words, alike)
    _blank_figures(d, values)
    dl.carry(d, header, values)
    d.date_format = _date_format([c for _, cells in below for c in cells if c])
    d.totals = dg.totals(best.records[best.index + 1:], len(header))
    if alone:
        dl.summary_end(d, best.records[best.index + 1:], alone)
    d.blocks = [b for b in dg.blocks(words, best.records[:best.index] + best.records[best.index + 1:])
                if not set(b[1]) & set(d.fields)]
    _pay_date(d, header, values)
    _sheet_dates(d, alike)
    di.files_csv_lines(d, header, values, sub)
    if not best.transposed:
        d.notes = dg.notes(best.records[best.index + 1:], {label for label, _, _ in [*d.totals, *d.blocks]}
                           | set(d.end), frozenset(alone))
    if d.fixed_width is not None:
        dl.rule_note(d, below)
    _say(d)
    return d


def _alike(best: _Candidate, cands: list[_Candidate]) -> list[_Candidate]:
    """The sheets laid out like the chosen one (the same orientation, most of its fields)."""
    return [c for c in cands if c.transposed == best.transposed and c.spec == best.spec and len(
        c.reached & best.reached) * 2 > len(best.reached) and len(c.reached) >= 3]


def _choose_sheets(d: Draft, alike: list[_Candidate], repeats: list, names: list[str]) -> None:
    """The sheets laid out like the chosen one are read, but those repeating the payroll of
    another (``draft_tabs``); the others passed over (by name)."""
    read = [c.sheet for c in alike]
    others = [n for n in names if n not in read]
    d.sheets_read, d.sheets_skip = dg.sheet_patterns(read, others)
    copies = {c.sheet for _, tabs, _ in repeats for c in tabs}
    for keep, tabs, said in repeats:
        d.guessed.append(f"sheet(s) {', '.join(repr(c.sheet) for c in tabs)} repeat the payroll of sheet {keep.sheet!r} "
                         f"(laid out alike; {', '.join(said)}): only {keep.sheet!r} is read (sheets.skip; check "
                         "they are the same payroll grouped otherwise, not another pay run)")
    if other := [n for n in others if n not in copies]:
        d.guessed.append(f"the payroll is on sheet(s) {', '.join(repr(s) for s in read)}; passed over: "
                         f"{', '.join(repr(s) for s in other)} (sheets.skip: check none of them holds payroll)")


def _totals_or_parts(d: Draft, words, alike: list[_Candidate]) -> None:
    """A total (gross pay, the employer's taxes) on some of the sheets read and not on others,
    where the parts are there: the field is read from its total or from its parts."""
    for f, parts in (("gross_wages", d.pay_parts), ("employer_taxes", d.er_parts)):
        seen = [next((c.strip() for k, c in enumerate(cand.records[cand.index][1])
                      if c and dg.reach(words, c) == f and _has_figures(cand, k)), None) for cand in alike]
        total = next((s for s in seen if s), None)
        if parts and total and any(s is None for s in seen):
            d.fields.pop(f, None)
            d.either[f] = total
            d.guessed.append(f"{f}: its total {total!r} on some sheets, its parts on the others: either is read")


def _columns(d: Draft, words, header: list[str], values: list[list[str]]) -> None:
    """Each column's field, by its header's words (and its section's), never against its unit.
    Long because each column is tried as a field, a section's column, an employer tax, a kind of
    earnings, and kept out where its unit says otherwise, in the order a report prints them."""
    kinds = [dg.kind(v) for v in values]
    clock = [dl.clock(v) for v in values]  # hours and minutes (44:30): figures of hours, read with units h:mm
    kinds = ["figures" if c else k for k, c in zip(kinds, clock, strict=True)]
    secs = dg.sections(header, kinds)
    count = Counter(words.words(h) for h in header if h)
    taken: set[str] = set()
    # a column whose name is its own before those whose name repeats ("Total Hours" before the
    # "Hours" of each earning)
    order = sorted((k for k, h in enumerate(header) if h), key=lambda k: (count[words.words(header[k])] > 1, k))
    for k in order:
        own = header[k]
        unit = dg.unit(own, values[k]) or (dg.unit(f"{secs[k]} {own}", values[k]) if secs[k] else None)
        repeated = count[words.words(own)] > 1
        f, alias = dg.reach(words, dg.no_place(own)), own
        if (f is None or repeated) and secs[k] and (g := dg.reach(words, f"{secs[k]} {dg.no_place(own)}",
                                                                  loose=False)) is not None:
            f, alias = g, {"header": own, "section": secs[k]}
        elif repeated:
            alias = {"column": fg.letters(k)} if not d.transposed else {"column": k + 1}
        if f is None and kinds[k] == "figures" and (unit == "money" or (
                unit is None and dg.hours_twin(words, header, values, k))):  # "Overtime" beside "OT Hrs"
            f = dg.earning(words, own)
        if f is None and unit == "hours" and kinds[k] == "figures":  # a pivot's hours of one kind: "Hol Hrs"
            f = dg.hours_of(words, own)
        if f is None or f in taken or (clock[k] and f not in ("hours", "regular_hours", "overtime_hours",
                                                              "double_time_hours")):
            d.unmatched.append(own)
            continue
        if clock[k]:
            d.units[f] = "h:mm"
        if dg.counted(f) and kinds[k] != "figures":  # a section's label, a column of codes
            d.unmatched.append(own)
            if kinds[k] == "text":
                d.check.append(f"'{own}' reads as {f} but holds no figures (codes?): not taken")
            continue
        if not dg.fits(f, unit):
            d.unmatched.append(own)
            said = ("its header says money, its values hours (or the reverse)" if unit == "mixed"
                    else f"its header or values say {unit}")
            d.check.append(f"'{own}' reads as {f} but {said}: not taken (a column of "
                           f"{'hours' if f in dg.HOURS_FIELDS else 'money'} is needed)")
            continue
        taken.add(f)
        d.positions[f] = k
        if f.startswith("er_"):
            d.er_parts.append((f, alias))
        elif f.startswith("earn_"):
            d.pay_parts.append((f, alias))
        else:
            d.fields[f] = alias


def _blank_figures(d: Draft, values: list[list[str]]) -> None:
    """Lines that fill some of the hours and money columns and leave others blank (a line per code
    of a check, each section its own): a blank is 0 there (``number: {blank: zero}``)."""
    cols = [k for f, k in d.positions.items() if dg.counted(f) or f.startswith("hours_")]  # the figures and their parts
    lines = list(zip(*(values[k] for k in cols), strict=True)) if cols else []
    figured = [ln for ln in lines if any(fg.figure(v) for v in ln)]
    partial = sum(1 for ln in figured if any(not (v or "").strip() for v in ln))
    if partial:
        d.blank_zero = True
        d.guessed.append(f"{partial} of {len(figured)} line(s) fill only some of the hours and money columns (a line "
                         "per code?): a blank is 0 (number: {blank: zero}); check what a blank means in this report")


def _pay_date(d: Draft, header: list[str], values: list[list[str]]) -> None:
    """No period and no pay date found: a column of dates whose header says a check's or a
    payment's date (``Payment 1 Check Date``) is the pay date."""
    have = set(d.fields) | {x for _, fields, _ in d.blocks for x in fields}
    if have & {"pay_date", "period_start", "period_end", "pay_period"}:
        return
    for k, h in enumerate(header):
        words = set(re.split(r"\W+", h.lower()))
        if h and "date" in words and words & {"check", "pay", "payment", "paid"} and di.dates(values[k]):
            d.fields["pay_date"] = h
            d.guessed.append(f"the pay date is '{h}' (check it is the date each line was paid)")
            return


def _sheet_dates(d: Draft, alike: list[_Candidate]) -> None:
    """No pay date or period found, and every sheet read named by a date (a tab per pay run,
    ``Jan 13, 22``): the pay date is the sheet's name (``report.sheet_name``)."""
    have = set(d.fields) | {x for _, fields, _ in d.blocks for x in fields}
    if have & {"pay_date", "period_start", "period_end", "pay_period"} or not all(c.sheet for c in alike):
        return
    got = dg.sheet_dates([c.sheet for c in alike])
    if got is not None:
        d.sheet_date = got
        d.guessed.append(f"the pay date is in each sheet's name ({alike[0].sheet!r}): check it is the check date")


def _has_figures(cand: _Candidate, k: int) -> bool:
    """Whether column ``k`` of a candidate's table holds a figure below its header."""
    return any(k < len(cells) and fg.figure(cells[k]) for _, cells in cand.records[cand.index + 1:cand.index + 201])


def _say(d: Draft) -> None:
    """What was guessed and what to check, from the fields found."""
    f = d.fields
    if "gross_wages" not in f and "gross_wages" not in d.either and d.pay_parts:
        d.guessed.append("no gross pay column: gross_wages is the sum of " + ", ".join(
            _said(a) for _, a in d.pay_parts) + " (check that no kind of earnings is missing or counted twice)")
    if "employer_taxes" not in f and "employer_taxes" not in d.either and d.er_parts:
        d.guessed.append("no total of the employer's taxes: employer_taxes is the sum of " + ", ".join(
            _said(a) for _, a in d.er_parts) + " (check that every employer tax is there)")
    if "hours" not in f and (kinds := [repr(a) for k, a in f.items() if k.startswith("hours_")]):
        d.check.append(f"hours is the sum of the hours columns, {', '.join(kinds)} among them: check the report's "
                       "total hours counts them too")
    refs = [(k, a) for k, a in [*f.items(), *d.er_parts, *d.pay_parts] if isinstance(a, dict)]
    for k, a in refs:
        d.guessed.append(f"{k} is {_said(a)} (its name alone says too little, or repeats)")
    if d.transposed:
        d.guessed.append("the items run down the side, a column per employee or check (transposed)")
    for f, unit in d.units.items():
        d.guessed.append(f"{_said(d.fields[f])} is written as hours and minutes (44:30 is 44.5 hours): "
                         f"read with units: {{{f}: {unit}}}")
    if d.fixed_width is not None:
        d.guessed.append("a text printed in columns: cut at the heading line's columns (fixed_width: {cut: heading}; "
                         "or give the positions: fixed_width: {columns: [[name, start, end], ...]})"
                         + (f"; a line with text only under {', '.join(map(repr, d.fixed_width))} continues the line above"
                            if d.fixed_width else ""))
    for label, fields, _ in d.blocks:
        d.guessed.append(f"{' and '.join(fields)} from the line '{label}: ...' above the table, for every row")
    if d.totals:
        d.check.append("the totals lines are checked against the lines they total: see the layouts check")
    if d.notes:
        d.guessed.append("lines of one cell of text below the header are notes, skipped: "
                         + ", ".join(repr(n) for n in d.notes))


def _said(alias: str | dict) -> str:
    if isinstance(alias, str):
        return repr(alias)
    if "column" in alias:
        return f"column {alias['column']}"
    return f"{alias['header']!r} after {alias['section']!r}"


def _slug(stem: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    return s if re.match(r"^[a-z]", s or "") else f"draft_{s}"


def _date_format(cells: list[str]) -> str:
    found = Counter()
    for c in cells:
        t = c.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}( 00:00:00)?", t):
            found["%Y-%m-%d"] += 1
        elif re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", t):
            found["%m/%d/%Y"] += 1
        elif re.fullmatch(r"\d{1,2}/\d{1,2}/\d{2}", t):
            found["%m/%d/%y"] += 1
    return found.most_common(1)[0][0] if found else "%m/%d/%Y"


__all__ = ["Draft", "draft_profile", "draft_yaml"]
