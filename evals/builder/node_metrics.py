"""The nodes' and the JobSet's series of a built incident, as a user exports them beside the logs (docs/metrics.md):

- `kubernetes.io/node/status_condition` (a Monitoring API v3 `timeSeries.list` answer, 60 s samples, newest first) for
  every TPU node the JobSet's workers ran on: `condition=Ready,status=True` at 1 while the node is ready, and
  `status=Unknown` at 1 from when it stopped reporting (a NodeNotReady Event item on it, the VM's interruption audit
  item plus 40 s, or a restart that replaced it), each with the node's `gce_topology_host`;
- with `node_pressure`, `MemoryPressure`, `DiskPressure` and `PIDPressure` of every node the workload's pods ran on
  (the head's CPU node too): `status=False` at 1, and `status=True` at 1 while a `condition` item holds it;
- `kube_jobset_restarts` (kube-state-metrics' JobSet gauge through Managed Service for Prometheus, a `query_range`
  answer): the restarts counted so far, per minute.

Composed from the documented semantics (no TPU records them in the sandbox it is lent: ../shared/reference/metrics.md)."""

from __future__ import annotations

import hashlib
from typing import Any

from pathways_workload.evals.scenarios import NS, fmt_ns, parse_node_ref, parse_time

STEP = 60 * NS
LOST_AFTER_AUDIT_NS = 40 * NS  # the node controller marks a node whose kubelet stopped posting after its grace period
PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure")
INTERRUPTING = ("compute.instances.preempted", "compute.instances.terminateOnHostMaintenance", "compute.instances.hostError")


