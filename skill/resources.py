"""Where the package's data files are, in a source checkout and in an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def prompts_dir() -> Path:
    """The jinja2 templates: prompts/ at the checkout's root, shipped as skill/prompts in a wheel (pyproject)."""
    for d in (HERE / "prompts", HERE.parent / "prompts"):
        if (d / "report.md.j2").is_file():
            return d
    return HERE / "prompts"

