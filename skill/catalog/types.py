"""The shapes of catalog entries: failure classes, symptoms and milestones, declared as data."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..reading.names import is_head_pod

PATHWAYS_CONTAINERS = ("pathways-rm", "pathways-proxy", "pathways-worker")
SIDECAR_CONTAINER = "colocated-python-sidecar"  # the colocated Python sidecar beside pathways-worker (a user build)


@dataclass(frozen=True)
class RuleContext:
    """Everything a catalog rule may read, in one object: every rule is a function of it alone.

    A signature's `check` sees the line (`text`, the regex's named `groups`); the classifier's rules (a pattern's
    `needs`, an absence check, a refinement) also see the workload model, the signal being judged, the run's symptom
    signals, the class and its absence rule, and the hypothesis a refinement adjusts. What is not known yet is None.
    """

    text: str = ""
    groups: Mapping[str, str] = field(default_factory=dict)
    model: Any = None  # skill.understanding.model.Workload (typed loosely: the catalog sits below understanding)
    signal: Any = None  # skill.understanding.signals.Signal
    symptoms: Sequence[Any] = ()
    cls: FailureClass | None = None
    absence: Absence | None = None
    hypo: Any = None  # skill.judging.ranking.Hypo, for a refinement


def signature_id(owner: str, wording: str) -> str:
    """A signature's id: its owner (the class, symptom or milestone that holds it) and 10 hex digits of its wording.

    Stable while the wording is, and unique (tests/test_catalog.py). Two readings of one wording under one owner (the
    same regex with different checks) are one signature: scored once and cited as one, as they always were."""
    digest = hashlib.sha1(wording.encode()).hexdigest()[:10]
    return f"{owner}/{digest}" if owner else digest


@dataclass(frozen=True)
class Pattern:
    """One signature: an RE2 regex over a record's text, where it may appear, and how much a match proves."""

    regex: str
    weight: float = 0.9  # 1.0 proves the class on its own; below 0.5 only supports other evidence
    sources: tuple[str, ...] = ("container",)  # container | node | event | serial | object
    containers: tuple[str, ...] = ()  # only these containers ("" = any)
    logs: tuple[str, ...] = ()  # only these log ids / object facts (prefix match)
    user_only: bool = False  # only the user's containers (not pathways-rm/proxy/worker)
    head_only: bool = False  # only records about the head pod (<jobset>-pathways-head-...)
    entities: tuple[str, ...] = ("Pod", "Node")  # what a match implicates: Pod Node Container Image Bucket JobSet
    transient: bool = False  # discard when the pod later ran (a scheduling or pull blip that resolved)
    check: Callable[[RuleContext], bool] | None = None  # extra pure test on the line (RuleContext.text, .groups)
    note: str = ""  # what a match means, for the explanation
    # A fact that only supports its class's other evidence (the node is Spot, a second client port-forwarded): never a
    # hypothesis on its own, and cited as supporting evidence when its class is the root cause.
    support: bool = False
    needs: str = ""  # a fact about the workload the match must have to count (classify.NEEDS), e.g. "spot_node"
    id: str = ""  # a name for what this signature says, for fix and explanation variants (Fix.when / Text.when)
    # Provenance: where the wording comes from, and a line from that source the regex must match (tests check both).
    # "recording:<id>" (fixtures/recordings/<id>, real TPU output), or the URL of a public issue, document or source.
    origin: str = ""
    example: str = ""
    # What the classifier and the citations know a signature by, never its regex: signature_id(owner, regex), stamped
    # by the class, symptom or milestone that holds it; a loose pattern (a test's) has its wording's alone.
    sid: str = ""

    def __post_init__(self) -> None:
        if not self.sid:
            object.__setattr__(self, "sid", signature_id("", self.regex))

    def applies_to(self, source: str, container: str | None, log: str, pod: str | None = None) -> bool:
        if source not in self.sources:
            return False
        if self.head_only and not is_head_pod(pod):
            return False
        if self.containers and container not in self.containers:
            return False
        if self.user_only and (container is None or container in PATHWAYS_CONTAINERS):
            return False
        return not self.logs or any(log.startswith(p) for p in self.logs)


class _Variant:
    """What a fix or an explanation variant answers: shown when the root cause's lines matched a pattern whose id is in
    `when` (or always, when `when` is empty), and not when one is in `unless`."""

    when: tuple[str, ...]
    unless: tuple[str, ...]

    def applies(self, matched: frozenset[str]) -> bool:
        return (not self.when or bool(matched & set(self.when))) and not (matched & set(self.unless))


@dataclass(frozen=True)
class Fix(_Variant):
    """A proposed fix: jinja2 templates filled from the workload context, and a risk label.

    A variant for one kind of evidence names the signatures it answers: shown when the root cause's lines matched a
    pattern whose id is in `when` (or always, when `when` is empty), and not when one is in `unless`."""

    summary: str
    command: str | None = None
    risk: str = "read-only"  # read-only | low (changes your code or manifest) | high (changes the cluster/project)
    when: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class Text(_Variant):
    """An explanation variant (a jinja2 template), chosen like a Fix variant; the first that applies is used."""

    text: str
    when: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactRule:
    """Evidence read from structure, not wording (skill.understanding.facts): which component raised an error, what kind of error,
    on which resource, and what the workload uses that resource for. Every field set must hold; empty ones are free.

    Signatures stay the high-precision evidence; a fact rule widens what a class understands (a reworded Orbax error
    is still raised from Orbax's frames; a 429 under the compilation cache directory is a cache problem)."""

    weight: float
    raised_in: tuple[str, ...] = ()  # the component of the innermost frame outside the standard library and transports
    through: tuple[str, ...] = ()  # a frame of one of these components anywhere in the traceback
    source: tuple[str, ...] = ()  # a C++ source the line names (glog header, "(file.cc:N)") is of these components
    exception: str = ""  # RE2 on the exception's type name (ValueError, orbax...StepAlreadyExistsError)
    code: tuple[str, ...] = ()  # absl / gRPC status codes named on the error line
    http: tuple[int, ...] = ()  # HTTP statuses named on the error line
    role: tuple[str, ...] = ()  # what the workload uses the object the error names for (catalog.facts.PATH_ROLES)
    message: str = ""  # RE2 on the error line's text
    entities: tuple[str, ...] = ("Pod", "Container")
    note: str = ""
    id: str = ""  # as Pattern.id: which fix and explanation variants answer it

    @property
    def key(self) -> str:
        """A stable description, used where a signature's regex would be (deduplication, references)."""
        parts = [f"{k}={'|'.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in (
            ("raised_in", self.raised_in), ("through", self.through), ("source", self.source),
            ("exception", self.exception), ("code", self.code),
            ("http", self.http), ("role", self.role), ("message", self.message)) if v]
        return "fact: " + " ".join(parts)


