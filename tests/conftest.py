"""Shared test helpers: the fixture cases and an engine-independent collector of the ids in a case's input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.glob("*/expected.yaml"))


def input_ids(case: Path) -> set[str]:
    """Every insertId and metadata.uid in a case's JSON files, read without the engine."""
    ids: set[str] = set()

    def walk(o):
        if isinstance(o, dict):
            if isinstance(o.get("insertId"), str):
                ids.add(o["insertId"])
            uid = (o.get("metadata") or {}).get("uid") if isinstance(o.get("metadata"), dict) else None
            if isinstance(uid, str):
                ids.add(uid)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for f in case.glob("*.json"):
        walk(json.loads(f.read_text()))
    return ids


def expected(case: Path) -> dict:
    return yaml.safe_load((case / "expected.yaml").read_text())


@pytest.fixture(scope="session")
def diagnoses():
    """Each fixture diagnosed once per session."""
    from skill.api import diagnose_replay

    return {case.name: diagnose_replay(case) for case in CASES}
