"""Draft: a profile proposed for an export no profile reads (``impcredit layouts draft FILE``).

``draft`` builds it, ``draft_guess`` guesses from the cells, ``draft_lines`` from a report's lines
beyond its header, ``draft_tabs`` the tabs that repeat one payroll,
``draft_codes`` a register of a line per code (``layout: long``),
``draft_ids`` the employer and employee ids from the submission it sits in,
``draft_yaml`` writes it as a profile's YAML.
"""
