"""What the root cause lives on: the entities (pods, nodes, containers, images, buckets, node pools, identities) a
diagnosis names, from the lines that locate the cause and the workload model."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..catalog import BY_ID
from ..catalog.types import SIDECAR_CONTAINER
from ..diagnosis import Entity
from ..judging.ranking import Hypo
from ..reading.names import bucket_in, gke_vm_prefix, node_group_prefix, service_account_in, worker_ordinal
from ..reading.records import Record
from ..understanding.model import Workload
from ..understanding.signals import Signal
from .citations import SAME_MOMENT_NS, latest_attempt, node_of, pod_of, primary

MAX_ENTITIES = 12
MAX_SAME_PODS = 4
_REFUSAL = re.compile(r"(?i)\b403\b|forbidden|permission|denied|does not have|not authori[sz]ed|unauthori[sz]ed")
_FAILED_CONTAINER = re.compile(r"(?:failed container|[Cc]ontainer) \"?([a-z0-9][a-z0-9-]*)\"?")


def _failed_containers(pod: str, since: int, symptoms: list[Signal]) -> list[str]:
    """The containers of `pod` that failed from `since` on: a termination record's, or the one an event names."""
    out = []
    for s in symptoms:
        if s.record.pod != pod or s.ts < since - SAME_MOMENT_NS:
            continue
        m = None if s.record.container else _FAILED_CONTAINER.search(s.record.text)
        name = s.record.container or (m.group(1) if m else None)
        if name and name not in out:
            out.append(name)
    return out


def entities(model: Workload, root: Hypo, symptoms: Sequence[Signal] = (), triggers: Sequence[Hypo] = ()) -> list[Entity]:
    """The entities the root cause lives on, at most MAX_ENTITIES, in the order they were found."""
    out: dict[tuple[str, str], None] = {}
    for s in primary(root):
        r = s.record
        node = node_of(s) or model.node_of(pod_of(s))
        for kind in root.entity_kinds or s.pattern.entities:
            name = _entity_name(kind, s, r, node, model)
            if name:
                out.setdefault((kind, name), None)
    # the same failure on several pods (every worker refusing one flag, every sidecar one plugin): each pod it hit, the
    # first host in order first, up to MAX_SAME_PODS
    firsts = {s.pattern.sid for s in primary(root) if "Pod" in (root.entity_kinds or s.pattern.entities)}
    same = {p for s in root.strong_signals if s.pattern.sid in firsts and (p := pod_of(s))}
    failed = _container_names(out)
    for pod in sorted(same, key=lambda p: (worker_ordinal(p) or (99, 99), p))[:MAX_SAME_PODS]:
        _pod_and_containers(out, pod, failed, model)  # ... with the container the failure is in there too
    # the failure again in a later attempt, on a pod the JobSet recreated: that pod is the one still there to inspect,
    # and a fault of the node names the node that attempt landed on (a new name, perhaps the same physical host)
    for s in latest_attempt(root):
        kinds = root.entity_kinds or s.pattern.entities
        if (again := pod_of(s)) and "Pod" in kinds:
            out.setdefault(("Pod", again), None)
        if "Node" in kinds and (where := node_of(s) or model.node_of(again)):  # ... and the node it landed on
            out.setdefault(("Node", where), None)
    cls = BY_ID[root.failure_class]
    if not any(k == "Pod" for k, _ in out):
        # a fault of the node (a VM that went away, its kernel, its memory): name the JobSet's pods that ran on it (the
        # workers that died with it), and a container the kernel killed there (exit 137 or OOMKilled)
        for node in [n for k, n in out if k == "Node"]:
            for info in sorted((p for p in model.pods.values() if p.node == node), key=lambda p: p.name)[:2]:
                out.setdefault(("Pod", info.name), None)
                killed = [c.name for c in info.containers.values() if c.last_exit_code == 137 or c.last_reason == "OOMKilled"]
                for cname in killed or _failed_containers(info.name, root.first_ts, list(symptoms))[:1]:
                    out.setdefault(("Container", f"{info.name}/{cname}"), None)
    # the interruption a failed recovery was meant to survive (the strongest that names a VM): its VM and node pool
    nodes = (n for t in triggers for n in (node_of(x) or model.node_of(pod_of(x)) for x in t.strong_signals) if n)
    if (node := next(nodes, None)) is not None:
        out.setdefault(("Node", node), None)
        if pool := _node_pool(gke_vm_prefix(node), model):
            out.setdefault(("NodePool", pool), None)
    for s in primary(root) if root.signals else []:  # an identity a refusal names (the one missing the permission)
        if _REFUSAL.search(s.record.text) and (sa := service_account_in(s.record.text)) is not None:
            out.setdefault(("ServiceAccount", sa), None)
    for kind, name in list(out):
        pod, _, container = name.partition("/")
        # version skew is fixed in the images; a colocated sidecar is the user's own build, fixed in its image whatever
        # the class
        if cls.names_images or container == SIDECAR_CONTAINER:
            c = model.pods[pod].containers.get(container) if kind == "Container" and pod in model.pods else None
            if c and c.image:
                out.setdefault(("Image", c.image), None)
    found = _with_stand_ins(list(out), model)
    if cls.names_jobset and model.jobset:  # kept whatever else was found
        found = [e for e in found if e != ("JobSet", model.jobset)][:MAX_ENTITIES - 1] + [("JobSet", model.jobset)]
    return [Entity(kind=k, name=n) for k, n in found[:MAX_ENTITIES]]


