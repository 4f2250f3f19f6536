"""What a first look at an export finds: which values are log entries or Kubernetes objects, and the inventory
(JobSets, clusters, namespaces, where each JobSet ran) summed over the routing fields of every entry."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TypeGuard

from ..records import as_object


def is_log_entry(doc: object) -> TypeGuard[dict]:
    return isinstance(doc, dict) and ("insertId" in doc or "logName" in doc) and "kind" not in doc


def is_k8s_object(doc: object) -> TypeGuard[dict]:
    return isinstance(doc, dict) and isinstance(doc.get("kind"), str) and "apiVersion" in doc


@dataclass
class Inventory:
    """What a first look at the logs finds: JobSets, namespaces, clusters and the time span."""

    jobsets: Counter
    clusters: Counter
    projects: Counter
    locations: Counter
    namespaces: Counter
    # per JobSet: (cluster, project, location) of its own entries, so each is diagnosed where it ran
    places: dict[str, Counter] = field(default_factory=dict)

    def place(self, jobset: str) -> tuple[str | None, str | None, str | None]:
        """The JobSet's own (cluster, project, location), each falling back to the folder's most common one."""
        own = self.places.get(jobset)
        best = own.most_common(1)[0][0] if own else (None, None, None)
        common = [c.most_common(1)[0][0] if c else None for c in (self.clusters, self.projects, self.locations)]
        return tuple(b or c for b, c in zip(best, common))  # type: ignore[return-value]


def tally(inv: Inventory, entry: dict, n: int) -> None:
    """Count n entries with these routing fields into the inventory."""
    # once per route, not per entry: a resource, resource.labels or labels that is not an object counts as absent
    rl = as_object(as_object(entry.get("resource")).get("labels"))
    labels = as_object(entry.get("labels"))
    js = labels.get("k8s-pod/jobset_sigs_k8s_io/jobset-name")
    if isinstance(js, str):
        inv.jobsets[js] += n
        ns = rl.get("namespace_name")
        inv.namespaces[ns if isinstance(ns, str) else None] += n
        where = tuple(v if isinstance(v := rl.get(k), str) else None for k in ("cluster_name", "project_id", "location"))
        inv.places.setdefault(js, Counter())[where] += n
    for key, counter in (("cluster_name", inv.clusters), ("project_id", inv.projects), ("location", inv.locations)):
        if isinstance(rl.get(key), str):
            counter[rl[key]] += n
