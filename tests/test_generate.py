"""The synthetic submission generator: contract, determinism and the realism the rules need."""

from __future__ import annotations

import re
import time
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from transforms.reference.parameters import load_parameters
from transforms.schema import OPTIONAL_COLUMNS, SUBMITTED_COLUMNS, WAGE_CATEGORIES
from transforms.synthetic.generate import GenerateSummary, generate_submission

TAX_YEAR = 2023
EMPLOYERS = 150


@pytest.fixture(scope="module")
def params():
    return load_parameters()


@pytest.fixture(scope="module")
def generated(tmp_path_factory, params) -> tuple[GenerateSummary, Path]:
    out = tmp_path_factory.mktemp("gen") / "submission"
    summary = generate_submission(
        out, employers=EMPLOYERS, seed=20240201, tax_year=TAX_YEAR, params=params, groups_and_fiscal=False
    )
    return summary, out


def _read(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, infer_schema=False)


@pytest.fixture(scope="module")
def frames(generated) -> dict[str, pl.DataFrame]:
    _, out = generated
    files = sorted((out / "payroll").glob("*.csv"))
    out_frames = {
        "payroll": pl.concat([_read(f) for f in files]),
        "applications": _read(out / "applications.csv"),
        "roster": _read(out / "roster.csv"),
        "certifications": _read(out / "certifications.csv"),
        "employer_rates": _read(out / "employer_rates.csv"),
    }
    return out_frames


@pytest.fixture(scope="module")
def payroll(frames) -> pl.DataFrame:
    """Payroll typed, with the normalised ssn and the period length."""
    return (
        frames["payroll"]
        .with_columns(
            pl.col("period_start").str.to_date("%Y-%m-%d"),
            pl.col("period_end").str.to_date("%Y-%m-%d"),
            pl.col("hours", "gross_wages", "employer_taxes").cast(pl.Float64),
            pl.col("ssn").str.replace_all("-", "").alias("ssn9"),
        )
        .with_columns(
            ((pl.col("period_end") - pl.col("period_start")).dt.total_days() + 1).alias("days")
        )
    )


@pytest.fixture(scope="module")
def rostered(frames) -> pl.DataFrame:
    """Roster rows with the employer of their application."""
    return frames["roster"].join(
        frames["applications"].select("application_id", "employer_id"), on="application_id"
    )


def _hours_by_year(payroll: pl.DataFrame) -> pl.DataFrame:
    """Hours per employer, employee and calendar year, spread evenly over the days (spec 3)."""
    parts = []
    for y in (TAX_YEAR - 2, TAX_YEAR - 1, TAX_YEAR):
        a, b = date(y, 1, 1), date(y, 12, 31)
        overlap = (
            (
                pl.min_horizontal(pl.col("period_end"), pl.lit(b))
                - pl.max_horizontal(pl.col("period_start"), pl.lit(a))
            )
            .dt.total_days()
            .add(1)
            .clip(lower_bound=0)
        )
        parts.append(
            payroll.group_by("employer_id", "employee_id")
            .agg(
                (pl.col("hours") * overlap / pl.col("days")).sum().alias("h"),
                (pl.col("gross_wages") * overlap / pl.col("days")).sum().alias("w"),
            )
            .with_columns(pl.lit(y).alias("year"))
        )
    return pl.concat(parts).pivot(
        on="year", index=["employer_id", "employee_id"], values=["h", "w"]
    )


# --- determinism -------------------------------------------------------------------------------


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.csv"))}


