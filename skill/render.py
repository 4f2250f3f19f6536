"""Every output format of a diagnosis, from the one view model (skill/view.py): the JSON contract, the terminal report,
the Markdown report and the HTML page. The CLI picks one; the tools and MCP return the JSON."""

from __future__ import annotations

import json

from .diagnosis import Diagnosis
from .model import Workload
from .redact import redact, redact_obj

FORMATS = ("text", "markdown", "json", "html")  # text: the terminal report (colour only on a terminal)
EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
              ".txt": "text"}


def format_of(path: str, default: str) -> str:
    """The format a file name asks for by its extension (`default` when it names none)."""
    return next((fmt for ext, fmt in EXTENSIONS.items() if path.lower().endswith(ext)), default)


def render(d: Diagnosis, fmt: str, *, model: Workload | None = None, replay_files: int | None = None,
           color: bool = False, width: int | None = None) -> str:
    """The diagnosis in `fmt`. `model` (the analysis's workload) adds slices, nodes and progress to the HTML picture;
    `color` and `width` are the terminal's, for `text`."""
    if fmt == "json":  # excerpts are redacted already; this covers every other field a log value can reach
        return json.dumps(redact_obj(d.to_json_dict()), indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        from .html import render_html

        return render_html(d, model, replay_files=replay_files)
    if fmt == "markdown":
        from .report import render_markdown

        return redact(render_markdown(d, replay_files=replay_files))
    if fmt == "text":
        from .terminal import render_text

        return render_text(d, replay_files=replay_files, color=color, width=width)
    raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
