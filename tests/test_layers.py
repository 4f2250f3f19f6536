"""Package dependencies point one way: packaged code never imports the tests, and the CLI's core path never loads
the eval harness."""

from __future__ import annotations

import ast
import os
import subprocess

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ("skill", "tools", "evals", "pathways_workload")
# The packages from the bottom up: each imports only itself and those before it. pathways_workload is the composition
# root (it wires tools and evals into skill's command line); bench and tests use everything and nothing uses them.
ORDER = ("skill", "tools", "evals", "bench", "pathways_workload")


def _imports_as_written(path: Path) -> set[str]:
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


def _imports(path: Path) -> set[str]:
    """The modules path imports, named as the checkout's folders name them (skill.cli, not pathways_workload.skill.cli)."""
    return {_local(m) for m in _imports_as_written(path) if m != "pathways_workload"}  # `from pathways_workload import skill` names skill


def _local(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[1:]) if parts[0] == "pathways_workload" and parts[1:2] and parts[1] in "skill tools evals bench".split() else module


def test_packaged_code_never_imports_tests():
    bad = [(str(p.relative_to(ROOT)), m) for top in PACKAGED for p in sorted((ROOT / top).rglob("*.py"))
           for m in sorted(_imports(p)) if m == "tests" or m.startswith("tests.")]
    assert not bad, bad


def test_import_walk_sees_relative_imports():
    # the walk above resolves `from ..x import y` inside a package, so a relative path into tests would be caught
    assert "skill.reading.evaluate" in _imports(ROOT / "skill/reading/sources/replay.py")
    assert "evals.fakes.kube_server" in _imports(ROOT / "evals/fakes/live_case.py")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(m for m in sys.modules if m.startswith('pathways_workload.evals'))))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_cli_core_path_does_not_import_evals():
    assert _loaded_after("import pathways_workload.cli") == []
    # every command but eval, and --help
    assert _loaded_after("import pathways_workload.cli as c, pathways_workload.skill.cli\npathways_workload.skill.cli.parser(wiring=c.wiring())") == []


def test_eval_command_still_registers():
    probe = "import pathways_workload.cli as c, pathways_workload.skill.cli\npathways_workload.skill.cli.parser(eval_command=True, wiring=c.wiring())"
    assert "pathways_workload.evals.cli" in _loaded_after(probe)


def test_skill_alone_has_its_own_commands():
    """skill/ imports nothing above it: without the composition root's wiring its CLI has diagnose and classes."""
    import pathways_workload.skill.cli  # noqa: F401 - read as skill.cli
    from pathways_workload import skill

    sub = next(a for a in skill.cli.parser()._actions if a.dest == "command")
    assert set(sub.choices) == {"diagnose", "classes"}


# --- the data path as folders --------------------------------------------------------------------------------------
# skill/ is laid out as the data flows: reading -> (the catalog) -> understanding -> judging -> telling, with the shared
# contract (errors, the Diagnosis, redaction) below everything and the entry points (api, cli, ask, live, references)
# above. A module may import its own layer and any lower one, never a higher one.

STAGES = ["reading", "catalog", "understanding", "judging", "telling"]
BASE = {"skill", "skill.errors", "skill.diagnosis", "skill.redact", "skill.schema"}
ENTRY = {"skill.api", "skill.cli", "skill.ask", "skill.diagnose_live", "skill.pipeline", "skill.references", "skill.progress",
         "skill.wiring", "skill.output", "skill.ask_call"}


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


def _graph() -> dict[str, set[str]]:
    """Every import of every module of every package, wherever it is written (at module level, inside a function, under
    TYPE_CHECKING): a lazy import still ties the two modules together, and a circle of them is one to untie."""
    graph: dict[str, set[str]] = {}
    for top in ORDER:
        for p in sorted((ROOT / top).rglob("*.py")):
            graph[_module(p)] = {_owner(m) for m in _imports(p) if _owner(m)} - {_module(p)}
    return graph


def _owner(name: str) -> str:
    """The module of ours `name` is, or is a name in ("" for other packages)."""
    parts = name.split(".")
    if parts[0] not in ORDER:
        return ""
    while parts and not _known(".".join(parts)):
        parts.pop()
    return ".".join(parts)


def test_every_package_imports_only_those_below_it():
    climbs = sorted((m, n) for m, targets in _graph().items() for n in targets
                    if ORDER.index(n.split(".")[0]) > ORDER.index(m.split(".")[0]))
    assert not climbs, climbs


def test_skill_imports_nothing_from_tools_or_evals():
    assert not [(m, n) for m, t in _graph().items() if m.split(".")[0] == "skill" for n in t
                if n.split(".")[0] in ("tools", "evals")]


def test_no_import_circles():
    """No module reaches itself through its imports, in any package (Tarjan's strongly connected components)."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for n in sorted(graph.get(m, ())):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            comp = []
            while True:
                n = stack.pop()
                on.discard(n)
                comp.append(n)
                if n == m:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for m in sorted(graph):
        if m not in index:
            visit(m)
    assert not circles, circles


def test_the_graph_sees_lazy_and_type_checking_imports():
    graph = _graph()
    assert "evals.case" in graph["evals.evaluators"]  # under TYPE_CHECKING
    assert "tools.mcp_server" in graph["pathways_workload.cli"]  # inside a function
