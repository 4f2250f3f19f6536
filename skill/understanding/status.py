"""The status of a run: one ordered table, read from the JobSet and its pods and, where those were not exported, from
events and logs. The first row that holds decides. docs/status-model.md is generated from this table
(`python -m pathways_workload.skill.references`), and tests/test_status.py has a test per row, with and without the object files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..catalog import BY_ID, CLASSES, HEALTHY, SYMPTOMS
from .lives import Lives, lives, relapsed_past, stepping_since
from .model import PodInfo, Workload
from .signals import Signal

NS = 1_000_000_000
# The catalog's stall window (progress_stopped): before it has passed since the slices became ready, a run without
# steps may still be compiling.
STALL_WINDOW_NS = next(c.absence.wait_s for c in CLASSES if c.absence and c.absence.kind == "progress_stopped") * NS
STUCK_PENDING_NS = 5 * 60 * NS
# The kubelet resets a container's crash back-off once it has run 10 minutes without a problem (Kubernetes docs, "Pod
# Lifecycle", container restart policy): a container running that long since its last restart is out of its crash loop.
BACKOFF_RESET_NS = 10 * 60 * NS
# ... and waits at most five minutes before restarting a crashed one (the back-off's cap, same page): a container that
# has run that long since its restart with no new failure is not in a crash loop now.
BACKOFF_CAP_NS = 5 * 60 * NS
# A restarted run steps again: this many progress lines over this long since its last failure (past its first steps,
# where a new attempt most often dies again: its compile, its first collective, a replacement host's first use).
AGAIN_LINES = 3
AGAIN_NS = 2 * 60 * NS
FAILURES = frozenset(sym.id for sym in SYMPTOMS if sym.failure)
EXITED = frozenset({"container_failed", "job_failed", "program_died"})  # a program's end, by its status or its own logs  # unschedulable this long after the last restart, to the end: stalled


@dataclass
class Run:
    """What the rows read: the model, the symptoms seen, the root class, and when the program was seen running."""

    model: Workload
    symptoms: list[Signal]
    root: str
    activity: list[int]
    running_at_end: bool
    # what refused the run's pods a place: scheduler refusals and the lines of scheduling-phase classes (a failed
    # scale-up, a stockout, quota), by time
    refusals: list[Signal] = field(default_factory=list)

    @property
    def have(self) -> set[str]:
        return {s.target for s in self.symptoms}

    @cached_property
    def lives(self) -> Lives:
        """The run's attempts (skill.understanding.lives), read once for every row and the fate."""
        return lives(self.model, self.symptoms)

    @cached_property
    def damage(self) -> list[int]:
        """When something failed: every occurrence of a failure symptom (a container failed, a restart, a death ...)."""
        return sorted(t for s in self.symptoms if s.target in FAILURES for t in (s.times or [s.ts]))

    def last(self, symptom: str) -> int:
        return max((s.ts for s in self.symptoms if s.target == symptom), default=0)


@dataclass(frozen=True)
class Row:
    status: str
    name: str
    when: str  # the rule in words, for the docs table
    holds: Callable[[Run], bool]


def _failed(r: Run) -> bool:
    return bool(r.model.condition("Failed")) or r.model.terminal_state == "Failed" or "jobset_failed" in r.have


def _completed(r: Run) -> bool:
    return (bool(r.model.condition("Completed")) or r.model.terminal_state == "Completed"
            or (bool(r.model.completed_event) and not r.model.condition("Failed") and "jobset_failed" not in r.have))


def _restarts_exhausted(r: Run) -> bool:
    """No restart left, a Job or pod failed since the last one, and nothing runs again or waits to."""
    m = r.model
    if m.max_restarts is None or m.jobset_restarts < m.max_restarts:
        return False
    since = r.last("jobset_restarting")
    failed_since = any(s.ts >= since for s in r.symptoms if s.target in ("job_failed", "container_failed"))
    failed_pod = any(p.phase == "Failed" for p in m.pods.values())
    return (failed_since or failed_pod) and not _anything_restarting(m)


