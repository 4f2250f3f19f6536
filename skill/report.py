"""Renders a Diagnosis as Markdown through prompts/report.md.j2; it computes nothing new."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from .diagnosis import Diagnosis
from .resources import prompts_dir

PROMPTS = prompts_dir()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The project's template environment: StrictUndefined, so a missing value is an error, not a blank."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(PROMPTS), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=True, trim_blocks=False)


def render_markdown(d: Diagnosis) -> str:
    w = d.workload
    parts = [f"{k} `{v}`" for k, v in (("project", w.project), ("location", w.location), ("cluster", w.cluster),
                                        ("namespace", w.namespace)) if v]
    return environment().get_template("report.md.j2").render(d=d, workload_line=", ".join(parts) or "unknown")
