"""The incident as one self-contained HTML page: the report and an SVG swimlane of what happened where.

A lane per pod (or node, when no pod of the JobSet ran on it), grouped head first, then by slice; marks for start-up
milestones, progress, restarts, the root cause and its symptoms, each a link to the evidence or timeline entry it
stands for, with a <title> tooltip. Inline CSS and SVG only: the page loads nothing. Rendered through
prompts/report.html.j2 with autoescaping, because every excerpt is untrusted log text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import jinja2

from ..catalog import SYMPTOMS
from ..diagnosis import Diagnosis
from ..understanding.model import Workload, role_of
from ..reading.records import Record, format_ns, occurrences
from ..redact import redact
from .report import environment
from .view import View, redacted_view

LEFT, WIDTH, LANE_H, GROUP_H, TOP, MAX_TICKS, ALL_PODS = 300, 1000, 24, 20, 36, 60, 32
NS = 1_000_000_000
_RESTART_SYMPTOMS = {"jobset_restarting", "crashloop"}
_SYMPTOM_BY_TITLE = {s.title: s.id for s in SYMPTOMS}


@lru_cache(maxsize=1)
def html_environment() -> jinja2.Environment:
    """The report's template loader, with HTML autoescaping on (log text must never become markup)."""
    return jinja2.Environment(loader=environment().loader, undefined=jinja2.StrictUndefined, autoescape=True,
                              keep_trailing_newline=True)


@dataclass
class Mark:
    ts: int
    kind: str  # milestone | progress | restart | cause | symptom
    href: str
    title: str
    x: float = 0.0
    y: float = 0.0
    estimated: bool = False  # one of an Event's repeats whose time Kubernetes did not keep: placed between the known


@dataclass
class Lane:
    key: str
    label: str
    group: str
    order: tuple
    marks: list[Mark] = field(default_factory=list)
    y: float = 0.0
    band: tuple[float, float] | None = None  # progress seen from .. to (x)
    activity: list[tuple[int, float]] = field(default_factory=list)  # the pod's chips' duty cycle: (sample end, %)
    duty: list[tuple[float, float, float, str]] = field(default_factory=list)  # drawn: x0, x1, opacity, tip
    tip: str = ""
    since: int = 0  # a pod's creation (else its first record): head lanes are restart attempts, drawn in this order


@dataclass
class Swimlane:
    width: int
    height: int
    groups: list[tuple[str, float]]  # label, y of its header
    lanes: list[Lane]
    ticks: list[tuple[float, str]]
    restarts: list[Mark]  # JobSet restarts, drawn across every lane
    stall: tuple[float, float, str] | None = None  # x from .. to, and its label: no progress from the last step to the end
    end: tuple[float, str] | None = None  # x of the end of the data (or --at), and its label
    labels: list[tuple[float, float, str]] = field(default_factory=list)  # x, y, text: the root cause, named

    @property
    def marks(self) -> list[Mark]:
        return [m for lane in self.lanes for m in lane.marks]


def _group(pod: str, model: Workload | None) -> tuple[str, tuple]:
    info = model.pods.get(pod) if model else None
    role, sl = (info.role, info.slice) if info else role_of(pod)[:2]
    if role == "head":
        return "head", (0, 0)
    if role == "worker":
        return (f"slice {sl}", (1, sl)) if sl is not None else ("workers", (1, 1 << 20))
    return "other pods", (2, 0)


