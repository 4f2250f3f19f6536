"""Kubernetes objects (Pod, JobSet, Node, Event): the shape the engine reads them in (checked by every source), and
the facts read off them, as records cited by the object's metadata.uid."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from .records import Record, parse_ts

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
SPOT_LABELS = ("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible")


def spot_placement(spec: dict) -> str | None:
    """How a pod spec asks for Spot capacity: "node selector" or "node affinity" (a required term), else None."""
    selector = spec.get("nodeSelector") or {}
    if any(str(selector.get(k)).lower() == "true" for k in SPOT_LABELS):
        return "node selector"
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") in SPOT_LABELS and expr.get("operator") == "In" and "true" in (expr.get("values") or []):
                return "node affinity"
    return None


def pod_records(pod: dict) -> Iterator[Record]:
    """Terminations, waiting reasons, unschedulable and disruption conditions of one Pod."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    uid, name = str(meta.get("uid") or ""), meta.get("name")
    if not uid:
        return
    ns = meta.get("namespace")
    jobset = (meta.get("labels") or {}).get(JOBSET_NAME)
    node = spec.get("nodeName")
    start = parse_ts(status.get("startTime")) or parse_ts(meta.get("creationTimestamp"))

    def rec(ts: int, log: str, text: str, reason: str | None, container: str | None = None, **extra) -> Record:
        return Record(id=uid, ts=ts, source="object", log=log, text=text, pod=name, container=container, node=node,
                      namespace=ns, jobset=jobset, reason=reason, kind="Pod", obj=name, extra=extra)

    statuses = [(s, True) for s in status.get("initContainerStatuses") or []]
    statuses += [(s, False) for s in status.get("containerStatuses") or []]
    for cs, _init in statuses:
        cname = cs.get("name")
        restarts = int(cs.get("restartCount") or 0)
        for which in ("lastState", "state"):
            term = (cs.get(which) or {}).get("terminated")
            if term:
                code = term.get("exitCode")
                text = (f"container {cname} terminated: reason={term.get('reason')} exitCode={code}"
                        f" restartCount={restarts}" + (f" message={term['message']}" if term.get("message") else ""))
                ts = parse_ts(term.get("finishedAt")) or parse_ts(term.get("startedAt")) or start
                yield rec(ts, "pod-status", text, term.get("reason"), cname, exit_code=code, restarts=restarts)
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            text = f"container {cname} waiting: reason={waiting.get('reason')}"
            if waiting.get("message"):
                text += f" message={waiting['message']}"
            yield rec(_cond_ts(status) or start, "pod-status", text, waiting.get("reason"), cname,
                      image=cs.get("image"), restarts=restarts)
    for cond in status.get("conditions") or []:
        ctype, cstat = cond.get("type"), cond.get("status")
        if (ctype == "PodScheduled" and cstat == "False") or ctype == "DisruptionTarget":
            text = f"pod condition {ctype}={cstat} reason={cond.get('reason')}: {cond.get('message') or ''}"
            yield rec(parse_ts(cond.get("lastTransitionTime")) or start, "pod-condition", text, cond.get("reason"))
    if status.get("reason") or status.get("message"):
        text = f"pod status reason={status.get('reason')}: {status.get('message') or ''}"
        yield rec(_cond_ts(status) or start, "pod-status", text, status.get("reason"))
    placement = spot_placement(spec)
    if placement:
        key = next(k for k in SPOT_LABELS if k in str(spec))
        yield rec(start, "pod-spec", f"pod {placement} {key}=true", None)


def _cond_ts(status: dict) -> int:
    return max((parse_ts(c.get("lastTransitionTime")) for c in status.get("conditions") or []), default=0)


def jobset_records(js: dict) -> Iterator[Record]:
    """The JobSet's status conditions."""
    meta = js.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if not uid:
        return
    for cond in (js.get("status") or {}).get("conditions") or []:
        text = (f"JobSet condition {cond.get('type')}={cond.get('status')} reason={cond.get('reason')}: "
                f"{cond.get('message') or ''}")
        yield Record(id=uid, ts=parse_ts(cond.get("lastTransitionTime")), source="object", log="jobset-status",
                     text=text, namespace=meta.get("namespace"), jobset=meta.get("name"), reason=cond.get("reason"),
                     kind="JobSet", obj=meta.get("name"),
                     extra={"type": cond.get("type"), "status": cond.get("status")})


