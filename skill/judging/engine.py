"""Orchestration: a source's data through records, the workload model and signals to a verdict."""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..catalog import STALL, UNKNOWN
from .classify import Verdict, classify
from .place import by_place, by_thread, refine
from ..understanding.death import killed, killed_process, uncaught, workload_process
from ..understanding.digest import Digest
from ..errors import AmbiguousWorkload, InputError, UnknownJobSet
from ..understanding.facts import FactReader, fact_signals, path_settings, workload_roles
from ..understanding.model import Workload
from ..understanding.metrics import read_series
from ..understanding.node_series import condition_signals, heard_from, restart_signals
from ..reading.objects import jobset_records, node_records, pod_records
from ..understanding.queries import (Scope, ahead_queries, context_queries, last_words_queries, node_queries, presence_queries,
                                    workload_queries)
from ..reading.records import Record, parse_ts, record_from_entry, record_from_event
from ..understanding.signals import Matcher, Signal, addressed_to_a_reader
from ..reading.sources.base import LogQuery, Source, SourceStats

NS = 1_000_000_000
_MATCHER: Matcher | None = None


def matcher() -> Matcher:
    global _MATCHER
    if _MATCHER is None:
        _MATCHER = Matcher()
    return _MATCHER


@dataclass(frozen=True)
class RunStats:
    """What a run read, as the budget and data_gaps report it: the source's counts, with the entries the source
    handed over that could not be normalised moved from read to skipped."""

    logging_requests: int
    entries_read: int
    entries_skipped: int
    gaps: tuple[str, ...]
    files: int | None = None  # replay: the export files read

    @classmethod
    def of(cls, src: SourceStats, unusable: list[str]) -> RunStats:
        gaps = tuple(dict.fromkeys([*src.gaps, *unusable]))
        return cls(src.logging_requests, src.entries_read - len(unusable), src.entries_skipped + len(unusable), gaps,
                   src.files)


@dataclass
class Analysis:
    """Everything one run found, before it is turned into the Diagnosis contract."""

    model: Workload
    verdict: Verdict
    causes: list[Signal]
    symptoms: list[Signal]
    stats: RunStats
    seconds: float
    digest: Digest | None = None  # every record taken, grouped into templates (skill.understanding.digest), when asked for
    queries: tuple[LogQuery, ...] = ()  # the Logging filters the run read, in order (what live sends, replay evaluates)
    context: tuple[Record, ...] = ()  # what the root cause's containers printed right after its lines, by time
    last_words: tuple[Record, ...] = ()  # a stalled run: what its program printed from its last step on, by time


