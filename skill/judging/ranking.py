"""How candidate classes rank against each other: the evidence thresholds, the hypothesis a class's lines make, and the
explain-away rules (which candidate explains, absorbs or outlasts which). Pure: no I/O."""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from ..catalog import ABSENCE_CLASSES, BY_ID
from ..reading.names import without_attempt_suffix
from ..understanding.signals import Signal
from .impact import CAUSE_LEAD_NS

CANDIDATE = 0.5  # a class needs this much evidence to be a candidate
STRONG = 0.8  # a candidate this strong is a root cause before weaker ones, whatever their time
PROOF = 0.9  # a candidate this strong is proven: a failed recovery outranks it only with proof of its own


@dataclass
class Hypo:
    """One candidate class: its score, the lines behind it, and what locates it."""

    failure_class: str
    score: float
    signals: list[Signal] = field(default_factory=list)
    first_ts: int = 0
    detail: str = ""
    located: list[Signal] = field(default_factory=list)  # the lines that locate the cause, when not the first strong ones
    entity_kinds: tuple[str, ...] = ()  # what those lines implicate, when not what their patterns say
    spared: frozenset[str] = frozenset()  # ids of its lines the run survived: cited, never what locates it

    @property
    def strong_signals(self) -> list[Signal]:
        linked = [s for s in self.signals if s.record.id not in self.spared] or self.signals
        strong = [s for s in linked if s.weight >= CANDIDATE]
        return sorted(strong or linked, key=lambda s: (s.ts, -s.weight))


def combine(weights: list[float]) -> float:
    """Independent pieces of evidence: 1 - prod(1 - w), capped below certainty."""
    miss = 1.0
    for w in weights:
        miss *= 1.0 - w
    return min(0.99, 1.0 - miss)


def _absorbs(recovery: Hypo, interruption: Hypo) -> bool:
    """A failed recovery outranks the interruption it was meant to survive when its own evidence is strong and, if the
    interruption is proven, proven too: a merely strong sign of a failed recovery does not outrank a proven cause."""
    return (recovery.score >= STRONG and (recovery.score >= PROOF or interruption.score < PROOF)
            and interruption.first_ts <= recovery.first_ts + CAUSE_LEAD_NS)


def _open_recovery(recovery: Hypo, interruption: Hypo) -> bool:
    """A recovery meant to survive the interruption, strongly shown to have failed but not proven against a proven
    interruption: a rival the verdict leaves open, neither explained by the interruption nor outranking it."""
    return (interruption.failure_class in BY_ID[recovery.failure_class].absorbs and recovery.score >= STRONG
            and not _absorbs(recovery, interruption))


def explains(a: Hypo, b: Hypo) -> bool:
    """Candidate a explains candidate b (b is a consequence of a, so not a root cause of its own)."""
    cls = BY_ID[a.failure_class]
    if b.failure_class in cls.absorbs and _absorbs(a, b):
        return True  # a recovery that failed outranks the interruption it was meant to survive
    if a.failure_class in BY_ID[b.failure_class].absorbs and (_absorbs(b, a) or _open_recovery(b, a)):
        return False  # the recovery outranks the interruption, or is a rival it leaves open (confidence says so)
    if b.failure_class in cls.explains_earlier and a.score >= STRONG:
        return True
    if b.failure_class not in cls.explains and not BY_ID[b.failure_class].explained_by_any:
        return False
    if b.failure_class in ABSENCE_CLASSES:
        return True
    if _elsewhere(a, b):
        return False  # a fault on one host does not explain another host's own fault (a busy device here, init there)
    return a.first_ts <= b.first_ts + CAUSE_LEAD_NS


def explained(h: Hypo, cands: list[Hypo]) -> bool:
    """Another candidate explains h."""
    return any(o is not h and explains(o, h) for o in cands)


