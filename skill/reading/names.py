"""Names read out of names and text, each parsed in one place: pods, buckets, service accounts, GKE node pools.

Pods of a JobSet are `<jobset>-<replicated job>-<job index>-<pod index>-<5 random characters>`; the part before the
suffix (the replica) stays the same across restart attempts. Buckets appear as `gs://b/...`, as TensorStore's and
the JSON API's `bucket "b"`, and in a JSON API URL `storage.googleapis.com/storage/v1/b/<b>/o`. A GKE node is
`gke-<cluster>-<pool>-<8 hex of the instance group>-<4 of the VM>` and its instance group `...-<8 hex>-grp`.
"""

from __future__ import annotations

import re

HEAD_JOB = "pathways-head"  # the replicated job of the head pod (resource manager, proxy, the user's client)

# --- pods ---------------------------------------------------------------------------------------------------------
_ATTEMPT_SUFFIX = re.compile(r"-[a-z0-9]{5}$")
_REPLICA = re.compile(r"^(.+-(?:pathways-head|(?:pathways-)?worker)-\d+-\d+)-([a-z0-9]{5})$")
# a workers' replicated job under any name a launcher gives it (worker, workers, pathways-worker, tpu-workers, ...)
_WORKER = re.compile(r"-(?:[a-z0-9-]*-)?workers?-(\d+)-(\d+)(?:-[a-z0-9]{5})?$")
_WORKER_ORDINAL = re.compile(r"-worker-(\d+)-(\d+)(?:-[a-z0-9]{5})?$")


def is_head_pod(pod: str | None) -> bool:
    """A pod of the head job, by its name: <jobset>-pathways-head-<job index>-<pod index>[-<suffix>]."""
    return bool(pod) and f"-{HEAD_JOB}-" in (pod or "")


def without_attempt_suffix(pod: str) -> str:
    """The pod's name without its last 5-character suffix (the same for every attempt of one replica)."""
    return _ATTEMPT_SUFFIX.sub("", pod)


def replica(pod: str) -> tuple[str, str] | None:
    """(replica, suffix) of a head or worker pod's name, None for any other name."""
    m = _REPLICA.match(pod)
    return (m.group(1), m.group(2)) if m else None


def worker_slot(pod: str) -> tuple[int, int] | None:
    """(slice, host) of a worker pod of any workers' replicated job, from its job and pod indexes."""
    m = _WORKER.search(pod)
    return (int(m.group(1)), int(m.group(2))) if m else None


def worker_ordinal(pod: str) -> tuple[int, int] | None:
    """(slice, host) of a pod of a replicated job named exactly `worker` (the order citations list hosts in)."""
    m = _WORKER_ORDINAL.search(pod)
    return (int(m.group(1)), int(m.group(2))) if m else None


# --- buckets ------------------------------------------------------------------------------------------------------
_BUCKET_NAME = r"[a-z0-9][a-z0-9._-]{1,220}"
GS_URL = re.compile(rf"gs://({_BUCKET_NAME})(/[^\s'\"`,;)\]}}>]*)?")  # the bucket and the object path
_BUCKET_NAMED = re.compile(rf"\b[Bb]ucket [\"']({_BUCKET_NAME})[\"']")  # TensorStore, the JSON API: bucket "b"
_BUCKET_API_URL = re.compile(rf"storage\.googleapis\.com/(?:upload/|download/)?storage/v1/b/({_BUCKET_NAME})")
_BUCKET_ANY = re.compile(rf"gs://({_BUCKET_NAME})|\b[Bb]ucket [\"']({_BUCKET_NAME})[\"']|/b/({_BUCKET_NAME})/")


def bucket_in(text: str) -> str | None:
    """The bucket a line names: a gs:// URL first, then `bucket "b"`, then a JSON API URL."""
    m = GS_URL.search(text) or _BUCKET_NAMED.search(text) or _BUCKET_API_URL.search(text)
    return m.group(1).split("/")[0] if m else None


def first_bucket(text: str) -> str | None:
    """The first bucket a line names, whichever spelling comes first (gs://b, bucket "b", a .../b/<b>/ path)."""
    m = _BUCKET_ANY.search(text)
    return next(b for b in m.groups() if b) if m else None


# --- identities and node pools ------------------------------------------------------------------------------------
SERVICE_ACCOUNT = re.compile(r"\b[a-z0-9][\w.-]{0,99}@[a-z0-9-]+(?:\.iam)?\.gserviceaccount\.com\b")
# A node pool's managed instance group, in a URL or bare (the autoscaler's error parameters): gke-<cluster>-<pool>-<8 hex>-grp
_MIG = re.compile(r"(?:instanceGroups/|\b)(gke-[a-z0-9-]+?)-[0-9a-f]{8}-grp\b")
# A GKE node (VM) name: gke-<cluster>-<pool>-<8 hex of the instance group>-<4 of the VM>.
_GKE_VM = re.compile(r"\b(gke-[a-z0-9-]+?)-[0-9a-f]{8}-[a-z0-9]{4}\b")


def service_account_in(text: str) -> str | None:
    """The first service account email a line names."""
    m = SERVICE_ACCOUNT.search(text)
    return m.group(0) if m else None


def gke_vm_prefix(text: str) -> str | None:
    """`gke-<cluster>-<pool>` of the first GKE node named in text."""
    m = _GKE_VM.search(text)
    return m.group(1) if m else None


def node_group_prefix(text: str) -> str | None:
    """`gke-<cluster>-<pool>` of the first instance group or, failing that, GKE node named in text."""
    m = _MIG.search(text) or _GKE_VM.search(text)
    return m.group(1) if m else None
