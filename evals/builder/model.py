"""The built world's model: nodes, pods, containers and their runs, JobSet attempts, Events, item outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pathways_workload.evals.scenarios import NS, Item, PodRef, ScenarioError

IMAGE_BASE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
HEAD_ORDER = ("pathways-rm", "pathways-proxy", "jax-tpu")
MAIN = {"head": "jax-tpu", "worker": "pathways-worker"}
SIDECAR = "colocated-python-sidecar"
BACKOFF_CAP = 300 * NS


@dataclass
class Node:
    name: str
    pool: str
    kind: str  # cpu | tpu | other
    index: tuple[int, int]
    uid: str
    instance_id: str
    ip: str
    boot_id: str


@dataclass
class Run:
    start: int
    end: int | None = None
    exit_code: int | None = None
    reason: str | None = None
    message: str | None = None


@dataclass
class Ctr:
    name: str
    image: str
    init: bool
    runs: list[Run] = field(default_factory=list)
    pull_at: int | None = None
    pull_failed: bool = False
    waiting: tuple[str, str] | None = None
    blocked: bool = False
    cid: str = ""
    tid: int = 0
    key: str = ""  # the builder's name for it (jax-tpu, pathways-rm ...); `name` is what the launcher calls it
    hidden: bool = False  # a headless launcher's client: it runs outside the cluster, so nothing of it is exported

    def __post_init__(self) -> None:
        self.key = self.key or self.name

    def alive(self, t: int, slack: int = NS) -> bool:
        return any(r.start <= t and (r.end is None or t <= r.end + slack) for r in self.runs)

    @property
    def started(self) -> int | None:
        return self.runs[0].start if self.runs else None


@dataclass
class Job:
    name: str
    uid: str
    rjob: str
    index: int


@dataclass
class Pod:
    ref: PodRef
    name: str
    uid: str
    job: Job
    node: Node | None
    created: int
    ctrs: dict[str, Ctr]
    scheduled: int | None = None
    pending: list[Item] = field(default_factory=list)
    pending_until: int | None = None
    shutdown: tuple[int, str] | None = None
    shutdown_reasons: tuple[str, str] = ("Terminated", "TerminationByKubelet")  # status.reason, DisruptionTarget reason
    ended: int | None = None  # killed by a JobSet restart / terminal state
    deleted: bool = False  # its Job was deleted (JobSet finished while the Job was still active)

    def ctr(self, name: str | None) -> Ctr | None:
        """A container by the builder's name or the launcher's; None: the pod's main one."""
        name = name or MAIN[self.ref.role]
        return self.ctrs.get(name) or next((c for c in self.ctrs.values() if c.name == name), None)

    def container(self, name: str | None) -> Ctr:
        """ctr(), for a container the scenario says the pod has (ShapeError if it has none of that name)."""
        c = self.ctr(name)
        if c is None:
            raise ShapeError(f"{self.ref}: no container {name or MAIN[self.ref.role]!r}")
        return c

    @property
    def host(self) -> Node:
        """Its node; only a scheduled pod's is asked for (ShapeError otherwise)."""
        if self.node is None:
            raise ShapeError(f"{self.ref} has no node: it was never scheduled")
        return self.node

    @property
    def placed(self) -> int:
        """When it was scheduled; only a scheduled pod's is asked for (ShapeError otherwise)."""
        if self.scheduled is None:
            raise ShapeError(f"{self.ref} was never scheduled")
        return self.scheduled

    @property
    def attempt(self) -> int:
        """The restart attempt it belongs to (a built pod's reference always names one)."""
        if self.ref.attempt is None:
            raise ShapeError(f"{self.ref}: no attempt")
        return self.ref.attempt

    @property
    def hostname(self) -> str:
        return self.job.name + "-" + str(self.ref.vm if self.ref.role == "worker" else 0)


@dataclass
class Attempt:
    n: int
    start: int
    end: int | None
    pods: dict[tuple[str, int, int], Pod] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    ms: dict[str, int] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)
    progress_stop: int | None = None
    workers_created: bool = False
    first_step_no: int = 0  # the step number its first step line prints (background.resume)
    last_checkpoint: int = 0  # the last step whose "Saved a checkpoint" line it printed


@dataclass
class Event:
    uid: str
    name: str
    obj: dict[str, Any]
    reason: str
    message: str
    type: str
    component: str
    host: str
    resource: dict[str, Any]
    labels: dict[str, str]
    times: list[int] = field(default_factory=list)
    inserts: list[str] = field(default_factory=list)


@dataclass
class Output:
    """What one incident item produced, for expected.yaml references."""

    inserts: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # the text of each insert, where the item records it (recording)
    uid: str | None = None
    event: Event | None = None
    pod: Pod | None = None
    node: Node | None = None
    container: str | None = None
    image: str | None = None


class ShapeError(ScenarioError):
    """The generated data would be inconsistent (a pod logging before it starts, a reference to nothing)."""


def go_duration(ns: int) -> str:
    """Go's time.Duration.String() for whole seconds: 10s, 2m40s, 5m0s."""
    m, sec = divmod(ns // NS, 60)
    return f"{m}m{sec}s" if m else f"{sec}s"