def _minutes(start: int, end: int) -> list[int]:
    t = -(-start // STEP) * STEP
    return list(range(t, end + 1, STEP)) if t <= end else []


def not_ready(b: Any) -> dict[str, int]:
    """Node name -> when it stopped being Ready, from the scenario's items."""
    out: dict[str, int] = {}

    def mark(name: str, t: int) -> None:
        out[name] = min(out.get(name, t), t)

    for it in b.s.items:
        if it.kind == "event" and it.spec.get("reason") == "NodeNotReady" and "node" in it.spec:
            mark(b.node_ref(it.spec["node"], it.at).name, it.at)
        elif it.kind == "audit" and it.spec.get("method") in INTERRUPTING and "node" in it.spec:
            mark(b.node_ref(it.spec["node"], it.at).name, it.at + LOST_AFTER_AUDIT_NS)
        elif it.kind == "restart":
            for ref in it.spec.get("replace_nodes") or []:
                mark(slot_node(b, str(ref), it.at).name, it.at)
        elif it.kind == "condition" and it.spec.get("condition", "Ready") == "Ready":
            mark(b.node_ref(str(it.spec["node"]), it.at).name, it.at)
    return out


def slot_node(b: Any, ref: str, at: int) -> Any:
    """The node a TPU slot (tpu[s][h]) had at `at`: the latest replacement that had joined by then."""
    kind, a, c = parse_node_ref(ref)
    if kind != "tpu":
        return b.node_ref(ref, at)
    return next(n for n in reversed(b.nodes) if n.kind == "tpu" and n.index == (a, c) and b.node_since.get(n.name, 0) <= at)


def lost_status(b: Any) -> dict[str, str]:
    """Node name -> the Ready status it showed once gone: Unknown (its kubelet stopped posting), or False where a
    `condition` item says the kubelet reported NotReady."""
    out: dict[str, str] = {}
    for it in b.s.items:
        if it.kind == "condition" and it.spec.get("condition", "Ready") == "Ready":
            status = str(it.spec.get("status", "Unknown"))
            if status not in ("False", "Unknown"):
                raise ValueError(f"{it.where()}: a Ready condition item gives status False or Unknown, not {status!r}")
            out.setdefault(b.node_ref(str(it.spec["node"]), it.at).name, status)
    return out


def _series(b: Any, node: str, condition: str, status: str, minutes: list[int], on: dict[int, bool]) -> dict[str, Any]:
    return {
        "metric": {"type": "kubernetes.io/node/status_condition", "labels": {"condition": condition, "status": status}},
        "resource": {"type": "k8s_node", "labels": {"project_id": b.w["project"], "location": b.zone,
                                                     "cluster_name": b.w["cluster"], "node_name": node}},
        "metadata": {"userLabels": {"gce_topology_host": host(b, node)}},
        "metricKind": "GAUGE", "valueType": "INT64",
        "points": [{"interval": {"startTime": fmt_ns(t - STEP, 0), "endTime": fmt_ns(t, 0)},
                    "value": {"int64Value": "1" if on[t] else "0"}} for t in reversed(minutes)],
    }


def pressure(b: Any) -> list[dict[str, Any]]:
    """MemoryPressure / DiskPressure / PIDPressure of every node the workload's pods ran on: False, except while a
    `condition` item holds one True (from its `at` to its `until`, or to the end)."""
    held: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for it in b.s.items:
        if it.kind != "condition" or it.spec.get("condition", "Ready") == "Ready":
            continue
        cond = str(it.spec["condition"])
        if cond not in PRESSURES or str(it.spec.get("status", "True")) != "True":
            raise ValueError(f"{it.where()}: a pressure condition item names one of {PRESSURES} with status True")
        until = parse_time(it.spec["until"], b.s.start, b.s.anchors) if "until" in it.spec else b.s.end
        held.setdefault((b.node_ref(str(it.spec["node"]), it.at).name, cond), []).append((it.at, until))
    nodes = sorted({p.node.name for att in b.attempts for p in att.pods.values() if p.node is not None})
    out = []
    for node in nodes:
        minutes = _minutes(max(b.s.start, b.node_since.get(node, 0)), b.s.end)
        for cond in PRESSURES:
            # a sample is True when the condition held at any time in its minute
            true = {t: any(a <= t and u > t - STEP for a, u in held.get((node, cond), [])) for t in minutes}
            out.append(_series(b, node, cond, "False", minutes, {t: not v for t, v in true.items()}))
            if any(true.values()):
                out.append(_series(b, node, cond, "True", minutes, true))
    return out


def conditions(b: Any) -> list[dict[str, Any]]:
    """Ready=True and (for a node that stopped reporting) Ready=Unknown series of every TPU node the workers ran on."""
    lost = not_ready(b)
    lost_as = lost_status(b)
    nodes = sorted({p.node.name: p.node for att in b.attempts for p in att.pods.values()
                    if p.ref.role == "worker" and p.node is not None}.values(), key=lambda n: n.name)
    out = []
    for node in nodes:
        minutes = _minutes(max(b.s.start, b.node_since.get(node.name, 0)), b.s.end)
        gone = lost.get(node.name)
        for status in ("True", lost_as.get(node.name, "Unknown")) if gone is not None else ("True",):
            ready = {t: gone is None or t < gone for t in minutes}
            out.append({
                "metric": {"type": "kubernetes.io/node/status_condition",
                           "labels": {"condition": "Ready", "status": status}},
                "resource": {"type": "k8s_node", "labels": {"project_id": b.w["project"], "location": b.zone,
                                                             "cluster_name": b.w["cluster"], "node_name": node.name}},
                "metadata": {"userLabels": {"gce_topology_host": host(b, node.name)}},
                "metricKind": "GAUGE", "valueType": "INT64",
                "points": [{"interval": {"startTime": fmt_ns(t - STEP, 0), "endTime": fmt_ns(t, 0)},
                            "value": {"int64Value": "1" if ready[t] == (status == "True") else "0"}} for t in reversed(minutes)],
            })
    return out


def restarts(b: Any) -> dict[str, Any]:
    """kube_jobset_restarts for the JobSet: how many restarts its controller had counted by each minute."""
    times = sorted(it.at for it in b.s.items if it.kind == "restart")
    return {"metric": {"__name__": "kube_jobset_restarts", "jobset_name": b.w["jobset"], "namespace": b.w["namespace"],
                       "cluster": b.w["cluster"], "location": b.zone, "project_id": b.w["project"]},
            "values": [[t // NS, str(sum(1 for r in times if r <= t))] for t in _minutes(b.s.start, b.s.end)]}


def host(b: Any, node: str) -> str:
    """A physical host id for a node (the shape of gce_topology_host: a path of hashed switch, block and host ids); a
    replacement node on its predecessor's host (restart.same_host) has that node's."""
    h = hashlib.sha1(b.host_of.get(node, node).encode()).hexdigest()
    return f"/CCCC{h[:6]}/BBBB{h[6:12]}/HHHH{h[12:20]}"
