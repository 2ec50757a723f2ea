"""Cast: a matched table's text cells -> canonical rows (typed, the ssn hashed, lineage kept).

``parsing`` reads values as people write them, ``cells`` builds a table's typed expressions,
``row_checks`` rejects rows before validation, ``canonical`` stages the canonical table.
"""
