"""The view model every renderer shares: one structure, built once from a Diagnosis, that the JSON, Markdown, HTML and
terminal renderers all render section by section, in the same order.

The view only rearranges what the Diagnosis holds: the summary said once, evidence and timeline in time order,
identical timeline rows merged with a count, links as numbered footnotes, the pods of one replica grouped across
restart attempts. It computes no new finding; the JSON contract is untouched. SECTIONS is the one list of what a report
shows and in which order; a section is there or not for every format alike (tests/test_sections.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..diagnosis import Diagnosis, Entity, Evidence
from ..reading.names import replica
from ..reading.records import parse_ts
from ..redact import redact_obj


@dataclass(frozen=True)
class Section:
    """One part of a report: its id, its heading, the Diagnosis (JSON) fields it shows, and when it is shown."""

    id: str
    title: str
    fields: tuple[str, ...]
    shown: Callable[[Diagnosis], bool] = lambda d: True


SECTIONS: tuple[Section, ...] = (
    Section("summary", "Summary", ("failure_class", "status", "summary", "confidence", "workload")),
    Section("root_cause", "Root cause", ("root_cause",)),
    Section("evidence", "Evidence", ("evidence",)),
    Section("timeline", "Timeline", ("timeline",)),
    Section("fix", "Fix", ("fix",)),
    Section("check_next", "Check next (read-only)", ("next_checks",), lambda d: bool(d.next_checks)),
    Section("other_hypotheses", "Other hypotheses", ("hypotheses",)),
    Section("observations", "Observations (not the cause)", ("observations",), lambda d: bool(d.observations)),
    Section("insufficient", "Not enough evidence for a firm verdict", ("sufficiency",),
            lambda d: not d.sufficiency.sufficient),
    Section("data_gaps", "What could not be checked", ("data_gaps",)),
    Section("footer", "About this report", ("budget", "schema")),
)
BY_SECTION = {s.id: s for s in SECTIONS}


@dataclass
class EvidenceRow:
    n: int  # 1-based position in time order; the HTML anchor is ev-<n>
    item: Evidence
    ts: int
    note: int | None  # footnote number of its link


@dataclass
class TimelineRow:
    timestamp: str
    summary: str
    evidence: list[str]
    ts: int
    count: int = 1


@dataclass
class Place:
    """One implicated thing; the pods of one replica (a new one per restart attempt) are one place."""

    kind: str
    name: str
    attempts: list[str] = field(default_factory=list)  # pod-name suffixes, oldest first, when more than one
    containers: list[str] = field(default_factory=list)


@dataclass
class View:
    d: Diagnosis
    sections: list[Section]  # the sections this diagnosis shows, in order: every renderer walks this list
    headline: str  # what failed, without the status the heading already shows and the explanation (the root cause's)
    workload_line: str
    workload_parts: list[tuple[str, str]]  # (what, value): project, location, cluster, namespace, where known
    places: list[Place]
    evidence: list[EvidenceRow]
    timeline: list[TimelineRow]
    links: list[str]
    footer: str

    def evidence_row(self, record_id: str) -> EvidenceRow | None:
        return next((r for r in self.evidence if r.item.id == record_id), None)


def _ts(value: str | None) -> int:
    return parse_ts(value) if value else 0


def _headline(d: Diagnosis) -> str:
    """The summary without the explanation (shown on its own) and without "(status)" (shown in the heading)."""
    head, expl = d.summary.strip(), d.root_cause.explanation.strip()
    if expl and head.endswith(expl) and head != expl:
        head = head[: -len(expl)].rstrip()
    for suffix in (f" ({d.status}).", f" ({d.status})"):
        if head.endswith(suffix):
            head = head[: -len(suffix)] + "."
    return head


def _places(entities: list[Entity], first_seen: dict[str, int]) -> list[Place]:
    out: dict[tuple[str, str], Place] = {}
    containers: dict[str, list[str]] = {}
    for e in entities:
        if e.kind == "Container" and "/" in e.name:
            pod, container = e.name.split("/", 1)
            containers.setdefault(pod, []).append(container)
            e = Entity(kind="Pod", name=pod)
        if e.kind != "Pod":
            out.setdefault((e.kind, e.name), Place(e.kind, e.name))
            continue
        name = r[0] if (r := replica(e.name)) else e.name
        place = out.setdefault(("Pod", name), Place("Pod", name))
        if e.name not in place.attempts:
            place.attempts.append(e.name)
    for place in out.values():
        pods = sorted(place.attempts, key=lambda p: (first_seen.get(p) or 1 << 62))  # stable: entity order on ties
        place.containers = list(dict.fromkeys(c for p in pods for c in containers.get(p, [])))
        if len(pods) == 1:
            place.name, place.attempts = pods[0], []
        else:
            place.attempts = [p[len(place.name) + 1:] for p in pods]
    return list(out.values())


def _first_seen(d: Diagnosis) -> dict[str, int]:
    """When each pod first appears in the evidence or the timeline (ns)."""
    seen: dict[str, int] = {}
    texts = [(e.resource, _ts(e.timestamp)) for e in d.evidence] + [(t.summary, _ts(t.timestamp)) for t in d.timeline]
    pods = {e.name.split("/")[0] for e in d.root_cause.entities if e.kind in ("Pod", "Container")}
    for text, ts in texts:
        for pod in pods:
            if ts and pod in text and ts < seen.get(pod, 1 << 62):
                seen[pod] = ts
    return seen


def _timeline(d: Diagnosis) -> list[TimelineRow]:
    rows: dict[tuple, TimelineRow] = {}
    for t in d.timeline:
        key = (t.timestamp, t.summary, tuple(t.evidence))
        if key in rows:
            rows[key].count += 1
        else:
            rows[key] = TimelineRow(t.timestamp, t.summary, list(t.evidence), _ts(t.timestamp))
    return sorted(rows.values(), key=lambda r: r.ts)  # sorted() is stable: equal times keep their order


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def footer(d: Diagnosis, replay_files: int | None) -> str:
    b = d.budget
    skipped = f", {b.entries_skipped} skipped" if b.entries_skipped else ""
    if replay_files is not None or b.logging_requests == 0:
        files = f"{replay_files} exported file{'s' * (replay_files != 1)}" if replay_files is not None else "exported files"
        return f"Replayed {files}: {b.entries_read} log {_entries(b.entries_read)} read{skipped}, in {b.seconds:.2f} s."
    return (f"Read {b.entries_read} log {_entries(b.entries_read)}{skipped} with {b.logging_requests} Cloud Logging "
            f"request{'s' * (b.logging_requests != 1)} in {b.seconds:.2f} s.")


def view(d: Diagnosis, *, replay_files: int | None = None) -> View:
    """The report's content, arranged for reading. `replay_files`: how many files a replay read, for the footer."""
    w = d.workload
    known = [(k, v) for k, v in (("project", w.project), ("location", w.location), ("cluster", w.cluster),
                                 ("namespace", w.namespace)) if v]
    parts = [f"{k} `{v}`" for k, v in known]
    ordered = sorted(d.evidence, key=lambda e: (not e.timestamp, _ts(e.timestamp)))  # untimed facts last
    links: list[str] = []
    rows = []
    for n, e in enumerate(ordered, 1):
        if e.link:
            links.append(e.link)
        rows.append(EvidenceRow(n, e, _ts(e.timestamp), len(links) if e.link else None))
    return View(d=d, sections=[s for s in SECTIONS if s.shown(d)], headline=_headline(d),
                workload_line=", ".join(parts) or "unknown", workload_parts=known, places=_places(d.root_cause.entities, _first_seen(d)), evidence=rows,
                timeline=_timeline(d), links=links, footer=footer(d, replay_files))


def redacted_view(d: Diagnosis, *, replay_files: int | None = None) -> View:
    """The view of a diagnosis with every field a log value can reach redacted: what every renderer starts from."""
    return view(Diagnosis.model_validate(redact_obj(d.to_json_dict())), replay_files=replay_files)
