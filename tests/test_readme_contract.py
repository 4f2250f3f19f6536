"""The README is the contract: `.ci/run` runs its set-up and test commands first, exactly as the README writes them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    """The README's first two code blocks: the set-up (install, then the main job on a fixture), then the tests."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert len(blocks) >= 2, "the README opens with its set-up block and its test block"
    return [ln for b in blocks[:2] for ln in b.splitlines() if ln.strip()]


def _ci_commands() -> list[str]:
    text = (ROOT / ".ci" / "run").read_text()
    body = text.split("# README-BEGIN\n", 1)[1].split("# README-END\n", 1)[0]
    return [ln for ln in body.splitlines() if ln.strip()]


def test_ci_runs_the_readme_commands_as_written():
    assert _ci_commands() == _readme_commands()


def test_the_readme_commands_come_first_in_ci():
    """Nothing installs or runs before them: what a newcomer runs is what CI runs."""
    text = (ROOT / ".ci" / "run").read_text()
    before = text.split("# README-BEGIN\n", 1)[0]
    commands = [ln for ln in before.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert commands == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', 'ROOT="$PWD"']


def test_the_setup_installs_every_extra_the_tests_import():
    """The set-up line installs the extras the suite needs, so no test fails for a missing optional client."""
    setup = _readme_commands()[0]
    extras = re.search(r"pip install -e '\.\[([^\]]*)\]'", setup)
    assert extras, setup
    assert {"dev", "log-analytics"} <= set(extras.group(1).split(","))
