"""Read: one file of a submission and its layout -> staged canonical rows.

In: a file's bytes (CSV in any of the layouts' encodings and delimiters, or a workbook), what the
submission says of it outside its rows (its folder named by a FEIN, ``payroll/files.csv``), and
the layouts (``data/vendors/*.yaml`` and an agency's own profiles folder, with the header
vocabulary ``data/vendors/vocabulary.yaml``).
Out: per table of the file, a ``canonical.StagedTable`` (canonical columns typed, the ssn replaced by
its keyed hash, every cell's text kept for messages, the physical line of every row), the lines
that are not rows (title, totals, block, note lines) counted and checked, and the structural
rejects (a cell that does not cast, a ragged line); or a whole-file problem (no layout reads it:
the nearest row, layout, what is missing and what is unmatched).

The walk inside: ``submission`` (which files, what kind) -> ``readers`` / ``workbooks`` (records
of text cells with their line numbers) -> ``profiles`` + ``vocabulary`` + ``header`` (which row is
the header, which column reaches which field) -> ``shape`` (a report's lines: preamble, totals,
blocks, notes; the submission's context) -> ``tables`` (one file's tables) -> ``parsing`` +
``staging`` + ``row_checks`` (values read as people write them, cast, hashed).
"""
