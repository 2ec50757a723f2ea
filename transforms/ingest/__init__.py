"""Ingest of submission folders: employers' payroll exports -> the Parquet lake, in three rooms in the
order the data walks:

- ``read/``: a file and its layout -> staged canonical rows (profiles, the header vocabulary, the
  report's shape, values read as people write them, the ssn hashed);
- ``check/``: staged rows -> accepted rows, rejects and the quarantine (the expectation suites,
  the rules over the whole run);
- ``store/``: accepted rows -> the lake (atomic parts, checksums, the standing rejects).

``plan`` says which files of the folder are new, ``pipeline`` walks them through the rooms and
``report`` is what the run says of each file.

    from transforms.ingest import ingest_folder, IngestReport
    report = ingest_folder(input_dir, workdir, key, now=None, docs_dir=None, engine=None)

Steps per file: detect the dataset (by path) and the vendor profile (by header,
``data/vendors/*.yaml``); read as text with physical line numbers (``readers``: Polars' reader
when every line is one record, the csv module otherwise); rename and cast to the staged schema,
hashing the ssn (``transforms.ingest.read.cast.canonical``); validate with the Great Expectations suites of
``expectations/`` (``validate``: compiled to Polars, or GX itself with ``engine="gx"``). With the
Polars engine, files are first taken in batches of consecutive files (up to 8 MB of text):
those that pass as they are (read by Polars, nothing rejected before or by the suite, no cell
masked as an ssn) are staged and validated together, which gives them exactly the file-by-file
result at a fraction of its per-call cost; every other file goes the file-by-file route, which
words its rejects. A delimited file bigger than 32 MB (a bulk export of many employers) is read
and validated in pieces of about that size, so memory holds a piece, not the file, with exactly
the whole-file result (``pieces.validate_in_pieces``). Two batches, files or big files at a
time. Then, over the whole run, exact duplicates
(the later copy), the code lines of each check of a line-per-code export summed into one row,
employee-years that net negative and pay periods with an implausible rate over all their lines
(``cross_rows``); write accepted rows to the lake, one part per run and
partition, replacing what corrected files supersede, and rejected rows to the quarantine
(``lake``).
"""

from transforms.ingest.pipeline import ingest_folder
from transforms.ingest.report import FileRecord, IngestReport

__all__ = ["FileRecord", "IngestReport", "ingest_folder"]