def _places(h: Hypo) -> set[str]:
    """Where a host-level candidate's strong lines were logged: nodes, or pods without the per-attempt suffix."""
    return {s.record.node or without_attempt_suffix(s.record.pod or "") for s in h.strong_signals
            if s.weight >= CANDIDATE and (s.record.node or s.record.pod)}


def _elsewhere(a: Hypo, b: Hypo) -> bool:
    if BY_ID[a.failure_class].scope == "spread" or BY_ID[b.failure_class].scope == "spread":
        return False
    pa, pb = _places(a), _places(b)
    return bool(pa and pb) and not (pa & pb)


# Classes that refuse the run's pods a place (capacity, quota, selectors, admission): after a restart they keep the
# replacement waiting, which the fate says ("waiting"); they are not what ended the attempt before.
PLACEMENT_PHASES = ("scheduling", "admission")


def refuses_placement(h: Hypo) -> bool:
    return BY_ID[h.failure_class].phase in PLACEMENT_PHASES


def current_attempt(roots: list[Hypo], symptoms: list[Signal], notes: list[str]) -> list[Hypo]:
    """The JobSet restarted after the first root's last line and a strong cause of another class holds the new attempt:
    the restart was the recovery the failure policy is for, and what keeps the run down now is the later cause."""
    if len(roots) < 2:
        return roots
    restarts = sorted(t for s in symptoms if s.target == "jobset_restarting" for t in s.times)
    first = roots[0]
    last_line = max((s.ts for s in first.signals if s.weight >= CANDIDATE), default=first.first_ts)
    after = [r for t in restarts if t > last_line for r in roots[1:] if r.score >= STRONG and r.first_ts > t
             and not _open_recovery(r, first) and not refuses_placement(r)]
    if not after:
        return roots
    now = min(after, key=lambda r: r.first_ts)
    notes.append(f"{first.failure_class} ended an earlier attempt and the JobSet restarted; {now.failure_class} holds "
                 "the attempt after it")
    return [now] + [r for r in roots if r is not now]


# A line in the form of the program's own warning (a Python warning, a glog W line, absl's WARNING): the program says
# it handled what it reports (JAX recompiles after a cache read error, a deprecation) and goes on.
WARNING_LINE = re.compile(r"^(?:W\d{4} |WARNING[: ]|\S*\.py:\d+: \w*Warning: |\w*Warning: )")


def warning(s: Signal) -> bool:
    return s.record.source == "container" and bool(WARNING_LINE.match(s.record.text))


def warned_and_went_on(cands: list[Hypo]) -> list[Hypo]:
    """Candidates whose every strong line is the program's own warning, where the same container later failed with a
    non-warning line of another candidate: the program went on past the warning (it did not stop there), so what it
    failed of is the cause and the warning is the survived look-alike."""
    out = []
    for h in cands:
        warned = [s for s in h.signals if s.weight >= CANDIDATE]
        if not warned or not all(warning(s) for s in warned):
            continue
        errors = [s for o in cands if o is not h for s in o.signals if s.weight >= CANDIDATE and not warning(s)]
        if all(any(e.record.pod == w.record.pod and e.record.container == w.record.container and e.ts > w.ts
                   for e in errors) for w in warned):
            out.append(h)
    return out


def roots_of(cands: list[Hypo], symptoms: list[Signal], notes: list[str]) -> tuple[list[Hypo], list[Hypo]]:
    """The candidates no other explains, in order (strong first, then by time), and those only warned about: a warning
    the program went on past explains nothing that came after it, and ranks after what the program failed of."""
    gone_past = warned_and_went_on(cands)
    roots = [h for h in cands if not any(o is not h and o not in gone_past and explains(o, h) for o in cands)]
    roots.sort(key=lambda h: (h.score < STRONG, h.first_ts, -h.score))
    roots = current_attempt(roots, symptoms, notes)
    if gone_past:
        roots = [h for h in roots if h not in gone_past] + [h for h in roots if h in gone_past]
        notes.append("only warned about, and the same program went on to fail of something else: "
                     + ", ".join(h.failure_class for h in gone_past))
    return roots, gone_past
