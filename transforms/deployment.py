"""Where a deployment keeps what is its own: settings of the installation, not of a run.

Read, in this order of precedence, from a command's option (which sets the environment variable
for the command and what it starts), the environment (``IMPCREDIT_<NAME>``) and the settings file
(``impcredit.toml`` in the working folder, or the file ``IMPCREDIT_CONFIG`` names):

    # impcredit.toml
    profiles = "/srv/impcredit/profiles"   # the agency's own payroll profiles (and vocabulary.yaml)
    lake = "s3://agency-impcredit/lake"    # where the Parquet lake is (default: <workdir>/lake)

``impcredit settings`` prints them with where each comes from.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

CONFIG_ENV = "IMPCREDIT_CONFIG"
CONFIG_FILE = "impcredit.toml"


def config_file() -> Path:
    return Path(os.environ.get(CONFIG_ENV) or CONFIG_FILE)


class Deployment(BaseSettings):
    """The installation's settings."""

    model_config = SettingsConfigDict(env_prefix="IMPCREDIT_", extra="forbid", frozen=True, env_ignore_empty=True)

    # a folder of the agency's own payroll profiles (*.yaml, and vocabulary.yaml): read beside the
    # shipped ones (data/vendors); a profile there with a shipped profile's name replaces it
    profiles: Path | None = Field(default=None)
    # where the Parquet lake is (a local folder or s3://bucket/prefix; default <workdir>/lake): the
    # workdir stays local and holds the ledger (transforms/ingest/store/location.py)
    lake: str | None = Field(default=None)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file())


def where(name: str) -> str:
    """Where a setting's value comes from: the environment, the settings file, or the default."""
    if os.environ.get(f"IMPCREDIT_{name.upper()}"):
        return f"environment (IMPCREDIT_{name.upper()})"
    path = config_file()
    if path.is_file():
        import tomllib

        try:
            if name in tomllib.loads(path.read_text(encoding="utf-8")):
                return f"settings file ({path})"
        except (tomllib.TOMLDecodeError, OSError):
            return f"settings file ({path}, unreadable)"
    return "default"


def deployment() -> Deployment:
    """The settings as they stand now (read each time: a command's option may have just set one)."""
    return Deployment()


__all__ = ["Deployment", "deployment", "where"]
