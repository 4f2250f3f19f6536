"""The run's lives (issue 41): its attempts, and per attempt the programs that stepped, when each began, stepped and
ended. An SRE reads a restarted run by its *last* attempt: one that steps steadily after the failure has recovered;
one whose replacement pods wait for capacity is waiting, not crash-looping.

Attempts are split at the JobSet's restarts, read from what the data holds of them: the restart Events (each
occurrence of a folded Event), the Restarting condition, and the pods' `jobset.sigs.k8s.io/restart-attempt` labels
with their creation times (JobSet's controller recreates every child Job on a restart and labels the new pods with
the attempt's number: kubernetes-sigs/jobset, pkg/controllers/jobset_controller.go, `RestartsKey`); in logs alone,
by a replica's second pod name (`recreations`). A restart known only by its count (`status.restarts` with no time) is
counted, not placed. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..reading.names import is_head_pod, replica
from .model import Workload
from .signals import Signal

NS = 1_000_000_000
SAME_RESTART_NS = 60 * NS  # restart marks this close together are one restart (an Event, its condition, new pods)
# A last attempt has recovered once it has stepped this long and this many times since its first step, up to the end
# (the classifier's own "resolved" threshold: 15 min of steady activity after a fault).
STEADY_NS = 15 * 60 * NS
STEADY_LINES = 5


@dataclass
class Life:
    """One attempt of the run: from `start` (0: the beginning of the data) to `end` (None: still the current one)."""

    index: int
    start: int
    end: int | None = None
    steps: list[Signal] = field(default_factory=list)  # the progress lines read in it, by time

    @property
    def first_step(self) -> Signal | None:
        return self.steps[0] if self.steps else None

    @property
    def last_step(self) -> Signal | None:
        return self.steps[-1] if self.steps else None


def step_number(s: Signal | None) -> int | None:
    """The step a progress line names, if it names one."""
    v = s.groups.get("step") if s is not None else None
    return int(v) if v and v.isdigit() else None


@dataclass
class Lives:
    """The attempts, and what they say about the run's fate."""

    attempts: list[Life]
    restarts: int  # every restart the data counts (some may have no known time)
    restart_marks: list[Signal]  # the lines and facts that show the restarts, by time

    @property
    def last(self) -> Life:
        return self.attempts[-1]

    @property
    def timed_restarts(self) -> list[int]:
        return [a.start for a in self.attempts[1:]]


def restart_times(model: Workload, symptoms: list[Signal]) -> tuple[list[int], list[Signal]]:
    """When the JobSet restarted, each restart once, and the signals that show them."""
    marks = [s for s in symptoms if s.target == "jobset_restarting"]
    merged: list[int] = []
    for t in sorted(t for s in marks for t in (s.times or [s.ts]) if t):
        if not merged or t - merged[-1] > SAME_RESTART_NS:
            merged.append(t)
    # pods of a later attempt: the attempt began no later than the first of them was created. The k-th attempt's
    # pods stand for the k-th restart only where no mark of it was read (its pods come up minutes after the mark).
    by_attempt: dict[int, int] = {}
    for p in model.pods.values():
        if p.attempt and p.attempt.isdigit() and int(p.attempt) > 0 and p.created:
            by_attempt[int(p.attempt)] = min(by_attempt.get(int(p.attempt), p.created), p.created)
    merged = sorted(merged + [t for k, t in sorted(by_attempt.items()) if k > len(merged)])
    if not merged and not model.jobset_restarts:
        merged = recreations(model)
    return merged, sorted(marks, key=lambda s: s.ts)


RECREATED_TOGETHER_NS = 5 * 60 * NS  # a restart brings every replacement pod up within minutes of the first


def recreations(model: Workload) -> list[int]:
    """Where nothing else shows a restart (logs only: no Event, no condition, no label): the head's replica under a
    second pod name, since Kubernetes names every pod a Job creates anew with a fresh random suffix
    (`<jobset>-<replicated job>-<job index>-<pod index>-<suffix>`): when the later names first appeared. The head
    runs the program that steps, so its new pod is a new life of the run; a worker replaced alone (elastic training
    waiting for a slice) is not."""
    by_replica: dict[str, list[int]] = {}
    for p in model.pods.values():
        if is_head_pod(p.name) and (rep := replica(p.name)) is not None and p.since:
            by_replica.setdefault(rep[0], []).append(p.since)
    later = sorted(t for times in by_replica.values() for t in sorted(times)[1:])
    out: list[int] = []
    for t in later:
        if not out or t - out[-1] > RECREATED_TOGETHER_NS:
            out.append(t)
    return out


def lives(model: Workload, symptoms: list[Signal]) -> Lives:
    """The run's attempts, split at its restarts, with the progress lines read in each."""
    times, marks = restart_times(model, symptoms)
    attempts = [Life(0, 0)]
    for i, t in enumerate(times, 1):
        attempts[-1].end = t
        attempts.append(Life(i, t))
    for s in model.progress:
        life = next(a for a in reversed(attempts) if s.ts >= a.start)
        life.steps.append(s)
    for a in attempts:
        a.steps.sort(key=lambda s: s.ts)
    labelled = max((int(p.attempt) for p in model.pods.values() if p.attempt and p.attempt.isdigit()), default=0)
    return Lives(attempts, max(len(times), model.jobset_restarts, labelled), marks)


def stepping_since(life: Life, model: Workload, damage: list[int]) -> int | None:
    """When `life` began stepping steadily to the end of the data: its first step after its last failure, if it has
    stepped STEADY_LINES times over STEADY_NS since then and its latest step is recent (within the stall window's
    reach, `recent_ns`). None otherwise. A capped sample of progress lines that holds only this attempt's newest
    steps stands for a longer run: its span counts from the attempt's first step the sample kept."""
    after = max((d for d in damage if d >= life.start), default=life.start)
    steps = [s for s in life.steps if s.ts > after]
    if len(steps) < STEADY_LINES:
        return None
    capped = model.progress_count > len(model.progress) and model.progress and model.progress[0].ts > life.start
    if steps[-1].ts - steps[0].ts < STEADY_NS and not (capped and model.now - life.start >= STEADY_NS):
        return None
    return steps[0].ts


def relapsed_past(lives: Lives) -> bool:
    """An earlier restarted attempt stepped again at least as far as the last one has (its highest step number) or as
    long (its stepping span) and still ended in a restart: the last attempt's steps are no sign of recovery yet, the
    run has died there before (a failure at a step, or one that grows with time, such as a leak)."""
    last = lives.last
    if not last.steps:
        return False
    now_step = max((n for s in last.steps if (n := step_number(s)) is not None), default=None)
    now_span = last.steps[-1].ts - last.steps[0].ts
    for a in lives.attempts[1:-1]:  # attempts that began with a restart and ended with another
        if not a.steps or a.end is None:
            continue
        was = max((n for s in a.steps if (n := step_number(s)) is not None), default=None)
        if now_step is not None and was is not None and was >= now_step:
            return True
        if a.steps[-1].ts - a.steps[0].ts >= now_span:
            return True  # ... or stepped as long: what grows with time (memory) strikes by time, not by step
    return False
