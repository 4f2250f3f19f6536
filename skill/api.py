"""Public entry points: diagnose an export folder, or a live workload through injected sources."""

from __future__ import annotations

from pathlib import Path

from .diagnosis import Diagnosis
from .engine import Analysis, analyse, resolve_jobset
from .errors import InputError
from .explain import build
from .queries import Scope
from .records import parse_ts
from .sources.replay import ReplaySource


def _at_ns(at: str | None) -> int | None:
    if at is None:
        return None
    ns = parse_ts(at)
    if not ns:
        raise InputError(f"--at {at!r}: not an RFC 3339 time (e.g. 2026-11-20T10:30:00Z)")
    return ns


def diagnose_replay(folder: str | Path, *, jobset: str | None = None, at: str | None = None) -> Diagnosis:
    """Diagnose an exported incident folder; "now" is the end of the data unless `at` says otherwise."""
    return build(analyse_replay(folder, jobset=jobset, at=at), logging_requests=0)


def analyse_replay(folder: str | Path, *, jobset: str | None = None, at: str | None = None,
                   namespace: str | None = None, digest: bool = False) -> Analysis:
    """The analysis of an export folder, before it becomes a Diagnosis (the tools reuse it)."""
    source = ReplaySource(folder)
    objects = usable_objects(source.objects(), source.stats)
    inventory = source.inventory()
    if not objects and not source.stats.entries_read and not inventory.jobsets and not source.stats.last_ts:
        detail = "; ".join(source.stats.gaps[:3])
        raise InputError(f"{folder}: no usable log entries or Kubernetes objects" + (f" ({detail})" if detail else ""))
    name = resolve_jobset(source, objects, jobset, inventory)
    explicit = namespace
    namespace = inventory.namespaces.most_common(1)[0][0] if inventory.namespaces else None
    for o in objects:
        if o.get("kind") in ("JobSet", "Pod") and (o["metadata"].get("name") == name or
                                                    (o["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name") == name):
            namespace = o["metadata"].get("namespace") or namespace
            break
    namespace = explicit or namespace
    now = _at_ns(at)
    end = now or source.stats.last_ts or _latest_object_ts(objects)
    start = source.stats.first_ts or end
    scope = Scope(jobset=name, start_ns=start, end_ns=end, namespace=namespace,
                  cluster=_common(inventory.clusters), project=_common(inventory.projects))
    analysis = analyse(source, scope, objects, now_ns=end, digest=digest)
    analysis.model.location = analysis.model.location or _common(inventory.locations)
    return analysis


def _common(counter) -> str | None:
    return counter.most_common(1)[0][0] if counter else None


def _latest_object_ts(objects: list[dict]) -> int:
    best = 0
    for o in objects:
        for key in ("lastTimestamp", "eventTime"):
            best = max(best, parse_ts(o.get(key)))
        for c in (o.get("status") or {}).get("conditions") or []:
            best = max(best, parse_ts(c.get("lastTransitionTime")))
    return best


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
        if want is list and value is not None:
            for i, item in enumerate(value):
                for sub, kind in _ITEM_SHAPE.items():
                    v = _at(item, sub) if isinstance(item, dict) or not sub else None
                    if v is not None and not isinstance(v, kind):
                        return f"{path}[{i}]{'.' + sub if sub else ''} is {type(v).__name__}"
    labels = _at(obj, "metadata.labels") or {}
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