def jobsets_in(objects: Iterable[dict]) -> set[str]:
    """JobSet names named by the objects: JobSets themselves and the jobset-name label of pods."""
    names = set()
    for o in objects:
        meta = o.get("metadata") or {}
        if o.get("kind") == "JobSet" and meta.get("name"):
            names.add(meta["name"])
        label = (meta.get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name")
        if o.get("kind") == "Pod" and label:
            names.add(label)
    return names


def _belongs(obj: dict, jobset: str) -> bool:
    meta = obj.get("metadata") or {}
    kind = obj.get("kind")
    if kind == "JobSet":
        return meta.get("name") == jobset
    if kind == "Pod":
        label = (meta.get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name")
        return label == jobset if label else str(meta.get("name", "")).startswith(jobset + "-")
    if kind == "Event":
        name = str((obj.get("involvedObject") or {}).get("name", ""))
        # ... and any pod the scheduler preempted (a standby workload making room for a hot swap), as queries.py reads
        return name == jobset or name.startswith(jobset + "-") or f"-{jobset}-" in name \
            or (obj.get("involvedObject") or {}).get("kind") == "Node" or obj.get("reason") == "Preempted"
    return kind == "Node"


class Collector:
    """Turns raw entries and objects into records once each, feeding the model and collecting signals."""

    def __init__(self, model: Workload, digest: bool = False):
        self.model = model
        self.causes: list[Signal] = []
        self.symptoms: list[Signal] = []
        self.unusable: list[str] = []  # gaps of entries read that could not be normalised: skipped, not read
        self._seen: set[str | None] = set()
        self._object_events: dict[tuple, list[tuple[int, int]]] = {}
        self._copies: dict[tuple, set[int]] = {}  # (object, text) -> times its events-log copies were logged at
        self.m = matcher()
        self.digest = Digest() if digest else None
        self.facts = FactReader()

    def index_object_events(self, objects: list[dict]) -> None:
        """Events also exported with kubectl are cited by their uid; their copies in the events log are skipped."""
        for obj in objects:
            if obj.get("kind") == "Event":
                rec = record_from_event(obj)
                first = parse_ts(obj.get("firstTimestamp")) or rec.ts
                self._object_events.setdefault((rec.obj, rec.text), []).append((first, rec.ts))

    def _known_object_event(self, rec: Record) -> bool:
        if any(a - NS <= rec.ts <= b + NS for a, b in self._object_events.get((rec.obj, rec.text), ())):
            self._copies.setdefault((rec.obj, rec.text), set()).add(rec.ts)
            return True
        return False

    def _with_copies(self, rec: Record) -> Record:
        """An Event with a count learns the times of its repeats that the events log holds (skipped as copies)."""
        if rec.count > 1:
            first = rec.first_ts or rec.ts
            rec.times = tuple(sorted(t for t in self._copies.get((rec.obj, rec.text), ())
                                     if first - NS <= t <= rec.ts + NS))
        return rec

    def take_entries(self, pairs: Iterable[tuple[LogQuery, dict]]) -> None:
        for _q, entry in pairs:
            key = entry.get("insertId")
            if key in self._seen:
                continue
            self._seen.add(key)
            try:
                rec = record_from_entry(entry)
            except (KeyError, TypeError, AttributeError, ValueError):
                # the source counted it as read; it is skipped instead, so each input entry is counted once
                self.unusable.append(f"entry {key!r}: not a usable LogEntry; skipped it")
                continue
            if rec.source == "event" and self._known_object_event(rec):
                continue
            self.take(rec)

    def take_objects(self, objects: list[dict]) -> None:
        for obj in objects:
            kind = obj.get("kind")
            if kind == "Event":
                io = obj.get("involvedObject") or {}
                if io.get("kind") == "Node" and io.get("name") not in self.model.nodes and not _kills_ours(
                        self.model, obj):
                    continue
                self.take(self._with_copies(record_from_event(obj)))
            elif kind == "Pod":
                for rec in pod_records(obj):
                    self.take(rec)
            elif kind == "JobSet":
                for rec in jobset_records(obj):
                    self.take(rec)
            elif kind == "Node" and obj["metadata"].get("name") in self.model.nodes:
                for rec in node_records(obj):
                    self.take(rec)

    def take(self, rec: Record) -> None:
        self.model.add_record(rec)
        self.facts.add(rec)
        sigs = self.m.match(rec)
        if self.digest is not None:
            self.digest.add(rec, sigs)
        for sig in sigs:
            if sig.kind == "milestone":
                self.model.add_milestone(sig)
            elif sig.kind == "cause":
                self.causes.append(sig)
            else:
                self.symptoms.append(sig)




def _kills_ours(model: Workload, event: dict) -> bool:
    """A Node Event that reports the kernel killing a Pathways server's process (by its name): the workload's, even on
    a node the data does not tie to its pods."""
    comm = killed_process(str(event.get("message") or ""))
    return comm is not None and workload_process(model, comm, None)


# Kueue names the Workload of a JobSet "jobset-<JobSet name>-<5 hex of its hash>" (kubernetes-sigs/kueue,
# pkg/controller/jobframework/workload_names.go, GetWorkloadNameForOwnerWithGVK): a JobSet Kueue never admitted has no
# pod to carry its label, and its Workload's Events may be all the data holds of it.
_KUEUE_WORKLOAD = re.compile(r"^jobset-(?P<name>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)-[0-9a-f]{5}$")


def kueue_jobsets(objects: Iterable[dict]) -> set[str]:
    """JobSet names read from the names of Kueue Workloads the Events are about."""
    names = set()
    for o in objects:
        inv = o.get("involvedObject") or {}
        if o.get("kind") == "Event" and inv.get("kind") == "Workload" and (m := _KUEUE_WORKLOAD.match(inv.get("name") or "")):
            names.add(m.group("name"))
    return names


def resolve_jobset(source: Source, objects: list[dict], jobset: str | None, inventory=None) -> str:
    """The JobSet to diagnose: the one named (it must be in the data), or the only one in the data."""
    if jobset:
        check_jobset(jobset, jobsets_in(objects) | set(inventory.jobsets if inventory is not None else ()), objects)
        return jobset
    names = jobsets_in(objects)
    if not names and inventory is not None:
        names = set(inventory.jobsets)
    if not names:
        names = kueue_jobsets(objects)  # known only by Kueue's Workloads (never admitted, no pod yet)
    if not names:
        raise InputError("no Pathways JobSet found in the data (no JobSet object, no pods or logs with a "
                         "jobset.sigs.k8s.io/jobset-name label); name one with --jobset")
    if len(names) > 1:
        raise AmbiguousWorkload("the data holds several JobSets; choose one with --jobset: " + ", ".join(sorted(names)))
    return names.pop()


def check_jobset(jobset: str, present: set[str], objects: Iterable[dict] = ()) -> None:
    """Raise UnknownJobSet when the data names JobSets and `jobset` is none of them (nor a prefix of an object's name,
    as pods and events of an unlabelled JobSet are named); a typo must not read as a healthy, empty workload."""
    if not present or jobset in present:
        return
    prefix = jobset + "-"
    if any(str((o.get("metadata") or {}).get("name", "")).startswith(prefix) or
           str((o.get("involvedObject") or {}).get("name", "")).startswith(prefix) for o in objects):
        return
    close = difflib.get_close_matches(jobset, sorted(present), n=1, cutoff=0.6)
    raise UnknownJobSet(f"JobSet {jobset!r} is not in the data" + (f" (did you mean {close[0]!r}?)" if close else "")
                        + "; JobSets present: " + ", ".join(sorted(present)))


def analyse(source: Source, scope: Scope, objects: list[dict], now_ns: int | None = None, *,
            digest: bool = False) -> Analysis:
    """Read the workload's evidence from the source in two phases and classify it (with the digest, if asked)."""
    t0 = time.monotonic()
    model = Workload(jobset=scope.jobset, namespace=scope.namespace, cluster=scope.cluster, project=scope.project)
    mine = [o for o in objects if _belongs(o, scope.jobset)]
    model.add_objects(mine)
    col = Collector(model, digest)
    col.index_object_events([o for o in mine if o.get("kind") == "Event"])
    q1 = workload_queries(scope)
    expect = getattr(source, "expect", None)
    if expect is not None:  # a source that pays per scan reads phases two and three with phase one
        expect(ahead_queries(scope))
    col.take_entries(source.read(q1))
    nodes = sorted(model.nodes)
    q2 = node_queries(scope, nodes) if nodes else []
    if q2:
        col.take_entries(source.read(q2))
    q3 = presence_queries(scope, nodes, model.logs_seen)
    if q3:
        col.take_entries(source.read(q3))
    col.take_objects(mine)
    model.now = now_ns or source.stats.last_ts or scope.end_ns
    model.symptoms = col.symptoms
    model.finish()
    model.location = model.location or scope.location  # the records' own label, else the caller's
    col.causes += read_series(getattr(source, "metrics", None), model, now_ns)
    if model.series is not None:  # the nodes' conditions and the JobSet's restart gauge (skill/understanding/node_series)
        col.causes += condition_signals(model.series, heard_from(col.causes + col.symptoms))
        col.symptoms += restart_signals(model.series, model)
    col.causes += fact_signals(col.facts.facts(workload_roles(mine)))
    col.symptoms += uncaught(model, col.symptoms)  # a program's death as its own output tells it
    col.symptoms += killed(model, col.causes, col.symptoms)  # ... and the kernel's OOM kill of one of its processes
    model.settings = path_settings(mine)
    verdict = classify(model, col.causes, col.symptoms)
    continued = _continued(verdict)
    q4 = context_queries(scope, continued)
    q5 = _last_words_queries(scope, model, verdict)
    late = list(source.read(q4 + q5)) if q4 or q5 else []  # phases four and five: one read
    context = _context([p for p in late if p[0] in q4], continued) if q4 else ()
    if verdict.failure_class == UNKNOWN and (placed := refine(model, verdict.root, context)) is not None:
        verdict = by_place(verdict, *placed)  # a death no signature names, read by where and when it died
    words = _records([p for p in late if p[0] in q5]) if q5 else ()
    if verdict.failure_class == STALL and words:
        verdict = by_thread(model, verdict, words)  # a stall after one of the program's threads died: that death
    return Analysis(model, verdict, col.causes, col.symptoms, RunStats.of(source.stats, col.unusable),
                    time.monotonic() - t0, col.digest, tuple(q1 + q2 + q3 + q4 + q5), context, words)


def _last_words_queries(scope: Scope, model: Workload, verdict: Verdict) -> list[LogQuery]:
    """Phase five, only for a run that stopped stepping: the stream of the program whose steps stopped."""
    last = model.last_progress
    if verdict.failure_class != STALL or last is None or not (last.record.pod and last.record.container):
        return []
    return last_words_queries(scope, last.record.pod, last.record.container, last.ts, max(model.now, last.ts))


def _records(pairs: Iterable[tuple[LogQuery, dict]]) -> tuple[Record, ...]:
    """The entries as records, each once, by time; an entry that is no LogEntry was counted by the phases that matter,
    and a line addressed to an automated reader is never read as what a program said (it is data, not evidence)."""
    out: dict[str, Record] = {}
    for _q, entry in pairs:
        try:
            r = record_from_entry(entry)
        except (KeyError, TypeError, AttributeError, ValueError):
            continue
        if not addressed_to_a_reader(r.text):
            out.setdefault(r.id, r)
    return tuple(sorted(out.values(), key=lambda r: (r.ts, r.id)))


def _continued(verdict: Verdict) -> list[tuple[str, str, int]]:
    """The root cause's container lines whose continuation is worth reading: one per container stream, first first."""
    out: dict[tuple[str, str], int] = {}
    for s in sorted(verdict.root.strong_signals, key=lambda s: s.ts):
        r = s.record
        if r.source == "container" and r.pod and r.container:
            out.setdefault((r.pod, r.container), r.ts)
    return [(pod, container, ts) for (pod, container), ts in out.items()]


# The parts of a Python traceback before its exception line (and the notes that chain one to the next).
TRACEBACK_PART = re.compile(r"^(?:\s|$|Traceback \(most recent call last\)|The above exception was|During handling of the above)")
# A line that opens a statement of its own (a glog prefix, Python logging's level prefix) ends a continuation.
NEW_STATEMENT = re.compile(r"^(?:[IWEF]\d{4} \d\d:\d\d|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[:\s])")


def _context(pairs: Iterable[tuple[LogQuery, dict]], lines: list[tuple[str, str, int]]) -> tuple[Record, ...]:
    """Per root-cause line, the lines its container printed right after it, up to the next statement of its own."""
    streams: dict[tuple[str | None, str | None], list[Record]] = {}
    for r in _records(pairs):
        streams.setdefault((r.pod, r.container), []).append(r)
    out: list[Record] = []
    for pod, container, ts in lines:
        mine = sorted(streams.get((pod, container), []), key=lambda r: (r.ts, r.id))
        before = [r for r in mine if r.ts < ts]
        start = len(before)
        while start and TRACEBACK_PART.match(before[start - 1].text):
            start -= 1  # the traceback the line ends: its frames, code lines, carets and chaining notes
        if any(r.text.startswith("Traceback (most recent call last)") for r in before[start:]):
            # the traceback, and the statement the program made just before it: what it was doing when it raised
            out += before[max(0, start - 1):]
        for i, r in enumerate(r for r in mine if r.ts >= ts):
            if i and NEW_STATEMENT.match(r.text):
                break
            out.append(r)
    return tuple(sorted({r.id: r for r in out}.values(), key=lambda r: (r.ts, r.id)))
