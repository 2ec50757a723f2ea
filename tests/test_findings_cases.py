"""Runs the worked examples of audit findings (spec section 9a; ``tests/cases/e-f-findings.yaml``):
annual and quarterly runs into a ledger, then findings recorded and withdrawn, then the credit
certified, the certificates, the recapture rows, the cap used and the good-faith rows compared with
the expected values. In-process (no Prefect, no documents): a few seconds for the whole file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest
import yaml

from transforms import schema
from transforms.award import finding_acts as acts
from transforms.award import findings as fnd
from transforms.award import ledger
from transforms.award.decide import decide, empty_decisions
from transforms.products.award_file import award_rows
from transforms.products.finding_documents import ledger_recapture, recapture_row
from transforms.products.good_faith import good_faith_rows
from transforms.reference.parameters import load_parameters
from transforms.rules.engine import CreditInputs, compute_credits
from transforms.runs.annual import employee_years_of
from transforms.runs.quarterly import employer_estimates_output
from transforms.runs.record import new_run_id
from transforms.settings import AllocationSettings
from transforms.synthetic.scenario import build_frames

PARAMS = load_parameters()
FILE = Path(__file__).parent / "cases" / "e-f-findings.yaml"


def _cases():
    for case in yaml.safe_load(FILE.read_text())["findings"]:
        yield pytest.param(case, id=case["id"])


def _day(v) -> dt.date:
    return v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v))


def _record(kind: str, tax_year: int, on: dt.date, approval_year: int, cap_cents: int = 0, quarter=None) -> dict:
    now = ledger.now_utc()
    return {"run_id": new_run_id(kind, tax_year, "cases000"), "kind": kind, "tax_year": tax_year, "quarter": quarter,
            "as_of": on, "approval_year": approval_year, "policy": "fcfs", "cap_cents": cap_cents, "settings_json": "{}",
            "params_version": PARAMS.version, "inputs_sha256": "", "status": "completed", "started_at": now,
            "committed_at": now, "summary_json": "{}"}


class Ledger:
    """A ledger and the runs and acts of a case on it, as the commands make them."""

    def __init__(self, workdir: Path, frames: dict):
        self.workdir, self.frames = workdir, frames
        self.con = ledger.connect(workdir / "impcredit.duckdb")
        self.reversals: list[dict] = []

    def credits(self, tax_year: int, as_of: dt.date, quarter: int | None = None):
        return compute_credits(CreditInputs.from_frames(self.frames), tax_year, as_of, PARAMS, quarter=quarter)

    def annual(self, tax_year: int, as_of: dt.date, cap: float | None = None) -> None:
        result = self.credits(tax_year, as_of)
        computed = employee_years_of(result)
        result.employees, result.applications = fnd.apply(result.employees, result.applications,
                                                          fnd.read_findings(self.con))
        y = as_of.year
        cap_cents = int(round((cap if cap is not None else PARAMS.value("program.annual_cap", as_of)) * 100))
        ids = result.applications["application_id"].to_list()
        run = _record("annual", tax_year, as_of, y, cap_cents)
        d = decide(result.applications, approval_year=y, cap_cents=cap_cents,
                   approved_before_cents=ledger.awarded_in_year(self.con, y), final=ledger.final_decisions(self.con, ids),
                   waitlist=ledger.carried_waitlist(self.con, y), settings=AllocationSettings(), run_id=run["run_id"])
        ledger.commit_run(self.con, run, d.new, [], cap_cents, employee_years=computed)

    def quarterly(self, tax_year: int, quarter: int, as_of: dt.date) -> None:
        result = self.credits(tax_year, as_of, quarter=quarter)
        run = _record("quarterly", tax_year, as_of, tax_year + 1, quarter=quarter)
        est = employer_estimates_output(result, tax_year, quarter)
        (self.workdir / "estimates").mkdir(exist_ok=True)
        est.select("application_id", "employer_id", (pl.col("projected_credit") * 100).round().cast(pl.Int64).alias(
            "projected_cents")).write_parquet(self.workdir / "estimates" / f"{run['run_id']}.parquet")
        ledger.commit_run(self.con, run, empty_decisions(), [], 0)

    def record(self, a: dict) -> None:
        app = ledger.current_decisions(self.con, [a["record"]]).row(0, named=True)
        on = _day(a["date"])
        got = acts.record(self.con, application_id=a["record"], kind=a["kind"], employees=tuple(a.get("employees", [])),
                          tax_years=tuple(a.get("tax_years", [])), knowing=bool(a["knowing"]), reason=a["reason"],
                          found_on=on, run=_record("finding", app["tax_year"], on, app["approval_year"]))
        assert got.created and got.finding.finding_id == a.get("id", got.finding.finding_id)

    def withdraw(self, a: dict) -> None:
        f = next(f for f in fnd.read_findings(self.con) if f.finding_id == a["withdraw"])
        app = ledger.current_decisions(self.con, [f.application_id]).row(0, named=True)
        on = _day(a["date"])
        cap = int(PARAMS.value("program.annual_cap", on) * 100)
        got = acts.withdraw(self.con, a["withdraw"], a["reason"], on, _record("withdrawal", app["tax_year"], on,
                                                                              app["approval_year"]), statutory_cap_cents=cap)
        apps = ledger.current_decisions(self.con, [e["application_id"] for e in got.effects])
        by = {r["application_id"]: r for r in apps.iter_rows(named=True)}
        self.reversals += [recapture_row(got.finding, by[e["application_id"]], e["certified_before_cents"],
                                         e["certified_now_cents"], PARAMS, reversal=True) for e in got.effects]


def _money(v) -> float:
    return round(float(v), 2)


def _check_rows(got: list[dict], want: list[dict], what: str) -> None:
    assert len(got) == len(want), f"{what}: {got}"
    for g, w in zip(got, want, strict=True):
        for k, v in w.items():
            g_v = g[k]
            if isinstance(v, float | int) and not isinstance(v, bool):
                assert _money(g_v) == pytest.approx(v, abs=0.001), f"{what} {k}: {g_v} != {v}"
            else:
                assert str(g_v) == str(v), f"{what} {k}: {g_v!r} != {v!r}"


def scenario_frames(s: dict) -> dict[str, pl.DataFrame]:
    """``build_frames`` of a scenario, with its estimate requests (``requests``: request_id,
    received_at, New Jersey time): requests of its employer claiming its roster (spec section 9)."""
    frames = build_frames(s, PARAMS)
    reqs = s.get("requests") or []
    if reqs:
        nj = ZoneInfo(schema.NJ_TZ)
        app = frames["applications"].row(0, named=True)
        rows = [{"request_id": r["request_id"], "employer_id": app["employer_id"], "employer_name": app["employer_name"],
                 "tax_type": app["tax_type"], "tax_year": app["tax_year"],
                 "received_at": dt.datetime.fromisoformat(str(r["received_at"])).replace(tzinfo=nj).astimezone(dt.UTC),
                 "received_date": dt.datetime.fromisoformat(str(r["received_at"])).date(), "period_start": None,
                 "period_end": None, "source_file": "estimate_requests.csv", "source_sheet": None, "source_line": 2}
                for r in reqs]
        frames["estimate_requests"] = pl.DataFrame(rows, schema=schema.ESTIMATE_REQUESTS)
        roster = frames["roster"]
        frames["roster"] = pl.concat([roster, *[roster.with_columns(pl.lit(r["request_id"]).alias("application_id"))
                                                for r in reqs]])
    return frames


@pytest.mark.parametrize("case", list(_cases()))
def test_findings_case(case, tmp_path):
    frames_each = [scenario_frames(s) for s in case["scenarios"]]
    frames = {k: pl.concat([f[k] for f in frames_each if k in f]) for k in {k for f in frames_each for k in f}}
    led = Ledger(tmp_path, frames)
    try:
        for step in case["steps"]:
            if "annual" in step:
                s = step["annual"]
                led.annual(int(s["tax_year"]), _day(s["as_of"]), s.get("cap"))
            elif "quarterly" in step:
                s = step["quarterly"]
                led.quarterly(int(s["tax_year"]), int(s["quarter"]), _day(s["as_of"]))
            elif "record" in step:
                led.record(step)
            else:
                led.withdraw(step)
        _expect(led, case["expect"])
    finally:
        led.con.close()


def _expect(led: Ledger, want: dict) -> None:
    con = led.con
    cur = ledger.current_decisions(con)
    findings = fnd.read_findings(con)
    for app, v in (want.get("decisions") or {}).items():
        row = cur.filter(pl.col("application_id") == app).row(0, named=True)
        status, _, reasons = v.partition(" ")
        assert (row["status"], row["reasons"]) == (status, reasons), (app, row["status"], row["reasons"])
    for app, v in (want.get("certified") or {}).items():
        assert cur.filter(pl.col("application_id") == app)["awarded_cents"].item() / 100 == pytest.approx(v, abs=0.001), app
    if "certificates" in want:
        rows = award_rows(ledger.decision_rows(con, cur["application_id"].to_list()), cur)
        got = rows.select("certificate_no", "record_type", (pl.col("certified_cents") / 100).alias("certified_credit"),
                          (pl.col("change_cents") / 100).alias("change")).to_dicts()
        _check_rows(got, want["certificates"], "certificates")
    if "recapture" in want:
        got = ledger_recapture(con, findings, cur, PARAMS) or []
        _check_rows(sorted(got, key=lambda r: (r["finding_date"], r["application_id"])), want["recapture"], "recapture")
    if "reversals" in want:
        _check_rows(led.reversals, want["reversals"], "reversals")
    for year, v in (want.get("cap_used") or {}).items():
        assert ledger.awarded_in_year(con, int(year)) / 100 == pytest.approx(v, abs=0.001), f"cap used in {year}"
    for key, v in (want.get("employees") or {}).items():
        app, emp, t, as_of = key.split()
        result = led.credits(int(t), _day(as_of))
        e, _ = fnd.apply(result.employees, result.applications, findings)
        row = e.filter((pl.col("application_id") == app) & (pl.col("employee_id") == emp)).row(0, named=True)
        status, _, reasons = v.partition(" ")
        assert (row["status"], row["reasons"]) == (status, reasons), key
    for year, rows in (want.get("good_faith") or {}).items():
        got = good_faith_rows(con, led.workdir, int(year), cur.filter(pl.col("tax_year") == int(year)), findings)
        _check_rows(got.to_dicts(), rows, f"good faith {year}")
