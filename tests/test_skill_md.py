"""SKILL.md follows the Agent Skills spec (skills-ref validates it) and references/ matches the catalog."""

from __future__ import annotations

import re
import shutil

import skills_ref
import yaml

from pathways_workload.skill import references
from pathways_workload.skill.catalog import BY_ID
from tests.conftest import ROOT
from pathways_workload.tools.registry import registry

SKILL = ROOT / "SKILL.md"


def _frontmatter() -> tuple[dict, str]:
    text = SKILL.read_text()
    _, fm, body = text.split("---", 2)
    return yaml.safe_load(fm), body


def test_skills_ref_validates(tmp_path):
    # the spec requires the directory name to equal `name`; the checkout may be called anything
    skill_dir = tmp_path / "pathways-workload"
    skill_dir.mkdir()
    shutil.copy(SKILL, skill_dir / "SKILL.md")
    shutil.copytree(ROOT / "references", skill_dir / "references")
    assert skills_ref.validate(skill_dir) == []


def test_frontmatter_and_size():
    fm, body = _frontmatter()
    assert fm["name"] == "pathways-workload"
    assert 0 < len(fm["description"]) <= 1024
    assert len(SKILL.read_text().splitlines()) < 500
    assert "diagnose --replay" in body and body.index("diagnose") < body.index("query-logs")
    for rule in ("Read-only", "untrusted", "Redact"):
        assert rule in body


def test_skill_md_names_every_tool_and_links_exist():
    _, body = _frontmatter()
    for name in registry():
        assert f"`{name}`" in body or f"`{name}` (" in body, name
    for link in re.findall(r"\]\(([^)#]+)\)", body):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link


def test_references_match_catalog():
    assert (ROOT / "references" / "classes.md").read_text() == references.render(), \
        "references/classes.md is stale: run python -m pathways_workload.skill.references"
    text = references.render()
    for cid in BY_ID:
        assert f"\n## {cid}\n" in text
    assert references.main(["--check"]) == 0


def test_every_error_code_is_documented():
    # every `code` an error can carry, found in the source the way a reader would grep for it
    pattern = re.compile(r'''code ?= ?"([a-z_]+)"|error_object\("([a-z_]+)"''')
    codes = set()
    for folder in ("skill", "tools", "evals"):
        for path in (ROOT / folder).rglob("*.py"):
            codes |= {a or b for a, b in pattern.findall(path.read_text())}
    assert {"error", "usage", "internal", "source_error"} <= codes
    _, body = _frontmatter()
    assert not [c for c in sorted(codes) if f"`{c}`" not in body]