class _Lanes:
    """Lanes by key; a resource (pod/container, Kind/name, node) finds its lane."""

    def __init__(self, d: Diagnosis, model: Workload | None):
        self.d, self.model = d, model
        self.lanes: dict[str, Lane] = {}
        self.node_pod = {p.node: p.name for p in sorted((model.pods.values() if model else []), key=lambda p: p.name)
                         if p.node}
        pods = sorted(model.pods.values(), key=lambda p: p.name) if model else []
        for p in pods:  # every head pod is a lane (one per restart attempt); every pod, while they fit
            if p.role == "head" or (len(pods) <= ALL_PODS and (p.ran or p.node or p.role == "worker")):
                self.pod(p.name)

    def pod(self, name: str) -> Lane:
        if name not in self.lanes:
            group, order = _group(name, self.model)
            node = self.model.node_of(name) if self.model else None
            tip = f"pod {name}" + (f" on node {node}" if node else "")
            since = self.model.pods[name].since if self.model and name in self.model.pods else 0
            self.lanes[name] = Lane(name, name, group, order + (name,), tip=tip, since=since)
        return self.lanes[name]

    def of(self, resource: str) -> Lane:
        kind, _, name = resource.partition("/")
        if kind == "Pod":
            return self.pod(name)
        if kind == "Node" or (not name and (kind in self.node_pod or kind.startswith("gke-"))):
            node = name or kind
            if node in self.node_pod:
                return self.pod(self.node_pod[node])
            return self.lanes.setdefault(node, Lane(node, node, "nodes", (3, 0, node), tip=f"node {node}"))
        if name and kind[:1].islower():  # pod/container
            return self.pod(kind)
        if not name and self.model and kind in self.model.pods:
            return self.pod(kind)
        label = f"JobSet {self.d.workload.jobset or ''}".strip()
        return self.lanes.setdefault("", Lane("", label, "JobSet", (4, 0, ""), tip="the JobSet, its Jobs and events"))


def _kind(summary: str, ids: list[str], d: Diagnosis, progress_ids: set[str]) -> str:
    root = set(d.hypotheses[0].evidence) if d.hypotheses else set()
    if summary.startswith(f"{d.failure_class}:") or (bool(set(ids) & root) and ":" in summary):
        return "cause"
    if set(ids) & progress_ids or summary.startswith(("training progress seen", "last progress line")):
        return "progress"
    symptom = _SYMPTOM_BY_TITLE.get(summary.split(":", 1)[0])
    if symptom:
        return "restart" if symptom in _RESTART_SYMPTOMS else "symptom"
    return "milestone"


def _resource_of(summary: str) -> str:
    """The "(resource)" a timeline row ends with, or ""."""
    if summary.endswith(")") and " (" in summary:
        inner = summary[summary.rindex(" (") + 2:-1]
        return inner if " " not in inner else ""
    return ""


def _restarts(model: Workload | None) -> list[tuple[int, bool, Record]]:
    """Every JobSet restart in the data, in order: each occurrence of its restart Events (an Event with a count is that
    many restarts), else of the other records that say it restarted (a Restarting condition); one per second."""
    sigs = [s for s in (model.symptoms if model else []) if s.target == "jobset_restarting"]
    events = [s for s in sigs if s.record.source == "event"]
    seen: set[str] = set()
    out: list[tuple[int, bool, Record]] = []
    for s in events or sigs:
        if s.record.id not in seen:
            seen.add(s.record.id)
            out += [(t, known, s.record) for t, known in occurrences(s.record) if t]
    out.sort(key=lambda o: (o[0], not o[1]))
    kept: list[tuple[int, bool, Record]] = []
    for o in out:
        if not kept or o[0] - kept[-1][0] > NS:  # the same restart logged twice (an event and its log copy)
            kept.append(o)
    return kept


def excerpt_of(rec: Record) -> str:
    return redact(rec.text[:200])


def _repeats(rec: Record | None, ts: int) -> list[tuple[int, bool]]:
    return occurrences(rec) if rec is not None and rec.count > 1 else [(ts, True)]


