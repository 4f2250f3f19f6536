"""Package dependencies point one way: packaged code never imports the tests, and the CLI's core path never loads
the eval harness."""

from __future__ import annotations

import ast
import os
import subprocess

import pytest
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ("skill", "tools", "evals")


def _imports(path: Path) -> set[str]:
    """Every module path path imports (absolute, or resolved from a relative import within its package)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out |= {f"{module}.{a.name}" for a in node.names}
    return out


def test_packaged_code_never_imports_tests():
    bad = [(str(p.relative_to(ROOT)), m) for top in PACKAGED for p in sorted((ROOT / top).rglob("*.py"))
           for m in sorted(_imports(p)) if m == "tests" or m.startswith("tests.")]
    assert not bad, bad


def test_import_walk_sees_relative_imports():
    # the walk above resolves `from ..x import y` inside a package, so a relative path into tests would be caught
    assert "skill.reading.evaluate" in _imports(ROOT / "skill/reading/sources/replay.py")
    assert "evals.fakes.kube_server" in _imports(ROOT / "evals/fakes/live_case.py")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == 'evals')))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_cli_core_path_does_not_import_evals():
    assert _loaded_after("import skill.cli") == []
    assert _loaded_after("import skill.cli\nskill.cli.parser()") == []  # every command but eval, and --help


def test_eval_command_still_registers():
    assert "evals.cli" in _loaded_after("import skill.cli\nskill.cli.parser(eval_command=True)")


# --- the data path as folders --------------------------------------------------------------------------------------
# skill/ is laid out as the data flows: reading -> (the catalog) -> understanding -> judging -> telling, with the shared
# contract (errors, the Diagnosis, redaction) below everything and the entry points (api, cli, ask, live, references)
# above. A module may import its own layer and any lower one, never a higher one.

STAGES = ["reading", "catalog", "understanding", "judging", "telling"]
BASE = {"skill", "skill.errors", "skill.diagnosis", "skill.redact", "skill.schema"}
ENTRY = {"skill.api", "skill.cli", "skill.ask", "skill.diagnose_live", "skill.pipeline", "skill.references", "skill.progress"}


def _layer(module: str) -> int:
    if module in BASE:
        return 0
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in STAGES:
        return 1 + STAGES.index(parts[1])
    assert module in ENTRY or module.split(".")[0] != "skill", f"{module}: in no layer; add it to a stage folder"
    return len(STAGES) + 1


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _skill_imports(path: Path) -> set[str]:
    return {m for m in _imports(path) if m.split(".")[0] == "skill" and _known(m)}


def _known(module: str) -> bool:  # `from .x import name` also yields `x.name`; keep the module, drop the name
    rel = Path(*module.split("."))
    return (ROOT / rel).with_suffix(".py").exists() or (ROOT / rel / "__init__.py").exists()


def test_every_skill_module_sits_in_a_layer():
    for p in sorted((ROOT / "skill").rglob("*.py")):
        _layer(_module(p))


def test_stage_folders_never_import_a_later_stage():
    climbs = [(_module(p), m) for p in sorted((ROOT / "skill").rglob("*.py")) for m in sorted(_skill_imports(p))
              if _layer(m) > _layer(_module(p))]
    assert not climbs, climbs


def test_each_stage_folder_says_what_it_does():
    for stage in STAGES:
        doc = ast.get_docstring(ast.parse((ROOT / "skill" / stage / "__init__.py").read_text()))
        assert doc and len(doc.split()) >= 30, stage


def test_the_readme_picture_names_the_folders():
    readme = (ROOT / "README.md").read_text()
    for stage in STAGES:
        assert f"skill/{stage}/" in readme, stage


def _graph(top: str) -> dict[str, set[str]]:
    """Module-level imports only (an import inside a function is deliberate laziness, not a circle at load time)."""
    graph: dict[str, set[str]] = {}
    for p in sorted((ROOT / top).rglob("*.py")):
        tree = ast.parse(p.read_text())
        package = list(p.relative_to(ROOT).with_suffix("").parts[:-1])
        out: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                out |= {module} | {f"{module}.{a.name}" for a in node.names}
        graph[_module(p)] = {m for m in out if m.split(".")[0] == top and _known(m) and m != _module(p)}
    return graph


@pytest.mark.parametrize("top", ["skill", "tools", "evals"])
def test_no_import_circles(top):
    graph = _graph(top)
    # a package's __init__ importing its own modules is how a package exports; a module importing its parent package
    # for those exports would be a circle, so parents are kept
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                circles.append(path[path.index(n):] + [n] if n in path else [m, n])
            elif n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not circles, circles