@dataclass(frozen=True)
class Absence:
    """A class decided from what is missing, by one of the classifier's generic checks (classify.ABSENCE_CHECKS):

    - "milestone_missing": after the latest `after` milestone, no complete `expect` milestone (n/n) within `wait_s`
      (or, sooner, repeated `waiting` lines); `refine` names extra checks that locate the cause ("rm_address",
      "slice_count").
    - "progress_stopped": the last progress line is at least `wait_s` and `intervals` step intervals before "now".
    """

    kind: str
    score: float
    wait_s: int
    after: str = ""
    expect: str = ""
    intervals: int = 0
    refine: tuple[str, ...] = ()
    # milestone_missing: this many `waiting` lines over at least a minute since `after` decide it before the wait is
    # over (a component saying it still waits is a stall in its own right; the data may end before the wait does)
    waiting: str = ""
    waiting_lines: int = 3
    waiting_score: float = 0.6


@dataclass(frozen=True)
class FailureClass:
    """One taxonomy class: its signatures, what it implicates and explains, and how to fix it."""

    id: str
    title: str
    phase: str
    component: str
    patterns: tuple[Pattern, ...] = ()
    explanation: str | tuple[Text, ...] = ""  # jinja2 template(s); context: pod, node, container, jobset, image, bucket ...
    explains: tuple[str, ...] = ()  # class ids this one causes when it comes first
    lookalikes: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    sources: tuple[str, ...] = ("container",)  # what the class needs to be seen; a missing one is a data gap
    # Interruptions this class's recovery mechanism exists to survive: when a strong match shows the recovery itself
    # failed, this class is the root and the interruption is only its trigger (elastic, hot swap, suspend-resume).
    absorbs: tuple[str, ...] = ()
    # Classes this one explains even when their evidence was logged first (it is what this cause looks like before it is
    # reported), as long as this one is strong: e.g. a failed scale-up over the scheduler's selector view of existing nodes.
    explains_earlier: tuple[str, ...] = ()
    # Where the cause sits: "host" (one pod or node: cite the lines of the first strong host), "spread" (every pending
    # worker at once: cite them all) or "node" (a VM that went away: name the pods that ran on it).
    scope: str = "host"
    names_jobset: bool = False  # the cause is in the program or the JobSet's spec: the JobSet is an entity
    # The fix is a change to the workload's own code, spec, image or settings (not capacity, hardware or the platform):
    # a fix then also says what the failing lines name (skill.telling.named), the program, shape, flag or path to change.
    fixed_in_workload: bool = False
    # The cause is the machine's, not the program's (a VM reclaimed, maintained or lost, a faulty chip or kernel):
    # nothing in the program makes it strike again, so a restarted run that steps again is back (status healthy, fate
    # recovering) before it has stepped long enough to call it recovered.
    machine_fault: bool = False
    names_images: bool = False  # the cause is a version skew between images: each named container's image is an entity
    bucket_from_scratch: bool = False  # an error line without a bucket means the Pathways scratch location's
    status_when_root: str = ""  # the status this class implies as the root cause, when nothing exited or restarted
    stalled_while_pending: bool = False  # as the root, stalled while a pod is Pending (a replacement waits)
    leans_on: tuple[str, ...] = ()  # evidence sources (catalog.sources.VERDICT_SOURCES) whose absence is a gap
    absence: Absence | None = None  # decided from a missing milestone or progress, not from signatures
    explained_by_any: bool = False  # any candidate that comes first explains it (a generic error in the program)
    facts: tuple[FactRule, ...] = ()  # evidence read from structure (skill.understanding.facts), beside the signatures

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", _owned(self.id, self.patterns))


@dataclass(frozen=True)
class Symptom:
    """Evidence that something failed, without saying why (heartbeat timeouts, a failed JobSet ...)."""

    id: str
    title: str
    patterns: tuple[Pattern, ...]
    failure: bool = True  # counts as evidence of failure (for unknown_failure and status)
    # Container records of these LogEntry severities are this symptom whatever their text (a glog letter an agent
    # lifted into the entry's severity, a structured logger's level): the same fact, without the prefix.
    severities: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", _owned(self.id, self.patterns))


@dataclass(frozen=True)
class Milestone:
    """A line a healthy run prints; its absence locates where start-up stopped."""

    id: str
    title: str
    pattern: Pattern

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _owned(self.id, (self.pattern,))[0])


def _owned(owner: str, patterns: tuple[Pattern, ...]) -> tuple[Pattern, ...]:
    """The patterns with the ids their owner gives them (signature_id)."""
    return tuple(replace(p, sid=signature_id(owner, p.regex)) for p in patterns)
