"""Every reason code of spec sections 5 and 7, and every decision, in the words an employer
reads on a notice: what it means, the statute it comes from, and what the employer can do, which is
what the process does: a decided application changes only when the Department reopens it after the
employer writes to it (a corrected submission by itself changes no decision); a held one is decided
by the next run from corrected files, without reopening; the agency's own gaps need nothing from the
employer. Every code an employer reads (decisions, employee statuses, wage categories, reasons) has
words, shown with the code beside it (``labelled``)."""

from __future__ import annotations

# code -> (plain words, citation). All codes of spec sections 5 and 7.
REASONS: dict[str, tuple[str, str]] = {
    "TAX_YEAR_BEFORE_2019": (
        "The credit is available only for tax years beginning on or after January 1, 2019; nothing is computed for an earlier year.",
        "N.J.S.A. 34:11-56a40(e)",
    ),
    "DUPLICATE_APPLICATION": (
        "The employer already filed an earlier application for the same tax year{first}; only the first one is "
        "considered.",
        "N.J.S.A. 34:11-56a40(b)",
    ),
    "WAGE_REDUCTION": (
        "The average hourly rate of a certified employee fell by more than half a cent from one year to the next; "
        "no credit is allowed to an employer that reduced the wages of an employee with an impairment.",
        "N.J.S.A. 34:11-56a40(f)",
    ),
    "MISSING_EMPLOYER_RATES": (
        "The employer's New Jersey unemployment and disability insurance rates are missing for a rate year the tax year "
        "needs (starting July 1 of the prior year and of the tax year); the required payroll taxes cannot be computed.",
        "N.J.S.A. 34:11-56a40(d)(1) (employer payroll taxes); N.J.S.A. 43:21-7",
    ),
    "LATE_APPLICATION": (
        "The application was received on or after the deadline for the employee's wage category.",
        "N.J.S.A. 34:11-56a40(b), (c)",
    ),
    "NOT_CERTIFIED": (
        "There is no State determination (certification) that the employee is an employee with an impairment "
        "valid during the tax year.",
        "N.J.S.A. 34:11-56a39; 34:11-56a41(a)(1)",
    ),
    "NO_HOURS_IN_TAX_YEAR": (
        "The payroll shows no hours worked by the employee in the tax year.",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "HOURS_DECREASED": (
        "The employee worked fewer hours in the tax year than in the prior calendar year.",
        "N.J.S.A. 34:11-56a40(d)(2)",
    ),
    "NO_CREDIT_DUE": (
        "No credit is due: the eligible employees were already paid at least the minimum wage increase, "
        "or no employee of the application is eligible.",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "SUBMINIMUM_ON_EFFECTIVE_DATE": (
        "On February 4, 2019 (the day P.L.2019, c.32 took effect) the employee was paid below the minimum wage of "
        "the category; the credit is for employees with an impairment earning at least the minimum wage that day.",
        "N.J.S.A. 34:11-56a39",
    ),
    "DUPLICATE_EMPLOYEE": (
        "The same person (the same social security number) is claimed on an earlier line of this application; "
        "a person is counted once, over all the rows of the employer's group.",
        "N.J.S.A. 34:11-56a39; 34:11-56a40(d)(1)",
    ),
    "NOT_IN_CONTROL_GROUP": (
        "The roster names an employer that is neither the applicant nor a member of its group of entities under "
        "common ownership or control during the tax period.",
        "N.J.S.A. 34:11-56a39",
    ),
    "MISCLASSIFIED": (
        "An audit found that the employee is not an employee with an impairment as the application represented; "
        "the employee-year counts nothing and the credit certified for it is taken back.",
        "N.J.S.A. 34:11-56a39; 34:11-56a40(e)",
    ),
    "INPUT_REJECTED": (
        "Lines of the submission that this application could depend on could not be read, or were read but look "
        "unlikely, or no employee it claims could be read; nothing is decided until they are corrected or confirmed.",
        "N.J.S.A. 34:11-56a40",
    ),
    "DECLARED_TOTALS_DIFFER": (
        "The totals your roster declares for an employee (hours, gross wages or employer payroll taxes of a year, "
        "from your payroll system) differ from what was read from your payroll files by more than the tolerance; "
        "nothing is decided on a reading your own figures contradict (the figures are shown side by side above).",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "CAP_EXHAUSTED": (
        "The annual limit of approvals{cap} was reached; the application received part "
        "of its request or none, and a waitlisted application is considered first in the next approval year.",
        "N.J.S.A. 34:11-56a40(g)",
    ),
}

# What a decided application's employer sends when it thinks the decision rests on wrong figures: a
# decided application changes only when the Department reopens it (a corrected submission by itself
# changes no decision); a held one is decided by the next run from corrected files (see HELD_ACTIONS).
REOPEN = ("write to the Department at the address at the end of this notice, name this application and enclose {what}. "
          "A decided application changes only if the Department reopens it: files sent again with a later "
          "submission do not change this decision by themselves.")
HEARING = "ask for a hearing (see \u201cYour right to a hearing\u201d below)"

# code -> what the employer of a decided application can do about it (on the notice beside the reason)
ACTIONS: dict[str, str] = {
    "TAX_YEAR_BEFORE_2019": "Nothing can change this: no credit exists for a tax year that begins before 2019. An "
                            "application for a tax year that begins in 2019 or later is decided on its own.",
    "DUPLICATE_APPLICATION": "Nothing is needed: your first application for this tax year is the one decided. If the "
                             f"first one was filed in error, {HEARING}.",
    "WAGE_REDUCTION": "If the payroll shown is wrong (a missing or misdated check, a reversal), "
                      + REOPEN.format(what="the corrected payroll files") + f" If you disagree, you may also {HEARING}. "
                      "If the payroll is right, no credit is allowed for the year.",
    "MISSING_EMPLOYER_RATES": "Nothing is needed from you: the unemployment and disability insurance rates are the "
                              "Department's own records. The application was decided on the other reasons shown for "
                              "each employee.",
    "LATE_APPLICATION": f"If the application was received earlier than the date shown, {HEARING} and include proof of "
                        "the date of receipt.",
    "NOT_CERTIFIED": "If the employee held a determination of impairment valid during the tax year that the Department's "
                     "records do not show, " + REOPEN.format(what="a copy of it") + " Otherwise the employee may "
                     "request a determination; it counts for the tax years it covers.",
    "NO_HOURS_IN_TAX_YEAR": "If the employee worked in the tax period, "
                            + REOPEN.format(what="the payroll files that show it"),
    "HOURS_DECREASED": "If hours are missing from the payroll of the tax period, "
                       + REOPEN.format(what="the corrected payroll files"),
    "NO_CREDIT_DUE": "Nothing is owed on this application. If an employee's pay or hours shown are wrong, "
                     + REOPEN.format(what="the corrected payroll files"),
    "SUBMINIMUM_ON_EFFECTIVE_DATE": "If the employee was paid at least the minimum wage on February 4, 2019, "
                                    + REOPEN.format(what="the payroll that shows it"),
    "DUPLICATE_EMPLOYEE": "Nothing is needed: the person is counted once, on the first line that claims them.",
    "NOT_IN_CONTROL_GROUP": "If the employer named is part of your group under common ownership or control, "
                            + REOPEN.format(what="the evidence of the common control"),
    "MISCLASSIFIED": f"If you disagree with the finding, {HEARING}. A finding withdrawn on appeal is decided again as "
                     "before it, within the approvals left in its approval year.",
    "CAP_EXHAUSTED": "Nothing is needed from you. A waitlisted application is considered first by the first run of the "
                     "next approval year, in the order received; an award made in part is final.",
}

# code -> what the employer of a HELD application does (nothing is decided: the next run decides it from
# corrected files, with no reopening; the agency's own gaps need nothing from the employer). The notice
# words INPUT_REJECTED by the sections it shows (``notices.held_action``).
HELD_ACTIONS: dict[str, str] = {
    "MISSING_EMPLOYER_RATES": "Nothing is needed from you: the Department is completing its record of your "
                              "unemployment and disability insurance rates; the first run that has them decides the "
                              "application, and you receive its notice.",
    "DECLARED_TOTALS_DIFFER": "Check the figures under \u201cYour declared totals and what was read\u201d above. If your "
                              "payroll files are incomplete or were exported with the wrong columns, send the corrected "
                              "files under the same names; if your declared totals are wrong, send a corrected "
                              "roster.csv. The next run decides the application, with no need to ask for anything. If "
                              "both are right, write to the Department at the address at the end of this notice: it can "
                              "confirm the figures as read.",
    "INPUT_REJECTED": "Correct the lines listed above and send the files again under the same names: the next run "
                      "decides the application like a new one, with no need to ask for anything.",
}

# code -> its words when an audit finding gave it (spec section 9a), not the payroll: a finding is
# explained as a finding, and its remedy is a hearing, never a corrected payroll
FOUND_REASONS: dict[str, tuple[str, str]] = {
    "WAGE_REDUCTION": (
        "Found on audit: the Commissioner determined that the employer reduced the wages it paid to an employee with "
        "an impairment to be eligible for the credit in a later year. The employer is not eligible for the credit for "
        "the tax year(s) the finding names, whatever the payroll shows.",
        "N.J.S.A. 34:11-56a40(f)",
    ),
    "MISCLASSIFIED": (
        "Found on audit: the Department found that the employee is not an employee with an impairment as the "
        "application represented; the employee-year counts nothing and the credit certified for it is taken back.",
        "N.J.S.A. 34:11-56a39; 34:11-56a40(e)",
    ),
}
FOUND_ACTION = (f"If you disagree with the finding, {HEARING}. A finding withdrawn on appeal is decided again as before "
                "it, within the approvals left in its approval year.")


STATUS_WORDS = {
    "APPROVED": "Your application is approved.",
    "PARTIAL": "Your application is approved in part: the annual limit of approvals did not allow the full amount.",
    "WAITLISTED": "Your application is eligible but waitlisted: the annual limit of approvals has been reached.",
    "REJECTED": "Your application is not approved.",
    "HELD": "Nothing is decided yet: the reading this application would be decided on is not proven (see "
            "\u201cWhy it is held\u201d below). Nothing is final; the next run that can prove it decides the application.",
}

# each code as an employer reads it beside the code: decisions, employee statuses, wage categories, reasons
STATUS_LABELS = {"APPROVED": "Approved", "PARTIAL": "Approved in part", "WAITLISTED": "Waitlisted",
                 "REJECTED": "Not approved", "HELD": "Held, not decided", "ELIGIBLE": "Eligible",
                 "INELIGIBLE": "Not eligible"}
CATEGORY_LABELS = {"general": "General minimum wage", "tipped": "Tipped employee (cash wage)",
                   "seasonal_small": "Seasonal or small employer", "agricultural": "Agricultural"}
REASON_LABELS = {
    "TAX_YEAR_BEFORE_2019": "Tax year before 2019", "DUPLICATE_APPLICATION": "Not your first application",
    "WAGE_REDUCTION": "Wages reduced", "MISSING_EMPLOYER_RATES": "Employer rates missing",
    "LATE_APPLICATION": "Received after the deadline", "NOT_CERTIFIED": "No certification of impairment",
    "NO_HOURS_IN_TAX_YEAR": "No hours in the tax year", "HOURS_DECREASED": "Fewer hours than the prior year",
    "NO_CREDIT_DUE": "No credit due", "SUBMINIMUM_ON_EFFECTIVE_DATE": "Below minimum wage on February 4, 2019",
    "DUPLICATE_EMPLOYEE": "Person claimed twice", "NOT_IN_CONTROL_GROUP": "Employer not in your group",
    "MISCLASSIFIED": "Not an employee with an impairment (audit)", "INPUT_REJECTED": "Lines to correct or confirm",
    "DECLARED_TOTALS_DIFFER": "Declared totals differ", "CAP_EXHAUSTED": "Annual limit reached",
}


def labelled(code: str | None, labels: dict[str, str] | None = None) -> str:
    """A code as an employer reads it: its words with the code beside it (``Not approved (REJECTED)``);
    an unknown code as it stands, never dropped."""
    if not code:
        return ""
    table = labels if labels is not None else {**STATUS_LABELS, **CATEGORY_LABELS, **REASON_LABELS}
    words = table.get(code)
    return f"{words} ({code})" if words else code


def reasons_labelled(reasons: str | None) -> str:
    """``"A;B"`` -> ``"Words of A (A); words of B (B)"``."""
    return "; ".join(labelled(c, REASON_LABELS) for c in (reasons or "").split(";") if c)
