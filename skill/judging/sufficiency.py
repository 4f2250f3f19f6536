"""Whether the data is enough for the verdict it produced: health needs progress seen, a failure needs its own evidence,
and a start-up cut off by the end of the export cannot be judged stalled or healthy yet. Pure: no I/O."""

from __future__ import annotations

from ..catalog import BY_ID, CLASSES, HEALTHY, UNKNOWN
from .classify import STRONG, Verdict, activity
from ..understanding.status import starting
from ..diagnosis import Sufficiency
from ..understanding.model import Workload

NS = 1_000_000_000


def sufficiency(m: Workload, v: Verdict) -> Sufficiency:
    reasons: list[str] = []
    if v.failure_class == HEALTHY and not activity(m) and (ready := starting(m)) is not None:
        reasons.append(f"every slice became ready {(m.now - ready) // NS // 60} min before the end of the data and no "
                       "step has been logged yet (the first compile may still be running): start-up is on track so far, "
                       "but nothing yet shows the program running; export again after the first steps")
    elif v.failure_class == HEALTHY and not activity(m):
        reasons.append("no progress line (step, loss) and no program-launch report in the data: nothing shows the "
                       "program running, so health is not claimed")
    if v.too_soon:
        reasons.append(v.too_soon)
    if v.failure_class == UNKNOWN:
        reasons.append("something failed, but no signature or fact the catalog knows explains it: read the first "
                       "failing container's last lines (next_checks)")
    if "container" not in m.sources_seen and "container" in BY_ID[v.failure_class].sources:
        reasons.append("no container logs of the JobSet: the pods' own output, which this verdict rests on, could not "
                       "be read")
    if v.failure_class == HEALTHY or v.root.score < STRONG:  # a firm cause explains why start-up stopped
        reasons += _too_early(m, v)
    return Sufficiency(sufficient=not reasons, reasons=reasons)


def _too_early(m: Workload, v: Verdict) -> list[str]:
    """The data ends before an absence check could be judged (slices ready after the resource manager serves)."""
    out = []
    for cls in CLASSES:
        rule = cls.absence
        if rule is None or rule.kind != "milestone_missing" or (v.failure_class == cls.id and v.root.score >= rule.score):
            continue
        start = m.last_milestone(rule.after)
        done = [s for s in m.milestones.get(rule.expect, []) if start and s.ts >= start.ts
                and s.groups.get("ready") == s.groups.get("total")]
        if start is not None and not done and m.now - start.ts < rule.wait_s * NS:
            out.append(f"the data ends {(m.now - start.ts) // NS // 60} min after `{rule.after}` with no complete "
                       f"`{rule.expect}`; {cls.id} is judged only {rule.wait_s // 60} min after it: export a longer "
                       "window (or pass --at later) to tell a slow start-up from a stalled one")
    return out
