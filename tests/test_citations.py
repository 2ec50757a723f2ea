"""Citations an auditor accepts (issue 23, item 7): each parameter value cites the government's own
publication where ``../shared/reference/primary-sources.md`` lists one; official text on another
host, a derived value and a secondary source are each said to be what they are."""

from __future__ import annotations

import re
from datetime import date
from urllib.parse import urlparse

import pytest
import yaml
from typer.testing import CliRunner

from transforms.reference.parameters import load_parameters
from transforms.reference.values import ParameterError

P = load_parameters()

# the government's own publications of primary-sources.md ("GOV"), by the values they state
NJDOL_2017 = "http://www.nj.gov/labor/lwdhome/press/2017/20171228BenefitsRatesRelease.html"
NJDOL_2019 = "https://nj.gov/labor/lwdhome/press/2019/20191015_minwage.shtml"
NJDOL_2020 = "https://www.nj.gov/labor/lwdhome/press/2020/20200930_minimumwage.shtml"
A15 = "https://www.njleg.state.nj.us/2018/Bills/A0500/15_S1.HTM"
SSA = "https://ssa.gov/OACT/COLA/autoAdj.html"
GOVERNMENT = {
    ("minimum_wage.general", date(2014, 1, 1)): "https://www.njleg.state.nj.us/2018/Bills/SCR/109_I1.HTM",
    ("minimum_wage.general", date(2016, 1, 1)): NJDOL_2017,
    ("minimum_wage.general", date(2017, 1, 1)): NJDOL_2017,
    ("minimum_wage.general", date(2018, 1, 1)): NJDOL_2017,
    ("minimum_wage.general", date(2019, 1, 1)): A15,
    ("minimum_wage.general", date(2019, 7, 1)): A15,
    ("minimum_wage.general", date(2020, 1, 1)): NJDOL_2019,
    ("minimum_wage.general", date(2021, 1, 1)): NJDOL_2020,
    ("minimum_wage.seasonal_small", date(2020, 1, 1)): NJDOL_2019,
    ("minimum_wage.seasonal_small", date(2021, 1, 1)): NJDOL_2020,
    ("minimum_wage.agricultural", date(2020, 1, 1)): NJDOL_2019,
    ("minimum_wage.agricultural", date(2021, 1, 1)): NJDOL_2020,
    ("counterfactual.old_law_minimum_wage", date(2020, 1, 1)): NJDOL_2019,
    **{("payroll_taxes.ss_wage_base", date(y, 1, 1)): SSA for y in range(2018, 2026)},
    ("payroll_taxes.nj_wage_base", date(2018, 1, 1)): NJDOL_2017,
    ("payroll_taxes.nj_wage_base", date(2022, 1, 1)): "https://nj.gov/labor/lwdhome/press/2021/20211222_benefitrateincrease.shtml",
    ("payroll_taxes.nj_wage_base", date(2025, 1, 1)): "https://www.nj.gov/labor/lwdhome/press/2025/20251229_newbenefitrates2026.shtml",
    ("payroll_taxes.nj_wage_base", date(2026, 1, 1)): "https://www.nj.gov/labor/lwdhome/press/2025/20251229_newbenefitrates2026.shtml",
    ("payroll_taxes.futa_rate", date(2022, 1, 1)): "https://www.govinfo.gov/content/pkg/FR-2022-11-30/html/2022-26085.htm",
}
# what the previous citations were: news, payroll vendors and document-sharing sites
NOT_GOVERNMENT = {"dailyvoice.com", "www.nbcphiladelphia.com", "www.checkwriters.com", "vdocuments.mx", "docslib.org",
                  "shorelocalnews.com", "jerseybee.org", "www.vandallp.com", "compensationresources.com",
                  "abacuspay.com", "www.einpresswire.com", "www.cbiz.com", "www.uwcstrategy.org", "njbia.org",
                  "gunbycpa.com", "morriscountyedc.org", "acchamber.com", "lsnjlaw.org", "njbmagazine.com",
                  "njlm.org", "business.visitlbiregion.com", "news.wolterskluwerlb.com", "lrus.wolterskluwer.com",
                  "theridgewoodblog.net", "blogs.payroll.org", "www.ebglaw.com", "taxnews.ey.com", "self-law.org"}
