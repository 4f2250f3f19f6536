"""Signals to a verdict: rank candidate classes by evidence, time and causality. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..catalog import ABSENCE_CLASSES, CLASSES, HEALTHY, SYMPTOMS, Absence, FailureClass
from ..catalog.types import RuleContext
from ..catalog.places import KILLED_FOR_MEMORY
from ..understanding.death import killed_pid, killed_process, workload_process
from ..understanding.fate import stopped_with, touched
from .impact import CAUSE_LEAD_NS
from .fatal import put_death_first, secs, stalled_then_failed, unknown_root
from ..understanding.model import NO_LAUNCH, Workload
from ..reading.names import first_bucket
from ..reading.records import rm_address
from ..understanding.status import STUCK_PENDING_NS, decide
from ..understanding.signals import Signal
from .lifeline import Fate, fate_of
from .runstate import activity, run_of, running_at_end  # activity: re-exported for sufficiency and values
from .ranking import CANDIDATE, STRONG, Hypo, combine, explained, roots_of
from .series import series_stall, suspect_hosts
from .survival import TOO_SOON_CONFIDENCE, after_last_life, death_class, deaths_survived, survival, too_soon_after

NS = 1_000_000_000
FAILURE_SYMPTOMS = frozenset(sym.id for sym in SYMPTOMS if sym.failure)
RECOVERED_NS = 15 * 60 * NS  # this long of steady activity after a fault's last line, up to the end, means it resolved
RECOVERED_LINES = 5


@dataclass
class Verdict:
    failure_class: str
    status: str
    confidence: float
    ranked: list[Hypo]
    root: Hypo
    symptoms: list[Signal]
    notes: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    too_soon: str | None = None  # the data ends before the run is seen dying or going on after its cause (why, in words)
    fate: Fate | None = None  # what happened to the run: its lives and its state at the end (skill.judging.lifeline)
    # physical hosts behind several failed node names of the workload (gce_topology_host): host -> those nodes
    suspect_hosts: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Observation:
    """A class whose lines the run survived: not a cause, reported so a reader still sees them."""

    failure_class: str
    score: float
    signals: list[Signal]
    why: str  # why it is not the cause (skill.judging.impact's row)


# Facts a pattern may need (Pattern.needs): False drops the match; unknown (None) keeps it.
# Each is a function of one RuleContext (model, signal, symptoms).
NEEDS: dict[str, Callable[[RuleContext], bool | None]] = {
    "spot_node": lambda c: c.model.is_spot(c.signal.record.node or c.model.node_of(c.signal.record.pod)) is not False,
    "killed_the_workload": lambda c: _killed_the_workload(c.model, c.signal, c.symptoms),
    "on_the_head_node": lambda c: _on_the_head_node(c.model, c.signal),
    "the_scratch_bucket": lambda c: _the_scratch_bucket(c.model, c.text),
    # the JobSet is submitted to a Kueue queue (its label), when the JobSet object was exported
    "kueue_managed": lambda c: (c.model.queue_name is not None) if c.model.jobset_uid else None,
    # JAX reported a persistent-cache hit within CACHE_HIT_NS before the line (its executable came from the cache)
    "after_cache_hit": lambda c: any(0 <= c.signal.ts - h.ts <= CACHE_HIT_NS for h in c.model.milestones.get("cache_hit", [])),
}
CACHE_HIT_NS = 120 * 1_000_000_000


def needs_context(model: Workload, s: Signal, symptoms: list[Signal]) -> RuleContext:
    """The context a pattern's `needs` rule reads for one signal."""
    return RuleContext(text=s.record.text, groups=s.groups, model=model, signal=s, symptoms=symptoms)


def _the_scratch_bucket(model: Workload, text: str) -> bool | None:
    """The bucket a storage error names is the Pathways scratch location's (--gcs_scratch_location), when both are
    known: a missing checkpoint or data bucket is not a scratch problem."""
    named = first_bucket(text)
    scratch = {g.split("/")[2] for sig in model.milestones.get("scratch_location", [])
               if (g := sig.groups.get("bucket", "")).startswith("gs://") and len(g.split("/")) > 2}
    if not named or not scratch:
        return None
    return named in scratch


