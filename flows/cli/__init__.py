"""The ``impcredit`` command line (typer + rich): ``flows.cli.app`` builds it from one module per
command; ``python -m flows.cli`` and the ``impcredit`` script run it."""

from flows.cli.app import app, main

__all__ = ["app", "main"]
