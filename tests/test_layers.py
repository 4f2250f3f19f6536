"""Package dependencies point one way: packaged code never imports the tests, and the CLI's core path never loads
the eval harness."""

from __future__ import annotations

import ast
import os
import subprocess
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
    assert "skill.query" in _imports(ROOT / "skill/sources/replay.py")
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