def _anything_restarting(m: Workload) -> bool:
    """A container of a live pod is running again after a restart, or waits to be restarted (CrashLoopBackOff)."""
    return any(c.restarts > 0 and (c.running or c.waiting_reason) for p in m.pods.values() if p.phase != "Failed"
               for c in p.containers.values())


def pending_pods(m: Workload) -> list[PodInfo]:
    """Pods still Pending: by their phase, or, where no Pod object was read (live without the Kubernetes API, an export
    without pods.json), pods the events name that were never placed on a node and never ran."""
    unseen = "Pod" not in m.objects_seen
    return [p for p in m.pods.values() if p.phase == "Pending" or (unseen and p.phase is None and not p.ran and not p.node)]


def _stuck_pending(r: Run) -> bool:
    """A pod is still Pending, never ran, and the scheduler has refused pods since the last restart, for a while."""
    if not any(not p.ran for p in pending_pods(r.model)):
        return False
    since = [s.ts for s in r.symptoms if s.target == "unschedulable" and s.ts > r.last("jobset_restarting")]
    return bool(since) and r.model.now - min(since) >= STUCK_PENDING_NS


def _jobset_restarted(r: Run) -> bool:
    """Restarted: an Event or condition says so, `status.restarts` counts one, or the lives read one (the pods'
    restart-attempt labels; in logs alone, the head's new pod name)."""
    return "jobset_restarting" in r.have or r.lives.restarts > 0  # lives count `status.restarts` too


def _jobset_restarting(r: Run) -> bool:
    return _jobset_restarted(r) or "crashloop" in r.have


def _containers_restarting(r: Run) -> bool:
    """Containers restarted after failing, and one of them runs again or waits to: a pod in phase Failed is over."""
    return "container_failed" in r.have and _anything_restarting(r.model)


def _restarted_and_running(r: Run) -> bool:
    """Every container that died was restarted and runs. From the Pod objects: a container runs again after a restart,
    every container runs and no pod failed. Without them (an export of logs and events only): every container whose
    program died (its own fatal lines, or the kubelet's report: its end, its back-off) is back after it (`back_after`)."""
    m = r.model
    if "Pod" in m.objects_seen:
        return "container_failed" in r.have and _anything_restarting(m) and not any(
            p.phase == "Failed" or any(not c.running for c in p.containers.values()) for p in m.pods.values())
    deaths: dict[tuple[str, str], int] = {}
    for s in r.symptoms:
        if s.target in ("container_failed", "program_died", "crashloop") and s.record.pod and s.record.container:
            key = (s.record.pod, s.record.container)
            deaths[key] = max(deaths.get(key, 0), max(s.times or [s.ts]))
    return bool(deaths) and all(back_after(m, r.symptoms, pod, c, died) for (pod, c), died in deaths.items())


HELPER_NS = 10 * 60 * NS  # a container's exit, restart and back-off come within this of its death
# A container's output this long after its death is its restarted program's: a program that died of an uncaught
# exception or a signal prints its last words within moments (the interpreter exits), not minutes later.
RESTARTED_OUTPUT_NS = 2 * 60 * NS


def back_after(model: Workload, ends: Sequence[Signal], pod: str, container: str, died: int) -> bool:
    """The container that died at `died` was restarted and runs again: its Pod object says it runs after a restart, or
    the kubelet's back-off before restarting it ("Back-off restarting failed container") came within HELPER_NS of the
    death and the container printed, or the kubelet reported it Started, after it; or (a first restart, which has no
    back-off) the kubelet reported it Started after the death, or it printed again RESTARTED_OUTPUT_NS after it."""
    info = model.pods.get(pod)
    c = info.containers.get(container) if info else None
    if c is not None and "Pod" in model.objects_seen:
        return c.running and c.restarts > 0
    backoffs = [s.ts for s in ends if s.target == "crashloop" and s.record.pod == pod and s.record.container == container
                and died - NS <= s.ts <= died + HELPER_NS]
    since = max(model.stream_last.get((pod, container), 0), model.container_started.get((pod, container), 0))
    if backoffs and since > min(backoffs):
        return True
    # a first restart comes without a back-off: the kubelet's Started Event after the death, or the container's own
    # output well after it (a dead process prints nothing: what comes later is the restarted one's)
    return (model.container_started.get((pod, container), 0) > died
            or model.stream_last.get((pod, container), 0) > died + RESTARTED_OUTPUT_NS)


