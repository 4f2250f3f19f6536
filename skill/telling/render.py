"""Every output format of a diagnosis, from the one view model (skill/telling/view.py): the JSON contract, the terminal report,
the Markdown report and the HTML page. The CLI picks one; the tools and MCP return the JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports FORMATS at start-up: the renderers load only when one renders
    from ..diagnosis import Diagnosis
    from ..understanding.model import Workload

FORMATS = ("text", "markdown", "json", "html")  # text: the terminal report (colour only on a terminal)
EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
              ".txt": "text"}


def format_of(path: str, default: str) -> str:
    """The format a file name asks for by its extension (`default` when it names none)."""
    return next((fmt for ext, fmt in EXTENSIONS.items() if path.lower().endswith(ext)), default)


def render(d: Diagnosis, fmt: str, *, model: Workload | None = None, replay_files: int | None = None,
           color: bool = False, width: int | None = None) -> str:
    """The diagnosis in `fmt`, from its view built once. `model` (the analysis's workload) adds slices, nodes and
    progress to the HTML picture; `color` and `width` are the terminal's, for `text`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    from ..redact import redact
    from .view import redacted_view

    v = redacted_view(d, replay_files=replay_files)
    if fmt == "json":  # the contract: the view's diagnosis, every field a log value can reach redacted
        return json.dumps(v.d.to_json_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        from .html import html

        return html(v, model)
    if fmt == "markdown":
        from .report import markdown

        return redact(markdown(v))
    from .terminal import text

    return text(v, color=color, width=width)
