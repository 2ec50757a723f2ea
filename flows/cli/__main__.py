"""``python -m flows.cli``."""

from flows.cli.app import main

main()
