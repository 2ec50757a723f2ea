"""Store: accepted rows -> the Parquet lake (and the quarantine of rejected lines).

In: the run's accepted rows and rejects (``transforms.ingest.validate``).
Out: one part per run and partition under the workdir's lake (``<workdir>/lake``, or the folder or
object store ``location`` records; the IO through ``transforms.storage``) (``lake``), written atomically with
its sha256 in the lake's manifest (``lake_files``), the lake verified before any read and repaired
on request (``lake_verify``), and the standing rejected lines that hold applications
(``standing``).
"""
