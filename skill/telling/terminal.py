"""The terminal report: the shared view model (skill/telling/view.py) rendered for a person with rich, section by section.

Colour only on a terminal, never with NO_COLOR set or TERM=dumb; written to a file or a pipe it is plain text. Log
text is untrusted: it is shown as text (never parsed as rich markup) and its control characters are made visible, so a
log line cannot move the cursor or recolour the terminal. Logs Explorer links are footnotes at the end, one per line
and never wrapped by us, so they stay whole and copyable and the columns above stay readable.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..diagnosis import Diagnosis
from .links import query_link
from .view import Section, View, redacted_view

WIDTH = 100  # columns when the output is not a terminal (a file, a pipe, a test)
FILTER_MAX = 400  # a "Check next" filter longer than this is cut in the terminal (whole in JSON and the link)
STATUS_STYLE = {"failed": "bold white on red", "crashing": "bold white on red", "stalled": "bold black on yellow",
                "degraded": "bold black on yellow", "healthy": "bold white on green"}
RISK_STYLE = {"read-only": "green", "low": "yellow", "high": "bold red"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def wants_color(isatty: bool, env: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb."""
    seen: Mapping[str, str] = os.environ if env is None else env
    return isatty and "NO_COLOR" not in seen and seen.get("TERM") != "dumb"


