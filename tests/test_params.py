"""Tests of the reference parameters (data/reference/*.yaml) and their loader (transforms/params.py)."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.reference.parameters import (
    DEFAULT_DIR,
    Citation,
    MissingParameterError,
    ParameterError,
    Parameters,
    derive_counterfactual,
    load_parameters,
)


@pytest.fixture(scope="module")
def p() -> Parameters:
    return load_parameters()


# --------------------------------------------------------------------------- shipped data


def test_default_dir_is_repo_data_reference():
    assert Path(__file__).resolve().parents[1] / "data" / "reference" == DEFAULT_DIR
    assert load_parameters() is load_parameters(DEFAULT_DIR)  # cached per resolved dir


@pytest.mark.parametrize(
    ("name", "on", "expected"),
    [
        ("minimum_wage.general", date(2019, 6, 30), 8.85),
        ("minimum_wage.general", date(2019, 7, 1), 10.00),
        ("minimum_wage.general", date(2023, 5, 1), 14.13),
        ("minimum_wage.general", date(2026, 12, 31), 15.92),
        ("minimum_wage.general", date(2016, 6, 1), 8.38),
        ("minimum_wage.tipped", date(2019, 6, 30), 2.13),
        ("minimum_wage.tipped", date(2019, 7, 1), 2.63),
        ("minimum_wage.tipped", date(2021, 3, 1), 4.13),
        ("minimum_wage.tipped", date(2026, 1, 1), 6.05),
        ("minimum_wage.seasonal_small", date(2019, 7, 1), 8.85),
        ("minimum_wage.seasonal_small", date(2020, 1, 1), 10.30),
        ("minimum_wage.agricultural", date(2019, 12, 31), 8.85),
        ("minimum_wage.agricultural", date(2022, 6, 1), 11.05),
        ("minimum_wage.agricultural", date(2025, 6, 1), 13.40),
        ("counterfactual.old_law_minimum_wage", date(2020, 1, 1), 8.98),
        ("counterfactual.old_law_minimum_wage", date(2023, 1, 1), 10.47),
        ("federal.minimum_wage", date(2026, 1, 1), 7.25),
        ("program.annual_cap", date(2024, 1, 1), 10_000_000),
    ],
)
def test_spot_values(p, name, on, expected):
    assert p.value(name, on) == pytest.approx(expected, abs=1e-9)


def test_year_values(p):
    assert p.year_value("payroll_taxes.nj_wage_base", 2023) == 41_100
    assert p.year_value("payroll_taxes.ss_wage_base", 2026) == 184_500
    assert p.year_value("payroll_taxes.ss_rate", 2019) == pytest.approx(0.062)
    assert p.year_value("payroll_taxes.medicare_rate", 2024) == pytest.approx(0.0145)
    assert p.year_value("payroll_taxes.futa_rate", 2021) == pytest.approx(0.006)
    assert p.year_value("payroll_taxes.futa_wage_base", 2018) == 7000
    assert p.year_value("minimum_wage.general", 2019) == 8.85  # January 1 value
    assert p.year_value("program.first_tax_year", 2030) == 2019  # open-ended
    bases = [p.year_value("payroll_taxes.nj_wage_base", y) for y in range(2018, 2027)]
    assert bases == [33700, 34400, 35300, 36200, 39800, 41100, 42300, 43300, 44800]


def test_deadlines(p):
    assert p.date_value("program.application_deadline_general") == date(2025, 1, 1)
    assert p.date_value("program.application_deadline_tipped") == date(2025, 1, 1)
    assert p.date_value("program.application_deadline_seasonal_small") == date(2028, 1, 1)
    assert p.date_value("program.application_deadline_agricultural") == date(2028, 1, 1)
    with pytest.raises(ParameterError, match="date series"):
        p.value("program.application_deadline_general", date(2020, 1, 1))
    with pytest.raises(ParameterError, match="not a date series"):
        p.date_value("program.annual_cap")


def test_pre_2019_one_statewide_rate(p):
    for y in range(2014, 2019):
        d = date(y, 1, 1)
        g = p.value("minimum_wage.general", d)
        assert p.value("minimum_wage.seasonal_small", d) == g
        assert p.value("minimum_wage.agricultural", d) == g
        assert p.value("counterfactual.old_law_minimum_wage", d) == g


def test_every_value_has_a_citation(p):
    names = p.series_names()
    assert len(names) == 25
    for name in names:
        s = p.series(name)
        assert s.values, name
        for e in s.values:
            c = p.citation(name, e.effective)
            assert isinstance(c, Citation)
            assert c == e.citation
            assert c.title.strip(), (name, e.effective)
            assert c.href.startswith(("http://", "https://")), (name, e.effective)
            assert e.confidence in ("VERIFIED", "DERIVED", "RECALLED"), (name, e.effective)


def test_files_and_version(p):
    assert set(p.files) == {
        "minimum_wage.yaml",
        "counterfactual.yaml",
        "federal.yaml",
        "payroll_taxes.yaml",
        "program.yaml",
        "overtime.yaml",
        "enforcement.yaml",
    }
    assert all(len(h) == 64 for h in p.files.values())
    assert len(p.version) == 16 and int(p.version, 16) >= 0


def test_schedule_pieces(p):
    pieces = p.schedule("minimum_wage.general", date(2018, 12, 15), date(2020, 1, 5))
    assert pieces == [
        (date(2018, 12, 15), date(2018, 12, 31), 8.60),
        (date(2019, 1, 1), date(2019, 6, 30), 8.85),
        (date(2019, 7, 1), date(2019, 12, 31), 10.00),
        (date(2020, 1, 1), date(2020, 1, 5), 11.00),
    ]
    assert p.schedule("minimum_wage.general", date(2019, 3, 1), date(2019, 3, 1)) == [
        (date(2019, 3, 1), date(2019, 3, 1), 8.85)
    ]
    with pytest.raises(MissingParameterError):
        p.schedule("minimum_wage.general", date(2026, 6, 1), date(2027, 1, 1))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["minimum_wage.general", "minimum_wage.tipped", "minimum_wage.agricultural"]),
    st.dates(date(2014, 1, 1), date(2026, 12, 31)),
    st.integers(0, 900),
)
def test_schedule_is_contiguous_and_agrees_with_value(name, start, length):
    p = load_parameters()
    end = min(start + timedelta(days=length), date(2026, 12, 31))
    pieces = p.schedule(name, start, end)
    assert pieces[0][0] == start and pieces[-1][1] == end
    for (_, e1, _), (s2, _, _) in zip(pieces, pieces[1:], strict=False):
        assert s2 == e1 + timedelta(days=1)
    for a, b, v in pieces:
        assert a <= b
        assert p.value(name, a) == v and p.value(name, b) == v


# --------------------------------------------------------------------------- derivation


def test_derivation_reproduces_pre_2020_history(p):
    cpi = p.values_by_year("counterfactual.cpi_w_august")
    path = derive_counterfactual(cpi, 2014, 8.25, 2026)
    expected = {2015: 8.38, 2016: 8.38, 2017: 8.44, 2018: 8.60, 2019: 8.85}
    for y, v in expected.items():
        assert path[y] == v
        assert p.value("counterfactual.old_law_minimum_wage", date(y, 1, 1)) == v
        assert p.value("minimum_wage.general", date(y, 1, 1)) == v
    assert path[2020] == 8.99  # the I-2 alternative (CPI-W formula throughout)


def test_derivation_with_njdol_anchor_reproduces_table(p):
    cpi = p.values_by_year("counterfactual.cpi_w_august")
    path = derive_counterfactual(cpi, 2019, 8.85, 2026, overrides={2020: 8.98})
    assert [path[y] for y in range(2021, 2027)] == [9.11, 9.64, 10.47, 10.83, 11.08, 11.39]
    for y in range(2019, 2027):
        assert path[y] == p.value("counterfactual.old_law_minimum_wage", date(y, 1, 1)), y


def test_derivation_without_anchor_is_research_set_a(p):
    cpi = p.values_by_year("counterfactual.cpi_w_august")
    path = derive_counterfactual(cpi, 2019, 8.85, 2026)
    assert [path[y] for y in range(2020, 2027)] == [8.99, 9.12, 9.65, 10.49, 10.85, 11.11, 11.42]


@pytest.mark.parametrize(
    ("series", "year", "expected"),
    [  # published rates set by CPI (not a statutory step): one CPI step from the prior published rate
        ("minimum_wage.agricultural", 2021, 10.44),
        ("minimum_wage.agricultural", 2022, 11.05),
        ("minimum_wage.agricultural", 2023, 12.01),
        ("minimum_wage.seasonal_small", 2023, 12.93),
        ("minimum_wage.general", 2023, 14.13),
        ("minimum_wage.general", 2025, 15.49),
        ("minimum_wage.general", 2026, 15.92),
    ],
)
def test_cpi_reproduces_published_cpi_driven_rates(p, series, year, expected):
    cpi = p.values_by_year("counterfactual.cpi_w_august")
    prior = p.value(series, date(year - 1, 1, 1))
    assert derive_counterfactual(cpi, year - 1, prior, year)[year] == expected
    assert p.value(series, date(year, 1, 1)) == expected


def test_derivation_rounding_floor_and_errors():
    # 10.00 * 0.5% = 0.05 exactly -> +0.05; 10.00 * 0.05% = 0.005 -> half up -> +0.01
    assert derive_counterfactual({2001: 100.0, 2002: 100.5}, 2002, 10.0, 2003)[2003] == 10.05
    assert derive_counterfactual({2001: 100.0, 2002: 100.05}, 2002, 10.0, 2003)[2003] == 10.01
    # falling CPI: no decrease
    assert derive_counterfactual({2001: 100.0, 2002: 90.0}, 2002, 10.0, 2003)[2003] == 10.0
    # an override continues the path
    assert derive_counterfactual({2002: 100.0, 2003: 110.0}, 2002, 10.0, 2004, {2003: 20.0}) == {
        2002: 10.0,
        2003: 20.0,
        2004: 22.0,
    }
    with pytest.raises(MissingParameterError, match="cpi_w_august"):
        derive_counterfactual({2001: 100.0}, 2002, 10.0, 2003)


# --------------------------------------------------------------------------- 2027 is an error


def test_2027_is_missing_not_zero(p):
    with pytest.raises(MissingParameterError, match=r"minimum_wage\.general") as exc:
        p.value("minimum_wage.general", date(2027, 1, 1))
    assert "2027-01-01" in str(exc.value) and "minimum_wage.yaml" in str(exc.value)
    with pytest.raises(MissingParameterError, match=r"payroll_taxes\.ss_wage_base") as exc:
        p.year_value("payroll_taxes.ss_wage_base", 2027)
    assert "2027" in str(exc.value) and "payroll_taxes.yaml" in str(exc.value)
    with pytest.raises(MissingParameterError, match="old_law_minimum_wage"):
        p.year_value("counterfactual.old_law_minimum_wage", 2027)
    with pytest.raises(MissingParameterError, match="cpi_w_august"):
        p.value("counterfactual.cpi_w_august", date(2026, 8, 1))
    assert issubclass(MissingParameterError, ParameterError) and issubclass(
        ParameterError, ValueError
    )


def test_before_first_value_and_unknown_name(p):
    with pytest.raises(
        MissingParameterError, match=r"minimum_wage\.general has no value for 2013-12-31"
    ):
        p.value("minimum_wage.general", date(2013, 12, 31))
    with pytest.raises(MissingParameterError, match=r"payroll_taxes\.nj_wage_base"):
        p.year_value("payroll_taxes.nj_wage_base", 2017)
    with pytest.raises(MissingParameterError, match="minimum_wage.generl"):
        p.value("minimum_wage.generl", date(2020, 1, 1))


# --------------------------------------------------------------------------- what-if overrides


def test_with_overrides(p):
    before_version = p.version
    q = p.with_overrides(
        {"program.annual_cap": 12_000_000.0, "minimum_wage.general@2023-01-01": 15.0}
    )
    assert q.value("program.annual_cap", date(2024, 6, 1)) == 12_000_000.0
    assert q.value("program.annual_cap", date(1950, 1, 1)) == 12_000_000.0  # effective 1900-01-01
    assert q.value("minimum_wage.general", date(2023, 5, 1)) == 15.0
    assert q.value("minimum_wage.general", date(2024, 5, 1)) == 15.13  # later values unchanged
    what_if = Citation(title="what-if override", href="https://impcredit.invalid/what-if", source="what-if")
    assert q.citation("minimum_wage.general", date(2023, 5, 1)) == what_if
    assert q.citation("program.annual_cap", date(2024, 1, 1)) == what_if
    assert q.version != before_version and len(q.version) == 16
    assert q.files == p.files
    # the original is unchanged
    assert p.version == before_version
    assert p.value("program.annual_cap", date(2024, 6, 1)) == 10_000_000
    assert p.value("minimum_wage.general", date(2023, 5, 1)) == 14.13
    assert p.citation("minimum_wage.general", date(2023, 5, 1)).href.startswith("https://")
    assert load_parameters().value("program.annual_cap", date(2024, 6, 1)) == 10_000_000


def test_overrides_insert_extend_and_reject(p):
    q = p.with_overrides({"minimum_wage.general@2027-01-01": 16.5})
    assert q.value("minimum_wage.general", date(2027, 6, 1)) == 16.5
    assert q.year_value("minimum_wage.general", 2027) == 16.5
    assert q.value("minimum_wage.general", date(2026, 6, 1)) == 15.92
    r = p.with_overrides({"program.application_deadline_general": date(2026, 1, 1)})
    assert r.date_value("program.application_deadline_general") == date(2026, 1, 1)
    assert (
        p.with_overrides({"program.annual_cap": 1.0}).version
        != p.with_overrides({"program.annual_cap": 2.0}).version
    )
    with pytest.raises(MissingParameterError):
        p.with_overrides({"program.annual_kap": 1.0})
    with pytest.raises(ParameterError, match="range"):
        p.with_overrides({"minimum_wage.general@2023-01-01": 1500.0})
    with pytest.raises(ParameterError):
        p.with_overrides({"minimum_wage.general@2023-13-01": 15.0})
    with pytest.raises(ParameterError):
        p.with_overrides({"program.annual_cap": "lots"})


# --------------------------------------------------------------------------- strictness


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "reference"
    shutil.copytree(DEFAULT_DIR, d)
    return d


def _edit(d: Path, file: str, fn) -> None:
    path = d / file
    raw = yaml.safe_load(path.read_text())
    fn(raw)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def _vals(raw, key):
    return raw["series"][key]["values"]


def _set_title(raw):
    _vals(raw, "general")[2]["reference"] = {"title": "  ", "href": "https://example.org"}


def _set_href(raw):
    _vals(raw, "general")[2]["reference"] = {"title": "x", "href": "docslib.org/doc"}


def _drop_reference(raw):
    del _vals(raw, "general")[2]["reference"]


def _swap_dates(raw):
    v = _vals(raw, "general")
    v[3]["effective"], v[4]["effective"] = v[4]["effective"], v[3]["effective"]


def _dup_date(raw):
    v = _vals(raw, "general")
    v[4]["effective"] = v[3]["effective"]


def _out_of_range(raw):
    _vals(raw, "general")[5]["value"] = 885.0


def _kt_before_last(raw):
    raw["series"]["general"]["known_through"] = date(2025, 12, 31)


def _unknown_series_key(raw):
    raw["series"]["general"]["units"] = "USD/hour"


def _bad_confidence(raw):
    _vals(raw, "general")[0]["confidence"] = "GUESSED"


def _string_value(raw):
    _vals(raw, "general")[0]["value"] = "8.25"


def _bool_value(raw):
    _vals(raw, "general")[0]["value"] = True


def _missing_range(raw):
    del raw["series"]["general"]["range"]


def _unknown_unit(raw):
    raw["series"]["general"]["unit"] = "USD/hr"


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (_drop_reference, "reference"),
        (_set_title, "title"),
        (_set_href, "href"),
        (_swap_dates, "strictly increasing"),
        (_dup_date, "duplicate effective date"),
        (_out_of_range, "outside range"),
        (_kt_before_last, "known_through"),
        (_unknown_series_key, "units"),
        (_bad_confidence, "confidence"),
        (_string_value, "value"),
        (_bool_value, "value"),
        (_missing_range, "range is required"),
        (_unknown_unit, "unit"),
    ],
)
def test_strictness(tmp_path, mutate, fragment):
    d = _copy(tmp_path)
    load_parameters(d)  # the unmutated copy loads
    _edit(d, "minimum_wage.yaml", mutate)
    with pytest.raises(ParameterError) as exc:
        load_parameters(d)  # re-read: the cache is keyed by content, not just the directory
    msg = str(exc.value)
    assert "minimum_wage.yaml" in msg
    assert "minimum_wage.general" in msg
    assert fragment in msg


def test_misspelled_references_key_fails(tmp_path):
    d = _copy(tmp_path)
    path = d / "minimum_wage.yaml"
    text = path.read_text()
    assert "      reference:\n" in text
    path.write_text(text.replace("      reference:\n", "      refernces:\n", 1))
    with pytest.raises(ParameterError) as exc:
        load_parameters(d)
    msg = str(exc.value)
    assert "minimum_wage.yaml" in msg and "minimum_wage.general" in msg
    assert "refernces" in msg and "values[0] (effective 2014-01-01)" in msg


def test_unknown_top_level_key_and_duplicate_yaml_key(tmp_path):
    d = _copy(tmp_path)
    _edit(d, "program.yaml", lambda raw: raw.update({"descripton": "typo"}))
    with pytest.raises(ParameterError, match=r"program\.yaml[\s\S]*descripton"):
        load_parameters(d)
    d2 = _copy(tmp_path / "b")
    path = d2 / "federal.yaml"
    path.write_text(
        path.read_text().replace(
            "    known_through: 2026-12-31\n",
            "    known_through: 2026-12-31\n    known_through: 2030-12-31\n",
        )
    )
    with pytest.raises(ParameterError, match=r"federal\.yaml[\s\S]*duplicate key"):
        load_parameters(d2)


def test_date_unit_rules(tmp_path):
    d = _copy(tmp_path)
    _edit(
        d,
        "program.yaml",
        lambda raw: raw["series"]["application_deadline_general"]["values"][0].update(
            {"value": 2025}
        ),
    )
    with pytest.raises(
        ParameterError, match=r"program\.application_deadline_general[\s\S]*not a date"
    ):
        load_parameters(d)
    d2 = _copy(tmp_path / "b")
    _edit(
        d2,
        "program.yaml",
        lambda raw: raw["series"]["application_deadline_general"].update({"range": [0, 1]}),
    )
    with pytest.raises(ParameterError, match="range must be omitted"):
        load_parameters(d2)


def test_new_year_added_to_copy_loads(tmp_path):
    """The README recipe: append a 2027 value and move known_through; lookups then work."""
    d = _copy(tmp_path)

    def add_2027(raw):
        s = raw["series"]["ss_wage_base"]
        s["values"].append(
            {
                "effective": date(2027, 1, 1),
                "value": 190000,
                "confidence": "VERIFIED",
                "reference": {
                    "title": "SSA test",
                    "href": "https://ssa.gov/OACT/COLA/autoAdj.html",
                    "source": "government",
                },
            }
        )
        s["known_through"] = date(2027, 12, 31)

    _edit(d, "payroll_taxes.yaml", add_2027)
    q = load_parameters(d)
    assert q.year_value("payroll_taxes.ss_wage_base", 2027) == 190000
    assert q.version != load_parameters().version
    with pytest.raises(MissingParameterError):
        q.year_value("payroll_taxes.nj_wage_base", 2027)
