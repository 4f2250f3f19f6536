"""The wheel holds every module and data file the package needs (templates, schema), so a non-editable install works."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT

SOURCES = ("pathways_workload", "skill", "tools", "evals")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    # built from a copy, so setuptools' build/ and egg-info never land in the checkout; offline (no build isolation)
    src = tmp_path_factory.mktemp("src")
    for name in (*SOURCES, "prompts"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    (whl,) = out.glob("pathways_workload-*.whl")
    return zipfile.ZipFile(whl)


def test_templates_and_schema_are_in_the_wheel(wheel):
    names = set(wheel.namelist())
    for t in (ROOT / "prompts").glob("*.j2"):
        assert f"pathways_workload/skill/prompts/{t.name}" in names, t.name
    assert "pathways_workload/skill/schema/diagnosis.schema.json" in names


def test_every_module_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    for pkg in SOURCES:
        for py in (ROOT / pkg).rglob("*.py"):
            rel = str(py.relative_to(ROOT))
            if "recording/programs" in rel:
                continue  # run on a TPU machine, not shipped
            assert (rel if pkg == "pathways_workload" else f"pathways_workload/{rel}") in names, py


def test_console_script_and_version(wheel):
    from pathways_workload import skill

    entry = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
    assert "pathways-workload = pathways_workload.cli:main" in wheel.read(entry).decode()
    assert any(n.startswith(f"pathways_workload-{skill.__version__}.dist-info/") for n in wheel.namelist())


def test_report_renders_from_the_installed_layout(tmp_path, wheel):
    """The wheel's files unpacked alone (no checkout beside them): the Markdown report still finds its template."""
    wheel.extractall(tmp_path)
    code = ("import pathways_workload.skill.telling.report as r; from pathways_workload.skill.api import diagnose_replay; "
            f"print(r.PROMPTS); print(r.render_markdown(diagnose_replay({str(ROOT / 'fixtures' / 'case-004')!r}))[:40])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={"PATH": "", "PYTHONPATH": str(tmp_path)}, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    where, report = p.stdout.split("\n", 1)
    assert where == str(tmp_path / "pathways_workload" / "skill" / "prompts") and report.startswith("# ")


def test_one_top_level_package(wheel):
    """The wheel installs one import package; the TPU recording programs stay in the checkout."""
    tops = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"pathways_workload"}, tops
    assert not [n for n in wheel.namelist() if "recording/programs/" in n]


def test_generic_names_are_not_ours_outside_the_checkout(tmp_path, wheel):
    wheel.extractall(tmp_path / "site")
    code = "import importlib.util as u; print([m for m in ('tools', 'evals', 'skill') if u.find_spec(m)])"
    # -S: no site-packages (an editable install of a checkout maps its own names there), only the wheel's files
    p = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={"PATH": "", "PYTHONPATH": str(tmp_path / "site")}, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


def test_the_checkout_resolves_by_the_file_system_alone():
    """pathways_workload/skill (tools, evals, bench) are relative symlinks to the design's folders at the root, so every
    tool that looks for pathways_workload.skill.api as a file (mypy, jedi, pyright) finds it; no run-time __path__."""
    import ast
    import os

    pkg = ROOT / "pathways_workload"
    for name in ("skill", "tools", "evals", "bench"):
        assert (pkg / name).is_symlink() and os.readlink(pkg / name) == f"../{name}", name
        assert (pkg / name / "__init__.py").samefile(ROOT / name / "__init__.py"), name
    assert "__path__" not in {n.id for n in ast.walk(ast.parse((pkg / "__init__.py").read_text()))
                              if isinstance(n, ast.Name)}
    found = (ROOT / "pathways_workload" / "skill" / "api.py")
    assert found.is_file() and found.resolve() == (ROOT / "skill" / "api.py").resolve()
