"""What the node and JobSet series say beyond the chips, as signals: a node's Ready condition gone False or Unknown (the
node lost, in series form), the pressure conditions (support for the class their evictions and kills belong to), and
kube_jobset_restarts rising (a restart of the JobSet, counted where the JobSet object and its restart Events were not
exported). Pure: the facts come from skill.understanding.metrics; docs/metrics.md has the table with the sources."""

from __future__ import annotations

from collections.abc import Iterable

from ..catalog.series import CONDITIONS, CONDITIONS_SOURCE
from ..catalog.types import Pattern, signature_id
from ..reading.records import format_ns
from .metrics import SAMPLE_NS, SeriesFacts, record
from .model import Workload
from .signals import Signal

RESTARTING = "jobset_restarting"  # the symptom a restart is (skill/catalog/symptoms.py)
RESTARTS_SOURCE = "https://github.com/kubernetes/kube-state-metrics"  # kube_jobset_restarts, through Managed Prometheus
NODE_SIDE = ("node", "serial")  # where a node's own records come from (kubelet, NPD, audit of its VM, serial port)


def heard_from(signals: Iterable[Signal]) -> set[str]:
    """The nodes the logs speak about from the node side: node logs, the VM's audit or serial lines, Node Events."""
    out: set[str] = set()
    for s in signals:
        r = s.record
        if r.source in NODE_SIDE and r.node:
            out.add(r.node)
        elif r.source in ("event", "object") and r.kind == "Node" and r.obj:
            out.add(r.obj)
    return out


def condition_signals(facts: SeriesFacts, heard: set[str]) -> list[Signal]:
    """One signal per node and condition row (skill/catalog/series.py CONDITIONS), at the first sample that shows it:
    a cause where nothing from the node side was read about that node, else support (the logs speak first)."""
    out, seen = [], set()
    for t, node, cond, status, s in sorted(facts.conditions, key=lambda c: c[0]):
        row = next((r for r in CONDITIONS if r[0] == cond and r[1] == status), None)
        if row is None or (node, cond, status) in seen:
            continue
        seen.add((node, cond, status))
        cls, cause_w, support_w = row[2], row[3], row[4]
        support = node in heard or cause_w <= 0
        span = [u for u, n, c, st, _ in facts.conditions if n == node and c == cond and st == status]
        text = (f"{s.metric} = 1 on node {node} in the 60 s to {format_ns(t)}: condition={cond} status={status}"
                f" ({len(span)} of the samples to {format_ns(max(span))})")
        wording = f"status_condition {cond}={status}"
        p = Pattern(wording, support_w if support else cause_w, ("metric",), entities=("Node",), support=support,
                    note=f"the node reported {cond}={status}", id="series", origin=CONDITIONS_SOURCE,
                    sid=signature_id(cls, wording))
        out.append(Signal("cause", cls, p, record(s, t, text, t - SAMPLE_NS // 2), {"node": node}))
    return out


RESTART = Pattern("kube_jobset_restarts rose", 0.8, ("metric",), entities=("JobSet",), note="the JobSet restarted",
                  id="series", origin=RESTARTS_SOURCE, sid=signature_id(RESTARTING, "kube_jobset_restarts rose"))


def restart_signals(facts: SeriesFacts, model: Workload) -> list[Signal]:
    """The JobSet's restarts as the kube_jobset_restarts gauge counts them: its count where the JobSet object was not
    exported, and each rise as a restart where no restart was read otherwise (Events, the Restarting condition)."""
    if not facts.restarts:
        return []
    points = sorted((t, v, s) for t, v, s in facts.restarts)
    if not model.jobset_uid:
        model.jobset_restarts = max(model.jobset_restarts, int(points[-1][1]))
    if any(s.target == RESTARTING for s in model.symptoms):
        return []
    out, prev = [], points[0][1]
    for t, v, s in points[1:]:
        if v > prev:
            text = (f"{s.metric} = {v:.0f} for JobSet {model.jobset} in the 60 s to {format_ns(t)} "
                    f"(was {prev:.0f}): the JobSet restarted")
            out.append(Signal("symptom", RESTARTING, RESTART, record(s, t, text, t - SAMPLE_NS // 2), {}))
        prev = v
    return out