def hung_after_restart(r: Run) -> int | None:
    """A container died and was restarted, every container runs and has for BACKOFF_CAP_NS or more since the last
    failure, the JobSet did not restart, yet the run has not stepped since: the restart is over and the run hangs, it
    is not crash-looping. When the last failure came; None otherwise."""
    if not r.damage or _jobset_restarted(r) or not _restarted_and_running(r):
        return None
    since = r.damage[-1]
    if r.model.now - since < BACKOFF_CAP_NS or any(s.ts > since for s in r.lives.last.steps):
        return None  # a restarted helper prints its start-up again: only the run's steps count as going on
    return since


def recovered_since(r: Run) -> int | None:
    """The run restarted after a failure and its last attempt has stepped steadily since, up to the end: when it began
    stepping again. None when it has not (yet) recovered."""
    if not _back_after_restart(r):
        return None
    return stepping_since(r.lives.last, r.model, r.damage)


def _back_after_restart(r: Run) -> bool:
    """A failure verdict, the run still going at the end and not failed, a new attempt (a restart, or a container
    restarting), no pod left waiting and no earlier restarted attempt that stepped this far and died: what a recovery,
    or a run stepping again, needs before its steps are counted."""
    if r.root == HEALTHY or not r.running_at_end or _failed(r):
        return False
    if not r.lives.restarts and not _anything_restarting(r.model):
        return False  # no new attempt: a run that stepped on past a failure is judged by the rows below
    return not (any(not p.ran for p in pending_pods(r.model)) or relapsed_past(r.lives))


def stepping_again(r: Run) -> int | None:
    """The run restarted after a machine's fault (the class's `machine_fault`: a VM reclaimed, maintained or lost, a
    faulty chip or kernel) and its last attempt steps again (AGAIN_LINES or more progress lines over AGAIN_NS or more
    since its last failure, the latest within the stall window), with no pod left waiting and no earlier restarted attempt that
    stepped as far and died: the run is back, too briefly to call it recovered (`recovered_since`). Nothing in the
    program makes such a cause strike again; the program's own cause (memory, code, settings, a hang) may, and stays
    `crashing` until the run has recovered. When it began stepping again; None otherwise."""
    if r.root == HEALTHY or not BY_ID[r.root].machine_fault or not _back_after_restart(r):
        return None
    after = max((d for d in r.damage if d >= r.lives.last.start), default=r.lives.last.start)
    steps = [s for s in r.lives.last.steps if s.ts > after]
    if len(steps) < AGAIN_LINES or steps[-1].ts - steps[0].ts < AGAIN_NS:
        return None
    return steps[0].ts


def waiting_since(r: Run) -> int | None:
    """After a restart (or a failure), a replacement pod that never ran waits for a place while the scheduler or the
    autoscaler refuses it, for STUCK_PENDING_NS or more up to the end, and nothing stepped since: when the first
    refusal came. None otherwise."""
    lv, damage = r.lives, r.damage
    since = lv.timed_restarts[-1] if lv.timed_restarts else (damage[-1] if lv.restarts or damage else None)
    if since is None or lv.last.steps and lv.last.steps[-1].ts > since:
        return None
    if not any(not p.ran for p in pending_pods(r.model)):
        return None
    first = [min(s.times or [s.ts]) for s in r.refusals if max(s.times or [s.ts]) >= since]
    first = [max(t, since) for t in first]
    if not first or r.model.now - min(first) < STUCK_PENDING_NS:
        return None
    return min(first)