def test_same_seed_gives_byte_identical_files_and_another_seed_does_not(tmp_path, params):
    a = generate_submission(tmp_path / "a", employers=60, seed=5, params=params)
    b = generate_submission(tmp_path / "b", employers=60, seed=5, params=params)
    generate_submission(tmp_path / "c", employers=60, seed=6, params=params)
    ta, tb, tc = (_tree_bytes(tmp_path / x) for x in "abc")
    # applications, roster, certifications, employer rates, control groups, estimate requests; a
    # fiscal filer's and a shared person's payroll beside the payroll files
    assert len(ta) == 6 + a.files + 2 and a.groups == 1 and a.fiscal_filers == 1 and a.estimate_requests == 2
    assert ta == tb
    assert a == GenerateSummary(**{**b.__dict__, "out_dir": a.out_dir})
    assert ta.keys() == tc.keys()
    assert all(ta[k] != tc[k] for k in ta)


def test_rerun_into_the_same_folder_leaves_no_stale_payroll_files(tmp_path, params):
    generate_submission(tmp_path, employers=160, seed=1, params=params)
    s = generate_submission(tmp_path, employers=40, seed=1, params=params, groups_and_fiscal=False)
    assert len(list((tmp_path / "payroll").glob("*.csv"))) == s.files == 1


def test_groups_and_fiscal_filers_are_laid_over_the_sample(tmp_path, params):
    """34:11-56a39: pairs of employers under common control (the first applies for the group, its
    roster naming the second's employees by employer), a person paid by both members under two
    ids, and fiscal-year filers (a privilege period July-June, its second half's payroll in a
    file of its own)."""
    s = generate_submission(tmp_path, employers=200, seed=7, params=params)
    groups = _read(tmp_path / "control_groups.csv")
    assert s.groups == 4 and groups.height == 8 and groups["group_id"].n_unique() == 4
    assert (groups["member_from"] == "2015-01-01").all() and groups["member_to"].is_null().all()
    apps, roster = _read(tmp_path / "applications.csv"), _read(tmp_path / "roster.csv")
    members = groups.group_by("group_id", maintain_order=True).agg(pl.col("employer_id"))
    for _, (first, second) in members.iter_rows():
        assert first in apps["employer_id"].to_list() and second not in apps["employer_id"].to_list()
        app = apps.filter(pl.col("employer_id") == first)["application_id"].item()
        named = roster.filter(pl.col("application_id") == app)["employer_id"].drop_nulls().unique().to_list()
        assert named == [second]
    fiscal = apps.filter(pl.col("period_start").is_not_null())
    assert s.fiscal_filers == fiscal.height == 3
    assert (fiscal["period_start"] == "2023-07-01").all() and (fiscal["period_end"] == "2024-06-30").all()
    assert (fiscal["tax_type"] == "CBT").all() and fiscal["received_at"].str.starts_with("2024-07-01").all()
    extra = _read(tmp_path / "payroll" / "payroll_fiscal_2024.csv")
    assert set(extra["employer_id"]) == set(fiscal["employer_id"]) and extra["period_end"].max() <= "2024-06-30"
    reqs = _read(tmp_path / "estimate_requests.csv")
    assert s.estimate_requests == reqs.height == 9 and reqs["received_at"].str.starts_with("2023-").all()
    assert reqs["received_at"].min() < "2023-04-01"  # the first quarter's estimate has one
    assert set(roster.filter(pl.col("application_id").is_in(reqs["request_id"].implode()))["application_id"]) == set(
        reqs["request_id"])
    shared = _read(tmp_path / "payroll" / "shared_member_payroll.csv")
    assert shared["employee_id"].str.starts_with("X-").all() and shared["ssn"].n_unique() == 1
    assert shared["employer_id"].unique().to_list() == [members.row(0)[1][0]]


# --- contract ----------------------------------------------------------------------------------


