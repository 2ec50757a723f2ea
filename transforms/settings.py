"""Run settings: the interpretation register of the spec (section 10) and the allocation policy.

Every ambiguity of the statute is a named setting whose default is the spec's choice; the
alternative is selectable (``impcredit whatif --set NAME=VALUE``). The settings used by a run are
recorded in its manifest.
"""

from __future__ import annotations

from typing import Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field


class RuleSettings(BaseModel):
    """How the credit is computed (spec sections 3 to 6; register I-1 to I-9, I-11, I-13 to I-15)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # I-1: the (d)(1)(c)(i) adjustment as a dollar increase CF(t)-CF(t-1), or as the same
    # percentage applied to the employee's own prior rate (part 1) / prior minimum wage (part 2).
    adjustment: Literal["dollars", "percent"] = "dollars"
    # I-2: the counterfactual old-law path: the published table (NJDOL's $8.98 for 2020), or the
    # CPI-W formula from $8.85 (2019) throughout.
    counterfactual_path: Literal["published", "formula"] = "published"
    # I-3: tipped employees: ADJ from the statewide path, or 0 (old law froze the cash wage).
    tipped_adjustment: Literal["statewide", "zero"] = "statewide"
    # I-4: "minimum wage in effect during the last preceding calendar year".
    prior_minimum_wage: Literal["day_weighted", "december_31"] = "day_weighted"
    # I-5: overtime: all hours at the minimum wage, or the overtime multiplier on hours over the
    # weekly threshold (data/reference/overtime.yaml: 1.5x over 40), estimated per period as hours
    # above threshold x days/7, since payroll periods carry total hours.
    overtime: Literal["straight", "premium"] = "straight"
    # I-6: payroll taxes: prior side as reported, or modelled on both sides.
    payroll_taxes: Literal["prior_reported", "model_both"] = "prior_reported"
    # I-7: attribution of pay periods to days/years: spread evenly over days, or all on period_end.
    attribution: Literal["spread_days", "period_end"] = "spread_days"
    # I-8: the deadline applies to the application's received date, or to the tax years covered.
    deadline_basis: Literal["received_date", "tax_year"] = "received_date"
    # I-9: part 2 includes payroll taxes at the required-side effective rate, or wages only.
    part2_taxes: Literal["included", "wages_only"] = "included"
    # I-11: a fiscal filer's "last preceding calendar year": the last calendar year that ended
    # before the period began (s.year - 1), or the 12 months just before the period.
    prior_year: Literal["calendar_year_before", "twelve_months_before"] = "calendar_year_before"
    # I-13: "earning at least the minimum wage on the effective date" (56a39): a person paid below
    # it on 2019-02-04 is excluded where the payroll covers that day, or only persons employed by
    # the group on that day at or above it qualify.
    effective_date_test: Literal["paid_below_excluded", "employed_at_or_above"] = "paid_below_excluded"
    # I-14: common ownership or control: every entity in the applicant's group on at least one day
    # of the tax period counts with all its rows, or only the days of its membership count.
    group_days: Literal["all_rows", "membership_days"] = "all_rows"
    # I-15: required payroll taxes in a group: per member with its own rates and wage bases, or one
    # set of wage bases for the group (a common paymaster; each member's rates on its share).
    group_payroll_taxes: Literal["per_member", "common_paymaster"] = "per_member"
    # I-16: the reasons of an application an audit finding concerns (spec sections 7 and 9a): its
    # application-level reasons as section 7 says (an (f) finding's WAGE_REDUCTION; NO_CREDIT_DUE
    # when a misclassification took every employee), or the finding's code among them whatever
    # the status (issue 44: "a finding shows at the application level"; the run page and the
    # notice show the finding either way).
    finding_reasons: Literal["application_level", "finding_code"] = "application_level"


class AllocationSettings(BaseModel):
    """How approvals are rationed under the annual cap (spec section 7; register I-10)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: Literal["fcfs", "pro-rata"] = "fcfs"
    # I-10 alternative: no partial awards (an application that does not fit whole is waitlisted).
    partial_awards: bool = True
    # Waitlisted applications are considered first by the next approval year's first run.
    waitlist_carry: bool = True
    # Override of the statutory cap (program.annual_cap), in dollars.
    cap: float | None = Field(default=None, ge=0)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: RuleSettings = RuleSettings()
    allocation: AllocationSettings = AllocationSettings()

    def with_assignments(self, assignments: dict[str, str]) -> Settings:
        """Apply ``NAME=VALUE`` settings (NAME is a field of rules or allocation). A bad name or
        value is a ``ValueError`` of one line: "overtime must be straight or premium, not 'premum'"."""
        rules = self.rules.model_dump()
        alloc = self.allocation.model_dump()
        for name, value in assignments.items():
            choice = parse_setting(name, value)
            if name in rules:
                rules[name] = choice
            else:
                alloc[name] = choice
        return Settings(rules=RuleSettings(**rules), allocation=AllocationSettings(**alloc))

    @staticmethod
    def names() -> list[str]:
        return sorted([*RuleSettings.model_fields, *AllocationSettings.model_fields])