def stand_in(model: Workload, pod: str) -> str | None:
    """The pod that stands in `pod`'s place now: a pod of the exported Pod objects (what exists at export) with the
    same role, slice and host, when `pod` itself is gone (known only from its logs and events: an earlier attempt)."""
    info = model.pods.get(pod)
    if info is None or info.uid or info.role == "other":
        return None
    now = [p for p in model.pods.values() if p.uid and p.name != pod
           and (p.role, p.slice, p.host) == (info.role, info.slice, info.host)]
    return max(now, key=lambda p: (p.attempt or "", p.name)).name if len(now) == 1 or (now and info.role == "head") else None


def _with_stand_ins(found: list[tuple[str, str]], model: Workload) -> list[tuple[str, str]]:
    """What was found, then for each pod an earlier attempt ran the failure on the pod in its place now (the one to
    inspect) with the failure's container there (`pod/container`), in the room left."""
    failed = _container_names(found)
    out: dict[tuple[str, str], None] = dict.fromkeys(found)
    for kind, name in found:
        if kind == "Pod" and (now := stand_in(model, name)) is not None and ("Pod", now) not in out:
            _pod_and_containers(out, now, failed, model)
    return list(out)


def _container_names(found: list[tuple[str, str]] | dict[tuple[str, str], None]) -> list[str]:
    """The container names the Container entities found so far name, once each, in order."""
    return list(dict.fromkeys(n.partition("/")[2] for k, n in found if k == "Container"))


def _pod_and_containers(out: dict[tuple[str, str], None], pod: str, containers: list[str], model: Workload) -> None:
    """Name the pod, and those of the containers that it runs."""
    out.setdefault(("Pod", pod), None)
    for c in containers:
        if pod in model.pods and c in model.pods[pod].containers:
            out.setdefault(("Container", f"{pod}/{c}"), None)


def _entity_name(kind: str, s: Signal, r: Record, node: str | None, model: Workload) -> str | None:
    if kind == "Pod":
        return r.pod or s.groups.get("pod")
    if kind == "Node":
        return node
    if kind == "Container":
        return f"{r.pod}/{r.container}" if r.pod and r.container else None
    if kind == "Image":
        image = s.groups.get("image") or r.extra.get("image")
        if not image and r.pod in model.pods and r.container:
            c = model.pods[r.pod].containers.get(r.container)
            image = c.image if c else None
        return image
    if kind == "Bucket":
        if s.groups.get("url", "").startswith("gs://"):  # the object a fact names, whatever the line's wording
            return "gs://" + s.groups["url"][5:].split("/")[0]
        bucket = bucket_in(r.text)
        if not bucket and (fc := BY_ID.get(s.target)) is not None and fc.bucket_from_scratch:
            # The scratch error text often omits the bucket; the server's own --gcs_scratch_location names it.
            args = sorted(model.milestones.get("scratch_location", []), key=lambda a: (a.record.pod != r.pod, a.ts))
            bucket = bucket_in(args[0].groups.get("bucket", "")) if args else None
        return f"gs://{bucket}" if bucket else None
    if kind == "JobSet":
        return model.jobset
    if kind == "NodePool":  # a node pool's own series names it; a line, by the instance group or VM it names
        return r.obj if r.kind == "NodePool" else _node_pool(node_group_prefix(r.text), model)
    if kind == "ServiceAccount":  # the identity the refusal names (`<sa>@<project>.iam.gserviceaccount.com does not have ...`)
        return service_account_in(r.text)
    if kind == "Workload":
        return r.obj if r.kind == "Workload" else None
    return None


def _node_pool(prefix: str | None, model: Workload) -> str | None:
    """The node pool a GKE instance-group or VM prefix (gke-<cluster>-<pool>) names, when the cluster is known."""
    if prefix and model.cluster and prefix.startswith(f"gke-{model.cluster}-"):
        return prefix[len(f"gke-{model.cluster}-"):]
    return None
