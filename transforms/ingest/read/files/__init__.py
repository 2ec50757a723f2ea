"""Files: a submission's bytes and sheets -> records of text cells, each with its physical line.

Which files a submission holds and what its folder and ``payroll/files.csv`` say of them
(``submission``, ``context``); delimited text in its encodings and dialects (``readers``, the fast
routes ``arrow_csv`` and ``header_first``, ``bytecount``); workbooks and their sheets (``workbooks``,
``sheets``). Nothing here knows a layout's fields: the next room (``layouts``) matches the cells.
"""
