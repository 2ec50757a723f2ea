"""The ssn hash key is a secret: never a flow or task parameter, result, artifact, log line or cache
key, so neither Prefect's database nor the workdir nor the outputs ever hold it."""

from __future__ import annotations

import base64
import datetime as dt
import os
import pickle
from pathlib import Path

import pytest

from flows._env import load_key
from transforms.pii import HashKey
from transforms.reference.parameters import load_parameters
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

KNOWN_KEY = "known-test-key-" + "7f3a9c1e5b2d4a6f8e0c" * 2  # 55 characters, easy to search for


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_key_is_masked_and_never_pickled():
    key = load_key({"IMPCREDIT_HMAC_KEY": KNOWN_KEY})
    assert key.key == KNOWN_KEY.encode() and key.source == "env"
    assert KNOWN_KEY not in repr(key) and KNOWN_KEY not in str(key)
    with pytest.raises(TypeError, match="not serialised"):
        pickle.dumps(key)
    assert HashKey(KNOWN_KEY.encode(), "env") == key


def test_a_flow_run_stores_the_key_nowhere(prefect_harness, tmp_path, monkeypatch):
    """Run the annual flow with a known key, then search Prefect's database and home, the workdir
    and the outputs for it (as text, as the hex and as the base64 of its bytes)."""
    import prefect.settings

    from flows.annual import annual_flow
    from flows.quarterly import quarterly_flow

    monkeypatch.setenv("IMPCREDIT_HMAC_KEY", KNOWN_KEY)
    sub = tmp_path / "sub"
    generate_submission(sub, employers=6, seed=3, tax_year=2023)
    work, out = tmp_path / "work", tmp_path / "out"
    summary = annual_flow(input_dir=sub, tax_year=2023, as_of=dt.date(2024, 7, 1), out_dir=out, workdir=work,
                          params=load_parameters(), settings=Settings())
    assert summary.key_source == "env" and summary.applications > 0
    quarterly_flow(input_dir=sub, tax_year=2023, quarter=2, as_of=dt.date(2024, 7, 1), out_dir=tmp_path / "q",
                   workdir=work, params=load_parameters(), settings=Settings())

    db_url = prefect.settings.get_current_settings().server.database.connection_url.get_secret_value()
    db_dir = Path(db_url.split("///", 1)[1]).parent
    roots = [db_dir, Path(os.environ["PREFECT_HOME"]), work, out, tmp_path / "q"]
    searched = [p for r in roots for p in _files(r)]
    assert any(p.name.startswith("prefect-test.db") for p in searched), "the harness database was not searched"
    needles = [KNOWN_KEY.encode(), KNOWN_KEY.encode().hex().encode(), base64.b64encode(KNOWN_KEY.encode())[:40]]
    for path in searched:
        data = path.read_bytes()
        assert not any(n in data for n in needles), f"the ssn hash key is stored in {path}"
