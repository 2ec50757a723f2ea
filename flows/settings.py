"""The run's operational settings, built once at the edge (a command, a flow run) and passed down.

Read from, in this order of precedence: the command line (a command's options), the settings file
(``impcredit.toml`` in the working folder, or the file ``IMPCREDIT_CONFIG`` names) and the
environment (``IMPCREDIT_<NAME>``); then the defaults. ``impcredit settings`` prints each with where
it comes from. Nothing below ``flows/`` reads the environment: the core gets these values as
parameters (``transforms.options.IngestOptions`` and ``DocumentOptions``, the profiles folder, the
lake).

    # impcredit.toml
    profiles = "/srv/impcredit/profiles"   # the agency's own payroll profiles (and vocabulary.yaml)
    lake = "s3://agency-impcredit/lake"    # where the Parquet lake is (default: <workdir>/lake)
    worker_wait_s = 300                    # a Dask cluster's patience with workers it keeps losing

The interpretation register (``transforms.settings.Settings``: whatif ``--set``) and the legal
parameters (``data/reference/``) are not here: they change amounts, and every run records them.
The ssn hash key is not here either: it is a secret, read where it is used (``flows._env.hash_key``).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from transforms.options import DocumentOptions, IngestOptions

CONFIG_ENV = "IMPCREDIT_CONFIG"
CONFIG_FILE = "impcredit.toml"
TODAY_ENV = "IMPCREDIT_TODAY"


def today() -> dt.date:
    """Today in New Jersey: the latest date a run that decides may carry (spec section 7), and
    the as-of date a command takes when none is given. ``IMPCREDIT_TODAY`` (an ISO date) stands in
    for the clock (tests, a rehearsal); a bad one is a ``ValueError`` of one line naming it."""
    given = os.environ.get(TODAY_ENV)
    if given:
        try:
            return dt.date.fromisoformat(given.strip())
        except ValueError:
            raise ValueError(f"{TODAY_ENV} must be an ISO date like 2026-06-30, not {given!r}") from None
    from zoneinfo import ZoneInfo

    from transforms.schema import NJ_TZ

    return dt.datetime.now(ZoneInfo(NJ_TZ)).date()


def config_file() -> Path:
    return Path(os.environ.get(CONFIG_ENV) or CONFIG_FILE)


class RunSettings(BaseSettings):
    """Every operational setting of a command (see the module)."""

    model_config = SettingsConfigDict(env_prefix="IMPCREDIT_", extra="forbid", frozen=True, env_ignore_empty=True)

    # a folder of the agency's own payroll profiles (*.yaml, and vocabulary.yaml): read beside the
    # shipped ones (data/vendors); a profile there with a shipped profile's name replaces it
    profiles: Path | None = Field(default=None)
    # where the Parquet lake is (a local folder or s3://bucket/prefix; default <workdir>/lake): the
    # workdir stays local and holds the ledger (transforms/ingest/store/location.py)
    lake: str | None = Field(default=None)
    # a Dask scheduler's address for the ingest and the credits (tcp://HOST:PORT)
    dask_address: str | None = Field(default=None)
    validation_engine: Literal["polars", "gx"] | None = None
    scratch_in_memory_mb: float = Field(default=IngestOptions().scratch_in_memory_mb, ge=0)
    ingest_tasks: int = Field(default=IngestOptions().ingest_tasks, ge=1)
    worker_wait_s: float = Field(default=IngestOptions().worker_wait_s, gt=0)
    max_line_bytes: int = Field(default=IngestOptions().max_line_bytes, ge=1024)
    max_sheet_mb: float = Field(default=IngestOptions().max_sheet_mb, gt=0)
    dask_connect_s: float = Field(default=10.0, gt=0)
    pdf: Literal["auto", "all", "certificates", "none"] = DocumentOptions().pdf
    pdf_max: int = Field(default=DocumentOptions().pdf_max, ge=0)
    render_helper: bool = DocumentOptions().render_helper
    notice_lines: int = Field(default=DocumentOptions().notice_lines, ge=1)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file()), env_settings

    def ingest(self) -> IngestOptions:
        return IngestOptions(validation_engine=self.validation_engine, scratch_in_memory_mb=self.scratch_in_memory_mb,
                             ingest_tasks=self.ingest_tasks, worker_wait_s=self.worker_wait_s,
                             max_line_bytes=self.max_line_bytes, max_sheet_mb=self.max_sheet_mb)

    def documents(self) -> DocumentOptions:
        return DocumentOptions(pdf=self.pdf, pdf_max=self.pdf_max, render_helper=self.render_helper,
                               notice_lines=self.notice_lines)


HELP = {
    "profiles": "the agency's own payroll profiles (a folder of *.yaml and vocabulary.yaml)",
    "lake": "where the Parquet lake is: a folder or s3://bucket/prefix (default <workdir>/lake)",
    "dask_address": "a Dask scheduler for the ingest and the credits (tcp://HOST:PORT)",
    "validation_engine": "polars (the suites compiled, vectorised) or gx (Great Expectations, Data Docs)",
    "scratch_in_memory_mb": "on this process, the ingest's scratch area in memory up to this many MB of submission",
    "ingest_tasks": "on this process, the ingest's tasks at once",
    "worker_wait_s": "on a Dask cluster, seconds without a finished task while it loses its workers, then the run ends",
    "max_line_bytes": "bytes of one line of a delimited file: a longer header refuses the file, a longer data line is rejected",
    "max_sheet_mb": "MB of one workbook sheet's XML uncompressed: a workbook with a larger sheet is refused before it is read",
    "dask_connect_s": "seconds a Dask scheduler's address may take to answer as one, then the command ends in one line",
    "pdf": "auto (PDFs up to pdf_max documents, else their data for `impcredit documents`), all, certificates, none",
    "pdf_max": "documents a run renders as PDF under pdf=auto",
    "render_helper": "a second process renders half of a big run's pages",
    "notice_lines": "lines of each file a notice lists, then how many more and the employer's rejects file",
}


# Settings renamed, by their old name: one set in the environment or the settings file is an error
# that names the new one, never ignored in silence (the environment's unknown names would be).
RENAMED = {"staged_above_mb": "scratch_in_memory_mb", "staged_tasks": "ingest_tasks"}


def _renamed_in_use() -> str | None:
    for old, new in RENAMED.items():
        if os.environ.get(f"IMPCREDIT_{old.upper()}"):
            return f"IMPCREDIT_{old.upper()} is now IMPCREDIT_{new.upper()}: rename it in the environment"
    path = config_file()
    if path.is_file():
        import tomllib

        try:
            found = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError):
            return None  # said by the settings source itself
        for old, new in RENAMED.items():
            if old in found:
                return f"{path}: {old} is now {new}: rename it in the settings file"
    return None


def run_settings(**given) -> RunSettings:
    """The settings in effect: ``given`` (a command's options; None: not given) over the settings
    file over the environment. A bad value is a ``ValueError`` of one line naming the setting; a
    setting set by its old name (``RENAMED``) one naming the new."""
    from pydantic import ValidationError

    if (said := _renamed_in_use()) is not None:
        raise ValueError(said)
    try:
        return RunSettings(**{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ValueError(f"{config_file()}: {name}: not a setting; the settings are "
                             f"{', '.join(RunSettings.model_fields)}") from None
        raise ValueError(f"setting {name} ({where(name)}): {err['msg']}") from None


def where(name: str, given: dict | None = None) -> str:
    """Where a setting's value comes from: the command line, the settings file, the environment,
    or the default."""
    if given and given.get(name) is not None:
        return "command line"
    path = config_file()
    if path.is_file():
        import tomllib

        try:
            if name in tomllib.loads(path.read_text(encoding="utf-8")):
                return f"settings file ({path})"
        except (tomllib.TOMLDecodeError, OSError):
            return f"settings file ({path}, unreadable)"
    if os.environ.get(f"IMPCREDIT_{name.upper()}"):
        return f"environment (IMPCREDIT_{name.upper()})"
    return "default"


__all__ = ["HELP", "RENAMED", "TODAY_ENV", "RunSettings", "config_file", "run_settings", "today", "where"]