# one line per setting: the register entry it answers and what it changes (impcredit settings)
SETTING_HELP: dict[str, str] = {
    "adjustment": "I-1: the (d)(1)(c)(i) adjustment as a dollar increase CF(t)-CF(t-1), or a percent of the prior rate",
    "counterfactual_path": "I-2: the old-law path: NJDOL's published $8.98 for 2020, or the CPI-W formula from $8.85",
    "tipped_adjustment": "I-3: tipped employees' adjustment from the statewide path, or 0 (old law froze the cash wage)",
    "prior_minimum_wage": "I-4: last year's minimum wage as the day-weighted average, or the rate on December 31",
    "overtime": "I-5: all hours at the minimum wage, or 1.5x on hours over 40 a week",
    "payroll_taxes": "I-6: prior-year employer taxes as reported, or modelled on both sides",
    "attribution": "I-7: pay periods spread over their days, or all on the period end",
    "deadline_basis": "I-8: the deadline applies to the received date, or to the tax year covered",
    "part2_taxes": "I-9: part 2 with payroll taxes at the required-side rate, or wages only",
    "prior_year": "I-11: a fiscal filer's prior year: the calendar year before the period began, or the 12 months before it",
    "effective_date_test": "I-13: a person paid below the minimum wage on 2019-02-04 is excluded, or only those paid at or above it that day qualify",
    "group_days": "I-14: a group member's rows count on every day, or only on the days of its membership",
    "group_payroll_taxes": "I-15: required payroll taxes per member with its own wage bases, or one set of bases for the group",
    "policy": "I-10: cap rationing, first come first served or pro rata",
    "partial_awards": "I-10: the marginal application gets a partial award, or the queue stops at it",
    "waitlist_carry": "spec 7: waitlisted applications are served first by the next approval year's first run",
    "cap": "the annual cap in dollars (default: program.annual_cap, $10,000,000)",
}


def setting_fields() -> list[tuple[str, str, list[str], str]]:
    """(name, group, allowed values, default) of every setting, rules first."""
    out = []
    for group, model in (("rules", RuleSettings), ("allocation", AllocationSettings)):
        for name, f in model.model_fields.items():
            out.append((name, group, _choices(f.annotation), "none" if f.default is None else str(f.default).lower()
                        if isinstance(f.default, bool) else str(f.default)))
    return out


def _choices(annotation) -> list[str]:
    if get_origin(annotation) is Literal:
        return [str(a) for a in get_args(annotation)]
    if annotation is bool:
        return ["true", "false"]
    return ["a non-negative amount in dollars", "none"]


def parse_setting(name: str, value: str):
    """A setting's value from text, checked: one-line ``ValueError`` naming the allowed values."""
    fields = {n: (g, c) for n, g, c, _ in setting_fields()}
    if name not in fields:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(sorted(fields))}")
    _, choices = fields[name]
    v = value.strip()
    if choices == ["true", "false"]:
        if v.lower() not in ("true", "false"):
            raise ValueError(f"{name} must be true or false, not {value!r}")
        return v.lower() == "true"
    if choices[-1] == "none":
        if v.lower() in ("", "none"):
            return None
        try:
            amount = float(v.replace(",", "").removeprefix("$"))
        except ValueError:
            amount = -1.0
        if amount < 0 or amount != amount:
            raise ValueError(f"{name} must be a non-negative amount in dollars (or none), not {value!r}")
        return amount
    if v not in choices:
        raise ValueError(f"{name} must be {' or '.join(choices)}, not {value!r}")
    return v
