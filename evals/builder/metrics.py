"""Time series consistent with a built incident, as a user exports them beside the logs (docs/metrics.md):

- `metrics-duty-cycle.json`: Managed Prometheus `query_range` of `max by (__name__, namespace_name, pod_name,
  container_name) (kubernetes_io:container_accelerator_duty_cycle{...})`, 60 s steps, for every TPU worker pod while its pathways-worker container ran: the share of each
  minute the program was stepping (first step to the stop of progress), times a steady 86-97 %, else 0.
- `metrics-hbm.json`: the same for `memory_used` / `memory_total` (bytes per chip), only for HBM OOM incidents: used
  climbs from the first step to the total in the minutes before the OOM line.
- `metrics-interruptions.json`: a Monitoring API v3 `timeSeries.list` answer of `kubernetes.io/node/interruption_count`
  for every node an audit item preempts, puts in maintenance or loses to a host error (exported whether or not the
  audit log was), with the node's `gce_topology_host`.

The values are composed from the documented semantics (60 s samples, percent per chip, bytes per chip): no TPU records
them in the sandbox it is lent (../shared/reference/metrics.md). A separate random stream keeps every other file as it
was. `sources.metrics`: true, false, or auto (series for four library cases in five, chosen by the name: real exports
often hold logs only; none for held-out incidents, which keep what their blind authors exported)."""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from pathways_workload.evals.scenarios import NS, fmt_ns

from .node_metrics import conditions, host, pressure, restarts
from .model import Attempt

STEP = 60 * NS
DUTY_QUERY = "kubernetes_io:container_accelerator_duty_cycle"
INTERRUPTION_OF = {  # audit method -> (interruption_type, interruption_reason) as the node's series counts it
    "compute.instances.preempted": ("PreemptionEvent", "Preemption"),
    "compute.instances.terminateOnHostMaintenance": ("MaintenanceEvent", "HW/SW Maintenance"),
    "compute.instances.hostError": ("TerminationEvent", "HostError"),
}
HBM_CLASSES = ("hbm_oom",)
HBM_TOTAL = {"tpu-v5-lite-podslice": 16 * 2**30, "tpu-v6e-slice": 32 * 2**30, "tpu-v5p-slice": 95 * 2**30}


def wanted(b: Any) -> bool:
    """Whether this case's export holds series: the scenario's switch, or four cases in five by name."""
    flag = b.s.sources.get("metrics", "auto")
    if flag == "auto":
        return not b.blind and int(hashlib.sha1(b.s.name.encode()).hexdigest(), 16) % 5 != 0
    return bool(flag)


KINDS = ("duty_cycle", "hbm", "node_interruptions", "pool_interruptions", "node_conditions", "node_pressure",
         "jobset_restarts")
DEFAULT_KINDS = ("duty_cycle", "hbm", "node_interruptions")


def series_files(b: Any, force: bool = False) -> dict[str, Any]:
    """The metric files of a built incident (none when the scenario keeps logs only and `force` is not set)."""
    if not (force or wanted(b)):
        return {}
    kinds = b.s.sources.get("series") or DEFAULT_KINDS
    if unknown := set(kinds) - set(KINDS):
        raise ValueError(f"sources.series: unknown {sorted(unknown)}; known: {list(KINDS)}")
    rng = random.Random(b.s.name + "/metrics")
    out: dict[str, Any] = {}
    duty = [r for att in b.attempts for r in _duty(b, att, rng)] if "duty_cycle" in kinds else []
    if duty:
        out["metrics-duty-cycle.json"] = _prometheus(duty)
    hbm = _hbm(b, rng) if "hbm" in kinds and (b.s.expected or {}).get("failure_class") in HBM_CLASSES else []
    if hbm:
        out["metrics-hbm.json"] = _prometheus(hbm)
    interruptions = _interruptions(b, "node_interruptions" in kinds, "pool_interruptions" in kinds)
    if interruptions:
        out["metrics-interruptions.json"] = {"timeSeries": interruptions, "unit": "1"}
    if "node_conditions" in kinds or "node_pressure" in kinds:
        out["metrics-node-conditions.json"] = {"timeSeries": (conditions(b) if "node_conditions" in kinds else [])
                                               + (pressure(b) if "node_pressure" in kinds else [])}
    if "jobset_restarts" in kinds:
        out["metrics-jobset-restarts.json"] = _prometheus([restarts(b)])
    return out


