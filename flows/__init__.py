"""Prefect flows: thin wiring of the steps in ``transforms`` (tasks, retries, artifacts, schedules)."""

from flows import _env  # noqa: F401  (sets Prefect's environment before it is imported)
