"""The staged route of the ingest in this process (``ingest_folder(..., cluster="local:N")``: the
Dask route's tasks on a pool of threads, ``local_client.LocalClient``, no Dask): the lake's parts,
byte for byte, and the ingest report (files, counts, rejects, replacements, the lake's digest)
are the plain route's, for a vendor mix with rejects and a bigger payroll file read in pieces,
then for a second run with a corrected file and a copy under another name."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from transforms.ingest import ingest_folder
from transforms.ingest import pipeline as pp
from transforms.ingest.store import lake_files as lf
from transforms.pii import HashKey
from transforms.synthetic.generate import generate_submission
from transforms.synthetic.vendors import write_vendor_mix

KEY = HashKey(b"local-ingest-test-key-0123456789abcdef", "env")
NOW = datetime(2024, 7, 1, 12, 0)
PIECE = 12_000  # bytes: the bigger payroll files go in pieces


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("localsub")
    generate_submission(root / "canonical", employers=10, seed=11, tax_year=2023)
    write_vendor_mix(root / "canonical", root / "mix", seed=11)
    canon = root / "mix" / "payroll" / "canonical.csv"
    row = canon.read_text().splitlines()[1].split(",")
    with canon.open("a") as fh:  # an exact copy of a row and a bad number
        fh.write(",".join(row) + "\n" + ",".join([*row[:5], "many", *row[6:]]) + "\n")
    return root / "mix"


def corrected(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    p = dst / "payroll" / "canonical.csv"
    lines = p.read_text().splitlines(keepends=True)
    (dst / "payroll" / "resent.csv").write_text("".join(lines[:4]))
    cells = lines[1].rstrip("\n").split(",")
    cells[lines[0].split(",").index("hours")] = "-9999"
    lines[1] = ",".join(cells) + "\n"
    p.write_text("".join(lines))
    return dst


def lake_bytes(lake: Path) -> dict[str, bytes]:
    return {p.relative_to(lake).as_posix(): p.read_bytes() for p in sorted(lake.rglob("*"))
            if p.is_file() and not p.name.startswith(".") and p.name != "_manifest.json"}


def same_report(a, b) -> None:
    assert a.files == b.files
    assert a.rejects.equals(b.rejects)
    assert a.replaced == b.replaced
    assert a.lake_sha256 == b.lake_sha256


@pytest.mark.parametrize("route", ["local:1", "local:2"])
def test_the_staged_route_in_this_process_writes_the_plain_routes_lake_and_report(submission, tmp_path, monkeypatch,
                                                                                   route):
    monkeypatch.setattr(pp, "PIECE_BYTES", PIECE)
    monkeypatch.setenv("IMPCREDIT_FAILPOINT", "ingest_worker_always")  # a worker's fail point: not armed here
    assert (submission / "payroll" / "canonical.csv").stat().st_size > PIECE
    again = corrected(submission, tmp_path / "corrected")
    hashing = lf.HASH_WRITES
    for src in (submission, again):
        plain = ingest_folder(src, tmp_path / "plain", KEY, now=NOW)
        local = ingest_folder(src, tmp_path / "local", KEY, now=NOW, cluster=route)
        same_report(plain, local)
        a, b = lake_bytes(tmp_path / "plain" / "lake"), lake_bytes(tmp_path / "local" / "lake")
        assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
        assert not any((tmp_path / "local" / "lake" / "_staging").glob("*"))
    assert lf.HASH_WRITES is hashing
    assert sum(r.rows_rejected for r in local.files) > 0 and local.replaced
    rules = set(local.rejects.get_column("rule").to_list())
    assert {"duplicate_row", "not_a_number"} <= {r.strip("'") for r in rules}
