"""One key for a lake and its ledger (spec section 8, issue 41 part 5) and a private workdir (issue 43 part 3).

A lake and its ledger record the fingerprint of the key they were written with; a command with
another key stops before it reads, in one line naming IMPCREDIT_HMAC_KEY_FILE and the two ways
on, and writes nothing. A workdir written before fingerprints is judged by its runs' keys and
then takes the key's fingerprint, said once. The key file is its owner's alone; the workdir's
folders are 0700 and its files 0600 whatever the umask. Real flows, real DuckDB, real CLI runs.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from transforms.pii import DEMO_KEY, KeyError_
from transforms.reference.parameters import load_parameters
from transforms.settings import Settings
from transforms.synthetic.generate import generate_submission

ROOT = Path(__file__).resolve().parents[1]
KEY_A = "a-first-agency-key-" + "3c9e1f" * 6
KEY_B = "a-second-agency-key-" + "d41b7a" * 6
AS_OF = dt.date(2024, 7, 1)
NO_KEY = ("IMPCREDIT_HMAC_KEY", "IMPCREDIT_HMAC_KEY_FILE", "IMPCREDIT_HMAC_KEY_BLOCK", "IMPCREDIT_REQUIRE_KEY")


def key_file(folder: Path, text: str, mode: int = 0o600) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"key-{abs(hash(text)) % 10**6}"
    path.write_text(text + "\n")
    path.chmod(mode)
    return path


def use_key(monkeypatch, path: Path | None) -> None:
    for name in NO_KEY:
        monkeypatch.delenv(name, raising=False)
    if path is not None:
        monkeypatch.setenv("IMPCREDIT_HMAC_KEY_FILE", str(path))


def annual(sub: Path, work: Path, out: Path):
    from flows.annual import annual_flow

    return annual_flow(input_dir=sub, tax_year=2023, as_of=AS_OF, out_dir=out, workdir=work,
                       params=load_parameters(), settings=Settings())


def runs_of(work: Path) -> list[str]:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return [r[0] for r in con.sql("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    finally:
        con.close()


def ledger_fingerprint(work: Path) -> list[str]:
    con = duckdb.connect(str(work / "impcredit.duckdb"), read_only=True)
    try:
        return [r[0] for r in con.sql("SELECT fingerprint FROM key_fingerprint").fetchall()]
    finally:
        con.close()


def forget_fingerprints(work: Path) -> None:
    """The workdir as the code before fingerprints left it: no field in the lake's manifest, a
    ledger of schema 5."""
    manifest = work / "lake" / "_manifest.json"
    m = json.loads(manifest.read_text())
    m.pop("key_fingerprint")
    manifest.write_text(json.dumps(m, indent=1, sort_keys=True))
    con = duckdb.connect(str(work / "impcredit.duckdb"))
    con.execute("DROP TABLE key_fingerprint")
    con.execute("DELETE FROM schema_version WHERE version = 6")
    con.close()


@pytest.fixture(scope="module")
def sub(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("one-key") / "sub"
    generate_submission(folder, employers=6, seed=3, tax_year=2023)
    return folder


# --- the key itself ---------------------------------------------------------------------------------

def test_a_key_file_open_to_others_is_refused_naming_chmod_600(tmp_path):
    from flows._env import load_key

    open_file = key_file(tmp_path, KEY_A, 0o644)
    with pytest.raises(KeyError_) as exc:
        load_key({"IMPCREDIT_HMAC_KEY_FILE": str(open_file)})
    assert f"chmod 600 {open_file}" in str(exc.value) and "0644" in str(exc.value) and "\n" not in str(exc.value)
    open_file.chmod(0o640)  # the group too
    with pytest.raises(KeyError_, match="chmod 600"):
        load_key({"IMPCREDIT_HMAC_KEY_FILE": str(open_file)})
    open_file.chmod(0o600)
    assert load_key({"IMPCREDIT_HMAC_KEY_FILE": str(open_file)}).key == KEY_A.encode()
    for text in ("", "short"):  # empty or too short: refused, as before
        with pytest.raises(KeyError_, match="at least 32 characters"):
            load_key({"IMPCREDIT_HMAC_KEY_FILE": str(key_file(tmp_path / text, text))})


def test_the_demo_keys_text_given_by_value_is_the_demo_key_refused_by_a_real_run(monkeypatch):
    from flows import _env

    demo = DEMO_KEY.decode()
    key = _env.load_key({"IMPCREDIT_HMAC_KEY": demo})
    assert key.is_demo and key.source == "demo"  # the CLI's demo says so, as with no key
    with pytest.raises(KeyError_) as exc:
        _env.load_key({"IMPCREDIT_HMAC_KEY": demo, "IMPCREDIT_REQUIRE_KEY": "1"})
    assert str(exc.value).startswith("no ssn hash key (the built-in demo key's text was given as the key)")
    use_key(monkeypatch, None)
    monkeypatch.setenv("IMPCREDIT_HMAC_KEY", demo)
    with pytest.raises(KeyError_) as exc:
        _env.require_real_key()  # a deployment: refused like no key (it ran before)
    assert str(exc.value) == _env.DEMO_KEY_REFUSED
    monkeypatch.setenv("IMPCREDIT_HMAC_KEY", KEY_A)
    _env.require_real_key()


def test_the_fingerprint_is_an_hmac_of_a_label_never_the_key():
    import hashlib
    import hmac

    from transforms.pii import key_of

    key = key_of(KEY_A.encode(), "env")
    assert key.fingerprint == hmac.new(KEY_A.encode(), b"impcredit key fingerprint v1", hashlib.sha256).hexdigest()
    assert KEY_A not in key.fingerprint and key.fingerprint != key_of(KEY_B.encode(), "env").fingerprint


# --- one key for a workdir: flows ----------------------------------------------------------------------

def test_a_second_key_stops_every_run_before_it_reads_and_writes_nothing(prefect_harness, sub, tmp_path,
                                                                          monkeypatch):
    from flows.quarterly import quarterly_flow
    from flows.whatif import whatif_flow
    from transforms.ingest import ingest_folder
    from transforms.one_key import KeyChanged
    from transforms.pii import key_of

    work = tmp_path / "work"
    use_key(monkeypatch, key_file(tmp_path / "keys", KEY_A))
    old = os.umask(0o022)  # the default umask: the workdir is private all the same
    try:
        first = annual(sub, work, tmp_path / "out-a")
    finally:
        os.umask(old)
    assert first.applications > 0 and first.key_source.startswith("file:")
    fingerprint = key_of(KEY_A.encode(), "x").fingerprint
    manifest = (work / "lake" / "_manifest.json").read_bytes()
    assert json.loads(manifest)["key_fingerprint"] == fingerprint and ledger_fingerprint(work) == [fingerprint]
    # issue 43: the workdir's folders 0700, its files 0600 (lake parts, manifest, ledger, locks)
    modes = {p.relative_to(work).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in [work, *work.rglob("*")]}
    assert any(p.endswith(".parquet") for p in modes) and "impcredit.duckdb" in modes
    assert {p: m for p, m in modes.items() if (work / p).is_dir() and m != 0o700} == {}
    assert {p: m for p, m in modes.items() if (work / p).is_file() and m != 0o600} == {}
    # the shared outputs keep the umask (they hold no ssn)
    assert stat.S_IMODE((tmp_path / "out-a" / "awards.csv").stat().st_mode) == 0o644

    runs = runs_of(work)
    use_key(monkeypatch, key_file(tmp_path / "keys", KEY_B))
    for name, run in [
        ("annual", lambda: annual(sub, work, tmp_path / "out-b")),
        ("quarterly", lambda: quarterly_flow(input_dir=sub, tax_year=2023, quarter=2, as_of=AS_OF,
                                             out_dir=tmp_path / "out-b", workdir=work, params=load_parameters(),
                                             settings=Settings())),
        ("whatif", lambda: whatif_flow(input_dir=sub, tax_year=2023, as_of=AS_OF, out_dir=tmp_path / "out-b",
                                       workdir=work, params=load_parameters(), settings=Settings())),
    ]:
        with pytest.raises(KeyChanged) as exc:
            run()
        said = str(exc.value)
        assert "\n" not in said, name
        assert said.startswith(f"the lake {work / 'lake'} was written with another ssn hash key (fingerprint "
                               f"{fingerprint[:12]}) and this command has a configured key"), said
        assert "set IMPCREDIT_HMAC_KEY_FILE to the key they were written with" in said
        assert "start a new workdir and lake" in said
    assert not (tmp_path / "out-b").exists()
    assert runs_of(work) == runs and (work / "lake" / "_manifest.json").read_bytes() == manifest
    # the ingest itself (any route to the lake) refuses before it reads a part
    with pytest.raises(KeyChanged, match="this command has a configured key"):
        ingest_folder(sub, work, key_of(KEY_B.encode(), "env"))
    assert (work / "lake" / "_manifest.json").read_bytes() == manifest
    # the demo key is another key too
    use_key(monkeypatch, None)
    with pytest.raises(KeyChanged, match="this command has the built-in demo key"):
        annual(sub, work, tmp_path / "out-b")


def test_a_deployment_with_a_second_key_fails_in_one_line(prefect_harness, sub, tmp_path, monkeypatch):
    from flows import serve

    work = tmp_path / "work"
    use_key(monkeypatch, key_file(tmp_path / "keys", KEY_A))
    annual(sub, work, tmp_path / "out-a")
    runs = runs_of(work)
    monkeypatch.setenv("IMPCREDIT_INPUT", str(sub))
    monkeypatch.setenv("IMPCREDIT_WORKDIR", str(work))
    monkeypatch.setenv("IMPCREDIT_OUT", str(tmp_path / "served"))
    monkeypatch.setenv("IMPCREDIT_HMAC_KEY_FILE", str(key_file(tmp_path / "keys", KEY_B)))
    state = serve.scheduled_annual(tax_year=2023, as_of=AS_OF, return_state=True)
    assert state.is_failed(), state
    message = state.message
    assert "\n" not in message and "IMPCREDIT_HMAC_KEY_FILE" in message and "new workdir and lake" in message
    assert message.startswith(f"the lake {work / 'lake'} was written with another ssn hash key"), message
    assert not (tmp_path / "served").exists() and runs_of(work) == runs


def test_a_demo_workdir_is_refused_to_a_real_key(prefect_harness, sub, tmp_path, monkeypatch):
    """``make demo`` (or a command before the key was set) fills the workdir under the demo key;
    a run with the agency's key file then stops (it read the new files only, under the new key,
    and decided on two hashes of each person)."""
    work = tmp_path / "work"
    use_key(monkeypatch, None)
    annual(sub, work, tmp_path / "out-demo")
    runs = runs_of(work)
    use_key(monkeypatch, key_file(tmp_path / "keys", KEY_A))
    from transforms.one_key import KeyChanged

    with pytest.raises(KeyChanged) as exc:
        annual(sub, work, tmp_path / "out-real")
    assert str(exc.value).startswith(f"the lake {work / 'lake'} was written with the built-in demo key and this "
                                     "command has a configured key")
    assert runs_of(work) == runs and not (tmp_path / "out-real").exists()


# --- a workdir written before fingerprints ---------------------------------------------------------------

def test_an_old_workdir_takes_its_keys_fingerprint_and_says_so_once(prefect_harness, sub, tmp_path, monkeypatch):
    from flows import _env
    from transforms.one_key import KeyChanged
    from transforms.pii import demo_key

    work = tmp_path / "work"
    use_key(monkeypatch, None)
    annual(sub, work, tmp_path / "out-1")
    forget_fingerprints(work)
    runs = runs_of(work)

    # its runs were under the demo key: a real key is refused as a recorded demo fingerprint would be
    use_key(monkeypatch, key_file(tmp_path / "keys", KEY_A))
    with pytest.raises(KeyChanged, match="was written with the built-in demo key and this command has a configured"):
        annual(sub, work, tmp_path / "out-x")
    assert runs_of(work) == runs and "key_fingerprint" not in (work / "lake" / "_manifest.json").read_text()

    # the demo key again: recorded, and said once
    use_key(monkeypatch, None)
    said = _env.one_key(work, ("ledger", "lake"))
    assert said == (f"the lake {work / 'lake'} and the ledger {work / 'impcredit.duckdb'} were written before keys "
                    "were fingerprinted: from now on they record this command's key (the built-in demo key) and a "
                    "command with another key is refused (what was written before must be under this key: it cannot "
                    "be checked)")
    assert ledger_fingerprint(work) == [demo_key().fingerprint]
    annual(sub, work, tmp_path / "out-2")  # the ingest records the lake's
    assert json.loads((work / "lake" / "_manifest.json").read_text())["key_fingerprint"] == demo_key().fingerprint
    assert _env.one_key(work, ("ledger", "lake")) is None  # said once
    assert len(runs_of(work)) == len(runs) + 1


def test_an_old_workdir_with_runs_under_two_keys_is_refused_with_the_way_on(prefect_harness, sub, tmp_path,
                                                                              monkeypatch):
    """What the code before this change made of ``make demo`` then a run with the key file: runs
    under the demo key and under a configured key, the lake holding rows of both."""
    from transforms.one_key import KeyChanged

    work = tmp_path / "work"
    use_key(monkeypatch, None)
    annual(sub, work, tmp_path / "out-1")
    forget_fingerprints(work)
    con = duckdb.connect(str(work / "impcredit.duckdb"))
    con.execute("""INSERT INTO runs SELECT run_id || '-keyed', kind, tax_year, quarter, as_of, approval_year, policy,
                   cap_cents, settings_json, params_version, inputs_sha256, status, started_at, committed_at,
                   replace(summary_json, '"key_source": "demo"', '"key_source": "file:/etc/impcredit/key"') FROM runs""")
    con.close()
    runs = runs_of(work)
    for key in (None, key_file(tmp_path / "keys", KEY_A)):
        use_key(monkeypatch, key)
        with pytest.raises(KeyChanged) as exc:
            annual(sub, work, tmp_path / "out-2")
        said = str(exc.value)
        assert said.startswith(f"the ledger {work / 'impcredit.duckdb'} records runs under the built-in demo key and "
                               "under a configured key"), said
        assert "start a new workdir and lake" in said and "IMPCREDIT_HMAC_KEY_FILE" in said and "\n" not in said
    assert runs_of(work) == runs and not (tmp_path / "out-2").exists()


# --- the command line -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_cli_refuses_a_second_key_in_one_line_and_keeps_its_workdir_private(sub, tmp_path):
    """``make demo``'s workdir, then the agency's key file (scheduling.md's walk): exit 2, one line,
    nothing written. The shared API's Prefect home and database are the agency's alone."""
    home, work = tmp_path / "prefect-home", tmp_path / "work"
    e = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", *NO_KEY)}
    e.update(PREFECT_HOME=str(home), IMPCREDIT_API="shared", IMPCREDIT_API_IDLE_SECONDS="20", COLUMNS="100")

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT, env={**e, **extra},
                              capture_output=True, text=True, timeout=300, umask=0o022)

    try:
        r = cli("annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--out",
                str(tmp_path / "out"), "--workdir", str(work))
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        dbs = [p for p in home.glob("prefect.db*")]
        assert dbs and all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in dbs), dbs
        assert stat.S_IMODE(work.stat().st_mode) == 0o700
        assert stat.S_IMODE((work / "impcredit.duckdb").stat().st_mode) == 0o600
        runs = runs_of(work)
        key = str(key_file(tmp_path / "keys", KEY_A))
        for args in (["annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--out",
                      str(tmp_path / "out-real")],
                     ["ingest", "--input", str(sub), "--out", str(tmp_path / "ingest-out")],
                     ["explain", "--tax-year", "2023", "--employer", "100000001", "--employee", "E1"]):
            r = cli(*args, "--workdir", str(work), IMPCREDIT_HMAC_KEY_FILE=key)
            assert r.returncode == 2, (args, r.stdout, r.stderr)
            lines = [x for x in r.stderr.splitlines() if x.strip()]
            assert len(lines) == 1, r.stderr
            assert lines[0].startswith(f"error: the lake {work / 'lake'} was written with the built-in demo key"), lines
            assert "IMPCREDIT_HMAC_KEY_FILE" in lines[0] and "new workdir and lake" in lines[0]
        assert runs_of(work) == runs and not (tmp_path / "out-real").exists()
        open_key = key_file(tmp_path / "open", KEY_A, 0o644)
        r = cli("annual", "--input", str(sub), "--tax-year", "2023", "--as-of", "2024-07-01", "--out",
                str(tmp_path / "out-real"), "--workdir", str(tmp_path / "work-2"), IMPCREDIT_HMAC_KEY_FILE=str(open_key))
        assert r.returncode == 2 and f"chmod 600 {open_key}" in r.stderr, r.stderr
    finally:
        subprocess.run([sys.executable, "-m", "flows.cli", "api", "stop"], cwd=ROOT, env=e, capture_output=True,
                       timeout=60)