def _on_the_head_node(model: Workload, s: Signal) -> bool | None:
    """The line is about the node the head pod ran on (its Node events, its VM), when that node is known."""
    head = model.node_of(model.head_pod)
    node = _node(s) or s.groups.get("node")
    return None if not head else node == head or bool(node and node in s.record.text and head in s.record.text)
KILL_BEFORE_NS, KILL_AFTER_NS = 60 * NS, 5 * 60 * NS


def _node(s: Signal) -> str | None:
    """The node a line is about: its own, or the Node an event is about."""
    return s.record.node or (s.record.obj if s.record.kind == "Node" else None)


def _killed_the_workload(model: Workload, s: Signal, symptoms: Sequence[Signal]) -> bool | None:
    """A kernel kill on a node counts when one of the JobSet's containers there failed with it, or the stepping program
    there stopped stepping with it (a node daemon such as a log agent killed on the head's node is not the workload). Unknown when the node's pods or their fate were not seen."""
    node = _node(s)
    comm = s.groups.get("comm") or killed_process(s.record.text) or ""
    if comm and workload_process(model, comm, node, killed_pid(s.record.text)):
        return True  # a Pathways server or the JAX client named in the kill: the workload's process (issue 41)
    pods = {p.name for p in model.pods.values() if p.node and p.node == node}
    if not node or not pods or not ({"events"} & model.logs_seen or "Pod" in model.objects_seen):
        return None
    # a container there failed with it, or the stepping program there stopped with it (None: too soon to tell)
    return touched(model, pods, symptoms, s.ts - KILL_BEFORE_NS, s.ts + KILL_AFTER_NS) or stopped_with(model, pods, s.ts)


def _hypotheses(model: Workload, causes: list[Signal], symptoms: list[Signal],
                survived: Callable[[Signal], str | None] = lambda s: None) -> tuple[dict[str, Hypo], list[Observation]]:
    """Candidate classes from the cause signals that hurt the run, and the classes whose lines it survived."""
    by_class: dict[str, list[Signal]] = {}
    spared: dict[str, list[tuple[Signal, str]]] = {}
    for s in causes:
        if not _counts(model, s, symptoms):
            continue
        if not s.pattern.support and (why := survived(s)):
            spared.setdefault(s.target, []).append((s, why))  # the run went on after it: not a cause (skill.judging.impact)
            continue
        by_class.setdefault(s.target, []).append(s)
    hypos = {}
    for cid, sigs in by_class.items():
        if all(s.pattern.support for s in sigs):
            continue  # facts that only support other evidence (the pods ran on Spot) are no hypothesis alone
        h = Hypo(cid, _score(sigs), sigs)
        h.first_ts = h.strong_signals[0].ts
        # the same class's earlier lines that the run survived stay cited (the quiet early warning), not scored or timed
        h.signals = sorted(sigs + [s for s, _ in spared.get(cid, [])], key=lambda s: s.ts)
        h.spared = frozenset(s.record.id for s, _ in spared.get(cid, []))
        hypos[cid] = h
    observations = []
    for cid, pairs in spared.items():
        sigs = [s for s, _ in pairs]
        if cid not in hypos and (score := _score(sigs)) >= CANDIDATE:
            observations.append(Observation(cid, round(score, 3), sorted(sigs, key=lambda s: s.ts), pairs[-1][1]))
    return hypos, sorted(observations, key=lambda o: o.signals[0].ts)


def _counts(model: Workload, s: Signal, symptoms: list[Signal]) -> bool:
    """A cause line counts unless it is a blip that resolved (a scheduling or pull failure, and the pod ran afterwards)
    or lacks a fact its pattern needs (a graceful node shutdown on a node known not to be Spot)."""
    if s.pattern.transient and _resolved(model, s):
        return False
    return not (s.pattern.needs and NEEDS[s.pattern.needs](needs_context(model, s, symptoms)) is False)


def _score(sigs: list[Signal]) -> float:
    """Each signature's strongest match, combined: a signature read many times (or two ways) is one piece of evidence."""
    best: dict[str, float] = {}
    for s in sigs:
        best[s.pattern.sid] = max(best.get(s.pattern.sid, 0.0), s.weight)
    return combine(list(best.values()))


