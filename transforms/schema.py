"""The canonical data contract (spec section 1), shared by ingest, the engine and the outputs.

Two forms of each dataset:
- *submitted*: the columns of the canonical CSV files an employer sends (ssn in clear);
- *staged*: what is stored in the Parquet lake and seen by the engine. The ssn is replaced by
  ``ssn_hash`` (keyed HMAC-SHA256, hex) and lineage columns say where each row came from.
"""

from __future__ import annotations

import polars as pl

WAGE_CATEGORIES: tuple[str, ...] = ("general", "tipped", "seasonal_small", "agricultural")
TAX_TYPES: tuple[str, ...] = ("CBT", "GIT")
CERT_STATUSES: tuple[str, ...] = ("CERTIFIED", "REVOKED", "PENDING")

# Lineage columns carried by every staged row.
LINEAGE: dict[str, pl.DataType] = {
    "source_file": pl.String(),  # path relative to the submission folder
    "source_sheet": pl.String(),  # sheet name for xlsx, null otherwise
    "source_line": pl.Int64(),  # physical line in the submitted file, header = line 1
}

# --- submitted (canonical CSV) columns, in file order -------------------------------------
SUBMITTED_COLUMNS: dict[str, list[str]] = {
    "payroll": [
        "employer_id",
        "employee_id",
        "ssn",
        "period_start",
        "period_end",
        "hours",
        "gross_wages",
        "employer_taxes",
    ],
    "applications": [
        "application_id",
        "employer_id",
        "employer_name",
        "county",
        "tax_type",
        "tax_year",
        "received_at",
    ],
    "roster": ["application_id", "employee_id", "wage_category"],
    "certifications": ["ssn", "certification_id", "status", "valid_from", "valid_to"],
    "employer_rates": ["employer_id", "rate_year_start", "ui_rate", "di_rate"],
    "control_groups": ["group_id", "employer_id", "member_from", "member_to"],
    # optional: an employer's request for help estimating its credit during the tax year
    # (56a40(e); spec section 9); its claimed employees are roster rows under the request id
    "estimate_requests": ["request_id", "employer_id", "employer_name", "tax_type", "tax_year", "received_at"],
}

# The employer's own totals for a claimed person, from its payroll system (spec section 1, "What the
# employer declares, and what was read"): hours, gross wages and employer payroll taxes of the last
# preceding calendar year p and of the tax period T; a blank cell declares nothing.
DECLARED: tuple[str, ...] = ("declared_hours_prior", "declared_wages_prior", "declared_taxes_prior",
                             "declared_hours_current", "declared_wages_current", "declared_taxes_current")

# Columns a submitted file may carry (a vendor profile may map them); absent = empty. Payroll:
# the check (or line) id and the pay date of the check the row belongs to (spec section 1,
# "Payroll as employers' systems write it"): two lines equal in every column but these are
# two checks, not a file sent twice.
OPTIONAL_COLUMNS: dict[str, list[str]] = {
    "payroll": ["check_id", "pay_date"],
    # a fiscal tax period (spec section 1, "The employer and its tax year"); empty = calendar year
    "applications": ["period_start", "period_end", "employer_address"],
    # the member of the applicant's group employing the person (empty = the applicant), and the
    # claimed person's ssn for payroll exports that carry none or a masked one
    "roster": ["employer_id", "ssn", *DECLARED],
    "estimate_requests": ["period_start", "period_end"],
}

# --- staged (lake) schemas -------------------------------------------------------------------
PAYROLL = pl.Schema(
    {
        "employer_id": pl.String(),
        "employee_id": pl.String(),
        "ssn_hash": pl.String(),  # null when the export has none, or a masked one (spec section 1)
        # a masked ssn (XXX-XX-1234): the keyed hash of the four digits it shows, to compare with
        # the roster's ssn (transforms.pii.hash_last4)
        "ssn_last4_hash": pl.String(),
        "period_start": pl.Date(),
        "period_end": pl.Date(),
        "hours": pl.Float64(),
        "gross_wages": pl.Float64(),
        "employer_taxes": pl.Float64(),
        "check_id": pl.String(),  # null when the export has none
        "pay_date": pl.Date(),  # null when the export has none
        # submitted lines summed into this row: 1, or the code lines of one check of a
        # line-per-code export (source_line is the first; every line is in payroll_lines)
        "line_count": pl.Int32(),
        **LINEAGE,
    }
)

