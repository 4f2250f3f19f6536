"""The workload model: what the JobSet's pods are, where they ran, what they reached, and when it stopped."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, cast

from ..reading.objects import SPOT_LABELS, spot_placement
from ..reading.names import HEAD_JOB, is_head_pod, worker_slot
from ..reading.records import Record, parse_ts
from .signals import Signal

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
_PULLED_IMAGE = re.compile(r'(?:Successfully pulled image|Container image) "([^"]+)"')
# The kernel's one-line summary of an OOM kill (mm/oom_kill.c, dump_oom_summary, since Linux 5.0):
# "oom-kill:constraint=CONSTRAINT_NONE,...,task_memcg=/kubepods/burstable/pod<uid>/<container id>,task=python3,pid=9120,uid=0"
# names the killed process's memory cgroup, and a pod's cgroup carries its UID (cgroupfs: "pod<uid>"; systemd:
# "kubepods-burstable-pod<uid with _>.slice"): the kill belongs to that pod whatever the process calls itself.
_OOM_SUMMARY = re.compile(r"oom-kill:.*?task_memcg=(?P<cg>[^,]*),task=[^,]*,pid=(?P<pid>\d+)")
_POD_UID = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")
# <jobset>-<workers job>-<slice>-<host>[-<suffix>]: xpk, gcluster and PathwaysJob name the job `worker`, pathwaysutils
# `pathways-worker`, hand-written manifests `workers`, `tpu-workers`...
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
PROGRESS_KEEP = 400
NO_LAUNCH = re.compile(r"\bCompleted 0 program launches")  # an executor reporting that nothing ran


@dataclass
class ContainerInfo:
    name: str
    image: str | None = None
    restarts: int = 0
    last_reason: str | None = None
    last_exit_code: int | None = None
    waiting_reason: str | None = None
    running: bool = False
    image_id: str | None = None  # the digest the kubelet ran (status.imageID), when the pod object was exported


@dataclass
class PodInfo:
    name: str
    role: str = "other"  # head | worker | other
    slice: int | None = None
    host: int | None = None
    uid: str | None = None
    node: str | None = None
    phase: str | None = None
    ran: bool = False  # it printed something, or a container started
    accelerator: str | None = None  # the TPU type its spec selects (cloud.google.com/gke-tpu-accelerator)
    attempt: str | None = None  # the JobSet restart attempt it belongs to (jobset.sigs.k8s.io/restart-attempt)
    containers: dict[str, ContainerInfo] = field(default_factory=dict)
    created: int = 0  # metadata.creationTimestamp, when the Pod object was read
    first_seen: int = 0  # its earliest record (a line, an event), when no Pod object says when it was created

    @property
    def since(self) -> int:
        """When it came to be, as well as the data says: its creation, else its earliest record; 0 when unknown."""
        return self.created or self.first_seen

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in self.containers.values())


def role_of(pod: str, labels: dict | None = None) -> tuple[str, int | None, int | None]:
    """head / worker (with slice and host index) / other, from the pod's name or JobSet labels."""
    labels = labels or {}
    rjob = labels.get("jobset.sigs.k8s.io/replicatedjob-name", "")
    if is_head_pod(pod) or rjob == HEAD_JOB:
        return "head", None, None
    if (slot := worker_slot(pod)) is not None:
        return "worker", *slot
    if rjob:  # every replicated job but the head's runs Pathways workers, one Job per slice, one pod per host
        idx, host = labels.get("jobset.sigs.k8s.io/job-index"), labels.get(COMPLETION_INDEX_LABEL)
        return "worker", int(str(idx)) if str(idx).isdigit() else None, int(str(host)) if str(host).isdigit() else None
    return "other", None, None