def _resolved(model: Workload, s: Signal) -> bool:
    """The pod ran afterwards; for a pull failure, the container (or image) it names must have run too."""
    pod = model.pods.get(s.record.pod or "")
    if pod is None or not pod.ran:
        return False
    image, name = s.groups.get("image"), s.record.container
    named = [c for c in pod.containers.values() if (image and c.image == image) or (name and c.name == name)]
    if not named:  # without Pod objects a container is known only once it logged or was pulled: unseen is not run
        return "Pod" in model.objects_seen or not (image or name)
    return any(c.running or c.last_reason for c in named)


def _milestone_missing(c: RuleContext) -> Hypo | None:
    """After the latest `after` milestone, no complete (n/n) `expect` milestone within the wait.

    Judged per attempt: a JobSet restart (or an RM container restart) starts a new RM that prints "serving" again and
    must report its own slices ready; an earlier attempt's "2/2 ... Now Ready" says nothing about the later one.
    """
    model, cls, rule = c.model, c.cls, c.absence
    assert cls is not None and rule is not None, "an absence check runs for a class with an absence rule"
    start = model.last_milestone(rule.after)
    if start is None:
        return None
    since = [s for s in model.milestones.get(rule.expect, []) if s.ts >= start.ts]
    if any(s.groups.get("ready") == s.groups.get("total") for s in since):
        return None
    if model.now - start.ts < rule.wait_s * NS:
        return _still_waiting(model, cls, rule, start, since)
    h = Hypo(cls.id, rule.score, [start], start.ts, "no 'n/n Pathways Slices Now Ready' line from the resource manager")
    for name in rule.refine:
        REFINE[name](RuleContext(model=model, cls=cls, absence=rule, hypo=h))
    if since:
        h.signals.append(max(since, key=lambda s: s.ts))
    return h


def _still_waiting(model: Workload, cls: FailureClass, rule: Absence, start: Signal, since: list[Signal]) -> Hypo | None:
    """Before the wait is over: components repeatedly saying they still wait (or partial n/m ready lines) are a stall
    in their own right, at a lower score than the full wait."""
    waits = sorted([s for s in model.milestones.get(rule.waiting, []) if s.ts >= start.ts] + since, key=lambda s: s.ts)
    if not rule.waiting or len(waits) < rule.waiting_lines or waits[-1].ts - waits[0].ts < 60 * NS:
        return None
    minutes = (model.now - start.ts) // (60 * NS)
    return Hypo(cls.id, rule.waiting_score, [start, waits[0], waits[-1]], start.ts,
                f"{len(waits)} lines over {minutes} min say start-up is still waiting "
                f"('{waits[-1].record.text[-120:].strip()}'), and the data ends before the {rule.wait_s // 60} min wait")


def _rm_address(c: RuleContext) -> None:
    """Workers registering with another resource manager than this JobSet's head: the template's arguments are wrong."""
    model, h = c.model, c.hypo
    expected = rm_address(model.jobset) if model.jobset else None
    wrong = [s for s in model.milestones.get("worker_rm_address", []) if expected and s.groups.get("addr") != expected]
    if wrong:
        h.located = sorted(wrong, key=lambda s: s.ts)[:3]
        h.signals += h.located
        h.entity_kinds = ("JobSet",)  # the workers' arguments come from the JobSet's template: not the head, not a node
        h.score, h.detail = 0.92, f"workers point at resource manager {wrong[0].groups.get('addr')}, not {expected}"


def _slice_count(c: RuleContext) -> None:
    """The resource manager expects another number of slices than registered."""
    model, h = c.model, c.hypo
    counts = model.milestones.get("rm_instance_count", [])
    slices = {p.slice for p in model.workers if p.slice is not None}
    if counts and slices and int(counts[0].groups.get("count", "0")) != len(slices):
        h.signals.append(counts[0])
        h.score = max(h.score, 0.9)
        h.detail = f"the resource manager expects {counts[0].groups['count']} slices but {len(slices)} registered"


REFINE: dict[str, Callable[[RuleContext], None]] = {"rm_address": _rm_address, "slice_count": _slice_count}