def test_files_and_columns_follow_the_canonical_contract(generated, frames):
    summary, out = generated
    files = sorted((out / "payroll").glob("*.csv"))
    assert [f.name for f in files] == [f"payroll_{i:03d}.csv" for i in range(1, summary.files + 1)]
    assert summary.files == 3  # ~50 employers a file
    for f in files:
        assert f.read_text().splitlines()[0].split(",") == SUBMITTED_COLUMNS["payroll"]
    for name, frame in frames.items():
        # the required columns in order, then optional ones the contract allows (the address)
        assert frame.columns[: len(SUBMITTED_COLUMNS[name])] == SUBMITTED_COLUMNS[name], name
        assert set(frame.columns[len(SUBMITTED_COLUMNS[name]):]) <= set(OPTIONAL_COLUMNS.get(name, [])), name
    assert frames["applications"]["employer_address"].str.contains(r"^\d+ .+; .+, NJ \d{5}$").all()
    # several employers in a file
    assert _read(files[0])["employer_id"].n_unique() == 50
    assert frames["payroll"].height == summary.payroll_rows
    assert frames["applications"].height == summary.applications
    assert frames["roster"].height == summary.roster_rows
    assert frames["certifications"].height == summary.certifications
    assert frames["applications"]["employer_id"].n_unique() == summary.employers == EMPLOYERS
    assert (
        frames["roster"].select("application_id", "employee_id").unique().height
        == summary.roster_rows
    )


