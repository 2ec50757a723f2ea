"""The layout keeps its promises (docs/architecture.md): no import circle anywhere, the core
(``transforms``) imports neither Prefect nor the synthetic-data tooling, no module over about
400 lines and no function over about 80 without a reason stated at its top, and every rule
module names the statute paragraph it implements."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("transforms", "flows", "bench")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
REASON = "Long because"  # a function longer than MAX_FUNCTION_LINES says why in its docstring
# the credit's sections of P.L.2019, c.32: the definitions (56a39), the credit (56a40), the
# counterfactual wage and the agency's duties (56a41)
STATUTE = r"34:11-56a(39|40|41)"


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Every project module ``path`` imports, at any depth (lazy imports in functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = {f"{mod}.{a.name}" for a in node.names}
            found |= subs
            if not subs <= known:  # ``from pkg import name`` of a name that is not a module imports pkg
                found.add(mod)
    out = set()
    for f in found:
        while f and f not in known:
            f = f.rpartition(".")[0]
        if f and f != name:
            out.add(f)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports(p, m, known) for m, p in mods.items()}


def third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_no_import_circle():
    g = graph()
    # a package's __init__ re-exporting its own modules is not a circle with them
    edges = {m: {d for d in deps if not (m.startswith(d + ".") and d in g)} for m, deps in g.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                raise AssertionError("import circle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_the_core_imports_no_prefect_and_no_synthetic_tooling():
    mods = modules()
    g = graph()
    for m, p in mods.items():
        if not m.startswith("transforms"):
            continue
        assert "prefect" not in third_party(p), f"{m} imports Prefect"
        if not m.startswith("transforms.synthetic"):
            bad = {d for d in g[m] if d.startswith("transforms.synthetic")}
            assert not bad, f"{m} (core) imports the synthetic-data tooling {sorted(bad)}"


def test_modules_and_functions_are_short_or_say_why():
    long = []
    for m, p in modules().items():
        text = p.read_text(encoding="utf-8")
        n = text.count("\n")
        if n > MAX_MODULE_LINES and REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            long.append(f"module {m}: {n} lines (over {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES and REASON not in (ast.get_docstring(node) or ""):
                    long.append(f"function {m}.{node.name}: {length} lines (over {MAX_FUNCTION_LINES})")
    assert not long, f"too long, and no '{REASON} ...' in the docstring:\n" + "\n".join(long)


def test_every_rule_module_names_its_statute_paragraph():
    for p in sorted((ROOT / "transforms" / "rules").glob("*.py")):
        if p.name == "__init__.py":
            continue
        doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or ""
        assert re.search(STATUTE, doc.splitlines()[0]) if doc else False, f"{p.name}: its docstring opens without the statute"


def test_the_cli_commands_never_import_the_app():
    g = graph()
    for m, deps in g.items():
        if m.startswith("flows.cli.") and m not in ("flows.cli.app", "flows.cli.__main__"):
            back = deps & {"flows.cli", "flows.cli.app"}
            assert not back, f"{m} imports the CLI app {sorted(back)} (a back-import)"


def test_every_case_file_names_its_paragraph_and_its_code():
    """tests/cases/ is organised by statute paragraph: each file's ``section`` is the paragraph,
    and its ``# Code:`` line names rule modules that exist and name that paragraph too."""
    import yaml

    for path in sorted((ROOT / "tests" / "cases").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        section = yaml.safe_load(text)["section"]
        assert re.fullmatch(r"34:11-56a39|34:11-56a40 .+", section), f"{path.name}: section {section!r} is not a paragraph of the statute"
        code = next((line for line in text.splitlines() if line.startswith("# Code: ")), None)
        assert code, f"{path.name}: no '# Code:' line naming the modules it tests"
        named = re.findall(r"(?:transforms/)?(?:rules|award)/[a-z_]*\.?p?y?", code)
        assert named, f"{path.name}: its '# Code:' line names no module"
        for ref in re.findall(r"rules/([a-z_]+)\.py", code):
            doc = ast.get_docstring(ast.parse((ROOT / "transforms" / "rules" / f"{ref}.py").read_text()))
            assert re.search(STATUTE, doc.splitlines()[0]), f"{path.name}: rules/{ref}.py does not open with the statute"


# the AWS SDK's own configuration (its endpoint and credential chain), resolved as boto3 resolves it:
# never an impcredit setting
ENV_ALLOWED = {"transforms/storage.py": ("AWS_",)}


def test_no_environment_below_flows():
    """Settings are parameters (issue 37): one settings object is built at the edge (flows/settings.py:
    the command line, impcredit.toml, the environment) and passed down; nothing under transforms/
    reads or writes the environment (the AWS SDK's own chain aside), and no IMPCREDIT_ variable."""
    found = []
    for path in sorted((ROOT / "transforms").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if not re.search(r"os\.environ|os\.getenv|os\.putenv|\bgetenv\(", code):
                continue
            allowed = ENV_ALLOWED.get(rel, ())
            if allowed and all(a in code for a in allowed) and "IMPCREDIT_" not in code:
                continue
            found.append(f"{rel}:{n}: {line.strip()}")
    assert found == [], "the environment read below flows/: " + "; ".join(found)


REPO_DIRS = ("transforms/", "flows/", "tests/", "docs/", "bench/", "expectations/", "data/vendors/", "data/reference/",
             ".ci/", "prefect.yaml", "prefect.toml", "pyproject.toml", "Makefile")


def _modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for d in ("transforms", "flows") for p in (ROOT / d).rglob("*.py")}


def test_the_map_lists_every_module_and_nothing_that_is_gone():
    """docs/architecture.md names every module of transforms/ and flows/ (its path in backticks,
    with its one line), and no module that does not exist."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `((?:transforms|flows)/[\w/]+\.py)`: \S", text, re.M))
    named = set(re.findall(r"`((?:transforms|flows)/[\w/]+\.py)`", text))
    assert sorted(_modules() - listed) == [], "modules missing from docs/architecture.md"
    assert sorted(named - _modules()) == [], "docs/architecture.md names modules that do not exist"


def _paths_named(text: str) -> set[str]:
    out = set()
    for token in re.findall(r"`([^`\s<>*{}]+)`", text):
        token = token.rstrip("/.,:;)")
        if token.startswith(REPO_DIRS) and not token.startswith("bench/data/") and not re.search(r"[<>*{}$]|\.\.\.", token):
            out.add(token)
    return out


def test_the_readme_names_only_files_and_names_that_exist():
    """Every file or folder of the repository the README (and docs/) names is there, and every
    "`name` in `module.py`" names what that module defines."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]:
        text = doc.read_text(encoding="utf-8")
        missing = sorted(p for p in _paths_named(text) if not (ROOT / p).exists())
        assert missing == [], f"{doc.relative_to(ROOT)} names what is not in the repository: {missing}"
        for name, module in re.findall(r"`(\w+)(?:\(\))?` (?:in|of|from) `([\w/]+\.py)`", text):
            hits = [ROOT / module] if (ROOT / module).is_file() else list((ROOT / "transforms").rglob(Path(module).name))
            hits += [] if hits else list((ROOT / "flows").rglob(Path(module).name))
            assert hits, f"{doc.relative_to(ROOT)}: `{module}` is no module"
            pattern = rf"^\s*(?:def|class|async def) {name}\b|^\s*{name}\s*[:=]"
            assert any(re.search(pattern, h.read_text(encoding="utf-8"), re.M) for h in hits), \
                f"{doc.relative_to(ROOT)}: `{name}` is not in `{module}`"
