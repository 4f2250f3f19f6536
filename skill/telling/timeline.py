"""A diagnosis's timeline: the start-up milestones, progress, the root cause's first lines and the failures after it."""

from __future__ import annotations

from ..catalog import SYMPTOMS
from ..diagnosis import TimelineItem
from ..judging.ranking import Hypo
from ..reading.records import format_ns
from ..understanding.model import Workload
from ..understanding.signals import Signal
from .citations import failure_symptoms, primary
from . import silence
from .excerpt import clip, excerpt

_SYMPTOM_TITLE = {s.id: s.title for s in SYMPTOMS}


def timeline(model: Workload, root: Hypo, symptoms: list[Signal], story: silence.Story | None = None) -> list[TimelineItem]:
    """Start-up milestones, first and last progress, the root cause's first lines, up to six failures and a stall's
    story (what the program said after its last step, its first thread dump), by time."""
    items: list[tuple[int, str, list[str]]] = []
    for mid, label in (("rm_serving", "resource manager serving"), ("proxy_started", "IFRT proxy started"),
                       ("worker_serving", "first worker serving"), ("client_backend", "client connected to Pathways")):
        s = model.first_milestone(mid)
        if s:
            items.append((s.ts, f"{label} ({s.record.pod})", [s.record.id]))
    ready = model.milestones.get("slices_ready")
    if ready:
        s = max(ready, key=lambda s: s.ts)
        items.append((s.ts, f"{s.groups.get('ready')}/{s.groups.get('total')} slices ready", [s.record.id]))
    if model.progress:
        a, b = model.progress[0], model.progress[-1]
        items.append((a.ts, f"training progress seen (step {a.groups.get('step')})", [a.record.id]))
        if b is not a:
            items.append((b.ts, f"last progress line (step {b.groups.get('step')}, {model.progress_count} seen)", [b.record.id]))
    for s in list({s.record.id: s for s in reversed(primary(root))}.values())[::-1][:3]:  # three lines, not one thrice
        items.append((s.ts, f"{root.failure_class}: {clip(excerpt(s.record.text), 140)} ({s.record.resource})", [s.record.id]))
    for s in failure_symptoms(symptoms)[:6]:
        items.append((s.ts, f"{_SYMPTOM_TITLE.get(s.target, s.target)}{_times(s)}: {clip(excerpt(s.record.text), 120)} "
                            f"({s.record.resource})", [s.record.id]))
    if story is not None:
        items += silence.moments(story)
    # One row per entry: a line several rules cite is told once, as the root cause where it is one (a stall's last
    # step is both the last progress line and the cause), else as it was first told.
    told: dict[tuple[str, ...], tuple[int, str, list[str]]] = {}
    for ts, text, ids in items:
        key = tuple(ids) or (text,)
        if key not in told or (text.startswith(f"{root.failure_class}:") and
                               not told[key][1].startswith(f"{root.failure_class}:")):
            told[key] = (ts, text, ids)
    kept = sorted(told.values(), key=lambda t: t[0])
    return [TimelineItem(timestamp=format_ns(ts) or "", summary=text, evidence=ids) for ts, text, ids in kept if ts]


def _times(s: Signal) -> str:
    """' (3 times since 07:47:01)' for an Event Kubernetes folded repeats into, else ''."""
    if s.record.count <= 1:
        return ""
    first = format_ns(s.record.first_ts or s.ts)
    return f" ({s.record.count} times since {first[11:19]})"