@dataclass
class Workload:
    """Everything the classifier knows about one JobSet, built from records and objects alone."""

    jobset: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    project: str | None = None
    location: str | None = None
    jobset_uid: str | None = None
    jobset_conditions: list[dict] = field(default_factory=list)
    jobset_restarts: int = 0
    max_restarts: int | None = None
    terminal_state: str | None = None  # JobSet status.terminalState: Completed | Failed, once it ended
    # when an Event said the JobSet completed (the controller's AllJobsCompleted, "jobset completed successfully":
    # kubernetes-sigs/jobset pkg/constants/constants.go), for an export without the JobSet object
    completed_event: int = 0
    suspended: bool = False  # spec.suspend, or condition Suspended=True (Kueue has not admitted it)
    queue_name: str | None = None  # the Kueue LocalQueue the JobSet is submitted to (its kueue.x-k8s.io/queue-name label)
    num_slices: int | None = None
    pods: dict[str, PodInfo] = field(default_factory=dict)
    milestones: dict[str, list[Signal]] = field(default_factory=dict)
    progress: list[Signal] = field(default_factory=list)  # the latest PROGRESS_KEEP progress lines
    progress_count: int = 0
    restated: list[Signal] = field(default_factory=list)  # lines restating one step again and again (not progress)
    first_ts: int = 0
    now: int = 0
    spot_roles: dict[str, bool] = field(default_factory=dict)  # role -> its Pod objects ask for Spot capacity
    settings: dict[str, str] = field(default_factory=dict)  # a path or gs:// URL in the spec -> the env var or flag setting it
    spot_nodes: dict[str, bool] = field(default_factory=dict)  # node -> its Node object is labelled Spot
    # (pod, container) -> when that program's latest line was logged (what the engine read of its stream)
    stream_last: dict[tuple[str, str], int] = field(default_factory=dict)
    # (node, pid) -> the UID of the pod whose memory cgroup held a process the kernel killed (its OOM summary line)
    oom_tasks: dict[tuple[str, str], str] = field(default_factory=dict)
    event_pod_uids: dict[str, str] = field(default_factory=dict)  # a pod's UID -> its name, as Events about it say
    # (pod, container) -> when the kubelet last reported starting it (its "Started" Event)
    container_started: dict[tuple[str, str], int] = field(default_factory=dict)
    sources_seen: set[str] = field(default_factory=set)
    symptoms: list[Signal] = field(default_factory=list)  # every symptom matched (the picture draws each restart)
    logs_seen: set[str] = field(default_factory=set)
    objects_seen: set[str] = field(default_factory=set)
    series: Any = None  # skill.understanding.metrics.SeriesFacts: what the workload's time series prove, when exported
    series_busy: list[int] = field(default_factory=list)  # when its chips were seen working (series.busy_times())

    def pod(self, name: str) -> PodInfo:
        info = self.pods.get(name)
        if info is None:
            role, sl, host = role_of(name)
            info = self.pods[name] = PodInfo(name, role, sl, host)
        return info

    def node_of(self, pod: str | None) -> str | None:
        return self.pods[pod].node if pod and pod in self.pods else None

    @property
    def head_pod(self) -> str | None:
        heads = sorted(p.name for p in self.pods.values() if p.role == "head")
        return heads[-1] if heads else None

    @property
    def workers(self) -> list[PodInfo]:
        return [p for p in self.pods.values() if p.role == "worker"]

    @property
    def nodes(self) -> set[str]:
        return {p.node for p in self.pods.values() if p.node}

    def ready_slices(self) -> list[Signal]:
        """The resource manager's "n/n Pathways Slices Now Ready" lines: every slice of that attempt ready."""
        return [s for s in self.milestones.get("slices_ready", []) if s.groups.get("ready") == s.groups.get("total")]

    def completed_at(self) -> int | None:
        """When the JobSet completed successfully (its Completed condition's time, else its controller's
        AllJobsCompleted Event); None when it did not, or failed."""
        done = self.condition("Completed") if self.terminal_state != "Failed" else None
        return int(done["ts"]) if done and done.get("ts") else (self.completed_event or None)

    def condition(self, ctype: str) -> dict | None:
        for c in self.jobset_conditions:
            if c.get("type") == ctype and c.get("status") == "True":
                return c
        return None

    def first_milestone(self, mid: str) -> Signal | None:
        sigs = self.milestones.get(mid)
        return min(sigs, key=lambda s: s.ts) if sigs else None

    def last_milestone(self, mid: str) -> Signal | None:
        sigs = self.milestones.get(mid)
        return max(sigs, key=lambda s: s.ts) if sigs else None

    def is_spot(self, node: str | None) -> bool | None:
        """Whether a node is Spot capacity: its Node label, else the spec of the pods (by role) that ran on it; None if unknown."""
        if not node:
            return None
        if node in self.spot_nodes:
            return self.spot_nodes[node]
        known = [self.spot_roles[p.role] for p in self.pods.values() if p.node == node and p.role in self.spot_roles]
        return any(known) if known else None

    # --- building -------------------------------------------------------------------------------------------

    def add_objects(self, objects: list[dict]) -> None:
        for obj in objects:
            kind = obj.get("kind")
            self.objects_seen.add(cast(str, kind))
            if kind == "Pod":
                self._add_pod(obj)
            elif kind == "JobSet" and (self.jobset is None or obj["metadata"].get("name") == self.jobset):
                self._add_jobset(obj)
            elif kind == "Node" and (obj.get("metadata") or {}).get("name"):
                labels = obj["metadata"].get("labels") or {}
                self.spot_nodes[obj["metadata"]["name"]] = any(str(labels.get(k)).lower() == "true" for k in SPOT_LABELS)

    def _add_pod(self, pod: dict) -> None:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        role, sl, host = role_of(meta.get("name", ""), meta.get("labels"))
        info = self.pod(meta.get("name", ""))
        info.role, info.slice, info.host = role, sl, host
        info.uid, info.node, info.phase = meta.get("uid"), spec.get("nodeName") or info.node, status.get("phase")
        self.spot_roles[role] = self.spot_roles.get(role, False) or spot_placement(spec) is not None
        info.accelerator = (spec.get("nodeSelector") or {}).get(TPU_ACCELERATOR_LABEL) or info.accelerator
        info.attempt = (meta.get("labels") or {}).get(RESTART_ATTEMPT_LABEL) or info.attempt
        info.created = parse_ts(meta.get("creationTimestamp")) or info.created
        images = {c.get("name"): c.get("image") for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])}
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            c = info.containers.setdefault(cs.get("name"), ContainerInfo(cs.get("name")))
            c.image = cs.get("image") or images.get(c.name)
            c.image_id = cs.get("imageID") or c.image_id
            c.restarts = int(cs.get("restartCount") or 0)
            state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated") or {}
            term = state.get("terminated") or last
            if term:
                c.last_reason, c.last_exit_code = term.get("reason"), term.get("exitCode")
            c.waiting_reason = (state.get("waiting") or {}).get("reason")
            c.running = "running" in state
            info.ran = info.ran or c.running or bool(term)
        for name, image in images.items():
            info.containers.setdefault(name, ContainerInfo(name, image))

    def _add_jobset(self, js: dict) -> None:
        meta, spec, status = js.get("metadata") or {}, js.get("spec") or {}, js.get("status") or {}
        self.jobset = self.jobset or meta.get("name")
        self.namespace = self.namespace or meta.get("namespace")
        self.jobset_uid = meta.get("uid")
        self.jobset_conditions = [dict(c, ts=parse_ts(c.get("lastTransitionTime"))) for c in status.get("conditions") or []]
        self.jobset_restarts = int(status.get("restarts") or 0)
        self.max_restarts = (spec.get("failurePolicy") or {}).get("maxRestarts")
        self.terminal_state = status.get("terminalState") or None
        self.suspended = spec.get("suspend") is True or self.condition("Suspended") is not None
        self.queue_name = (meta.get("labels") or {}).get(KUEUE_QUEUE_LABEL)
        for rj in spec.get("replicatedJobs") or []:
            if "worker" in str(rj.get("name")):
                self.num_slices = rj.get("replicas")

    def pod_by_uid(self, uid: str) -> str | None:
        """The pod with this UID: its Pod object's, else the one Events about it name."""
        return next((p.name for p in self.pods.values() if p.uid == uid), None) or self.event_pod_uids.get(uid)

    def add_record(self, rec: Record) -> None:
        self.sources_seen.add(rec.source)
        if rec.source in ("serial", "node") and "oom-kill:" in rec.text and rec.node:
            if (m := _OOM_SUMMARY.search(rec.text)) and (uid := _POD_UID.search(m.group("cg"))):
                self.oom_tasks[(rec.node, m.group("pid"))] = uid.group(1).replace("_", "-")
        self.logs_seen.add(rec.log)
        if rec.ts:
            self.first_ts = min(self.first_ts, rec.ts) if self.first_ts else rec.ts
        if rec.pod and (rec.source == "container" or rec.kind == "Pod"):
            info = self.pod(rec.pod)
            first = rec.first_ts or rec.ts
            if first and (not info.first_seen or first < info.first_seen):
                info.first_seen = first
            if rec.node and not info.node:
                info.node = rec.node
            if rec.source == "event" and rec.extra.get("uid"):
                self.event_pod_uids[rec.extra["uid"]] = rec.pod  # its UID as an Event names it (no Pod object needed)
            if rec.source == "container":
                info.ran = True
                if rec.container:
                    info.containers.setdefault(rec.container, ContainerInfo(rec.container))
                    if rec.ts > self.stream_last.get((rec.pod, rec.container), 0):
                        self.stream_last[(rec.pod, rec.container)] = rec.ts
            elif rec.reason in ("Started", "Pulled", "Created"):
                info.ran = True
                if rec.reason == "Started" and rec.container:
                    started = (rec.pod, rec.container)
                    self.container_started[started] = max(self.container_started.get(started, 0), rec.ts)
                m = _PULLED_IMAGE.search(rec.text) if rec.reason == "Pulled" and rec.container else None
                # the image a container runs, when the pod object is gone (kubelet's Pulled event names both)
                if m and rec.container:
                    c = info.containers.setdefault(rec.container, ContainerInfo(rec.container))
                    c.image = c.image or m.group(1)
            elif rec.reason == "Scheduled" and not info.node:
                m = re.search(r" to (\S+)$", rec.text)
                info.node = m.group(1) if m else None
        if rec.source == "event" and rec.kind == "JobSet" and rec.reason == "AllJobsCompleted":
            self.completed_event = max(self.completed_event, rec.ts)
        for key in ("cluster", "project", "location", "namespace"):
            if getattr(self, key) is None and getattr(rec, key):
                setattr(self, key, getattr(rec, key))

    def add_milestone(self, sig: Signal) -> None:
        if sig.target == "progress":
            self.progress_count += 1
            self.progress.append(sig)
            if len(self.progress) > 2 * PROGRESS_KEEP:
                self.progress.sort(key=lambda s: s.ts)
                del self.progress[:-PROGRESS_KEEP]
            return
        self.milestones.setdefault(sig.target, []).append(sig)

    def finish(self) -> None:
        self.progress.sort(key=lambda s: s.ts)
        del self.progress[:-PROGRESS_KEEP]
        # A training loop prints the same line shape every time; a one-off line that merely says "step 3" (a runbook
        # note, a log line addressed to an agent) is not progress once a repeated shape exists.
        # A line that restates one step again and again (a watchdog's "no step since ... (last step 719)") reports that
        # progress stopped; it is not progress. Steps of a shape that never change, over several lines, are dropped.
        steps: dict[str, set[str]] = {}
        for s in self.progress:
            steps.setdefault(_shape(s.record.text), set()).add(s.groups.get("step", ""))
        frozen = {k for k, v in steps.items() if len(v) == 1 and sum(1 for s in self.progress if _shape(s.record.text) == k) >= 2}
        if frozen and len(frozen) < len(steps):
            restated = [s for s in self.progress if _shape(s.record.text) in frozen]
            self.restated = restated  # the program's own account that it stopped: cited with a stall
            self.progress = [s for s in self.progress if _shape(s.record.text) not in frozen]
            self.progress_count -= len(restated)
        shapes = Counter(_shape(s.record.text) for s in self.progress)
        if shapes and shapes.most_common(1)[0][1] >= 3:
            odd = [s for s in self.progress if shapes[_shape(s.record.text)] == 1]
            if odd:
                self.progress = [s for s in self.progress if shapes[_shape(s.record.text)] > 1]
                self.progress_count -= len(odd)

    # --- questions about progress ---------------------------------------------------------------------------

    def running_times(self) -> list[int]:
        """When the program was seen running, sorted: the client's progress lines, the workers' reports of programs
        launched (an executor reporting that nothing ran is not running) and its chips' working samples."""
        return sorted([s.ts for s in self.progress] + [s.ts for s in self.milestones.get("worker_launches", [])
                                                       if not NO_LAUNCH.search(s.record.text)] + self.series_busy)

    @property
    def last_progress(self) -> Signal | None:
        return self.progress[-1] if self.progress else None

    def step_interval_ns(self) -> int | None:
        """The median time between consecutive progress lines, or None with fewer than three."""
        ts = sorted({s.ts for s in self.progress})
        if len(ts) < 3:
            return None
        gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
        return gaps[len(gaps) // 2]


_DIGITS = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _shape(text: str) -> str:
    """A log line with its numbers masked, cut after the logger's prefix and the first words."""
    return _DIGITS.sub("#", text)[:60]
