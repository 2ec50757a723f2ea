"""Integrity (spec section 1; issue 21): a file sent again under another name, with other line
endings, in a later run is a copy: its lines are ``duplicate_row`` rejects that hold nothing and
no hour is counted twice; the lake knows the checksum of every part it wrote and a damaged part or
manifest stops the run with a named error, never a silent wrong amount."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import polars as pl
import pytest

from transforms.award import held, ledger
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key
from transforms.reference.parameters import load_parameters
from transforms.runs import annual as steps
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KEY = demo_key()
PARAMS = load_parameters()
AS_OF = dt.date(2024, 7, 1)


def run(sub: Path, work: Path, out: Path) -> steps.RunSummary:
    staged = steps.stage_inputs(sub, work, KEY)
    result = steps.compute(staged.frames, 2023, AS_OF, PARAMS, Settings())
    run_id = steps.new_run_id("annual", 2023, staged.inputs_sha256)
    return steps.decide_and_commit(steps.RunContext(
        kind="annual", run_id=run_id, tax_year=2023, as_of=AS_OF, params=PARAMS, settings=Settings(), workdir=work,
        out_dir=out, staged=staged, result=result, started_at=ledger.now_utc()))


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    root = tmp_path_factory.mktemp("integrity")
    sub = root / "sub"
    generate_submission(sub, employers=6, seed=7, tax_year=2023, groups_and_fiscal=False)
    run(sub, root / "w", root / "o1")
    return root


def hours(work: Path) -> float:
    return scan_lake(work, "payroll").select(pl.col("hours").sum()).collect().item()


def test_a_file_sent_again_under_another_name_with_crlf_is_a_copy(first, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    before = hours(work)
    original = sorted((sub / "payroll").glob("*.csv"))[0]
    lines = original.read_text().splitlines()
    (sub / "payroll" / "resent_copy.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    staged = steps.stage_inputs(sub, work, KEY)
    assert hours(work) == pytest.approx(before)
    rejects = staged.rejects.filter(pl.col("file").str.ends_with("resent_copy.csv"))
    assert rejects.height == len(lines) - 1
    assert set(rejects.get_column("rule")) == {"duplicate_row"}
    assert rejects.get_column("message").str.contains("sent in an earlier run").all()
    assert rejects.get_column("message").str.contains(original.name).all()
    # a copy holds nothing: every application is decided as before
    assert staged.standing.filter(pl.col("file").str.ends_with("resent_copy.csv")).height == len(lines) - 1
    assert held.holding_lines(staged.standing).filter(pl.col("file").str.ends_with("resent_copy.csv")).height == 0


def test_a_corrected_file_at_the_same_path_is_not_a_copy_of_its_earlier_version(first, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    original = sorted((sub / "payroll").glob("*.csv"))[0]
    frame = pl.read_csv(original, infer_schema=False)
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("1.5")).otherwise(pl.col("hours"))
                               .alias("hours"))
    frame.write_csv(original)
    staged = steps.stage_inputs(sub, work, KEY)
    assert staged.rejects.filter(pl.col("rule") == "duplicate_row").height == 0


def _lake_text(work: Path) -> str:
    """Every string cell of every lake part, joined (to search for an ssn)."""
    out = []
    for part in (work / "lake").rglob("*.parquet"):
        frame = pl.read_parquet(part)
        out += [str(v) for c, t in frame.schema.items() if t == pl.String for v in frame.get_column(c).drop_nulls()]
    return "\n".join(out)


def test_an_ssn_as_a_roster_employee_id_is_a_reject_that_holds_and_is_never_stored(first, tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    roster = pl.read_csv(sub / "roster.csv", infer_schema=False)
    pay = pl.concat([pl.read_csv(f, infer_schema=False) for f in (sub / "payroll").glob("*.csv")])
    emp, app = roster.row(0)[1], roster.row(0)[0]
    ssn = pay.filter(pl.col("employee_id") == emp).get_column("ssn")[0]
    digits = ssn.replace("-", "")
    roster.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit(digits)).otherwise(pl.col("employee_id"))
                        .alias("employee_id")).write_csv(sub / "roster.csv")
    work, out = tmp_path / "w", tmp_path / "o"
    run(sub, work, out)
    rejects = pl.read_csv(out / "rejects.csv", infer_schema=False)
    hit = rejects.filter(pl.col("rule") == "employee_id_is_ssn")
    assert hit.height == 1 and hit["file"][0].endswith("roster.csv") and hit["line"][0] == "2"
    awards = pl.read_csv(out / "awards.csv", infer_schema=False)
    assert awards.filter(pl.col("application_id") == app)["status"].to_list() == ["HELD"]
    for text in [_lake_text(work), *(p.read_text(errors="replace") for p in out.rglob("*") if p.suffix in (".csv", ".html", ".json"))]:
        assert digits not in text and ssn not in text


def test_an_id_that_is_its_rows_own_ssn_is_a_reject_in_every_file(first, tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(first / "sub", sub)
    certs = pl.read_csv(sub / "certifications.csv", infer_schema=False)
    certs = certs.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.col("ssn")).otherwise(pl.col("certification_id"))
                               .alias("certification_id"))
    certs.write_csv(sub / "certifications.csv")
    from transforms.ingest import ingest_folder

    report = ingest_folder(sub, tmp_path / "w", KEY)
    assert report.rejects.filter(pl.col("rule") == "certification_id_is_ssn").select("line").to_series().to_list() == [2]
    assert certs["ssn"][0] not in _lake_text(tmp_path / "w")


def _flip_a_bit(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x04
    path.write_bytes(bytes(data))


def test_a_flipped_bit_in_a_lake_part_stops_the_run_naming_it_and_repair_reingests(first, tmp_path):
    from transforms.ingest.store import lake as lk
    from transforms.ingest.store import lake_verify as lake_check

    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    manifest = lk.load_manifest(work / "lake")
    assert manifest["checksums"] and set(manifest["checksums"]) == set(lake_check.listed_parts(manifest))
    before = hours(work)
    part = sorted(p for p in manifest["checksums"] if p.startswith("payroll/"))[0]
    _flip_a_bit(work / "lake" / part)
    with pytest.raises(lk.LakeDamaged) as caught:
        steps.stage_inputs(first / "sub", work, KEY)
    assert part in str(caught.value) and "changed" in str(caught.value) and "--repair" in str(caught.value)

    damage = lake_check.verify(work / "lake", lk.load_manifest(work / "lake"))
    assert [d.part for d in damage] == [part]
    manifest = lk.load_manifest(work / "lake")
    taken = lake_check.repair(work / "lake", manifest, damage)
    lake_check.refresh(work / "lake", manifest)
    lk.save_manifest(work / "lake", manifest)
    assert taken and all(f.startswith("payroll/") for f in taken)

    # without the files the repair took out, a run stops naming them
    partial = tmp_path / "partial"
    shutil.copytree(first / "sub", partial)
    header = (partial / taken[0]).read_text().splitlines()[0]
    (partial / taken[0]).unlink()
    (partial / "payroll" / "other.csv").write_text(header + "\n")
    with pytest.raises(lk.LakeDamaged, match="not in this submission"):
        steps.stage_inputs(partial, work, KEY)
    # with them, the lake holds again what it held, and the digest is that of an intact lake
    steps.stage_inputs(first / "sub", work, KEY)
    assert hours(work) == pytest.approx(before)
    assert lake_check.verify(work / "lake", lk.load_manifest(work / "lake")) == []
    assert "reingest" not in lk.load_manifest(work / "lake")


def test_a_damaged_manifest_is_named_not_echoed(first, tmp_path):
    from transforms.ingest.store import lake as lk

    work = tmp_path / "w"
    shutil.copytree(first / "w", work)
    path = work / "lake" / lk.MANIFEST
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(lk.LakeDamaged) as caught:
        steps.stage_inputs(first / "sub", work, KEY)
    msg = str(caught.value)
    assert str(path) in msg and "mv " in msg and len(msg) < 600 and '"files"' not in msg


def test_the_run_record_holds_the_lake_digest(first):
    import json

    from transforms.ingest.store import lake as lk
    from transforms.ingest.store import lake_verify as lake_check

    con = ledger.connect(first / "w" / "impcredit.duckdb", read_only=True)
    summary = json.loads(con.sql("SELECT summary_json FROM runs").fetchall()[0][0])
    con.close()
    assert summary["lake_sha256"] == lake_check.lake_digest(lk.load_manifest(first / "w" / "lake"))
