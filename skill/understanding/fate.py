"""What happened to the pods on a node, read from the events and logs where no Pod object was read (live without the
Kubernetes API, an export without pods.json): a container's termination then shows as its Job failing or its peers
losing it, not as a Pod status. The rule that a node's kernel kill must have hurt the workload reads it
(classify.NEEDS["killed_the_workload"])."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..reading.names import replica
from .model import Workload
from .signals import Signal

CONTAINER_FATE = ("container_failed", "crashloop", "pod_killed")  # what a Pod status or a kubelet event says
# A peer's account of losing a host: its heartbeats timed out, a slice was lost, or a program died on a line naming the
# host (the client's uncaught "Connection to <host>:29005 ... lost", a worker's fatal line): what depends on it says it
PEER_LOST = ("heartbeat_timeout", "data_loss", "program_died")


def _names_host(text: str, host: str) -> bool:
    return re.search(rf"\b{re.escape(host)}(?=[.:\s,)]|$)", text) is not None


def touched(model: Workload, pods: set[str], symptoms: Sequence[Signal], t0: int, t1: int) -> bool:
    """A pod of `pods` failed between t0 and t1: a container of it failed, restarted or was killed; or, with no Pod
    object read, its Job failed or a peer reported losing its host."""
    near = [x for x in symptoms if any(t0 <= t <= t1 for t in x.times)]  # an Event with a count: any occurrence
    if any(x.target in CONTAINER_FATE and x.record.pod in pods for x in near):
        return True
    if "Pod" in model.objects_seen:
        return False  # the Pod statuses were read: they are the account of what happened to the containers
    # A JobSet pod is <job>-<completion index>-<5 random characters>; peers log its host name, <job>-<index>.
    hosts = {r[0] for r in map(replica, pods) if r}
    jobs = {h.rsplit("-", 1)[0] for h in hosts}
    if any(x.target == "job_failed" and x.record.kind == "Job" and x.record.obj in jobs for x in near):
        return True
    return any(x.target in PEER_LOST and any(_names_host(x.record.text, h) for h in hosts) for x in near)


STOPPED_INTERVALS = 5  # progress lines the stepping program would have printed since, at its own pace
STOPPED_MIN_NS = 5 * 60 * 1_000_000_000


def stopped_with(model: Workload, pods: set[str], at: int) -> bool | None:
    """The stepping program runs in one of `pods` and stepped no more after `at` (its last progress line within two of
    its own intervals after it, in flight), while the data goes on for STOPPED_INTERVALS of its intervals (5 min at
    least): what happened on that node at `at` stopped it. A kill that leaves the program alive but stuck (a child it
    waits on, killed) shows no exit, only this. None (unknown) while the data ends too soon after its last step to
    tell a stop from its usual pace; False when it stepped on past it, or does not step on that node."""
    mine = sorted(s.ts for s in model.progress if s.record.pod in pods)
    every = model.step_interval_ns()
    if not mine or every is None or mine[-1] < at - every or mine[-1] > at + 2 * every:
        return False
    return True if model.now - mine[-1] >= max(STOPPED_MIN_NS, STOPPED_INTERVALS * every) else None
