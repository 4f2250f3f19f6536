"""Shared test helpers: the fixture cases and an engine-independent collector of the ids in a case's input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.glob("*/expected.yaml"))


def input_ids(case: Path) -> set[str]:
    """Every insertId and metadata.uid in a case's JSON files, read without the engine (the harness's own reader)."""
    from evals.harness import input_ids as harness_ids

    return set(harness_ids(case))


def expected(case: Path) -> dict:
    return yaml.safe_load((case / "expected.yaml").read_text())


@pytest.fixture(scope="session")
def diagnoses():
    """Each fixture diagnosed once per session."""
    from skill.api import diagnose_replay

    return {case.name: diagnose_replay(case) for case in CASES}
