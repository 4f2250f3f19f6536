"""Where the time series decide a stall: the chips' own duty cycle says whether the program was still working at the end
of the data (a quiet run with few step lines) or every chip had stopped (a stall, even one that printed nothing).
Pure: the facts come from skill.understanding.metrics."""

from __future__ import annotations

from typing import Literal

from ..catalog.types import RuleContext
from ..understanding.metrics import SAMPLE_NS, stall_signals
from ..understanding.model import NO_LAUNCH, Workload
from ..understanding.signals import Signal
from ..reading.records import format_ns
from .ranking import Hypo
from ..understanding.status import FAILURES

NS = 1_000_000_000
LATE_NS = 5 * SAMPLE_NS  # series that end this long before the rest of the data cannot speak for the end


def series_stall(c: RuleContext) -> Hypo | Literal[False] | None:
    """The series' verdict on a stall: a Hypo (every chip idle for the stall window to the end while the JobSet still
    ran), False (a chip worked in the last samples: no stall, however quiet the logs) or None (no series for the
    workload's chips, series that end early, or a JobSet that ended: the logs decide)."""
    model, cls, rule = c.model, c.cls, c.absence
    assert cls is not None and rule is not None, "a stall check runs for a class with an absence rule"
    f = model.series
    if f is None or not f.has_activity or f.last_sample < model.now - LATE_NS:
        return None
    if model.terminal_state or model.condition("Completed") or model.condition("Failed"):
        return None
    if f.busy_at_end(model.now):
        return False
    since = f.idle_since()
    last = model.last_progress
    if since is None or f.last_sample - since + SAMPLE_NS < rule.wait_s * NS:
        return None
    start = max(since - SAMPLE_NS, last.ts if last else 0)  # a sample covers the minute before its end time
    minutes = (model.now - start) // (60 * NS)
    steps = (f"; the last progress line is {(model.now - last.ts) // (60 * NS)} min before the end" if last
             else "; the program printed no progress line")
    busy = f.last_busy()
    if busy is None and last is None:
        return None  # no chip ever worked and no step was ever printed: nothing stopped, it never started (the logs decide)
    detail = (f"every chip of the workload at 0 % duty cycle for {minutes} min to the end of the data"
              + (f" (the last working sample {format_ns(busy[0])}, {busy[1]:.0f} %)" if busy else " (none worked)")
              + steps)
    # what the logs show of the stop, as the logs' own rule cites it: the program restating its step, no launches
    after = [s for s in model.restated if last and s.ts > last.ts][:1]
    after += [s for s in sorted(model.milestones.get("worker_launches", []), key=lambda s: s.ts)
              if last and s.ts > last.ts and NO_LAUNCH.search(s.record.text)][:1]
    return Hypo(cls.id, rule.score, [*([last] if last else []), *after, *stall_signals(f)], start, detail,
                entity_kinds=("Pod", "Container"))


def suspect_hosts(model: Workload, symptoms: list[Signal], root: Hypo, notes: list[str]) -> dict[str, list[str]]:
    """Physical hosts (gce_topology_host) behind two or more of the workload's node names that each failed: the same
    machine failing across attempts under new names, a hardware suspicion worth naming (google/skills
    gke-ai-troubleshooting-jobset-interruption groups nodes by this label for exactly that). Each is a note too."""
    f = model.series
    if f is None or not (repeated := f.repeated_hosts()):
        return {}

    def node(s: Signal) -> str | None:
        r = s.record
        return r.node or (r.obj if r.kind == "Node" else None) or model.node_of(r.pod)

    failed = {node(s) for s in symptoms if s.target in FAILURES and s.weight >= 0.5}
    failed |= {node(s) for s in root.strong_signals}
    out = {host: hit for host, nodes in repeated.items() if len(hit := [n for n in nodes if n in failed]) > 1}
    notes += [f"nodes {', '.join(n)} ran on one physical host {h} (gce_topology_host) and failed each time"
              for h, n in out.items()]
    return out