def swimlane(v: View, model: Workload | None = None) -> Swimlane:
    d, lanes = v.d, _Lanes(v.d, model)
    progress_ids = {s.record.id for s in model.progress} if model else set()
    sigs = [s for group in model.milestones.values() for s in group] + model.progress if model else []
    where = {s.record.id: s.record.resource for s in sigs}  # what a timeline row not in the evidence is about
    records = {s.record.id: s.record for s in model.symptoms} if model else {}
    restarts = _restarts(model)
    restart_href: str | None = None
    placed: set[str] = set()
    for i, t in enumerate(v.timeline, 1):
        ev = next((r for r in map(v.evidence_row, t.evidence) if r), None)
        kind = _kind(t.summary, t.evidence, d, progress_ids)
        known = next((where[x] for x in t.evidence if x in where), "")
        lane = lanes.of(ev.item.resource if ev else known or _resource_of(t.summary))
        tip = f"{t.timestamp} — {t.summary}" + (f" (×{t.count})" if t.count > 1 else "")
        href = f"#ev-{ev.n}" if ev else f"#tl-{i}"
        placed.update(t.evidence)
        if kind == "restart" and not lane.key and restarts:  # the JobSet's restarts are drawn from the data below
            restart_href = restart_href or href
            continue
        rec = next((records[x] for x in t.evidence if x in records), None)
        many = _repeats(rec, t.ts)
        for n, (ts, exact) in enumerate(many, 1):
            what = tip if len(many) == 1 else f"{format_ns(ts)} — {n} of {len(many)}: {t.summary}" + (
                "" if exact else " (time not kept by Kubernetes: between the first and the last)")
            lane.marks.append(Mark(ts, kind, href, what, estimated=not exact))
    for n, (ts, exact, rec) in enumerate(restarts, 1):
        row = v.evidence_row(rec.id)
        href = f"#ev-{row.n}" if row else restart_href or "#timeline-picture"
        what = f"{format_ns(ts)} — restart {n} of {len(restarts)}: {excerpt_of(rec)}" + (
            "" if exact else " (time not kept by Kubernetes: between the first and the last)")
        lanes.of(f"JobSet/{d.workload.jobset or ''}").marks.append(Mark(ts, "restart", href, what, estimated=not exact))
    for r in v.evidence:
        if r.item.id not in placed and r.ts and r.item.id not in {rec.id for _, _, rec in restarts}:
            kind = "cause" if d.hypotheses and r.item.id in d.hypotheses[0].evidence else "symptom"
            tip = f"{r.item.timestamp} — {r.item.excerpt}"
            lanes.of(r.item.resource).marks.append(Mark(r.ts, kind, f"#ev-{r.n}", tip))
    progress_row = next((i for i, t in enumerate(v.timeline, 1) if _kind(t.summary, t.evidence, d, progress_ids)
                         == "progress"), None)
    ticks = (model.progress if model else [])
    step = -(-len(ticks) // MAX_TICKS) or 1
    for s in ticks[::step]:
        if progress_row and s.record.id not in placed and s.record.pod:
            lanes.of(s.record.pod).marks.append(Mark(s.ts, "progress", f"#tl-{progress_row}",
                                                     f"{format_ns(s.ts)} — {redact(s.record.text[:200])}"))
    if model is not None and model.series is not None:  # the chips' duty cycle under each pod's lane
        for lane in lanes.lanes.values():
            lane.activity = model.series.activity(lane.key)
    end = model.now if model and model.now else None
    start = model.first_ts if model and model.first_ts else None
    last = model.last_progress.ts if model and model.last_progress else None
    stalled = last if d.status == "stalled" and last and end and end - last >= 5 * 60 * NS else None
    return _layout(list(lanes.lanes.values()), start, end, stalled, d.failure_class)


_TICK_STEPS_S = (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def _ticks(t0: int, t1: int, scale) -> list[tuple[float, str]]:
    """Round intervals (10 s ... 1 day), at most eight; the first label carries the date and the time zone."""
    span_s = max((t1 - t0) / NS, 1)
    step = next((x for x in _TICK_STEPS_S if span_s / x <= 8), _TICK_STEPS_S[-1]) * NS
    first = -(-t0 // step) * step
    out = []
    for i, t in enumerate(range(first, t1 + 1, step)):
        text = format_ns(t)
        label = f"{text[:10]} {text[11:16]} UTC" if i == 0 else (text[11:19] if step < 60 * NS else text[11:16])
        out.append((round(scale(t), 1), label))
    return out


def _collapse_quiet(lanes: list[Lane]) -> list[Lane]:
    """Worker lanes with nothing on them become one "N quiet workers" lane per group."""
    out: list[Lane] = []
    quiet: dict[str, list[Lane]] = {}
    for lane in lanes:
        if not lane.marks and (lane.group.startswith("slice") or lane.group == "workers"):
            quiet.setdefault(lane.group, []).append(lane)
        else:
            out.append(lane)
    for group, idle in quiet.items():
        if len(idle) == 1:
            out.append(idle[0])
            continue
        names = ", ".join(x.key for x in idle[:6]) + (" …" if len(idle) > 6 else "")
        out.append(Lane(f"quiet:{group}", f"{len(idle)} quiet workers", group, idle[0].order[:2] + ("~",),
                        tip=f"nothing cited or seen on: {names}"))
    return out


def _layout(lanes: list[Lane], start: int | None = None, end: int | None = None, stalled: int | None = None,
            cause: str = "") -> Swimlane:
    lanes = _collapse_quiet(lanes)
    for lane in lanes:  # head pods in the order they were created (restart attempts); a lane with no time last
        if lane.group == "head":
            first = lane.since or min((m.ts for m in lane.marks if m.ts), default=1 << 62)
            lane.order = (0, 0, first, lane.key)
    lanes.sort(key=lambda lane: lane.order)
    stamps = [m.ts for lane in lanes for m in lane.marks if m.ts] + [t for t in (start, end) if t]
    t0, t1 = (min(stamps), max(stamps)) if stamps else (0, 1)  # the axis runs to the end of the data (or --at)
    span = max(t1 - t0, 1)
    scale = lambda ts: LEFT + 10 + (ts - t0) / span * (WIDTH - LEFT - 60)  # noqa: E731
    groups: list[tuple[str, float]] = []
    y, current, restarts = TOP, None, []
    for lane in lanes:
        if lane.group != current:
            current = lane.group
            groups.append((current, y + 14))
            y += GROUP_H
        lane.y = y + LANE_H / 2
        y += LANE_H
        for m in lane.marks:
            m.x, m.y = round(scale(m.ts), 1), lane.y
        lane.marks.sort(key=lambda m: (m.kind == "progress", m.ts))  # progress ticks under the other marks
        prog = [m.x for m in lane.marks if m.kind == "progress"]
        lane.band = (min(prog), max(prog)) if len(prog) > 1 else None
        lane.duty = _duty(lane.activity, t0, t1, scale)
        restarts += [m for m in lane.marks if m.kind == "restart" and not lane.key]
    ticks = _ticks(t0, t1, scale) if stamps else []
    stall = None
    if stalled and end:
        minutes = (end - stalled) // (60 * NS)
        stall = (round(scale(stalled), 1), round(scale(end), 1), f"no progress for {minutes} min")
    end_mark = (round(scale(end), 1), "end of data") if end else None
    causes = sorted((m for lane in lanes for m in lane.marks if m.kind == "cause"), key=lambda m: m.ts)
    labels = [(causes[0].x, causes[0].y - 10, cause)] if causes and cause else []
    return Swimlane(WIDTH, int(y + 10), groups, lanes, ticks, restarts, stall, end_mark, labels)


def _duty(activity: list[tuple[int, float]], t0: int, t1: int, scale) -> list[tuple[float, float, float, str]]:
    """A lane's duty-cycle band: one segment per run of samples at the same tenth, as dark as the chips were busy."""
    out: list[tuple[float, float, float, str]] = []
    run: list[tuple[int, float]] = []
    for t, pct in activity + [(0, -1.0)]:
        if run and (round(pct, -1) != round(run[0][1], -1) or t - run[-1][0] > 60 * NS):
            a, b = max(run[0][0] - 60 * NS, t0), min(run[-1][0], t1)
            top = max(p for _, p in run)
            if b > a and top >= 1:
                out.append((round(scale(a), 1), round(scale(b), 1), round(min(top, 100) / 100 * 0.85 + 0.1, 2),
                            f"TPU duty cycle {top:.0f} % ({format_ns(run[0][0] - 60 * NS)} to {format_ns(run[-1][0])})"))
            run = []
        run.append((t, pct))
    return out


def render_html(d: Diagnosis, model: Workload | None = None, *, replay_files: int | None = None) -> str:
    """The page for one diagnosis; `model` (the analysis's workload) adds slices, nodes and progress ticks."""
    return html(redacted_view(d, replay_files=replay_files), model)


def html(v: View, model: Workload | None = None) -> str:
    """The page for a (redacted) view."""
    return html_environment().get_template("report.html.j2").render(v=v, d=v.d, s=swimlane(v, model))