def _progress_stopped(c: RuleContext) -> Hypo | None:
    """Progress lines stopped long before the end of the data, with the JobSet still running."""
    model, cls, rule = c.model, c.cls, c.absence
    assert cls is not None and rule is not None, "an absence check runs for a class with an absence rule"
    if (by_series := series_stall(c)) is not None:  # the chips' duty cycle decides where it was exported
        return by_series if isinstance(by_series, Hypo) else None
    last = model.last_progress
    interval = model.step_interval_ns()
    if last is None or interval is None:
        return None
    gap = model.now - last.ts
    if gap < max(rule.intervals * interval, rule.wait_s * NS):
        return None
    minutes = gap // (60 * NS)
    # what shows the stop, besides the last step: the program restating that step, the executors reporting no launch
    after = [s for s in model.restated if s.ts > last.ts][:1]
    after += [s for s in sorted(model.milestones.get("worker_launches", []), key=lambda s: s.ts)
              if s.ts > last.ts and NO_LAUNCH.search(s.record.text)][:1]
    return Hypo(cls.id, rule.score, [last, *after], last.ts,
                f"the last progress line is {minutes} min before the end of the data; steps came every {secs(interval)}",
                entity_kinds=("Pod", "Container"))  # the program that stopped stepping


ABSENCE_CHECKS: dict[str, Callable[[RuleContext], Hypo | None]] = {
    "milestone_missing": _milestone_missing, "progress_stopped": _progress_stopped}


def absence_context(model: Workload, cls: FailureClass) -> RuleContext:
    """The context a class's absence check reads."""
    return RuleContext(model=model, cls=cls, absence=cls.absence)




def _ran_long_after(act: list[int], ts: int) -> bool:
    after = [t for t in act if t > ts]
    return len(after) >= RECOVERED_LINES and after[-1] - ts >= RECOVERED_NS


def recovered(h: Hypo, act: list[int], failures: list[Signal]) -> bool:
    """A fault that resolved: steady activity long after its last line (running at the end is checked by the caller),
    and either it came before the program first ran (a start-up blip the restart fixed) or nothing failed with it
    (a retried write, a warning). A fault that interrupted the running program (data loss, a container failing
    mid-run) is still the verdict even when the run recovered: that is a degraded run, not a healthy one."""
    if h.failure_class in ABSENCE_CLASSES or not h.signals:
        return False
    last = max(s.ts for s in h.strong_signals)
    if not _ran_long_after(act, last):
        return False
    if last < act[0]:
        return True
    return not any(h.first_ts - CAUSE_LEAD_NS <= t <= last + CAUSE_LEAD_NS for s in failures for t in s.times)


def thresholds() -> list[tuple[str, str]]:
    """The classifier's knobs in words, for the generated references (one place states them: this module)."""
    out = [("candidate", f"a class needs evidence >= {CANDIDATE} to be a candidate (a signature below that only supports)"),
           ("strong", f"a candidate >= {STRONG} is a root cause before weaker ones, whatever their time"),
           ("cause lead", f"a cause may be logged up to {CAUSE_LEAD_NS // NS} s after the symptom it explains"),
           ("recovered", f"a fault followed by {RECOVERED_LINES}+ activity lines over {RECOVERED_NS // NS // 60} min, "
                         "running at the end, resolved"),
           ("stuck pending", f"pods unscheduled {STUCK_PENDING_NS // NS // 60} min after the last restart make the "
                             "status stalled")]
    for cls in CLASSES:
        if (a := cls.absence) is not None:
            rule = (f"no complete `{a.expect}` within {a.wait_s // 60} min of the latest `{a.after}`"
                    if a.kind == "milestone_missing" else
                    f"no progress for {a.wait_s // 60} min and {a.intervals} step intervals")
            out.append((cls.id, f"{rule} (score {a.score})"))
    return out


def _helpers(model: Workload, symptoms: list[Signal], failure_syms: list[Signal], causes: list[Signal]
             ) -> tuple[dict[str, str], list[Signal], list[Signal]]:
    """The helpers' deaths the stepping program went past ({id: why}, with the node's reports of a helper's kill among
    the causes), the failures left, the symptoms the status reads."""
    helpers = deaths_survived(model, [s for s in failure_syms if s.target in ("program_died", "container_failed",
                                                                            "crashloop")],
                              [s for s in symptoms if s.target in FAILURE_SYMPTOMS]
                              + [s for s in causes if s.target == KILLED_FOR_MEMORY])
    return (helpers, [s for s in failure_syms if s.record.id not in helpers],
            [s for s in symptoms if s.record.id not in helpers])


def _survived(by_impact: Callable[[Signal], str | None], helpers: dict[str, str]) -> Callable[[Signal], str | None]:
    """Why a cause line was survived: a helper's kill as the node reports it is that helper's survived death; else the
    impact table's reading."""
    return lambda s: helpers.get(s.record.id) or by_impact(s)


