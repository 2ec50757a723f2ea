"""Check: staged rows -> accepted rows, rejects and quarantined lines.

In: the staged tables of ``transforms.ingest.read`` (and, for the checks that span runs, the rows
already in the lake).
Out: per file a ``quarantine.FileWork``: the rows that passed the Great Expectations suites of
``expectations/`` (``suites``, compiled to Polars by ``validate`` or run by GX itself, ``gx``), each
reject with file, line, column, value and rule, the rejected lines kept (ssn-like cells masked,
``masking``); then over the whole run, the rules no single row can decide (``cross_rows``: exact
copies, a line-per-code check summed, negative nets, implausible rates; ``identity``: one person,
one ssn; ``earlier_rows``: a file sent again in a later run).
``files`` checks one file whole, ``batches`` many small simple files together, ``pieces`` a big file
piece by piece, all with exactly the file-by-file result.
"""
