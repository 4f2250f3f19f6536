"""The Markdown report: prompts/report.md.j2 renders the shared view model (skill/telling/view.py) section by section."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from ..diagnosis import Diagnosis
from .resources import prompts_dir
from .view import View, view

PROMPTS = prompts_dir()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The project's template environment: StrictUndefined, so a missing value is an error, not a blank."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(PROMPTS), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=True, trim_blocks=False)


def render_markdown(d: Diagnosis, *, replay_files: int | None = None) -> str:
    return markdown(view(d, replay_files=replay_files))


def markdown(v: View) -> str:
    """The Markdown report of a view."""
    return environment().get_template("report.md.j2").render(v=v, d=v.d)