def _pending(r: Run) -> bool:
    pending = [p for p in r.model.pods.values() if p.phase == "Pending" or (p.phase is None and not p.ran)]
    return bool(BY_ID[r.root].status_when_root) or (bool(pending) and r.root != HEALTHY)


def starting(m: Workload) -> int | None:
    """When every slice became ready, if the program has not been seen running and that was less than the stall
    window before the end of the data: the first compile may still be running, nothing has had time to stall."""
    return None if m.milestones.get("worker_launches") else _ready_before_steps(m)


def _ready_before_steps(m: Workload) -> int | None:
    """When every slice became ready, if no step line came since and that was less than the stall window before the
    end; None otherwise."""
    ready = [s.ts for s in m.ready_slices()]
    if not ready or m.progress:
        return None
    return max(ready) if m.now - max(ready) < STALL_WINDOW_NS else None


def before_first_step(m: Workload) -> bool:
    """Every slice became ready less than the stall window before the end and no step line was seen: the program is
    still starting. The servers' program launches alone do not say it steps (its initialisation and restore run
    programs on the TPUs before the first step is compiled)."""
    return _ready_before_steps(m) is not None


def _degraded(r: Run) -> bool:
    lost = [s.ts for s in r.symptoms if s.target == "data_loss"]
    return bool(lost) and r.model.last_progress is not None and r.model.last_progress.ts > min(lost)