def _prometheus(result: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _minutes(start: int, end: int) -> list[int]:
    """The end times of the 60 s samples inside [start, end], aligned to whole minutes."""
    t = -(-start // STEP) * STEP
    return list(range(t, end + 1, STEP)) if t <= end else []


STEP_LINE = re.compile(r"(?i)\bstep[\s:=#]*(\d+)")
LAUNCHES = re.compile(r"Completed [1-9]\d* program launches")  # a worker's executor reporting programs it ran


def stepping(b: Any, att: Attempt) -> tuple[int, int] | None:
    """When the attempt's program was stepping, read off what it printed: from its client's first step line to the
    first line of its highest step (a step restated later, by a watchdog, is no step), plus one step's time; the
    workers' reports of programs launched, for a client that prints no step line."""
    head = next((p for p in att.pods.values() if p.ref.role == "head"), None)
    client = head.ctr("jax-tpu") if head else None
    if head is None or client is None:
        return None
    end = att.end or b.s.end
    steps = []
    for t, e in b.entries:
        labels = (e.get("resource") or {}).get("labels") or {}
        if labels.get("pod_name") != head.name or labels.get("container_name") != client.name or not att.start <= t <= end:
            continue
        m = STEP_LINE.search(str(e.get("textPayload") or (e.get("jsonPayload") or {}).get("message") or ""))
        if m:
            steps.append((t, int(m.group(1))))
    names = {p.name for p in att.pods.values() if p.ref.role == "worker"}
    launches = sorted(t for t, e in b.entries if att.start <= t <= end
                      and ((e.get("resource") or {}).get("labels") or {}).get("pod_name") in names
                      and LAUNCHES.search(str(e.get("textPayload") or "")))
    if not steps and not launches:
        return None
    step_ns = int(float(b.s.background.get("step_seconds") or 2.0) * NS)
    if not steps:  # a client that prints no step: the workers' launches are all there is
        return launches[0] - step_ns, launches[-1] + step_ns
    steps.sort()
    top = max(n for _t, n in steps)
    if b.s.background.get("quiet_after"):  # a quiet run steps on, unprinted, until its progress stops
        return steps[0][0] - step_ns, min(x for x in (att.progress_stop, end) if x is not None)
    return steps[0][0] - step_ns, next(t for t, n in steps if n == top) + step_ns


def _duty(b: Any, att: Attempt, rng: random.Random) -> list[dict[str, Any]]:
    window = stepping(b, att)
    out = []
    for pod in sorted(att.pods.values(), key=lambda p: p.name):
        c = pod.ctr("pathways-worker") if pod.ref.role == "worker" else None
        if c is None or pod.node is None or not c.runs:
            continue
        level = rng.uniform(86, 97)
        values = []
        for run in c.runs:
            for t in _minutes(run.start, min(x for x in (run.end, b.s.end) if x is not None)):
                share = max(0, min(t, window[1]) - max(t - STEP, window[0])) / STEP if window else 0.0
                values.append([t // NS, f"{share * level * rng.uniform(0.98, 1.02) if share else 0.0:.1f}"])
        if values:
            out.append({"metric": {"__name__": DUTY_QUERY, "container_name": c.name, "namespace_name": b.w["namespace"],
                                   "pod_name": pod.name}, "values": values})
    return out


def _hbm(b: Any, rng: random.Random) -> list[dict[str, Any]]:
    """memory_used climbing to memory_total on every worker of the attempt that ran out, from its first step."""
    oom = min((t for t, e in b.entries if "RESOURCE_EXHAUSTED" in str(e.get("textPayload", ""))), default=None)
    total = HBM_TOTAL.get(b.w.get("accelerator", ""), 16 * 2**30)
    out = []
    for att in b.attempts:
        first = att.ms.get("first_step") or att.ms.get("devices")
        if oom is None or first is None or not att.start <= oom <= (att.end or b.s.end):
            continue
        for pod in sorted((p for p in att.pods.values() if p.ref.role == "worker" and p.node), key=lambda p: p.name):
            c = pod.ctr("pathways-worker")
            if c is None or not c.runs:
                continue
            end = min(x for x in (c.runs[0].end, b.s.end) if x is not None)
            used, tot = [], []
            for t in _minutes(c.runs[0].start, end):
                grow = min(1.0, max(0.0, (t - first) / max(STEP, oom - first)))
                frac = 0.02 if t < first else 0.55 + 0.44 * grow * rng.uniform(0.995, 1.0)
                used.append([t // NS, str(int(total * min(frac, 0.995)))])
                tot.append([t // NS, str(total)])
            out += [{"metric": {"__name__": "kubernetes_io:container_accelerator_memory_used", "pod_name": pod.name,
                                "container_name": c.name, "namespace_name": b.w["namespace"]},
                     "values": used},
                    {"metric": {"__name__": "kubernetes_io:container_accelerator_memory_total", "pod_name": pod.name,
                                "container_name": c.name, "namespace_name": b.w["namespace"]},
                     "values": tot}]
    return out


def _interruptions(b: Any, nodes: bool = True, pools: bool = False) -> list[dict[str, Any]]:
    out = []
    for it in b.s.items:
        kind = INTERRUPTION_OF.get(str(it.spec.get("method"))) if it.kind == "audit" else None
        if kind is None or "node" not in it.spec:
            continue
        node = b.node_ref(it.spec["node"], it.at)
        end = -(-it.at // STEP) * STEP
        if pools:  # the node pool's twin: the same count, on the k8s_node_pool resource
            out.append({
                "metric": {"type": "kubernetes.io/node_pool/interruption_count",
                           "labels": {"interruption_type": kind[0], "interruption_reason": kind[1]}},
                "resource": {"type": "k8s_node_pool", "labels": {"project_id": b.w["project"], "location": b.zone,
                                                                  "cluster_name": b.w["cluster"], "nodepool_name": node.pool}},
                "metricKind": "GAUGE", "valueType": "INT64",
                "points": [{"interval": {"startTime": fmt_ns(end - STEP, 0), "endTime": fmt_ns(end, 0)},
                            "value": {"int64Value": "1"}}],
            })
        if not nodes:
            continue
        out.append({
            "metric": {"type": "kubernetes.io/node/interruption_count",
                       "labels": {"interruption_type": kind[0], "interruption_reason": kind[1]}},
            "resource": {"type": "k8s_node", "labels": {"project_id": b.w["project"], "location": b.zone,
                                                         "cluster_name": b.w["cluster"], "node_name": node.name}},
            "metadata": {"userLabels": {"gce_topology_host": host(b, node.name)}},
            "metricKind": "GAUGE", "valueType": "INT64",
            "points": [{"interval": {"startTime": fmt_ns(end - STEP, 0), "endTime": fmt_ns(end, 0)},
                        "value": {"int64Value": "1"}}],
        })
    return out


def dump(name: str, data: Any) -> str:
    """Prometheus' HTTP API answers compact JSON; the Monitoring API (through curl) 2-space indented."""
    import json

    if "timeSeries" in data:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"