def test_identifiers_and_formats(frames):
    for name in ("payroll", "applications", "employer_rates"):
        assert frames[name]["employer_id"].str.contains(r"^\d{9}$").all(), name
    pay = frames["payroll"]
    assert pay["employee_id"].str.contains(r"^E\d{6}$").all()
    assert frames["roster"]["employee_id"].str.contains(r"^E\d{6}$").all()
    apps = frames["applications"]
    assert apps["application_id"].str.contains(rf"^APP-{TAX_YEAR}-\d{{6}}$").all()
    assert apps["application_id"].is_unique().all()
    assert apps["received_at"].str.contains(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$").all()
    assert set(apps["tax_type"]) == {"CBT", "GIT"}
    assert (apps["tax_year"] == str(TAX_YEAR)).all()
    assert set(apps["county"]) <= {
        "Atlantic", "Bergen", "Burlington", "Camden", "Cape May", "Cumberland", "Essex",
        "Gloucester", "Hudson", "Hunterdon", "Mercer", "Middlesex", "Monmouth", "Morris", "Ocean",
        "Passaic", "Salem", "Somerset", "Sussex", "Union", "Warren",
    }  # fmt: skip
    assert apps["county"].n_unique() > 10
    certs = frames["certifications"]
    assert certs["certification_id"].str.contains(r"^C-\d{6}$").all()
    assert certs["certification_id"].is_unique().all()
    for ssn in (pay["ssn"], certs["ssn"]):
        assert ssn.str.contains(r"^(\d{3}-\d{2}-\d{4}|\d{9})$").all()
        digits = ssn.str.replace_all("-", "")
        assert digits.str.contains(r"^\d{9}$").all()
        assert not digits.str.contains(r"^(000|666)").any()
        assert ssn.str.contains("-").any() and (~ssn.str.contains("-")).any()  # both ways
    # money and hours with exactly 2 decimals, rates with 4
    for col in ("hours", "gross_wages", "employer_taxes"):
        assert pay[col].str.contains(r"^\d+\.\d{2}$").all(), col
    rates = frames["employer_rates"]
    for col in ("ui_rate", "di_rate"):
        assert rates[col].str.contains(r"^0\.\d{4}$").all(), col
    ui, di = rates["ui_rate"].cast(pl.Float64), rates["di_rate"].cast(pl.Float64)
    assert ui.min() >= 0.004 and ui.max() <= 0.054
    assert di.min() >= 0.001 and di.max() <= 0.0075


def test_ssn_is_one_per_person(payroll):
    per_employee = payroll.group_by("employer_id", "employee_id").agg(pl.col("ssn9").n_unique())
    assert (per_employee["ssn9"] == 1).all()
    per_ssn = payroll.group_by("ssn9").agg(
        pl.struct("employer_id", "employee_id").n_unique().alias("n")
    )
    assert (per_ssn["n"] == 1).all()


def test_periods_are_sane_and_do_not_overlap(payroll):
    assert (payroll["hours"] >= 0).all()
    assert (payroll["period_end"] >= payroll["period_start"]).all()
    assert payroll["days"].max() <= 31
    assert payroll["period_start"].min() <= date(TAX_YEAR - 2, 1, 1)
    assert payroll["period_start"].max() <= date(TAX_YEAR, 12, 31)
    gaps = (
        payroll.sort("employer_id", "employee_id", "period_start")
        .with_columns(
            pl.col("period_start").shift(-1).over("employer_id", "employee_id").alias("next")
        )
        .filter(pl.col("next").is_not_null())
    )
    assert (gaps["period_end"] < gaps["next"]).all()


def test_wages_and_taxes_are_consistent(payroll):
    paid = payroll.filter(pl.col("hours") > 0)
    rate = paid["gross_wages"] / paid["hours"]
    assert rate.min() > 2.0 and rate.max() < 40.0
    big = payroll.filter(pl.col("gross_wages") > 200)
    eff = big["employer_taxes"] / big["gross_wages"]
    assert eff.min() >= 0.0799 and eff.max() <= 0.1201
    assert (payroll.filter(pl.col("hours") == 0)["gross_wages"] == 0).all()
    # part-time: 10 to 40 hours a week (a few percent of noise; partial periods at hire and leave)
    weekly = (
        paid.group_by("employer_id", "employee_id")
        .agg((pl.col("hours") / pl.col("days") * 7).median(), pl.len())
        .filter(pl.col("len") >= 6)
    )
    assert weekly["hours"].min() >= 9.0 and weekly["hours"].max() <= 42.0
    assert weekly["hours"].quantile(0.1) < 18 and weekly["hours"].quantile(0.9) > 32


def _mw_max(params, cat: str, start: date, end: date) -> float:
    return max(v for _, _, v in params.schedule(f"minimum_wage.{cat}", start, end))


def _check_paid_at_least_minimum_wage(payroll, rostered, params) -> int:
    """Every rostered row pays at least the category's minimum wage of each of its days.

    Returns how many rostered rows are paid exactly the minimum wage (gross = round(hours x MW)).
    """
    rows = payroll.join(
        rostered.unique(["employer_id", "employee_id"]), on=["employer_id", "employee_id"]
    )
    combos = rows.select("wage_category", "period_start", "period_end").unique()
    mw = combos.with_columns(
        pl.Series(
            "mw",
            [_mw_max(params, c, s, e) for c, s, e in combos.iter_rows()],
            dtype=pl.Float64,
        )
    )
    rows = rows.join(mw, on=["wage_category", "period_start", "period_end"])
    required = (rows["hours"] * rows["mw"] * 100).round(6).floor() / 100  # lowest cent at MW
    assert (rows["gross_wages"] >= required - 1e-9).all()
    exact = (
        (rows["hours"] * rows["mw"] * 100 + 0.5).floor() / 100 - rows["gross_wages"]
    ).abs() < 1e-6
    return int(exact.sum())


def test_rostered_pay_is_at_least_the_minimum_wage_and_often_exactly_it(payroll, rostered, params):
    exact = _check_paid_at_least_minimum_wage(payroll, rostered, params)
    rows = payroll.join(
        rostered.unique(["employer_id", "employee_id"]), on=["employer_id", "employee_id"]
    )
    assert exact >= 1
    assert exact / rows.height > 0.5  # most at the minimum wage


def test_minimum_wage_of_each_day_across_the_2019_mid_year_step(tmp_path, params):
    """Tax year 2020: payroll 2018-2020 crosses the 2019-07-01 step of general and tipped."""
    generate_submission(tmp_path, employers=80, seed=3, tax_year=2020, params=params)
    pay = pl.concat([_read(f) for f in sorted((tmp_path / "payroll").glob("*.csv"))]).with_columns(
        pl.col("period_start", "period_end").str.to_date("%Y-%m-%d"),
        pl.col("hours", "gross_wages").cast(pl.Float64),
    )
    ros = _read(tmp_path / "roster.csv").join(
        _read(tmp_path / "applications.csv").select("application_id", "employer_id"),
        on="application_id",
    )
    assert pay["period_start"].min() <= date(2018, 1, 1)
    assert _check_paid_at_least_minimum_wage(pay, ros, params) >= 1
    straddle = pay.filter(
        (pl.col("period_start") < date(2019, 7, 1)) & (pl.col("period_end") >= date(2019, 7, 1))
    )
    assert straddle.height > 0


# --- realism the credit rules exercise ---------------------------------------------------------


def test_all_wage_categories_and_pay_frequencies(frames, payroll):
    assert set(frames["roster"]["wage_category"]) == set(WAGE_CATEGORIES)
    counts = frames["roster"]["wage_category"].value_counts().sort("count", descending=True)
    assert counts["wage_category"][0] == "general"

    def frequency(s: date, e: date) -> str:
        n = (e - s).days + 1
        if n == 7:
            return "weekly"
        if n == 14:
            return "biweekly"
        if s.day in (1, 16) and (e.day == 15 or (s.day == 16 and (e.month != s.month or n <= 16))):
            return "semimonthly"
        return "monthly" if s.day == 1 else "other"

    per_employer = payroll.group_by("employer_id").agg(pl.col("period_start", "period_end").first())
    kinds = {frequency(s, e) for _, s, e in per_employer.iter_rows()}
    assert kinds == {"weekly", "biweekly", "semimonthly", "monthly"}
    # an employer's periods all have the one frequency
    lengths = (
        payroll.filter(pl.col("days").is_in([7, 14]))
        .group_by("employer_id")
        .agg(pl.col("days").n_unique())
    )
    assert (lengths["days"] == 1).all()


def test_periods_straddle_january_first_and_july_first(payroll):
    jan = payroll.filter(pl.col("period_start").dt.year() < pl.col("period_end").dt.year())
    jul = payroll.filter(
        (pl.col("period_start").dt.month() == 6) & (pl.col("period_end").dt.month() == 7)
    )
    assert jan.height > 0 and jul.height > 0
    assert {TAX_YEAR - 1, TAX_YEAR} <= set(jan["period_end"].dt.year())


def test_duplicate_and_late_applications(frames, params):
    apps = frames["applications"].with_columns(
        pl.col("received_at").str.to_datetime("%Y-%m-%dT%H:%M:%S")
    )
    dups = apps.filter(pl.len().over("employer_id", "tax_year") > 1).sort(
        "employer_id", "received_at"
    )
    assert dups.height >= 2
    first, second = dups.row(0, named=True), dups.row(1, named=True)
    assert first["employer_id"] == second["employer_id"]
    assert second["received_at"] > first["received_at"]
    assert second["application_id"] != first["application_id"]
    # mostly received between Jan 15 and Jun 30 of the next year
    on_time = apps.filter(
        pl.col("received_at")
        .dt.date()
        .is_between(date(TAX_YEAR + 1, 1, 15), date(TAX_YEAR + 1, 6, 30))
    )
    assert on_time.height / apps.height > 0.9
    # a late one for a general or tipped employee (deadline from the reference parameters)
    deadline = min(
        params.date_value("program.application_deadline_general"),
        params.date_value("program.application_deadline_tipped"),
    )
    late = apps.filter(pl.col("received_at").dt.date() >= deadline).join(
        frames["roster"], on="application_id"
    )
    assert late.filter(pl.col("wage_category").is_in(["general", "tipped"])).height >= 1


def _certified_for_tax_year(certs: pl.DataFrame) -> set[str]:
    c = certs.with_columns(
        pl.col("ssn").str.replace_all("-", "").alias("ssn9"),
        pl.col("valid_from").str.to_date("%Y-%m-%d"),
        pl.col("valid_to").str.to_date("%Y-%m-%d"),
    )
    ok = c.filter(
        (pl.col("status") == "CERTIFIED")
        & (pl.col("valid_from") <= date(TAX_YEAR, 12, 31))
        & (pl.col("valid_to").is_null() | (pl.col("valid_to") >= date(TAX_YEAR, 1, 1)))
    )
    return set(ok["ssn9"])


def test_certifications_cover_the_cases(frames, payroll, rostered):
    certs = frames["certifications"]
    assert set(certs["status"]) == {"CERTIFIED", "PENDING", "REVOKED"}
    assert certs["valid_to"].is_null().mean() > 0.5  # mostly open-ended
    vf = certs["valid_from"].str.to_date("%Y-%m-%d")
    assert (
        (certs["status"] == "CERTIFIED") & (vf > date(TAX_YEAR, 12, 31))
    ).any()  # certified too late
    certified = _certified_for_tax_year(certs)
    ros_ssn = rostered.join(
        payroll.select("employer_id", "employee_id", "ssn9").unique(),
        on=["employer_id", "employee_id"],
    )
    ssn_all = set(certs["ssn"].str.replace_all("-", ""))
    uncertified = ros_ssn.filter(~pl.col("ssn9").is_in(list(certified)))
    assert uncertified.height >= 1
    assert (~ros_ssn["ssn9"].is_in(list(ssn_all))).any()  # no certification at all
    assert ros_ssn["ssn9"].is_in(list(certified)).mean() > 0.7  # most are certified


def test_rostered_employee_without_payroll(rostered, payroll):
    missing = rostered.join(
        payroll.select("employer_id", "employee_id").unique(),
        on=["employer_id", "employee_id"],
        how="anti",
    )
    assert missing.height >= 1


def test_employer_missing_a_rate_year(frames):
    rates = frames["employer_rates"]
    assert set(rates["rate_year_start"]) == {
        f"{y}-07-01" for y in (TAX_YEAR - 2, TAX_YEAR - 1, TAX_YEAR)
    }
    per = rates.group_by("employer_id").len()
    assert per["len"].max() == 3
    assert (per["len"] < 3).any()
    assert (per["len"] == 3).mean() > 0.9
    assert per.height == frames["applications"]["employer_id"].n_unique()


def test_hours_grow_and_shrink_and_there_are_hires_and_leavers(payroll, rostered):
    h = _hours_by_year(payroll)
    p, t = f"h_{TAX_YEAR - 1}", f"h_{TAX_YEAR}"
    both = h.filter((pl.col(p) > 100) & (pl.col(t) > 100))
    assert (both[t] > both[p] * 1.05).any()  # grew
    assert (both[t] < both[p] * 0.95).any()  # shrank
    ros = both.join(rostered, on=["employer_id", "employee_id"])
    assert ((ros[t] > ros[p] * 1.05).any()) and ((ros[t] < ros[p] * 0.95).any())
    # hires: nothing in the first year, hours in the tax year
    assert h.filter((pl.col(f"h_{TAX_YEAR - 2}") == 0) & (pl.col(t) > 0)).height >= 1
    # leavers: rows stop in the middle of a year
    last = payroll.group_by("employer_id", "employee_id").agg(pl.col("period_end").max())
    mid = last.filter(pl.col("period_end").dt.month().is_between(3, 10))
    assert mid.height >= 1


def test_some_wage_reductions(payroll, rostered):
    h = _hours_by_year(payroll)
    y0, y1, y2 = TAX_YEAR - 2, TAX_YEAR - 1, TAX_YEAR
    avg = h.with_columns(
        (pl.col(f"w_{y}") / pl.col(f"h_{y}")).alias(f"r_{y}") for y in (y0, y1, y2)
    ).join(rostered, on=["employer_id", "employee_id"])
    fell = avg.filter(
        ((pl.col(f"r_{y0}") - pl.col(f"r_{y1}")) > 0.005)
        | ((pl.col(f"r_{y1}") - pl.col(f"r_{y2}")) > 0.005)
    )
    assert fell.height >= 1


def test_output_stages_without_errors(generated):
    from transforms.ingest.read.tables import read_submission
    from transforms.pii import DEMO_KEY, HashKey

    summary, out = generated
    try:
        staged = read_submission(out, HashKey(DEMO_KEY, "demo"))
    except ModuleNotFoundError as exc:  # staging is built by others; its ingest may be unfinished
        pytest.skip(f"staging not importable yet: {exc}")
    assert staged.errors == []
    assert staged.frames["payroll"].height == summary.payroll_rows


def test_two_thousand_employers(tmp_path, params, capsys):
    t0 = time.perf_counter()
    s = generate_submission(tmp_path, employers=2_000, seed=99, params=params)
    elapsed = time.perf_counter() - t0
    with capsys.disabled():
        print(
            f"\n2,000 employers: {elapsed:.2f}s, {s.payroll_rows:,} payroll rows in {s.files} files"
        )
    assert s.files == 40
    # one application per employer and some duplicates, less the members that apply through their group
    assert s.employers == 2_000 and s.applications > 2_000 - s.groups
    assert 400_000 < s.payroll_rows < 3_000_000
    lines = sum(f.read_text().count("\n") - 1 for f in (tmp_path / "payroll").glob("*.csv"))
    assert lines == s.payroll_rows


def test_rejects_bad_arguments(tmp_path, params):
    with pytest.raises(ValueError):
        generate_submission(tmp_path, employers=0, seed=1, params=params)
    with pytest.raises(ValueError):
        generate_submission(tmp_path, employers=5, seed=1, impaired_share=1.5, params=params)


def test_missing_minimum_wage_is_an_error(tmp_path, params):
    with pytest.raises(ValueError, match=re.escape("minimum_wage")):
        generate_submission(tmp_path, employers=5, seed=1, tax_year=2040, params=params)


def test_received_times_are_real_new_jersey_office_hours(tmp_path, params):
    """Every received_at is a New Jersey local time that exists (none in the hour skipped when
    daylight saving time starts) and falls in office hours, duplicates included; a seed that used
    to produce a time in that gap (2,000 employers, seed 20230, tax year 2023) is among those checked."""
    times = []
    for employers, seed in ((2_000, 20230), (400, 7)):
        out = tmp_path / f"g{seed}"
        generate_submission(out, employers=employers, seed=seed, tax_year=TAX_YEAR, params=params)
        times.append(pl.read_csv(out / "applications.csv", infer_schema=False).get_column("received_at"))
    at = pl.concat(times).str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=True)
    local = at.dt.replace_time_zone("America/New_York", non_existent="null", ambiguous="earliest")
    assert local.null_count() == 0
    assert at.dt.hour().min() >= 8 and at.dt.hour().max() < 18


def test_mean_employees_gives_smaller_employers(tmp_path, params, generated):
    """``mean_employees`` (the bench's held-out-like sets: 4.2) draws fewer employees per employer
    from the same stream; the default is the generator's as before; 1 or less is refused."""
    default, _ = generated
    small = generate_submission(tmp_path / "small", employers=EMPLOYERS, seed=20240201, tax_year=TAX_YEAR,
                                params=params, groups_and_fiscal=False, mean_employees=3.0)
    assert small.employers == default.employers
    assert small.employees < default.employees and small.payroll_rows < default.payroll_rows
    assert 2.0 < small.employees / small.employers < 4.0
    with pytest.raises(ValueError, match="mean_employees"):
        generate_submission(tmp_path / "bad", employers=5, seed=1, mean_employees=1.0)
