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

The walk inside, one sub-room a step: ``files/`` (which files, what kind, their bytes and sheets
to records of text cells with their line numbers: ``submission``, ``context``, ``readers``,
``workbooks``, ``sheets``) -> ``layouts/`` (the profiles as data and the vocabulary: which row is
the header, which column reaches which field) -> ``reports/`` (a report's lines: preamble, totals,
blocks, notes, transposed registers, to one table) -> ``tables`` here (one file's tables, and what
no layout reads: ``problems``, ``figures``) -> ``cast/`` (values read as people write them, cast,
hashed: the canonical rows). ``draft/`` proposes a profile for an export no profile reads.
"""
