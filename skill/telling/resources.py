"""Where the package's data files are, in a source checkout and in an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # skill/


def prompts_dir() -> Path:
    """The jinja2 templates: prompts/ at the checkout's root, shipped as skill/prompts in a wheel (pyproject)."""
    for d in (PACKAGE / "prompts", PACKAGE.parent / "prompts"):
        if (d / "report.md.j2").is_file():
            return d
    return PACKAGE / "prompts"

