"""Ingest: vendor layouts, staging, the lake, idempotency, replacement, and the ssn never leaking."""

from __future__ import annotations

import re
import shutil
from datetime import date, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from transforms import schema
from transforms.ingest import IngestReport, ingest_folder
from transforms.ingest.read.layouts.profile_files import load_profiles
from transforms.ingest.read.layouts.profiles import Profile, fold
from transforms.ingest.read.tables import read_submission
from transforms.ingest.store import lake as lk
from transforms.ingest.store.lake import scan_lake
from transforms.pii import demo_key
from transforms.synthetic.vendors import (
    LAYOUTS,
    REPORT_LAYOUTS,
    write_layout,
    write_report,
    write_vendor_mix,
)

FIX = Path(__file__).parent / "fixtures"
CANON = FIX / "canonical_small"
KEY = demo_key()
NOW = datetime(2026, 1, 1, 12, 0)
# what every layout of the same payroll stages to alike (a vendor layout may carry check ids and
# pay dates the canonical sample lacks; a line-per-code layout sums several lines into a row)
VALUES = [c for c in schema.PAYROLL if c not in schema.LINEAGE and c not in ("check_id", "pay_date", "line_count")]


def per_period(workdir: Path) -> pl.DataFrame:
    """Hours, wages and taxes per employee and pay period (the ssn aside: a report may lack it)."""
    key = ["employer_id", "employee_id", "period_start", "period_end"]
    return scan_lake(workdir, "payroll").group_by(key).agg(
        pl.col(c).sum().round(2) for c in ("hours", "gross_wages", "employer_taxes")).sort(key).collect()


def check_counts(report: IngestReport) -> None:
    for f in report.files:
        assert f.rows_read == f.rows_accepted + f.rows_rejected, f


def payroll_values(workdir: Path) -> pl.DataFrame:
    return scan_lake(workdir, "payroll").select(VALUES).collect().sort(VALUES)


