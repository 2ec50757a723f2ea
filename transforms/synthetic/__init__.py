"""Synthetic submissions for the demo, the tests and the bench (never imported by the core):
``generate`` (a canonical folder from ``population`` and ``records``), ``vendors`` (the same
rows in vendor layouts) and ``scenario`` (the small frames of the YAML cases)."""
