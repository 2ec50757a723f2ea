"""Every reason code of spec sections 5 and 7, and every decision, in the words an employer
reads on a notice: what it means, the statute it comes from, and what the employer can do."""

from __future__ import annotations

# code -> (plain words, citation). All codes of spec sections 5 and 7.
REASONS: dict[str, tuple[str, str]] = {
    "TAX_YEAR_BEFORE_2019": (
        "The credit is available only for tax years beginning on or after January 1, 2019; nothing is computed for an earlier year.",
        "N.J.S.A. 34:11-56a40(e)",
    ),
    "DUPLICATE_APPLICATION": (
        "The employer already filed an earlier application for the same tax year; only the first one is considered.",
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
        "unlikely; nothing is decided until they are corrected or confirmed (the lines are listed above).",
        "N.J.S.A. 34:11-56a40",
    ),
    "DECLARED_TOTALS_DIFFER": (
        "The totals your roster declares for an employee (hours, gross wages or employer payroll taxes of a year, "
        "from your payroll system) differ from what was read from your payroll files by more than the tolerance; "
        "nothing is decided on a reading your own figures contradict (the figures are shown side by side below).",
        "N.J.S.A. 34:11-56a40(d)(1)",
    ),
    "CAP_EXHAUSTED": (
        "The annual limit of approvals ($10,000,000 per calendar year) was reached; the application received part "
        "of its request or none, and a waitlisted application is considered first in the next approval year.",
        "N.J.S.A. 34:11-56a40(g)",
    ),
}

# code -> what the employer can do about it (plain words, on the notice beside the reason)
ACTIONS: dict[str, str] = {
    "TAX_YEAR_BEFORE_2019": "Nothing: no credit exists for that year. Apply for a tax year that begins in 2019 or later.",
    "DUPLICATE_APPLICATION": "Nothing is needed: your first application for this tax period is the one decided. If the "
                             "first one was filed in error, ask for a hearing (below).",
    "WAGE_REDUCTION": "If the payroll shown is wrong (a missing or misdated check, a reversal), send the corrected payroll "
                      "files; if it is right, no credit is allowed for the year.",
    "MISSING_EMPLOYER_RATES": "Nothing on your side: the Department is completing its record of your unemployment "
                              "and disability insurance rates; the first run that has them decides the application.",
    "LATE_APPLICATION": "If the application was received earlier than shown, send proof of the date of receipt and ask "
                        "for a hearing (below).",
    "NOT_CERTIFIED": "Ask the employee to request a determination of impairment; an employee certified for the tax "
                     "period can be claimed on a later application for that period.",
    "NO_HOURS_IN_TAX_YEAR": "If the employee worked in the tax period, send the payroll files that show it.",
    "HOURS_DECREASED": "If hours are missing from the payroll of the tax period, send the corrected payroll files.",
    "NO_CREDIT_DUE": "Nothing is owed on this application. If an employee's pay or hours are wrong, send the corrected "
                     "payroll files.",
    "SUBMINIMUM_ON_EFFECTIVE_DATE": "If the employee was paid at least the minimum wage on February 4, 2019, send the "
                                    "payroll that shows it.",
    "DUPLICATE_EMPLOYEE": "Nothing is needed: the person is counted once, on the first line that claims them.",
    "NOT_IN_CONTROL_GROUP": "If the employer named is part of your group under common ownership or control, send the "
                            "evidence of the common control to the contact below.",
    "MISCLASSIFIED": "If you disagree with the finding, ask for a hearing (below). A finding withdrawn on appeal is "
                     "decided again as before it, within the approvals left in its approval year.",
    "INPUT_REJECTED": "Correct the lines listed above and send the files again under the same names; a line read but "
                      "doubtful that is right as written is confirmed by the Department instead (see above).",
    "DECLARED_TOTALS_DIFFER": "Check the figures shown above: if your payroll files are incomplete or were exported "
                              "with the wrong columns, send the corrected files; if your declared totals are wrong, "
                              "send a corrected roster. The next run decides the application.",
    "CAP_EXHAUSTED": "Nothing: a waitlisted application is considered first in the next approval year.",
}


STATUS_WORDS = {
    "APPROVED": "Your application is approved.",
    "PARTIAL": "Your application is approved in part: the annual limit of approvals did not allow the full amount.",
    "WAITLISTED": "Your application is eligible but waitlisted: the annual limit of approvals has been reached.",
    "REJECTED": "Your application is not approved.",
    "HELD": "Nothing is decided yet: the reading this application would be decided on is not proven (see why "
            "below). Nothing is final; the next run that can prove it decides the application.",
}
