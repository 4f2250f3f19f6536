"""What failed when no class explains it, and a stall that came before such a failure: the first fatal line (the
container to read next) and, when the program had stopped stepping long before, the stall it followed. Pure: no I/O."""

from __future__ import annotations

import re

from ..catalog import CLASSES, STALL, UNKNOWN
from ..catalog.symptoms import FATAL_SEVERITIES
from ..understanding.lives import restart_times
from ..understanding.model import Workload
from ..understanding.signals import Signal
from .ranking import Hypo, refuses_placement

NS = 1_000_000_000


GLOG_LETTER = re.compile(r"[IWEF]\d{4} ")  # a glog prefix: its letter, not the entry's severity, says how bad


def unknown_root(symptoms: list[Signal], failure_syms: list[Signal]) -> Hypo:
    """Something failed that no class explains: located at the first fatal line (the container to read next)."""
    fatal = first_fatal(symptoms)
    located = fatal or sorted(failure_syms, key=lambda s: s.ts)
    said = [s for s in located if not s.record.text.startswith("PC: @")]
    return Hypo(UNKNOWN, 0.5, located, located[0].ts, (said[-1] if fatal else located[0]).record.text[:160],
                entity_kinds=("Pod", "Container", "Node"))


STALLED_BEFORE_NS = 300 * NS  # steps stopped at least this long (and STALL_INTERVALS intervals) before an unexplained failure
STALLED_BEFORE_SCORE = 0.6


def stalled_then_failed(model: Workload, failure_syms: list[Signal]) -> Hypo | None:
    """An unexplained failure long after the program stopped stepping (a watchdog that kills a hung program, a liveness
    probe): the stall came first, and is the earliest thing the data shows going wrong."""
    first = min(failure_syms, key=lambda s: s.ts)
    before = [s for s in model.progress if s.ts < first.ts]
    interval = model.step_interval_ns()
    if not before or interval is None:
        return None
    last = max(before, key=lambda s: s.ts)
    intervals = next(c.absence.intervals for c in CLASSES if c.absence and c.absence.kind == "progress_stopped")
    gap = first.ts - last.ts
    if gap < max(intervals * interval, STALLED_BEFORE_NS):
        return None
    # what failed, as its container said it (a termination, a fatal line) rather than the JobSet's restart
    said = min((s for s in failure_syms if s.record.source in ("container", "object") and s.ts - first.ts < 60 * NS),
               key=lambda s: s.ts, default=first)
    return Hypo(STALL, STALLED_BEFORE_SCORE, [last, said], last.ts,
                f"its last progress line is {gap // (60 * NS)} min before the first failure "
                f"('{_cut(said.record.text, 100)}'); steps came every {secs(interval)}",
                entity_kinds=("Pod", "Container"))


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def secs(ns: int) -> str:
    return f"{ns / NS:.0f}s" if ns >= NS else f"{ns / NS:.1f}s"


def span(ns: int) -> str:
    """A duration in words: 42s, 8 min, 3 h 5 min."""
    if ns < 60 * NS:
        return secs(ns)
    minutes = round(ns / (60 * NS))
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")


def first_fatal(symptoms: list[Signal]) -> list[Signal]:
    """The earliest fatal line (glog F, a signal page, a fatal severity, or any line a program died on: an uncaught
    exception that ended its output) and the error lines its process printed just before it."""
    errors = [s for s in symptoms if s.target == "error_line" and s.record.source == "container"]
    died = {s.record.id for s in symptoms if s.target == "program_died"}  # its own last words (understanding.death)
    fatal = sorted((s for s in errors if (s.record.text[:1] == "F" and s.record.text[1:5].isdigit())
                    or s.record.text.startswith("*** SIG") or s.record.severity in FATAL_SEVERITIES
                    or s.record.id in died), key=lambda s: s.ts)
    if not fatal:
        return []
    f = fatal[0]
    lead = sorted({s.record.id: s for s in errors if s.record.pod == f.record.pod and s is not f
                   and (s.record.text[:1] == "E" if GLOG_LETTER.match(s.record.text) else s.record.severity == "ERROR")
                   and f.ts - 60 * NS <= s.ts <= f.ts}.values(), key=lambda s: s.ts)
    # absl's failure-signal handler prints where it stopped on the next line ("PC: @ 0x... function")
    trail = [s for s in errors if s.record.pod == f.record.pod and s.record.text.startswith("PC: @")
             and 0 <= s.ts - f.ts <= 2 * NS][:1]
    return lead[-3:] + [f] + trail


def refused_after_a_death(model: Workload, root: Hypo, failure_syms: list[Signal], symptoms: list[Signal]
                          ) -> list[Signal]:
    """The root refuses pods a place (capacity, quota, selectors) only after a restart (or, in logs alone, the head's
    new pod) that followed a program's death: the refused pods are the replacements, and the death, which no
    signature names, came first. That death's failure lines; none otherwise."""
    if not refuses_placement(root):
        return []
    times, _marks = restart_times(model, symptoms)
    before = [t for t in times if t <= root.first_ts]
    if not before:
        return []
    died = [s for s in failure_syms if s.ts < before[-1] and s.target != "jobset_restarting"
            and (s.target == "program_died" or (s.record.pod in model.pods and model.pods[s.record.pod].ran))]
    return sorted(died, key=lambda s: s.ts)


def put_death_first(model: Workload, roots: list[Hypo], failure_syms: list[Signal], symptoms: list[Signal],
                    notes: list[str]) -> tuple[list[Hypo], list[Signal]]:
    """The roots and the failures to judge without them: a first root that only refused the replacements of an
    unread death gives way to that death (`refused_after_a_death`)."""
    if not roots or not (died := refused_after_a_death(model, roots[0], failure_syms, symptoms)):
        return roots, failure_syms
    notes.append(f"{roots[0].failure_class} refuses the pods that replaced those of a death no signature names: the "
                 "death came first")
    return roots[1:], died