GOVERNMENT_HOSTS = ("nj.gov", "www.nj.gov", "www.njleg.state.nj.us", "ssa.gov", "www.ssa.gov", "www.govinfo.gov",
                    "data.bls.gov")


def every_value():
    for name in P.series_names():
        for v in P.series(name).values:
            yield name, v


def test_each_value_cites_the_government_publication_the_table_lists():
    for (name, on), href in GOVERNMENT.items():
        c = P.citation(name, on)
        assert (c.href, c.source) == (href, "government"), (name, on)


def test_a_citation_is_what_it_says_it_is():
    kinds = {}
    for name, v in every_value():
        c = v.citation
        host = urlparse(c.href).hostname
        kinds[c.source] = kinds.get(c.source, 0) + 1
        if c.source == "government":
            assert host in GOVERNMENT_HOSTS, (name, v.effective, c.href)
        if host in NOT_GOVERNMENT:  # kept only where no primary source is known, and said so
            assert c.source == "secondary", (name, v.effective, c.href)
            assert "(no " in c.title, c.title  # the title says what was not found
        if c.source == "secondary":
            assert c.label.endswith("[SECONDARY SOURCE: no government publication found]")
    assert set(kinds) == {"government", "official_text", "derived", "secondary"}
    assert kinds["government"] >= len(GOVERNMENT)


@pytest.mark.parametrize(("name", "on", "source"), [
    ("minimum_wage.general", date(2023, 1, 1), "secondary"),  # no NJDOL release of 2023 found
    ("minimum_wage.seasonal_small", date(2024, 1, 1), "official_text"),  # N.J.A.C. 12:56-3.2(a)
    ("minimum_wage.seasonal_small", date(2026, 1, 1), "derived"),  # 12:56-3.2(b)7: +$0.70
    ("minimum_wage.tipped", date(2020, 1, 1), "derived"),  # general less the tip credit of 12:56-3.5
    ("payroll_taxes.ss_wage_base", date(2026, 1, 1), "derived"),  # from SSA's inputs
    ("counterfactual.cpi_w_august", date(2023, 8, 1), "secondary"),  # no BLS release seen
    ("counterfactual.old_law_minimum_wage", date(2023, 1, 1), "derived"),
])
def test_what_is_not_a_government_publication_is_marked(name, on, source):
    assert P.citation(name, on).source == source


def test_a_reference_without_its_source_is_refused(tmp_path):
    import shutil

    from transforms.reference.parameters import DEFAULT_DIR

    d = tmp_path / "reference"
    shutil.copytree(DEFAULT_DIR, d)
    path = d / "federal.yaml"
    raw = yaml.safe_load(path.read_text())
    del raw["series"]["minimum_wage"]["values"][0]["reference"]["source"]
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ParameterError, match=r"federal\.minimum_wage, values\[0\].*reference\.source"):
        load_parameters(d)


def test_settings_prints_each_value_with_its_kind_of_source():
    from flows.cli import app

    r = CliRunner().invoke(app, ["settings"], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    records: list[str] = []  # a parameter row with the lines its citation folds onto
    for line in r.output.splitlines():
        if re.search(r"\s\d{4}-\d{2}-\d{2}\s", line) or not records:
            records.append(line)
        else:
            records[-1] += line

    def row(*words: str) -> str:
        return " ".join(next(x for x in records if all(w in x for w in words)).split())

    assert "[SECONDARY SOURCE: no government publication found]" in row("2023-01-01", "14.13 USD/hour")
    got = row("2021-01-01", "12 USD/hour")
    assert "NJDOL press release 9/30/2020" in got and "[government publication]" in got