def node_records(node: dict) -> Iterator[Record]:
    """Abnormal Node conditions, maintenance labels and termination taints."""
    meta = node.get("metadata") or {}
    uid, name = str(meta.get("uid") or ""), meta.get("name")
    if not uid:
        return
    created = parse_ts(meta.get("creationTimestamp"))

    def rec(ts: int, text: str, reason: str | None) -> Record:
        return Record(id=uid, ts=ts, source="object", log="node-status", text=text, node=name, reason=reason,
                      kind="Node", obj=name)

    for cond in (node.get("status") or {}).get("conditions") or []:
        healthy = "True" if cond.get("type") == "Ready" else "False"
        if cond.get("status") != healthy:
            text = f"node condition {cond.get('type')}={cond.get('status')} reason={cond.get('reason')}: {cond.get('message') or ''}"
            yield rec(parse_ts(cond.get("lastTransitionTime")) or created, text, cond.get("reason"))
    for key, value in (meta.get("labels") or {}).items():
        if "maintenance" in key or (key in SPOT_LABELS and str(value).lower() == "true"):
            yield rec(created, f"node label {key}={value}", key)
    for taint in (node.get("spec") or {}).get("taints") or []:
        if "termination" in str(taint.get("key")) or "maintenance" in str(taint.get("key")):
            yield rec(parse_ts(taint.get("timeAdded")) or created, f"node taint {taint.get('key')}:{taint.get('effect')}",
                      taint.get("key"))


# Where the engine reads a Kubernetes object, the JSON type it expects there ("[]" = each list item). Anything else
# (a string where an object belongs, a number for a name) is skipped and reported, so the engine sees only this shape.
_SHAPE: dict[str, type | tuple[type, ...]] = {
    "metadata": dict, "metadata.name": str, "metadata.namespace": str, "metadata.uid": str, "metadata.labels": dict,
    "spec": dict, "status": dict, "involvedObject": dict, "involvedObject.name": str, "involvedObject.kind": str,
    "involvedObject.namespace": str, "series": dict, "source": dict, "reason": str, "message": str, "type": str,
    "spec.nodeName": str, "spec.containers": list, "spec.initContainers": list, "spec.failurePolicy": dict,
    "spec.replicatedJobs": list, "spec.taints": list, "status.phase": str, "status.reason": str,
    "status.message": str, "status.restarts": int, "status.conditions": list, "status.containerStatuses": list,
    "status.initContainerStatuses": list,
}
_ITEM_SHAPE: dict[str, type | tuple[type, ...]] = {
    "": dict, "name": str, "image": str, "restartCount": int, "state": dict, "lastState": dict, "type": str,
    "status": str, "reason": str, "key": str, "replicas": int, "state.terminated": dict, "state.waiting": dict,
    "lastState.terminated": dict,
}


def _at(obj: object, dotted: str) -> object:
    for part in dotted.split(".") if dotted else ():
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _misshapen(obj: dict) -> str | None:
    """Where a Kubernetes object does not have the shape the engine reads, or None."""
    for path, want in _SHAPE.items():
        value = _at(obj, path)
        if value is not None and (not isinstance(value, want) or isinstance(value, bool) and want is int):
            return f"{path} is {type(value).__name__}"
        if want is list and isinstance(value, list):
            for i, item in enumerate(value):
                for sub, kind in _ITEM_SHAPE.items():
                    v = _at(item, sub) if isinstance(item, dict) or not sub else None
                    if v is not None and not isinstance(v, kind):
                        return f"{path}[{i}]{'.' + sub if sub else ''} is {type(v).__name__}"
    labels = cast(dict, _at(obj, "metadata.labels") or {})
    bad = next((k for k, v in labels.items() if not isinstance(v, str)), None)
    return f"metadata.labels[{bad!r}] is {type(labels[bad]).__name__}" if bad is not None else None


def usable_objects(objects: list[dict], stats) -> list[dict]:
    """The objects the engine can read; the others are counted as skipped and named in the stats' gaps."""
    out = []
    for obj in objects:
        problem = _misshapen(obj)
        if problem is None:
            out.append(obj)
            continue
        stats.entries_skipped += 1
        name = _at(obj, "metadata.name")
        stats.gap(f"{obj.get('kind')} {name if isinstance(name, str) else '?'}: {problem}, not the Kubernetes "
                  "type; skipped it")
    return out
