"""The incident as one self-contained HTML page: the report and an SVG swimlane of what happened where.

A lane per pod (or node, when no pod of the JobSet ran on it), grouped head first, then by slice; marks for start-up
milestones, progress, the root cause, each Kubernetes Event as its reason says (EVENT_KIND: a scheduling wait, a
back-off, a kill, a restart) and the failures that followed, each a link to the evidence or timeline entry it stands
for, with a <title> tooltip; skill/telling/picture.py lays them out. Inline CSS and SVG only: the page loads nothing.
Rendered through prompts/report.html.j2 with autoescaping, because every excerpt is untrusted log text.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from ..catalog import SYMPTOMS
from ..diagnosis import Diagnosis
from ..understanding.model import Workload, role_of
from ..reading.records import Record, format_ns, occurrences
from ..redact import redact
from .picture import Lane, Mark, Swimlane, layout
from .report import environment
from .view import View, redacted_view

MAX_TICKS, ALL_PODS = 60, 32
NS = 1_000_000_000
# what each failure symptom is drawn as; the others are "symptom" (a failure that followed the root cause)
_SYMPTOM_KIND = {"jobset_restarting": "restart", "crashloop": "backoff", "unschedulable": "waiting", "pod_killed": "kill"}
_SYMPTOM_BY_TITLE = sorted(((s.title, s.id) for s in SYMPTOMS), key=lambda t: -len(t[0]))
# a Kubernetes Event drawn as its reason says (kubelet, scheduler, autoscaler and JobSet reasons)
EVENT_KIND = {
    **dict.fromkeys(("FailedScheduling", "NotTriggerScaleUp", "TriggeredScaleUp", "FailedScaleUp"), "waiting"),
    **dict.fromkeys(("BackOff", "CrashLoopBackOff", "ImagePullBackOff", "BackOffPullImage"), "backoff"),
    **dict.fromkeys(("Killing", "Evicted", "Preempted", "Preempting", "OOMKilling", "TerminationByKubelet",
                     "NodeShutdown", "TaintManagerEviction"), "kill"),
    **dict.fromkeys(("Restarting", "RestartJobSet", "JobSetRestarted"), "restart"),
    **dict.fromkeys(("Scheduled", "Pulled", "Pulling", "Created", "Started", "SuccessfulCreate"), "milestone"),
}


@lru_cache(maxsize=1)
def html_environment() -> jinja2.Environment:
    """The report's template loader, with HTML autoescaping on (log text must never become markup)."""
    return jinja2.Environment(loader=environment().loader, undefined=jinja2.StrictUndefined, autoescape=True,
                              keep_trailing_newline=True)


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


def _kind(summary: str, ids: list[str], d: Diagnosis, progress_ids: set[str], event: str = "") -> str:
    """What a timeline row is drawn as: the root cause, progress, an Event by its reason, a symptom by what it is."""
    root = set(d.hypotheses[0].evidence) if d.hypotheses else set()
    if summary.startswith(f"{d.failure_class}:") or (bool(set(ids) & root) and ":" in summary):
        return "cause"
    if set(ids) & progress_ids or summary.startswith(("training progress seen", "last progress line")):
        return "progress"
    if event in EVENT_KIND:
        return EVENT_KIND[event]
    symptom = next((sid for title, sid in _SYMPTOM_BY_TITLE if summary.startswith((title + ":", title + " ("))), None)
    if symptom:
        return _SYMPTOM_KIND.get(symptom, "symptom")
    return "milestone"


def event_reason(source: str, excerpt: str) -> str:
    """The reason of an Event's excerpt ("FailedScheduling: 0/4 nodes ..."), "" for anything else."""
    head = excerpt.split(":", 1)[0]
    return head if source == "event" and head.isalnum() else ""


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
        kind = _kind(t.summary, t.evidence, d, progress_ids, event_reason(ev.item.source, ev.item.excerpt) if ev else "")
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
            kind = "cause" if d.hypotheses and r.item.id in d.hypotheses[0].evidence else \
                EVENT_KIND.get(event_reason(r.item.source, r.item.excerpt), "symptom")
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
    if model is not None and model.series is not None:  # the chips' duty cycle under each pod's lane (issue 42)
        for lane in lanes.lanes.values():
            lane.activity = model.series.activity(lane.key)
    end = model.now if model and model.now else None
    start = model.first_ts if model and model.first_ts else None
    last = model.last_progress.ts if model and model.last_progress else None
    stalled = last if d.status == "stalled" and last and end and end - last >= 5 * 60 * NS else None
    return layout(list(lanes.lanes.values()), start, end, stalled, d.failure_class, d.workload.jobset or "")


def render_html(d: Diagnosis, model: Workload | None = None, *, replay_files: int | None = None) -> str:
    """The page for one diagnosis; `model` (the analysis's workload) adds slices, nodes and progress ticks."""
    return html(redacted_view(d, replay_files=replay_files), model)


def html(v: View, model: Workload | None = None) -> str:
    """The page for a (redacted) view."""
    return html_environment().get_template("report.html.j2").render(v=v, d=v.d, s=swimlane(v, model))