@pytest.fixture(scope="module")
def canonical_lake(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("canon")
    report = ingest_folder(CANON, wd, KEY, now=NOW)
    check_counts(report)
    assert all(f.status == "accepted" for f in report.files), report.summary()
    return wd


def test_profiles_load_strictly(tmp_path):
    names = [p.name for p in load_profiles()]
    assert names[0] == "canonical" and {"adp_wfn_payroll_history", "gusto_payroll_journal", "paycom_prior_payroll",
                                        "peo_export", "spreadsheet_xlsx"} <= set(names)
    data = load_profiles()[1].model_dump()
    data["refernces"] = "typo"
    with pytest.raises(Exception, match="refernces"):
        Profile.model_validate(data)
    assert fold(" O/T Hours ") == fold("ot_hours") == "othours"


def test_canonical_staged_schema_and_lineage(canonical_lake):
    frame = scan_lake(canonical_lake, "payroll").collect()
    assert frame.schema == schema.PAYROLL
    assert frame.height == 1155
    assert frame.get_column("source_file").unique().to_list() == ["payroll/payroll.csv"]
    assert sorted(frame.get_column("source_line").to_list()) == list(range(2, 1157))
    assert frame.get_column("ssn_hash").str.len_chars().unique().to_list() == [64]
    for ds in ("applications", "roster", "certifications", "employer_rates"):
        f = scan_lake(canonical_lake, ds).collect()
        assert f.schema == schema.STAGED[ds] and f.height > 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_vendor_layout_stages_to_the_canonical_rows(layout, tmp_path, canonical_lake):
    rows = pl.read_csv(CANON / "payroll" / "payroll.csv", infer_schema=False).to_dicts()
    sub = tmp_path / "in"
    if layout in REPORT_LAYOUTS:  # a payroll product's report: one employer a report, its FEIN the folder
        written = []
        for emp in sorted({r["employer_id"] for r in rows}):
            written += write_report(layout, [r for r in rows if r["employer_id"] == emp], sub / "payroll" / emp,
                                    company=f"Employer {emp}")
    else:
        written = [write_layout(layout, rows, sub / "payroll" / layout)]
    report = ingest_folder(sub, tmp_path / "wd", KEY, now=NOW)
    check_counts(report)
    assert {r.profile for r in report.files} == {layout} and {r.status for r in report.files} == {"accepted"}, report.summary()
    assert sorted(r.file for r in report.files) == sorted(p.relative_to(sub).as_posix() for p in written)
    if layout in REPORT_LAYOUTS:  # a line per pay type (regular, overtime) adds up to the check
        assert_frame_equal(per_period(tmp_path / "wd"), per_period(canonical_lake))
    else:
        assert_frame_equal(payroll_values(tmp_path / "wd"), payroll_values(canonical_lake))
    if layout == "spreadsheet_xlsx":
        sheets = scan_lake(tmp_path / "wd", "payroll").select("source_sheet").unique().collect()
        assert sorted(sheets.get_column("source_sheet").to_list()) == ["2021", "2022", "2023"]


def test_vendor_mix_same_rows_and_other_datasets_copied(tmp_path, canonical_lake):
    write_vendor_mix(CANON, tmp_path / "mix", seed=11)
    names = sorted(p.name for p in (tmp_path / "mix" / "payroll").iterdir())
    files = [n for n in names if "." in n]
    folders = [n for n in names if re.fullmatch(r"\d{9}", n)]  # the reports', one employer each
    assert len(files) == len(LAYOUTS) - len(REPORT_LAYOUTS) and len(folders) >= len(REPORT_LAYOUTS)
    report = ingest_folder(tmp_path / "mix", tmp_path / "wd", KEY, now=NOW)
    check_counts(report)
    assert {f.profile for f in report.files if f.dataset == "payroll"} == set(LAYOUTS)
    assert report.rejects.height == 0, report.rejects
    assert_frame_equal(per_period(tmp_path / "wd"), per_period(canonical_lake))
    for ds in ("applications", "certifications", "employer_rates"):
        assert (tmp_path / "mix" / f"{ds}.csv").read_bytes() == (CANON / f"{ds}.csv").read_bytes()
    # the roster gives the ssn the Paycom and Gusto reports lack
    roster = pl.read_csv(tmp_path / "mix" / "roster.csv", infer_schema=False)
    assert roster.drop("ssn").equals(pl.read_csv(CANON / "roster.csv", infer_schema=False)) and roster["ssn"].null_count() == 0


def test_vendor_number_and_date_formats(tmp_path):
    sub = tmp_path / "in" / "payroll"
    sub.mkdir(parents=True)
    (sub / "adp.csv").write_text(  # the canonical layout reads what any layout reads
        "employer_id,employee_id,ssn,period_start,period_end,hours,gross_wages,employer_taxes\n"
        '10-0000001,7,900-11-0001,1/1/2023,01/14/23,82.5,"$1,256.25","$137.55"\n'
        '10-0000001,8,900-11-0002,01/01/2023,2023-01-14,10,$150.00,(12.50)\n'
    )
    report = ingest_folder(tmp_path / "in", tmp_path / "wd", KEY, now=NOW)
    check_counts(report)
    assert report.files[0].profile == "canonical"
    lake = scan_lake(tmp_path / "wd", "payroll").collect().sort("source_line")
    assert lake.get_column("hours").to_list() == [82.5]
    assert lake.get_column("gross_wages").to_list() == [1256.25]
    assert lake.get_column("employer_id").to_list() == ["100000001"]
    assert lake.select("period_start", "period_end").row(0) == (date(2023, 1, 1), date(2023, 1, 14))
    # "(12.50)" parsed as -12.50: a reversal nets against the employee's year, but employee 8 has
    # nothing else in 2023, so the year nets negative: an error naming the line
    assert report.rejects.select("line", "rule", "column", "value").rows() == [(3, "negative_net", "employer_taxes", "(12.50)")]
    assert "employee 8" in report.rejects.get_column("message")[0] and "payroll/adp.csv:3" in report.rejects.get_column("message")[0]


def test_unknown_layout_names_nearest_profile(tmp_path):
    sub = tmp_path / "in" / "payroll"
    sub.mkdir(parents=True)
    (sub / "x.txt").write_text("CLIENT_FEIN|WSE_ID|WSE_SSN|PER_BEG_DT|REG_HRS|OT_HRS|REG_WAGES|OT_WAGES|BONUS\n"
                               "1|2|3|4|5|6|7|8|9\n")
    report = ingest_folder(tmp_path / "in", tmp_path / "wd", KEY, now=NOW)
    check_counts(report)
    (rec,) = report.files
    assert rec.status == "rejected" and rec.rows_read == 1 and rec.rows_rejected == 1
    msg = report.rejects.get_column("message")[0]
    assert "nearest: profile 'peo_export', line 1 (8 of 10 fields)" in msg and "PER_END_DT" in msg and "ER_TAX_TOTAL" in msg and "BONUS" in msg
    assert report.rejects.get_column("line")[0] is None


def test_applications_received_at_and_rules(tmp_path):
    sub = tmp_path / "in"
    sub.mkdir()
    (sub / "applications.csv").write_text(
        "Application ID,Employer_ID,employer name,County,tax type,TAX_YEAR,Received At\n"
        "A1,100000001,One,Mercer,cbt,2023,2024-12-31 23:30:00\n"
        "A2,100000001,One,Mercer,CBT,2023,2025-01-01T04:30:00Z\n"
        "A3,100000001,One,Mercer,CBT,2023,2026-06-01T00:00:00\n"
        "A4,100000001,One,Mercer,XYZ,2023,2024-02-01T10:00:00-05:00\n"
    )
    report = ingest_folder(sub, tmp_path / "wd", KEY, now=NOW)
    check_counts(report)
    apps = scan_lake(tmp_path / "wd", "applications").collect().sort("application_id")
    assert apps.get_column("application_id").to_list() == ["A1", "A2"]
    # naive = New Jersey local time; Z converted: both fall on the NJ date 2024-12-31
    assert apps.get_column("received_date").to_list() == [date(2024, 12, 31), date(2024, 12, 31)]
    assert apps.get_column("tax_type").to_list() == ["CBT", "CBT"]
    assert dict(report.rejects.select("line", "rule").rows()) == {4: "received_in_future", 5: "unknown_tax_type"}


def test_same_file_twice_even_renamed_adds_nothing(tmp_path):
    wd = tmp_path / "wd"
    first = ingest_folder(CANON, wd, KEY, now=NOW)
    before = {p.relative_to(wd): p.read_bytes() for p in (wd / "lake").rglob("*.parquet")}
    again = tmp_path / "again"
    (again / "payroll").mkdir(parents=True)
    shutil.copy(CANON / "payroll" / "payroll.csv", again / "payroll" / "renamed_copy.csv")
    shutil.copy(CANON / "roster.csv", again / "roster.csv")
    report = ingest_folder(again, wd, KEY, now=NOW)
    check_counts(report)
    assert [f.status for f in report.files] == ["duplicate", "duplicate"]
    assert "payroll/payroll.csv" in report.files[0].message
    after = {p.relative_to(wd): p.read_bytes() for p in (wd / "lake").rglob("*.parquet")}
    assert after == before
    assert scan_lake(wd, "payroll").collect().height == sum(f.rows_accepted for f in first.files if f.dataset == "payroll")


def test_corrected_file_supersedes_its_earlier_version_and_other_files_add(tmp_path):
    """A payroll file is the file at its path: a new version there supersedes the earlier one
    whole. A file at another path adds (an off-cycle check, a correction: spec section 1)."""
    wd = tmp_path / "wd"
    ingest_folder(CANON, wd, KEY, now=NOW)
    total = scan_lake(wd, "payroll").collect().height
    src = pl.read_csv(CANON / "payroll" / "payroll.csv", infer_schema=False)
    emp = "100000001"
    in_fix = (pl.col("employer_id") == emp) & pl.col("period_start").str.starts_with("2023-0")
    fixed = src.with_columns(pl.when(in_fix).then(pl.lit(v)).otherwise(pl.col(c)).alias(c)
                             for c, v in (("hours", "1.00"), ("gross_wages", "15.00")))
    v2 = tmp_path / "v2"
    shutil.copytree(CANON, v2)
    fixed.write_csv(v2 / "payroll" / "payroll.csv")
    report = ingest_folder(v2, wd, KEY, now=NOW)
    check_counts(report)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert rec.status == "replaced", report.summary()
    assert "a new version of payroll/payroll.csv" in rec.message
    (rep,) = report.replaced
    assert rep["replaced_file"] == "payroll/payroll.csv" and rep["rows_removed"] == total
    lake = scan_lake(wd, "payroll").collect()
    assert lake.height == total  # the old version's rows are gone, the new version's are in
    changed = lake.filter((pl.col("employer_id") == emp) & (pl.col("period_start") >= date(2023, 1, 1))
                          & (pl.col("period_start") < date(2023, 10, 1)))
    assert changed.height > 0 and changed.get_column("hours").unique().to_list() == [1.0]

    # a correction in a file of its own adds to the rows over the same days
    delta = tmp_path / "delta" / "payroll"
    delta.mkdir(parents=True)
    (delta / "correction.csv").write_text(
        ",".join(schema.SUBMITTED_COLUMNS["payroll"]) + ",check_id\n"
        f"{emp},E000,900-50-1000,2023-01-01,2023-01-31,2.50,37.50,4.11,MANUAL-1\n")
    report = ingest_folder(tmp_path / "delta", wd, KEY, now=NOW)
    assert [f.status for f in report.files] == ["accepted"] and not report.replaced
    lake = scan_lake(wd, "payroll").collect()
    assert lake.height == total + 1
    assert lake.filter(pl.col("check_id") == "MANUAL-1").get_column("hours").to_list() == [2.5]

    # the first version sent again supersedes the second: the lake is back to it
    report = ingest_folder(CANON, wd, KEY, now=NOW)
    (rec,) = [f for f in report.files if f.dataset == "payroll"]
    assert rec.status == "replaced" and rec.rows_accepted == total
    back = scan_lake(wd, "payroll").collect().filter(pl.col("source_file") == "payroll/payroll.csv")
    assert_frame_equal(back.select(VALUES).sort(VALUES), payroll_values(canon_lake_of(tmp_path)))

    # key-based replacement of another dataset
    (tmp_path / "fix2").mkdir()
    (tmp_path / "fix2" / "roster.csv").write_text("application_id,employee_id,wage_category\nA000,E000,tipped\n")
    report = ingest_folder(tmp_path / "fix2", wd, KEY, now=NOW)
    assert report.files[0].status == "replaced" and report.replaced[0]["dataset"] == "roster"
    roster = scan_lake(wd, "roster").collect()
    assert roster.filter(pl.col("application_id") == "A000").get_column("wage_category").to_list() == ["tipped"]


def canon_lake_of(tmp_path: Path) -> Path:
    wd = tmp_path / "canon-only"
    ingest_folder(CANON, wd, KEY, now=NOW)
    return wd


def test_scan_lake_prunes_by_year_and_employer(canonical_lake):
    lf = scan_lake(canonical_lake, "payroll", years=[2023], employer_ids=["100000001"])
    f = lf.collect()
    assert f.get_column("employer_id").unique().to_list() == ["100000001"]
    assert f.filter(pl.col("period_end") < date(2023, 1, 1)).height == 0
    # a biweekly period that starts in December 2022 and ends in January 2023 is included
    assert f.filter(pl.col("period_start") < date(2023, 1, 1)).height == 3
    plan = lf.explain()
    assert "year=2021" not in plan and "year=2022" in plan and "100000001" in plan  # employer: a pushed-down row filter
    assert scan_lake(canonical_lake, "payroll", years=[2030]).collect().height == 0
    assert scan_lake(canonical_lake, "roster", employer_ids=["100000001"]).collect().height == 1


def test_lake_is_partitioned_and_written_atomically(canonical_lake):
    parts = sorted(p.relative_to(canonical_lake / "lake").as_posix() for p in (canonical_lake / "lake").rglob("*.parquet"))
    assert all(re.fullmatch(r"payroll/year=\d{4}/part-[0-9a-f]{16}\.parquet", p)
               for p in parts if p.startswith("payroll/"))
    assert not list((canonical_lake / "lake").rglob("*.tmp"))
    assert (canonical_lake / "lake" / "_manifest.json").exists()


def test_read_submission_still_works():
    staged = read_submission(CANON, KEY)
    assert staged.frames["payroll"].schema == schema.PAYROLL
    assert staged.frames["payroll"].height == 1155 and not staged.errors


def test_no_ssn_anywhere(tmp_path):
    """Every file written (lake, quarantine, manifest, Data Docs, rejects) is free of input ssns."""
    wd = tmp_path / "wd"
    docs = wd / "docs"
    write_vendor_mix(CANON, tmp_path / "mix", seed=5)
    bad = tmp_path / "bad"
    (bad / "payroll").mkdir(parents=True)
    for f in (FIX / "bad").iterdir():
        if f.name.startswith("latin1"):
            shutil.copy(f, bad / "applications.csv")
        else:
            shutil.copy(f, bad / "payroll" / f.name)
    # ssns in the wrong places: as employee id, shifted by an extra field, in an unknown layout
    (bad / "payroll" / "leaky.csv").write_text(
        ",".join(schema.SUBMITTED_COLUMNS["payroll"]) + "\n"
        "100000001,900-11-0001,900-11-0001,2023-01-01,2023-01-31,10,150,16\n"
        "100000001,E1,,900-11-0002,2023-01-01,2023-01-31,10,150,16\n"
        "100000001,E1,900110003,2023-01-01,2023-01-31,10,150,-16\n"
        "900110005,E5,900-11-0005,2023-01-01,2023-01-31,10,150,16\n"
        # ssn and employee id swapped (the ssn cell is not an ssn); an ssn written with dots or spaces
        "100000001,900110006,E6,2023-01-01,2023-01-31,10,150,16\n"
        "100000001,E7,900.11.0007,2023-01-01,2023-01-31,10,150,16\n"
        "100000001,900 11 0008,E8,2023-01-01,2023-01-31,10,150,16\n"
    )
    (bad / "payroll" / "unknown.csv").write_text("fein,person,social\n100000001,E9,900-11-0004\n")
    ssns = set(re.findall(r"9\d\d-\d\d-\d{4}", "".join(
        p.read_text(encoding="utf-8", errors="replace") for d in (CANON, bad) for p in d.rglob("*.csv"))))
    ssns |= {f"900-11-000{i}" for i in range(1, 9)}
    assert len(ssns) > 30
    reports = [ingest_folder(d, wd, KEY, now=NOW, docs_dir=docs) for d in (CANON, tmp_path / "mix", bad)]
    for r in reports:
        check_counts(r)
        r.write_rejects(tmp_path / "out")
    assert reports[2].rejects.filter(pl.col("rule") == "employee_id_is_ssn").height == 1
    assert reports[2].rejects.filter(pl.col("rule") == "employer_id_is_ssn").height == 1
    patterns = [re.compile("|".join(re.escape(s.replace("-", sep)) for sep in ("-", "", ".", " "))) for s in ssns]
    checked = 0
    for path in [*wd.rglob("*"), *(tmp_path / "out").rglob("*")]:
        if not path.is_file():
            continue
        blobs = [path.read_bytes().decode("latin-1")]
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
            blobs.append(frame.cast(pl.String).write_csv())
        for blob in blobs:
            for pat in patterns:
                assert not pat.search(blob), f"ssn found in {path}"
        checked += 1
    assert checked > 20
    assert (docs / "index.html").exists()
    for r in reports:
        assert r.rejects.filter(pl.col("column") == "ssn").get_column("value").null_count() == \
            r.rejects.filter(pl.col("column") == "ssn").height


def test_a_layout_1_lake_is_upgraded_in_place(tmp_path):
    """Lakes written before layout 2 (payroll by year and employer) are rewritten by year on the
    next ingest, rows unchanged; a part no manifest lists (a crashed run) is removed."""
    import json

    wd = tmp_path / "wd"
    ingest_folder(CANON, wd, KEY, now=NOW)
    lake = wd / "lake"
    before = scan_lake(wd, "payroll").collect().sort("source_file", "source_line")
    manifest = json.loads((lake / "_manifest.json").read_text())
    # rewrite the payroll parts the way layout 1 stored them
    rows = pl.concat([pl.read_parquet(p) for p in (lake / "payroll").rglob("part-*.parquet")])
    shutil.rmtree(lake / "payroll")
    old_parts: dict[str, list[str]] = {}
    for (year, employer, sha), grp in rows.group_by(pl.col("period_start").dt.year(), "employer_id", "_file_sha256"):
        rel = f"payroll/year={year}/employer_id={employer}/part-{sha[:16]}.parquet"
        (lake / rel).parent.mkdir(parents=True, exist_ok=True)
        grp.write_parquet(lake / rel)
        old_parts.setdefault(sha, []).append(rel)
    for sha, f in manifest["files"].items():
        if f["dataset"] == "payroll":
            f["parts"] = old_parts.get(sha, [])
    manifest["version"] = 1
    (lake / "_manifest.json").write_text(json.dumps(manifest))
    stray = lake / "roster" / "part-0123456789abcdef.parquet"  # as if a run crashed before its manifest
    pl.read_parquet(next((lake / "roster").glob("part-*.parquet"))).write_parquet(stray)

    report = ingest_folder(CANON, wd, KEY, now=NOW)  # nothing new: every file is a duplicate
    assert {f.status for f in report.files} == {"duplicate"}
    after = scan_lake(wd, "payroll").collect().sort("source_file", "source_line")
    assert_frame_equal(before, after)
    assert not list((lake / "payroll").rglob("employer_id=*"))
    assert all(re.fullmatch(r"payroll/year=\d{4}/part-[0-9a-f]{16}\.parquet", p.relative_to(lake).as_posix())
               for p in (lake / "payroll").rglob("*.parquet"))
    new_manifest = json.loads((lake / "_manifest.json").read_text())
    assert new_manifest["version"] == lk.LAYOUT_VERSION
    listed = {p for f in new_manifest["files"].values() for p in f.get("parts") or []}
    assert {p.relative_to(lake).as_posix() for p in (lake / "payroll").rglob("*.parquet")} <= listed
    assert not stray.exists()
    assert scan_lake(wd, "roster").collect().height == scan_lake(wd, "roster").collect().unique().height
