"""Ingest of submission folders: vendor layouts -> staged canonical rows -> the Parquet lake.

    from transforms.ingest import ingest_folder, IngestReport
    report = ingest_folder(input_dir, workdir, key, now=None, docs_dir=None)

Steps per file: detect the dataset (by path) and the vendor profile (by header,
``data/vendors/*.yaml``); read as text with physical line numbers (``readers``); rename and cast
to the staged schema, hashing the ssn (``transforms.staging``); validate with the Great
Expectations suites of ``expectations/`` (``validate``); then, over the whole run, exact
duplicates and overlapping periods; write accepted rows to the lake, replacing what corrected
files supersede, and rejected rows to the quarantine (``lake``).
"""

from transforms.ingest.pipeline import ingest_folder
from transforms.ingest.report import FileRecord, IngestReport

__all__ = ["FileRecord", "IngestReport", "ingest_folder"]
