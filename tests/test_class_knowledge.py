"""All knowledge of a failure class lives in its catalog entry: no class id is spelled outside skill/catalog/."""

from __future__ import annotations

import ast
import re

import pytest

from pathways_workload.skill.catalog import CLASSES, VERDICT_SOURCES
from pathways_workload.skill.judging.classify import ABSENCE_CHECKS, REFINE

from conftest import ROOT

TAXONOMY_IDS = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs" / "taxonomy.md").read_text(), re.M))
OUTSIDE = sorted(p for p in (ROOT / "skill").rglob("*.py") if "catalog" not in p.relative_to(ROOT / "skill").parts)


def test_taxonomy_is_read():
    assert len(TAXONOMY_IDS) == 36


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_class_id_outside_the_catalog(path):
    tree = ast.parse(path.read_text(), str(path))
    spelled = [(n.lineno, n.value) for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in TAXONOMY_IDS]
    assert not spelled, f"{path.name} names classes {spelled}: declare what it needs on the catalog entry"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.id)
def test_every_id_the_catalog_names_is_a_class(cls):
    named = set(cls.explains) | set(cls.lookalikes) | set(cls.absorbs) | set(cls.explains_earlier)
    assert named <= TAXONOMY_IDS, named - TAXONOMY_IDS
    assert cls.scope in ("host", "spread", "node")
    assert cls.status_when_root in ("", "failed", "crashing", "stalled", "degraded", "healthy")
    assert set(cls.leans_on) <= set(VERDICT_SOURCES)
    if cls.absence:
        assert cls.absence.kind in ABSENCE_CHECKS and set(cls.absence.refine) <= set(REFINE)
        assert all(p.support for p in cls.patterns)  # decided from absence; its lines only support it
    pattern_ids = {p.id for p in cls.patterns if p.id} | {r.id for r in cls.facts if r.id}
    for variant in cls.fixes + (cls.explanation if isinstance(cls.explanation, tuple) else ()):
        assert set(variant.when) | set(variant.unless) <= pattern_ids