def _by_absence(model: Workload, causes: list[Signal], hypos: dict[str, Hypo]) -> None:
    """The classes decided by an absence join the candidates; each keeps its supporting lines (why a worker never
    registered ...)."""
    for cls in CLASSES:
        if cls.absence and (h := ABSENCE_CHECKS[cls.absence.kind](absence_context(model, cls))) is not None:
            h.signals += [s for s in causes if s.target == cls.id and s.pattern.support]
            hypos[h.failure_class] = h


def classify(model: Workload, causes: list[Signal], symptoms: list[Signal]) -> Verdict:
    """The root cause: the earliest strong candidate that no other candidate explains."""
    failure_syms = [s for s in symptoms if s.weight >= CANDIDATE and s.target in FAILURE_SYMPTOMS
                    and not (s.pattern.transient and s.record.pod in model.pods and model.pods[s.record.pod].ran)]
    # a helper's death the stepping program went on past is not the run's (issue 41): an observation, not damage
    helpers, failure_syms, lived = _helpers(model, symptoms, failure_syms, causes)
    act = activity(model)
    at_end = running_at_end(model, act, {s.target for s in lived})
    damage = tuple(sorted(t for s in failure_syms for t in s.times))  # an Event with a count: each occurrence
    survived = _survived(survival(model, causes, damage, symptoms), helpers)
    hypos, observations = _hypotheses(model, causes, symptoms, survived)
    _by_absence(model, causes, hypos)
    observations = [o for o in observations if o.failure_class not in hypos] + [
        Observation(death_class(d), 0.8, [d], why) for d in symptoms
        if d.target == "program_died" and (why := helpers.get(d.record.id))]
    notes: list[str] = []
    resolved: list[Hypo] = []
    cands = [h for h in hypos.values() if h.score >= CANDIDATE]
    if at_end:
        resolved = [h for h in cands if recovered(h, act, failure_syms)]
        if resolved:
            cands = [h for h in cands if h not in resolved]
            notes.append("resolved, followed by steady progress to the end: " + ", ".join(h.failure_class for h in resolved))
        # Failures before the program first ran, with a long steady run after them, were the start-up blip itself.
        failure_syms = [s for s in failure_syms if not (s.ts < act[0] and _ran_long_after(act, s.ts))]
    roots, gone_past = roots_of(cands, symptoms, notes)
    roots, failure_syms = put_death_first(model, roots, failure_syms, symptoms, notes)
    too_soon = None
    if roots:
        root = roots[0]
        too_soon = too_soon_after(model, root, damage)
        confidence = min(root.score, TOO_SOON_CONFIDENCE) if too_soon else root.score
        rivals = [h for h in roots[1:] if h.score >= STRONG and h not in gone_past]
        if rivals:
            confidence *= 0.85
            notes.append("other unexplained candidates: " + ", ".join(h.failure_class for h in rivals))
    elif failure_syms and not model.condition("Completed"):  # a finished JobSet SIGTERMs what still runs (143)
        root = stalled_then_failed(model, failure_syms) or unknown_root(symptoms, failure_syms)
        confidence = root.score
    elif (late := after_last_life(model, causes, act, lambda c: _counts(model, c, symptoms) and not survived(c),
                                  _score)) is not None:
        root, too_soon = late
        confidence = root.score
    else:
        root = Hypo(HEALTHY, 0.9 if act else 0.6, [], 0)
        confidence = root.score
    others = sorted((h for h in hypos.values() if h is not root), key=lambda h: -h.score)
    demoted = resolved + [h for h in gone_past if h is not root]
    ranked = [root] + [Hypo(h.failure_class, round(h.score * (0.6 if h in demoted or explained(h, cands) else 1.0), 3), h.signals,
                            h.first_ts, h.detail, h.located, h.entity_kinds, h.spared) for h in others]
    run = run_of(model, lived, root.failure_class, act, causes)
    status, row = decide(run)
    fate = fate_of(run, status, row, root.first_ts)
    if fate.state == "recovered":
        too_soon = None  # the run is seen going on: the last attempt has stepped steadily since
    return Verdict(root.failure_class, status, round(confidence, 3), ranked[:6], root, symptoms, notes, observations,
                   too_soon, fate, suspect_hosts(model, lived, root, notes))
