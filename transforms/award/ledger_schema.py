"""The ledger's schema: its tables, created and migrated in order (``migrate``), one version a
change. Schema 2 added amendments, the employee-years of each run and the reopenings; 3 the tax
period of each decision and the releases of held applications; 4 the audit findings (spec section
9a) and the employee-years' details; 5 the lines a release confirmed (spec section 7: read but
doubtful lines, declared totals that differ, decided with the reading as it stands); 6 the
fingerprint of the ssn hash key the workdir is written with (spec section 8, ``transforms.one_key``).
"""

from __future__ import annotations

import duckdb

from transforms.award.ledger_faults import LedgerError

SCHEMA_VERSION = 6

_MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE IF NOT EXISTS schema_version (
               version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS runs (
               run_id VARCHAR PRIMARY KEY,
               kind VARCHAR NOT NULL,
               tax_year INTEGER NOT NULL,
               quarter INTEGER,
               as_of DATE NOT NULL,
               approval_year INTEGER NOT NULL,
               policy VARCHAR NOT NULL,
               cap_cents BIGINT NOT NULL,
               settings_json VARCHAR NOT NULL,
               params_version VARCHAR NOT NULL,
               inputs_sha256 VARCHAR NOT NULL,
               status VARCHAR NOT NULL,
               started_at TIMESTAMP NOT NULL,
               committed_at TIMESTAMP NOT NULL,
               summary_json VARCHAR NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS input_files (
               run_id VARCHAR NOT NULL, path VARCHAR NOT NULL, sha256 VARCHAR NOT NULL, bytes BIGINT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS decisions (
               application_id VARCHAR NOT NULL,
               approval_year INTEGER NOT NULL,
               tax_year INTEGER NOT NULL,
               employer_id VARCHAR NOT NULL,
               employer_name VARCHAR,
               county VARCHAR,
               tax_type VARCHAR,
               received_at TIMESTAMPTZ NOT NULL,
               requested_cents BIGINT NOT NULL CHECK (requested_cents >= 0),
               awarded_cents BIGINT NOT NULL CHECK (awarded_cents >= 0 AND awarded_cents <= requested_cents),
               status VARCHAR NOT NULL,
               reasons VARCHAR NOT NULL,
               run_id VARCHAR NOT NULL,
               PRIMARY KEY (application_id, approval_year))""",
    ],
    2: [
        """CREATE TABLE decisions_v2 (
               application_id VARCHAR NOT NULL,
               approval_year INTEGER NOT NULL,
               tax_year INTEGER NOT NULL,
               employer_id VARCHAR NOT NULL,
               employer_name VARCHAR,
               county VARCHAR,
               tax_type VARCHAR,
               received_at TIMESTAMPTZ NOT NULL,
               requested_cents BIGINT NOT NULL CHECK (requested_cents >= 0),
               awarded_cents BIGINT NOT NULL,
               status VARCHAR NOT NULL,
               reasons VARCHAR NOT NULL,
               run_id VARCHAR NOT NULL,
               seq INTEGER NOT NULL DEFAULT 0,
               kind VARCHAR NOT NULL DEFAULT 'decision',
               decided_in INTEGER,
               CHECK (kind = 'amendment' OR (awarded_cents >= 0 AND awarded_cents <= requested_cents)),
               PRIMARY KEY (application_id, approval_year, seq))""",
        """INSERT INTO decisions_v2 SELECT *, 0, 'decision', approval_year FROM decisions""",
        "DROP TABLE decisions",
        "ALTER TABLE decisions_v2 RENAME TO decisions",
        """CREATE TABLE IF NOT EXISTS employee_years (
               run_id VARCHAR NOT NULL, application_id VARCHAR NOT NULL, employer_id VARCHAR NOT NULL,
               employee_id VARCHAR NOT NULL, tax_year INTEGER NOT NULL, status VARCHAR NOT NULL,
               reasons VARCHAR NOT NULL, credit_cents BIGINT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS reopenings (
               application_id VARCHAR NOT NULL, reason VARCHAR NOT NULL, reopened_at TIMESTAMP NOT NULL,
               reopen_run VARCHAR NOT NULL, decided_by_run VARCHAR)""",
    ],
    # 3: the tax period of each decision (a fiscal period, or the calendar tax year), and the
    # releases of held applications (an analyst decides one as it stands: spec section 7)
    3: [
        "ALTER TABLE decisions ADD COLUMN period_start DATE",
        "ALTER TABLE decisions ADD COLUMN period_end DATE",
        """UPDATE decisions SET period_start = make_date(tax_year, 1, 1), period_end = make_date(tax_year, 12, 31)""",
        """CREATE TABLE IF NOT EXISTS releases (
               application_id VARCHAR NOT NULL, reason VARCHAR NOT NULL, released_at TIMESTAMP NOT NULL,
               release_run VARCHAR NOT NULL, decided_by_run VARCHAR)""",
    ],
    # 4: audit findings (spec section 9a), append-only: a finding, its withdrawal, and the credit
    # certified before and after each application it re-decided; the employee-years' details
    4: [
        """CREATE TABLE IF NOT EXISTS findings (
               finding_id VARCHAR PRIMARY KEY, application_id VARCHAR NOT NULL, kind VARCHAR NOT NULL,
               employer_id VARCHAR NOT NULL, employees VARCHAR NOT NULL, tax_years VARCHAR NOT NULL,
               knowing BOOLEAN NOT NULL, reason VARCHAR NOT NULL, found_on DATE NOT NULL,
               recorded_at TIMESTAMP NOT NULL, record_run VARCHAR NOT NULL, fingerprint VARCHAR NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS withdrawals (
               finding_id VARCHAR NOT NULL, reason VARCHAR NOT NULL, withdrawn_on DATE NOT NULL,
               withdrawn_at TIMESTAMP NOT NULL, withdraw_run VARCHAR NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS finding_decisions (
               finding_id VARCHAR NOT NULL, event VARCHAR NOT NULL, run_id VARCHAR NOT NULL,
               application_id VARCHAR NOT NULL, requested_before_cents BIGINT NOT NULL,
               requested_now_cents BIGINT NOT NULL, certified_before_cents BIGINT NOT NULL,
               certified_now_cents BIGINT NOT NULL)""",
        "ALTER TABLE employee_years ADD COLUMN wage_category VARCHAR",
        "ALTER TABLE employee_years ADD COLUMN hours_prior DOUBLE",
        "ALTER TABLE employee_years ADD COLUMN hours_current DOUBLE",
        "ALTER TABLE employee_years ADD COLUMN part1_cents BIGINT",
        "ALTER TABLE employee_years ADD COLUMN part2_cents BIGINT",
    ],
    # 5: the lines a release confirmed (spec section 7, "Read but doubtful is not unread"): a payroll
    # line whose values only looked unlikely, or a declared total that differs, taken as read by the
    # run that decided the released application; a confirmed line holds nothing again
    5: [
        """CREATE TABLE IF NOT EXISTS confirmed_lines (
               application_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL, source VARCHAR NOT NULL,
               file VARCHAR, file_sha256 VARCHAR, source_sheet VARCHAR, line BIGINT, rules VARCHAR,
               employee_id VARCHAR, figure VARCHAR, declared DOUBLE, read DOUBLE)""",
    ],
    # 6: one key for a lake and its ledger (spec section 8): the fingerprint of the key they were
    # written with (an HMAC of a fixed label under the key, never the key), recorded once
    6: [
        """CREATE TABLE IF NOT EXISTS key_fingerprint (
               fingerprint VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL, note VARCHAR NOT NULL)""",
    ],
}


def migrate(con: duckdb.DuckDBPyConnection) -> int:
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")
    current = con.sql("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()[0][0]
    if current > SCHEMA_VERSION:
        raise LedgerError(f"the ledger has schema version {current}, newer than this code ({SCHEMA_VERSION})")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        con.execute("BEGIN TRANSACTION")
        for stmt in _MIGRATIONS[version]:
            con.execute(stmt)
        con.execute("INSERT INTO schema_version VALUES (?, now()::TIMESTAMP)", [version])
        con.execute("COMMIT")
    return SCHEMA_VERSION