# Every code line of a line-per-code payroll export (one line per earnings or tax code), kept
# beside the canonical rows they were summed into (``row_line``) for rejects and ``explain``.
PAYROLL_LINES = pl.Schema(
    {
        "employer_id": pl.String(),
        "employee_id": pl.String(),
        "check_id": pl.String(),
        "pay_date": pl.Date(),
        "period_start": pl.Date(),
        "period_end": pl.Date(),
        "code": pl.String(),
        "counts_as": pl.String(),  # hours+wages, wages, taxes, ignored ... (the profile's code table)
        "hours": pl.Float64(),
        "amount": pl.Float64(),
        "row_line": pl.Int64(),  # source_line of the canonical row it is part of
        **LINEAGE,
    }
)

APPLICATIONS = pl.Schema(
    {
        "application_id": pl.String(),
        "employer_id": pl.String(),
        "employer_name": pl.String(),
        "county": pl.String(),
        "tax_type": pl.String(),
        "tax_year": pl.Int32(),
        # Instant of receipt (UTC) and its New Jersey local date (spec 5: dates are compared).
        "received_at": pl.Datetime("us", "UTC"),
        "received_date": pl.Date(),
        # the fiscal tax period; null = the calendar year tax_year (spec section 1)
        "period_start": pl.Date(),
        "period_end": pl.Date(),
        # the employer's mailing address for its documents (lines separated by ";"); optional
        "employer_address": pl.String(),
        **LINEAGE,
    }
)

ROSTER = pl.Schema(
    {
        "application_id": pl.String(),
        "employee_id": pl.String(),
        "wage_category": pl.String(),
        "employer_id": pl.String(),  # null = the applicant
        "ssn_hash": pl.String(),  # null when the roster gives no ssn
        "ssn_last4_hash": pl.String(),  # the keyed hash of its last four digits (to check a masked one)
        # the employer's declared totals for the person (null = not declared)
        **{c: pl.Float64() for c in DECLARED},
        **LINEAGE,
    }
)

CERTIFICATIONS = pl.Schema(
    {
        "ssn_hash": pl.String(),
        "certification_id": pl.String(),
        "status": pl.String(),
        "valid_from": pl.Date(),
        "valid_to": pl.Date(),  # null = open-ended
        **LINEAGE,
    }
)

EMPLOYER_RATES = pl.Schema(
    {
        "employer_id": pl.String(),
        "rate_year_start": pl.Date(),
        "ui_rate": pl.Float64(),
        "di_rate": pl.Float64(),
        **LINEAGE,
    }
)

# Membership of an employer in a group under common ownership or control (34:11-56a39).
CONTROL_GROUPS = pl.Schema(
    {
        "group_id": pl.String(),
        "employer_id": pl.String(),
        "member_from": pl.Date(),
        "member_to": pl.Date(),  # null = open-ended
        **LINEAGE,
    }
)

ESTIMATE_REQUESTS = pl.Schema(
    {
        "request_id": pl.String(),
        "employer_id": pl.String(),
        "employer_name": pl.String(),
        "tax_type": pl.String(),
        "tax_year": pl.Int32(),
        "received_at": pl.Datetime("us", "UTC"),
        "received_date": pl.Date(),
        "period_start": pl.Date(),
        "period_end": pl.Date(),
        **LINEAGE,
    }
)

STAGED: dict[str, pl.Schema] = {
    "payroll": PAYROLL,
    "applications": APPLICATIONS,
    "roster": ROSTER,
    "certifications": CERTIFICATIONS,
    "employer_rates": EMPLOYER_RATES,
    "control_groups": CONTROL_GROUPS,
    "estimate_requests": ESTIMATE_REQUESTS,
}

# Everything the lake stores: the staged datasets and the code lines of line-per-code payroll.
LAKE: dict[str, pl.Schema] = {**STAGED, "payroll_lines": PAYROLL_LINES}

# Where each dataset lives in a canonical submission folder.
SUBMISSION_FILES: dict[str, str] = {
    "payroll": "payroll/*.csv",
    "applications": "applications.csv",
    "roster": "roster.csv",
    "certifications": "certifications.csv",
    "employer_rates": "employer_rates.csv",
    "control_groups": "control_groups.csv",
}

# Read but doubtful (spec section 7): a line rejected only by these rules was read; its values only
# look unlikely (a pay period's rate outside $1 to $500: a federal 14(c) certificate or a State special
# licence allowed pay far below the minimum wage before 2019). It holds its applications like an
# unread line, but it is stored in the lake: a release confirms it, and the application is decided
# with it as read.
DOUBTFUL_RULES: frozenset[str] = frozenset({"hourly_rate"})

# The agency's own files: a line of them that cannot be read stops the run (spec section 7).
AGENCY_DATASETS: tuple[str, ...] = ("certifications", "employer_rates", "control_groups")

NJ_TZ = "America/New_York"