def safe(text: str | None) -> str:
    """Log text made harmless for a terminal: control characters (escape sequences, bells) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text or "")


def _t(text: str | None, style: str = "") -> Text:
    return Text(safe(text), style=style)


def _when(ts: str | None) -> str:
    """2026-11-25T16:41:54.621152338Z -> 2026-11-25 16:41:54Z (to the second; the full time is in JSON)."""
    return f"{ts[:10]} {ts[11:19]}Z" if ts and len(ts) >= 19 else (ts or "(no time)")


def _pairs(rows: list[tuple[str, RenderableType]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(key, value)
    return grid


@dataclass
class Whole:
    """A command or a filter: printed whole, never wrapped by us, so a copy of it is one command (a terminal may still
    show it over several rows)."""

    text: str


Parts = list[RenderableType | Whole]


def _numbered(items: Sequence[tuple[Text, Sequence[RenderableType | Whole]]]) -> Parts:
    """1. head, with its body under it; what wraps stays indented under the head; commands follow whole."""
    out: Parts = []
    number = len(f"{len(items)}.")
    for n, (head, body) in enumerate(items, 1):
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", style="bold", no_wrap=True, min_width=number)
        grid.add_column(overflow="fold")
        grid.add_row(f"{n}.", Group(head, *[b for b in body if not isinstance(b, Whole)]))
        out.append(grid)
        out += [Whole("\n".join(" " * (number + 1) + line for line in b.text.splitlines()))
                for b in body if isinstance(b, Whole)]
    return out


def _summary(v: View, sec: Section) -> RenderableType:
    d = v.d
    title = Text.assemble((d.failure_class, "bold"), "  ", (f" {d.status} ", STATUS_STYLE.get(d.status, "bold")))
    if d.workload.jobset:
        title.append_text(Text("  JobSet ") + _t(d.workload.jobset, "bold"))
    confidence = Text(f"{d.confidence:.2f}")
    if not d.sufficiency.sufficient:
        confidence += Text("  not a firm verdict: see \"Not enough evidence\" below", style="yellow")
    workload = ", ".join(f"{k} {safe(val)}" for k, val in v.workload_parts) or "unknown"
    return Group(title, _t(v.headline, "bold"), Text(), _pairs([("Workload", Text(workload)),
                                                                ("Confidence", confidence)]))


def _root_cause(v: View, sec: Section) -> RenderableType:
    rc = v.d.root_cause
    rows: list[tuple[str, RenderableType]] = []
    if rc.component not in ("", "-"):
        rows.append(("Component", _t(rc.component)))
    for i, p in enumerate(v.places):
        where = _t(f"{p.kind} {p.name}" + ("-*" if p.attempts else ""))
        if p.containers:
            where += _t(f" (container{'s' * (len(p.containers) > 1)} {', '.join(p.containers)})")
        if p.attempts:
            where += _t(f", one pod per restart attempt: {', '.join(p.attempts)} (first seen to latest)")
        rows.append(("Where" if i == 0 else "", where))
    extra: list[RenderableType] = [Text(), _pairs(rows)] if rows else []
    return Group(_t(rc.explanation), *extra)


def _evidence(v: View, sec: Section) -> RenderableType | Parts:
    if not v.evidence:
        return Text("No evidence lines: the verdict rests on what is absent (see the timeline and data gaps).")
    root = set(v.d.hypotheses[0].evidence) if v.d.hypotheses else set()
    items = []
    for r in v.evidence:
        head = Text(_when(r.item.timestamp), style="cyan") + f"  {r.item.source}  " + _t(r.item.resource)
        head += Text(f" [{r.note}]", style="blue") if r.note else Text()
        lines = [_t(r.item.excerpt, "bold" if r.item.id in root else ""), _t(f"id {r.item.id}", "dim")]
        items.append((head, lines + ([_t(f"PromQL {r.item.promql}", "dim")] if r.item.promql else [])))
    return _numbered(items)


def _timeline(v: View, sec: Section) -> RenderableType:
    if not v.timeline:
        return Text("nothing with a time was found")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="cyan", no_wrap=True)
    grid.add_column(overflow="fold")
    for t in v.timeline:
        grid.add_row(_when(t.timestamp), _t(t.summary) + (Text(f" (×{t.count})", style="bold") if t.count > 1 else ""))
    return grid


def _command(text: str) -> Whole:
    return Whole(safe(text))


def _fix(v: View, sec: Section) -> RenderableType | Parts:
    if not v.d.fix:
        return Text("no fix proposed")
    items = [(_t(f.summary) + Text(f" (risk: {f.risk})", style=RISK_STYLE.get(f.risk, "")),
              [_command(f.command)] if f.command else []) for f in v.d.fix]
    return _numbered(items)


def _check_next(v: View, sec: Section) -> Parts:
    items = []
    for c in v.d.next_checks:
        body: list[RenderableType | Whole] = []
        if c.filter and len(c.filter) > FILTER_MAX:  # a filter of many lines: its start, and where the whole is
            link = query_link(c.filter, v.d.workload.project)
            whole = "in --format json (next_checks[].filter)" + (" and behind the Logs Explorer link below" if link else "")
            body += [Text(f"Logging filter, {len(c.filter):,} characters (the whole of it is {whole}); it starts:",
                          style="dim"),
                     _t(c.filter[:FILTER_MAX].rstrip() + " …")] + ([_command(link)] if link else [])
        elif c.filter:
            body += [Text("Logging filter (Logs Explorer, gcloud logging read, or query-logs --filter):", style="dim"),
                     _command(c.filter)]  # after the text above: _numbered puts commands under their item
        if c.command:
            body.append(_command(c.command))
        if c.promql:
            body += [Text("PromQL (Cloud Monitoring's PromQL editor):", style="dim"), _command(c.promql)]
        items.append((_t(c.question), body))
    return _numbered(items)


def _other_hypotheses(v: View, sec: Section) -> RenderableType:
    rows = [_t(f"{h.failure_class}  score {h.score:.2f}") for h in v.d.hypotheses[1:]]
    return Group(*rows) if rows else Text("none")


def _observations(v: View, sec: Section) -> Parts:
    items = []
    for o in v.d.observations:
        kind = "survived" if o.kind == "survived" else "support matrix"
        head = Text(kind, style="bold") + _t("".join(f"  {x}" for x in (o.failure_class, o.timestamp) if x))
        items.append((head, [_t(o.resource, "dim"), _t(o.excerpt), _t(o.why_not_cause, "italic")]))
    return _numbered(items)


def _bullets(lines: list[str], empty: str) -> RenderableType:
    return Group(*[Text("- ") + _t(line) for line in lines]) if lines else Text(empty)


def _footer(v: View, sec: Section) -> RenderableType:
    parts: list[RenderableType] = [Text(f"{v.footer} Schema {v.d.schema_}. Fixes are proposals: nothing was changed.",
                                        style="dim")]
    if v.links:
        parts.append(Text("Logs Explorer links:", style="dim"))
    return Group(*parts)


RENDER: dict[str, Callable[[View, Section], RenderableType | Parts]] = {
    "summary": _summary, "root_cause": _root_cause, "evidence": _evidence, "timeline": _timeline, "fix": _fix,
    "check_next": _check_next, "other_hypotheses": _other_hypotheses, "observations": _observations,
    "insufficient": lambda v, s: _bullets(v.d.sufficiency.reasons, ""),
    "data_gaps": lambda v, s: _bullets(v.d.data_gaps, "nothing: every source was present"),
    "footer": _footer,
}


def render_text(d: Diagnosis, *, replay_files: int | None = None, color: bool = False,
                width: int | None = None) -> str:
    """The report as the terminal shows it; `color` adds ANSI colours (only for a terminal), `width` its columns."""
    return text(redacted_view(d, replay_files=replay_files), color=color, width=width)


def text(v: View, *, color: bool = False, width: int | None = None) -> str:
    """The terminal report of a (redacted) view."""
    out = io.StringIO()
    console = Console(file=out, width=width or WIDTH, force_terminal=color, no_color=not color,
                      color_system="standard" if color else None, highlight=False, markup=False, emoji=False,
                      legacy_windows=False, force_jupyter=False)
    for sec in v.sections:
        if sec.id != "summary":
            console.print()
            console.print(Rule(Text(sec.title, style="bold"), align="left", style="dim"))
        parts = RENDER[sec.id](v, sec)
        for part in parts if isinstance(parts, list) else [parts]:
            if isinstance(part, Whole):
                console.print(Text(part.text, style="green"), soft_wrap=True)
            else:
                console.print(part)
    for n, link in enumerate(v.links, 1):  # whole, one per line: a terminal wraps them, a click or a copy gets them
        console.print(Text(f"[{n}] ", style="blue") + Text(safe(link), style=f"link {link}" if color else ""),
                      soft_wrap=True)
    shown = out.getvalue()
    return shown if color else "".join(line.rstrip() + "\n" for line in shown.splitlines())  # no padding to the width
