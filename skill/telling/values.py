"""The values fix and explanation templates are filled with, read from the workload model and the root cause's lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..catalog.scheduling import INVALID_FIELD
from ..catalog.types import SIDECAR_CONTAINER
from ..diagnosis import Entity
from ..judging.classify import activity
from ..judging.matrix import pins
from ..judging.ranking import Hypo
from ..reading.names import HEAD_JOB, SERVICE_ACCOUNT
from ..reading.records import rm_address
from ..understanding.facts import GLOG
from ..understanding.model import Workload
from ..understanding.signals import Signal
from .citations import primary, said_line
from .excerpt import clip, excerpt

# A container status that says the kernel OOM-killed it (exit 137), as the Pod object or an event renders it.
# The IAM permission a storage error names ("does not have storage.buckets.get access", "Permission
# 'storage.objects.create' denied"), in Cloud Storage's IAM permission names.
PERMISSION = re.compile(r"\b(storage\.(?:buckets|objects|managedFolders|multipartUploads)\.[a-zA-Z]+)\b")
OOM_EXIT = re.compile(r"\bOOMKilled\b|exitCode[=:] ?137\b|exit code 137\b")


def context(model: Workload, root: Hypo, ents: list[Entity], symptoms: Sequence[Signal] = ()) -> dict[str, str]:
    """Values the fix and explanation templates are filled with; unknown ones are shown as <placeholders>. The yes/""
    facts let a sentence say only what happened (no "the restarts" without a restart)."""
    first = primary(root)[0].record if root.signals else None
    by_kind: dict[str, str] = {}
    for e in ents:
        by_kind.setdefault(e.kind, e.name)
    pod = (first.pod if first else None) or by_kind.get("Pod") or model.head_pod or "<pod>"
    # a node pool's own count names the pool, not which of its nodes: say so rather than name another node
    pool = f"in node pool {first.obj}" if first and first.kind == "NodePool" and not first.node else None
    node = by_kind.get("Node") or (first.node if first else None) or pool or model.node_of(pod) or "<node>"
    container = (first.container if first else None) or "<container>"
    head = model.pods.get(model.head_pod or "")
    user_container = next((c for c in (head.containers if head else {}) if not c.startswith("pathways-")), "jax-tpu")
    image = by_kind.get("Image") or "<image>"
    location = model.location or "<location>"
    note = primary(root)[0].pattern.note if root.signals else ""
    if root.detail or not first:
        detail = root.detail
    elif note and first.text.startswith("{"):
        detail = note  # a structured payload (an autoscaler decision) is no readable line; say what it means
    else:
        detail = clip(excerpt(GLOG.sub("", said_line(first.text), count=1)), 160)
    jax = re.search(r":jax-([0-9][0-9.]*)", " ".join(c.image or "" for p in model.pods.values() for c in p.containers.values()))
    worker_job = "pathways-worker" if any("-pathways-worker-" in p.name for p in model.workers) else "worker"
    # The root cause's own lines, read for values to fill in (which variant is shown is chosen by matched_ids).
    lines = "\n".join(s.record.text for s in primary(root))[:4000] if root.signals else ""
    sa = re.search(f"({SERVICE_ACCOUNT.pattern}) does not have", lines)
    client_py, sidecar_py = _python_versions(model, user_container)
    invalid = INVALID_FIELD.search(lines)
    return {
        **pins(model),
        "jobset": model.jobset or "<jobset>", "namespace": model.namespace or "default",
        "cluster": model.cluster or "<cluster>", "project": model.project or "<project>", "location": location,
        "region": re.sub(r"-[a-z]$", "", location), "pod": pod, "node": node, "container": container,
        "head_pod": model.head_pod or f"{model.jobset}-{HEAD_JOB}-0-0-<id>", "user_container": user_container,
        "image": image, "image_repo": image.rsplit(":", 1)[0] if ":" in image else image,
        "bucket": by_kind.get("Bucket") or "gs://<bucket>", "jax_version": jax.group(1) if jax else "<client jax version>",
        "worker_job": worker_job, "service_account": sa.group(1) if sa else "<node-or-workload-service-account>",
        "principal": sa.group(1) if sa else "The workload's identity", "detail": detail,
        "permission": m.group(1) if (m := PERMISSION.search(lines)) else "",
        "client_python": client_py, "sidecar_python": sidecar_py,
        "invalid_field": invalid.group(1) if invalid else "", "invalid_reason": invalid.group(2).strip() if invalid else "",
        "expected_rm_address": rm_address(model.jobset or "<jobset>"),
        "finished": _finished(model, user_container),
        "story": "",  # a stalled run's story (telling.silence), filled in where the analysis read it
        # a stall the root cause of a later failure (the program stopped stepping long before it failed)
        "then_failed": "yes" if any(s.kind == "symptom" for s in root.signals) else "",
        "progress_seen": "yes" if activity(model) else "",
        # a sentence about restarts only when something restarted (the JobSet, or a container of its pods)
        "restarted": "yes" if model.jobset_restarts or any(p.restarts for p in model.pods.values())
        or any(s.target in ("jobset_restarting", "crashloop") for s in root.signals) else "",
        "slices_ready": "yes" if model.ready_slices() else "",
        "timed_out": "yes" if any(s.target == "heartbeat_timeout" for s in symptoms) else "",
        "oom_exit": "yes" if any(c.last_exit_code == 137 or c.last_reason == "OOMKilled" for p in model.pods.values()
                                 for c in p.containers.values()) or OOM_EXIT.search(lines) else "",
        "container_or_process": (f"{container} in {pod}" if first and first.container else
                                 next((s.groups["comm"] for s in root.signals if s.groups.get("comm")),
                                      f"a process in {pod}")),
    }


def _python_versions(model: Workload, user_container: str) -> tuple[str, str]:
    """The Python (major.minor) the client on the head and the colocated sidecars report at start-up, "" if unknown."""
    client = sidecar = ""
    for s in sorted(model.milestones.get("python_version", []), key=lambda s: s.ts):
        r = s.record
        if r.container == user_container and r.pod == model.head_pod:
            client = client or s.groups.get("version", "")
        elif r.container == SIDECAR_CONTAINER:
            sidecar = sidecar or s.groups.get("version", "")
    return client, sidecar


def _finished(model: Workload, user_container: str) -> str:
    """How the run says it ended well (the client exited 0, the JobSet is Completed), or "" while it still runs."""
    done = model.condition("Completed")
    head = model.pods.get(model.head_pod or "")
    client = head.containers.get(user_container) if head else None
    parts = []
    if client is not None and client.last_exit_code == 0 and not client.running:
        parts.append(f"the client ({user_container}) exited 0")
    if done:
        parts.append(f"the JobSet is Completed ({done.get('reason') or 'all jobs completed'})")
    return " and ".join(parts) if done else ""