ROWS: tuple[Row, ...] = (
    Row("failed", "JobSet failed", "the JobSet has condition Failed=True or `status.terminalState: Failed`, or an event "
        "says it failed (ReachedMaxRestarts, FailedJobs, a failure-policy action)", _failed),
    Row("healthy", "JobSet completed", "condition Completed=True or `status.terminalState: Completed`, or (without the "
        "JobSet object) its controller's `AllJobsCompleted` Event", _completed),
    Row("failed", "no restart left", "`status.restarts` has reached `spec.failurePolicy.maxRestarts`, a Job or pod failed "
        "since the last restart, and no container runs again or waits to be restarted", _restarts_exhausted),
    Row("stalled", "suspended", "the JobSet is suspended (`spec.suspend`, or condition Suspended=True): Kueue has not "
        "admitted it", lambda r: r.model.suspended),
    Row("healthy", "recovered after a restart", "a failure ended an attempt, the JobSet (or the container) restarted, "
        "and the last attempt has stepped steadily since its last failure (5 or more progress lines over 15 min or "
        "more, the latest within the stall window), with no pod left waiting and no earlier restarted attempt that "
        "stepped as far and still died: the run recovered; the failure stays "
        "the verdict as what happened, and the diagnosis says when it recovered and what it lost",
        lambda r: recovered_since(r) is not None),
    Row("healthy", "stepping again after a restart", "a machine's fault (the class's `machine_fault`: a VM "
        "reclaimed, maintained or lost, a faulty chip or kernel) ended an attempt, the JobSet (or the container) "
        f"restarted, and the last attempt steps again ({AGAIN_LINES} or more progress lines over {AGAIN_NS // NS // 60} "
        "min or more since its last failure, the latest within the stall window), too briefly to call it recovered, with no pod left waiting and no earlier "
        "restarted attempt that stepped as far and died: nothing in the program makes such a cause strike again. The "
        "program's own cause (memory, code, settings, a hang) stays `crashing` (fate `recovering`) until the run has "
        "recovered", lambda r: stepping_again(r) is not None),
    Row("healthy", "ran on after recovered faults", "no failure is the verdict and the program was running at the end "
        "(progress or program launches within the stall window)", lambda r: r.root == HEALTHY and r.running_at_end),
    Row("stalled", "replacement waits", "the root cause's class waits for a replacement (`stalled_while_pending`) and a "
        "pod is Pending (by its phase; without Pod objects, a pod the events name that was never placed and never ran)",
        lambda r: BY_ID[r.root].stalled_while_pending
        and bool(pending_pods(r.model))),
    Row("stalled", "unschedulable since the last restart", "a pod that never ran is still Pending and the scheduler "
        f"has refused pods for {STUCK_PENDING_NS // NS // 60} min since the last restart", _stuck_pending),
    Row("stalled", "waiting for a place after a restart", "after the last restart (or failure) a replacement pod "
        f"that never ran is Pending and the scheduler or autoscaler has refused it for {STUCK_PENDING_NS // NS // 60} "
        "min or more (FailedScheduling, a failed scale-up, a stockout or quota), with no step since: the run waits "
        "for capacity, it is not crash-looping", lambda r: waiting_since(r) is not None),
    Row("stalled", "restarted, then hung", "a container died and was restarted and every container runs (Pod objects; "
        "without them, the kubelet's BackOff Event for each dead container and its output after it), for "
        f"{BACKOFF_CAP_NS // NS // 60} min or more since the last failure (the kubelet restarts a crashed container "
        "within 5 min at most: its back-off's cap), the JobSet did not restart, and the run has not stepped since: the restart "
        "is over and the run hangs, it is not crash-looping", lambda r: hung_after_restart(r) is not None),
    Row("degraded", "lost a slice, runs on beside a dead worker", "the client lost a slice (DATA_LOSS) and progress "
        "continued after it, with no JobSet restart: a dead worker crash-looping on its own (its container restarting) "
        "does not make the run crash, it runs on fewer slices (elastic training)",
        lambda r: _degraded(r) and not _jobset_restarted(r) and ("crashloop" in r.have or _containers_restarting(r))),
    Row("crashing", "JobSet restarting", "the JobSet restarted (events, Restarting condition, `status.restarts` > 0, the "
        "pods' restart-attempt labels; in logs alone, the head's pod under a new name) or a container is in "
        "CrashLoopBackOff", _jobset_restarting),
    Row("crashing", "containers restarting", "a container failed and restarted, and runs again or waits to be restarted "
        "(a pod in phase Failed will not)", _containers_restarting),
    Row("stalled", "pending, or decided by absence", "the root cause's class implies it (`status_when_root`: scheduling, "
        "admission, image pull, slices never ready, progress stopped), or a pod is Pending with a failure verdict",
        _pending),
    Row("degraded", "lost a slice, ran on", "the client lost a slice (DATA_LOSS) and progress continued after it",
        _degraded),
    Row("healthy", "no failure, progress seen", "no failure is the verdict and progress or program launches were seen",
        lambda r: r.root == HEALTHY and bool(r.activity)),
    Row("healthy", "starting, on track so far", "no failure is the verdict, every slice became ready and the data ends "
        f"less than {STALL_WINDOW_NS // NS // 60} min after it, before any step: start-up is on track so far (the "
        "diagnosis says the evidence is insufficient to call the run healthy)",
        lambda r: r.root == HEALTHY and starting(r.model) is not None),
    Row("stalled", "no failure, no progress seen", "no failure is the verdict but nothing shows the program running: "
        "health is not claimed without evidence of it (the diagnosis says the evidence is insufficient)",
        lambda r: r.root == HEALTHY),
    Row("stalled", "nothing exited", "there is a cause but no container exited, no Job failed and no program's own "
        "output ended on a fatal line: the pods sit there without working (e.g. a hang that blocks), or the data ends "
        "before the run is seen dying or going on", lambda r: not (EXITED & r.have)),
    Row("failed", "otherwise", "a cause, and a container exited, a Job failed, or a program's output ended on a fatal "
        "line (its own death, read from the logs alone: a glog F line, a signal page, an uncaught exception)",
        lambda r: True),
)


def decide(run: Run) -> tuple[str, str]:
    """(status, the name of the row that decided it)."""
    row = next(row for row in ROWS if row.holds(run))
    return row.status, row.name


def table() -> str:
    """The rows as a Markdown table, for docs/status-model.md."""
    out = ["| # | status | row | holds when |", "|---|---|---|---|"]
    out += [f"| {i} | `{r.status}` | {r.name} | {r.when} |" for i, r in enumerate(ROWS, 1)]
    return "\n".join(out)
