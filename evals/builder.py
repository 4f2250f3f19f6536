"""Builds a replay folder (logs.json, events.json, pods.json, jobset.json, expected.yaml) from a scenario.yaml.

    python -m evals.builder fixtures/case-001/scenario.yaml [...]
    python -m evals.builder --all fixtures/

Deterministic: every random choice comes from a random.Random seeded with the case name; no wall-clock time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evals import scenarios as sc
from evals.scenarios import NS, Item, PodRef, Scenario, ScenarioError, fmt_ns, glog_stamp, parse_duration

IMAGE_BASE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
HEAD_ORDER = ("pathways-rm", "pathways-proxy", "jax-tpu")
MAIN = {"head": "jax-tpu", "worker": "pathways-worker"}
SIDECAR = "colocated-python-sidecar"
BACKOFF_CAP = 300 * NS


# --- model ------------------------------------------------------------------------------------------------------


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
    uid: str | None = None
    event: Event | None = None
    pod: Pod | None = None
    node: Node | None = None
    container: str | None = None
    image: str | None = None


class ShapeError(ScenarioError):
    """The generated data would be inconsistent (a pod logging before it starts, a reference to nothing)."""


# --- the builder ------------------------------------------------------------------------------------------------


class Builder:
    """One build of one scenario; all state lives here."""

    def __init__(self, s: Scenario) -> None:
        self.s = s
        self.w = s.workload
        self.rng = random.Random(s.name)
        self.entries: list[tuple[int, dict[str, Any]]] = []
        self.events: dict[tuple, Event] = {}
        self.outputs: dict[str, Output] = {}
        self.images: dict[str, tuple[str, int]] = {}
        self.jobset_uid = self.uid()
        self.jobset_conditions: list[dict[str, Any]] = []
        self.restarts = 0
        self.terminal: tuple[str, int] | None = None
        self.nodes: list[Node] = []
        self.pools: dict[str, str] = {}
        self.later_logs: list[tuple[Item, Pod, Ctr, int]] = []
        self.attempts: list[Attempt] = []
        self.project_number = str(self.w["project_number"] or self.rng.randrange(10**11, 10**12))
        self.zone = self.w["location"] if self.w["location"].count("-") == 2 else self.w["location"] + "-a"
        self.rm_host = f"{self.w['jobset']}-pathways-head-0-0.{self.w['jobset']}"

    # ids ---------------------------------------------------------------------------------------------------------
    def alnum(self, n: int, alphabet: str = string.ascii_lowercase + string.digits) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def hexs(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def uid(self) -> str:
        h = self.hexs(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

    def insert_id(self) -> str:
        return self.alnum(self.rng.choice((14, 16, 16, 16, 17, 20)))

    def jitter(self, lo: float, hi: float) -> int:
        return int(self.rng.uniform(lo, hi) * NS)

    # topology ----------------------------------------------------------------------------------------------------
    def make_nodes(self) -> None:
        c = self.w["cluster"]

        def node(pool: str, kind: str, idx: tuple[int, int], suffix: str) -> Node:
            ip = f"10.{self.rng.randrange(128, 200)}.{self.rng.randrange(0, 255)}.{self.rng.randrange(2, 250)}"
            return Node(f"gke-{c}-{pool}-{suffix}-{self.alnum(4)}", pool, kind, idx, self.uid(),
                        str(self.rng.randrange(10**18, 10**19)), ip, self.uid().replace("-", ""))

        self.pools["cpu-np"] = self.hexs(8)
        for i in range(self.w["cpu_nodes"]):
            self.nodes.append(node("cpu-np", "cpu", (i, 0), self.pools["cpu-np"]))
        tpu = self.w["tpu_nodes"]
        for s in range(self.w["slices"]):
            self.pools[f"tpu-np-{s}"] = self.hexs(8)
            if tpu is True or (isinstance(tpu, list) and s in tpu):
                for v in range(self.w["hosts_per_slice"]):
                    self.nodes.append(node(f"tpu-np-{s}", "tpu", (s, v), self.pools[f"tpu-np-{s}"]))
        other_hash = self.hexs(8)
        for i in range(self.w["other_nodes"]):
            self.nodes.append(node("default-pool", "other", (i, 0), other_hash))

    def node_at(self, kind: str, a: int, b: int = 0) -> Node:
        for n in self.nodes:
            if n.kind == kind and n.index == (a, b):
                return n
        raise ShapeError(f"no {kind} node [{a}][{b}] in this cluster (workload.tpu_nodes/cpu_nodes)")

    def image(self, container: str) -> str:
        if container == "pathways-proxy":
            return f"{IMAGE_BASE}/proxy_server:{self.w['proxy_tag']}"
        if container == "jax-tpu":
            return self.w["user_image"]
        if container == SIDECAR:
            tag = str(self.w["colocated_python"])
            return tag if "/" in tag else f"{IMAGE_BASE}-colocated-python/sidecar:{tag}"
        return self.w["server_image"] or f"{IMAGE_BASE}/server:{self.w['server_tag']}"

    def image_meta(self, image: str) -> tuple[str, int]:
        if image not in self.images:
            self.images[image] = (self.hexs(64), self.rng.randrange(380_000_000, 2_400_000_000))
        return self.images[image]

    def make_attempts(self) -> None:
        restarts = sorted((i for i in self.s.items if i.kind == "restart"), key=lambda i: i.at)
        start = self.s.start
        for n, r in enumerate(restarts + [None]):
            end = r.at if r else None
            self.attempts.append(Attempt(n, start, end))
            if r:
                start = r.at + parse_duration(r.spec.get("delay", "5s"))
        for att in self.attempts:
            self.make_pods(att)

    def make_pods(self, att: Attempt) -> None:
        js = self.w["jobset"]
        head_job = Job(f"{js}-pathways-head-0", self.uid(), "pathways-head", 0)
        att.jobs[head_job.name] = head_job
        t = att.start + self.jitter(0.2, 0.6)
        head = Pod(PodRef("head", attempt=att.n), f"{head_job.name}-0-{self.alnum(5)}", self.uid(), head_job,
                   self.node_at("cpu", 0) if self.w["cpu_nodes"] else None, t,
                   {c: Ctr(c, self.image(c), c != "jax-tpu") for c in HEAD_ORDER})
        att.pods[("head", 0, 0)] = head
        for s in range(self.w["slices"]):
            job = Job(f"{js}-worker-{s}", self.uid(), "worker", s)
            att.jobs[job.name] = job
            for v in range(self.w["hosts_per_slice"]):
                node = next((n for n in self.nodes if n.kind == "tpu" and n.index == (s, v)), None)
                ctrs = {SIDECAR: Ctr(SIDECAR, self.image(SIDECAR), True)} if self.w["colocated_python"] else {}
                ctrs["pathways-worker"] = Ctr("pathways-worker", self.image("pathways-worker"), False)
                att.pods[("worker", s, v)] = Pod(
                    PodRef("worker", s, v, att.n), f"{job.name}-{v}-{self.alnum(5)}", self.uid(), job, node, 0, ctrs)
        for pod in att.pods.values():
            for c in pod.ctrs.values():
                c.cid = self.hexs(64)
                c.tid = self.rng.randrange(40, 9000)

    def attempt_at(self, t: int) -> Attempt:
        for att in reversed(self.attempts):
            if t >= att.start:
                return att
        return self.attempts[0]

    def pods_of(self, item: Item, field_name: str = "pod") -> list[Pod]:
        spec = item.spec
        raw = spec.get(field_name) if field_name in spec else spec.get("pods")
        if raw is None:
            raise ShapeError(f"{item.where()}: needs `pod:`")
        refs: list[PodRef] = []
        for r in raw if isinstance(raw, list) else [raw]:
            refs += sc.parse_refs(r, self.w["slices"], self.w["hosts_per_slice"])
        skip = set()
        exc = spec.get("except") or []
        for r in exc if isinstance(exc, list) else [exc]:
            skip |= {(p.role, p.slice, p.vm) for p in sc.parse_refs(r, self.w["slices"], self.w["hosts_per_slice"])}
        out = []
        for r in refs:
            if (r.role, r.slice, r.vm) in skip:
                continue
            att = self.attempts[r.attempt] if r.attempt is not None else self.attempt_at(item.at)
            out.append(att.pods[(r.role, r.slice, r.vm)])
        return out

    def pod_ref(self, text: str, at: int) -> Pod:
        r = sc.parse_refs(text, self.w["slices"], self.w["hosts_per_slice"])[0]
        att = self.attempts[r.attempt] if r.attempt is not None else self.attempt_at(at)
        return att.pods[(r.role, r.slice, r.vm)]

    def node_ref(self, text: str, at: int) -> Node:
        kind, a, b = sc.parse_node_ref(text)
        if kind != "pod":
            return self.node_at(kind, a, b)
        pod = self.pod_ref(text, at)
        if pod.node is None:
            raise ShapeError(f"node of {text}: that pod has no node")
        return pod.node

    # timeline ----------------------------------------------------------------------------------------------------
    def apply_items_before_timeline(self) -> None:
        for it in self.s.items:
            att = self.attempt_at(it.at)
            if it.kind == "pending":
                for pod in self.pods_of(it):
                    pod.pending.append(it)
                    if "until" in it.spec:
                        pod.pending_until = sc.parse_time(it.spec["until"], self.s.start, self.s.anchors)
            elif it.kind == "pull_failure":
                pod = self.pods_of(it)[0]
                c = pod.ctrs[it.spec.get("container") or MAIN[pod.ref.role]]
                c.pull_failed = True
            elif it.kind == "block":
                names = it.spec.get("milestone")
                for m in names if isinstance(names, list) else [names]:
                    if m not in sc.MILESTONES:
                        raise ShapeError(f"{it.where()}: unknown milestone {m!r}; known: {sc.MILESTONES}")
                    att.blocked.add(m)
            elif it.kind == "stop_progress":
                att.progress_stop = it.at
            elif it.kind == "jobset" and it.spec.get("condition", "Failed") in ("Failed", "Completed"):
                att.end = it.at if att.end is None else min(att.end, it.at)

    def schedule(self, pod: Pod, at: int) -> bool:
        if pod.node is None and not pod.pending:
            raise ShapeError(f"{pod.ref}: no node to run on (workload.tpu_nodes is false) and no `pending` item")
        if pod.pending:
            if pod.pending_until is None or pod.node is None:
                return False
            at = max(at, pod.pending_until)
        pod.scheduled = at
        return True

    def start_containers(self, pod: Pod, order: list[str], t: int, att: Attempt) -> int | None:
        """Pull and start containers in order; returns when the last one started, or None if one never starts."""
        for name in order:
            c = pod.ctrs[name]
            c.pull_at = t + self.jitter(0.3, 1.2)
            if c.pull_failed or self.ends_before(att, c.pull_at):
                c.blocked = True
                for later in order[order.index(name) + 1:]:
                    pod.ctrs[later].blocked = True
                return None
            pull = self.jitter(14, 32) if name == "jax-tpu" else self.jitter(3, 9)
            t = c.pull_at + pull + self.jitter(0.2, 0.6)
            if self.ends_before(att, t):
                c.blocked = True
                return None
            c.runs.append(Run(t))
        return t

    def ends_before(self, att: Attempt, t: int) -> bool:
        return (att.end is not None and t >= att.end) or t >= self.s.end

    def timeline(self, att: Attempt) -> None:
        head = att.pods[("head", 0, 0)]
        ms = att.ms
        if "pods_created" in att.blocked:  # the Jobs exist but no pod is ever created (refused, or suspended)
            return
        if self.schedule(head, head.created + self.jitter(0.4, 1.5)):
            ready = self.start_containers(head, list(HEAD_ORDER), head.scheduled, att)
            rm, px, cl = (head.ctrs[c].started for c in HEAD_ORDER)
            if rm is not None and "rm_serving" not in att.blocked:
                ms["rm_serving"] = rm + self.jitter(2, 4)
            if px is not None and "rm_serving" in ms and "proxy_ready" not in att.blocked:
                ms["proxy_ready"] = max(px + self.jitter(2.5, 4), ms["rm_serving"] + NS // 2)
            if cl is not None and "proxy_ready" in ms and "client_connect" not in att.blocked:
                ms["client_connect"] = max(cl + self.jitter(5, 9), ms["proxy_ready"] + NS)
            if ready is not None:
                ms["head_ready"] = ready + self.jitter(1, 3)
        if "head_ready" in ms and not self.ends_before(att, ms["head_ready"]) and "workers_created" not in att.blocked:
            att.workers_created = True
            serving = []
            for key, pod in att.pods.items():
                if key[0] != "worker":
                    continue
                pod.created = ms["head_ready"] + self.jitter(0.1, 0.8)
                if not self.schedule(pod, pod.created + self.jitter(0.3, 1.5)):
                    continue
                started = self.start_containers(pod, list(pod.ctrs), pod.scheduled, att)
                if started is None:
                    continue
                if "worker_serving" not in att.blocked:
                    ms[f"serving{key[1:]}"] = started + self.jitter(3, 6)
                    if "megascale" not in att.blocked:
                        ms[f"megascale{key[1:]}"] = ms[f"serving{key[1:]}"] + self.jitter(1, 2.5)
                        serving.append(ms[f"megascale{key[1:]}"])
            n = self.w["slices"] * self.w["hosts_per_slice"]
            if len(serving) == n and "rm_serving" in ms and "slices_ready" not in att.blocked:
                if self.w["rm_instance_count"] == self.w["slices"]:
                    ms["workers_ready"] = max(serving)
                    ms["slices_ready"] = max(serving) + self.jitter(0.8, 2)
        if "slices_ready" in ms and "client_connect" in ms:
            ms["devices"] = max(ms["slices_ready"], ms["client_connect"]) + self.jitter(0.5, 1.5)
        if "devices" in ms and "first_step" not in att.blocked:
            ms["first_step"] = ms["devices"] + int(self.s.background["compile_seconds"] * NS) + self.jitter(-5, 8)

    def apply_exits(self) -> None:
        for it in self.s.items:
            if it.kind == "exit":
                pod = self.pods_of(it)[0]
                c = pod.ctrs[it.spec.get("container") or MAIN[pod.ref.role]]
                if not c.alive(it.at, 0):
                    raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} is not running at {fmt_ns(it.at)}"
                                     f" (runs: {[(fmt_ns(r.start), r.end and fmt_ns(r.end)) for r in c.runs]})")
                code = int(it.spec.get("exit_code", 1))
                run = c.runs[-1]
                run.end, run.exit_code = it.at, code
                run.reason = it.spec.get("reason") or ("Completed" if code == 0 else "Error")
                run.message = it.spec.get("message")
                restart = it.spec.get("restart", c.init)  # native sidecars always come back
                if restart:
                    crashes = sum(1 for r in c.runs if r.exit_code not in (None, 0))
                    delay = parse_duration(it.spec["backoff"]) if "backoff" in it.spec else min(
                        BACKOFF_CAP, 10 * NS * 2 ** max(0, crashes - 1))
                    nxt = it.at + delay + self.jitter(0.2, 1.5)
                    att = self.attempt_at(it.at)
                    if not self.ends_before(att, nxt):
                        c.runs.append(Run(nxt))
                    else:
                        c.waiting = ("CrashLoopBackOff", f"back-off {go_duration(delay)} restarting failed container="
                                     f"{c.name} pod={pod.name}_{self.w['namespace']}({pod.uid})")
                self.out(it).pod, self.out(it).container = pod, c.name
                self.out(it).uid = pod.uid
            elif it.kind == "shutdown":
                pod = self.pods_of(it)[0]
                msg = it.spec.get("message", "Pod was terminated in response to imminent node shutdown.")
                pod.shutdown = (it.at, msg)
                pod.shutdown_reasons = (it.spec.get("reason", "Terminated"),
                                        it.spec.get("condition_reason", "TerminationByKubelet"))
                pod.deleted = pod.deleted or bool(it.spec.get("deleted"))
                for c in pod.ctrs.values():
                    if c.runs and c.runs[-1].end is None and c.runs[-1].start <= it.at:
                        r = c.runs[-1]
                        r.end = it.at + self.jitter(0.5, 3)
                        r.exit_code = int(it.spec.get("exit_code", 143))
                        r.reason = "Error"
                self.out(it).pod, self.out(it).uid, self.out(it).node = pod, pod.uid, pod.node
            elif it.kind == "crashloop":
                self.crashloop(it)
            elif it.kind == "waiting":
                pod = self.pods_of(it)[0]
                c = pod.ctrs[it.spec.get("container") or MAIN[pod.ref.role]]
                c.waiting = (it.spec["reason"], it.spec.get("message", ""))
                self.out(it).pod, self.out(it).uid, self.out(it).container = pod, pod.uid, c.name

    def crashloop(self, it: Item) -> None:
        """A container that dies `after` each start, is restarted with kubelet back-off, and logs `text` each time."""
        pod = self.pods_of(it)[0]
        c = pod.ctrs[it.spec.get("container") or MAIN[pod.ref.role]]
        if not c.runs:
            raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} never starts, so it cannot crash-loop")
        att = self.attempts[pod.ref.attempt]
        stop = min(att.end or self.s.end, self.s.end)
        after = parse_duration(it.spec.get("after", "4s"))
        code = int(it.spec.get("exit_code", 1))
        k = len(c.runs) - 1
        while True:
            run = c.runs[-1]
            run.end = run.start + after + self.jitter(0, 0.8)
            run.exit_code, run.reason = code, it.spec.get("reason") or ("Error" if code else "Completed")
            if "text" in it.spec:
                self.later_logs.append((it, pod, c, run.end - self.jitter(0.2, 0.6)))
            delay = min(BACKOFF_CAP, 10 * NS * 2 ** k)
            k += 1
            nxt = run.end + delay + self.jitter(0.2, 1.2)
            if nxt >= stop:
                c.waiting = ("CrashLoopBackOff", f"back-off {go_duration(delay)} restarting failed container="
                             f"{c.name} pod={pod.name}_{self.w['namespace']}({pod.uid})")
                break
            c.runs.append(Run(nxt))
        o = self.out(it)
        o.pod, o.container, o.uid, o.image = pod, c.name, pod.uid, c.image

    def stop_progress_on_server_exits(self) -> None:
        """A training step needs every worker and the proxy: the first server-side death stops client progress."""
        for att in self.attempts:
            for pod in att.pods.values():
                for c in pod.ctrs.values():
                    if c.name in ("jax-tpu", SIDECAR) or not c.runs or c.runs[0].end is None:
                        continue
                    t = c.runs[0].end
                    att.progress_stop = t if att.progress_stop is None else min(att.progress_stop, t)

    def end_attempts(self) -> None:
        """Containers still running when an attempt ends (restart, terminal JobSet) get SIGTERM'd."""
        for att in self.attempts:
            if att.end is None:
                continue
            for pod in att.pods.values():
                pod.ended = att.end
                for c in pod.ctrs.values():
                    if c.runs and c.runs[-1].end is None:
                        r = c.runs[-1]
                        r.end = max(att.end, r.start) + self.jitter(0.8, 2.5)
                        r.exit_code, r.reason = 143, "Error"
                        if pod.node:
                            self.event_pod(pod, r.end - NS // 3, "Killing", f"Stopping container {c.name}",
                                           "Normal", c.name)

    # output ------------------------------------------------------------------------------------------------------
    def out(self, it: Item) -> Output:
        return self.outputs.setdefault(it.key or f"#{it.index}", Output())

    def fmt(self, text: str, pod: Pod | None = None, node: Node | None = None, at: int = 0,
            container: str | None = None) -> str:
        w = self.w
        node = node or (pod.node if pod else None)
        head = self.attempt_at(at).pods[("head", 0, 0)]
        values = {
            "jobset": w["jobset"], "namespace": w["namespace"], "project": w["project"], "cluster": w["cluster"],
            "location": w["location"], "zone": self.zone, "region": self.zone.rsplit("-", 1)[0],
            "pod": pod.name if pod else "", "node": node.name if node else "", "container": container or "",
            "head": head.name, "head_host": self.rm_host, "rm_address": f"{self.rm_host}:29001",
            "proxy_address": f"grpc://{self.rm_host}:29000", "server_image": self.image("pathways-rm"),
            "proxy_image": self.image("pathways-proxy"), "user_image": w["user_image"], "scratch": w["gcs_scratch"],
            "bucket": "gs://" + w["gcs_scratch"][5:].split("/")[0], "bucket_name": w["gcs_scratch"][5:].split("/")[0],
            "node_sa": f"{self.project_number}-compute@developer.gserviceaccount.com",
            "project_number": self.project_number, "n_slices": str(w["slices"]), "jax_version": w["jax_version"],
            "nodes_total": str(len(self.nodes)), "tpu_nodes": str(sum(n.kind == "tpu" for n in self.nodes)),
            "cpu_nodes": str(sum(n.kind == "cpu" for n in self.nodes)), "accelerator": w["accelerator"],
            "topology": w["topology"], "ip": node.ip if node else "", "instance": node.instance_id if node else "",
            "uid": pod.uid if pod else "", "host": f"{pod.hostname}.{w['jobset']}" if pod else "",
            "hosts_per_slice": str(w["hosts_per_slice"]), "now": fmt_ns(at), "glog_now": glog_stamp(at), "chips": str(w["chips_per_host"] * w["hosts_per_slice"]),
        }

        def sub(m: re.Match) -> str:
            name, arg = m.group(1), m.group(2)
            if arg is None:
                return values.get(name, m.group(0))
            if name == "job":
                return f"{w['jobset']}-{arg}"
            if name == "cid":
                ref, _, cname = arg.partition("/")
                p = self.pod_ref(ref, at)
                return p.ctrs[cname or MAIN[p.ref.role]].cid
            if name in ("pool", "mig") and arg in self.pools:
                return arg if name == "pool" else f"gke-{w['cluster']}-{arg}-{self.pools[arg]}-grp"
            if name in ("pod", "uid", "host"):
                p = self.pod_ref(arg, at)
                return {"pod": p.name, "uid": p.uid, "host": f"{p.hostname}.{w['jobset']}"}[name]
            if name in ("node", "ip", "instance", "pool", "mig"):
                n = self.node_ref(arg, at)
                return {"node": n.name, "ip": n.ip, "instance": n.instance_id, "pool": n.pool,
                        "mig": n.name.rsplit("-", 1)[0] + "-grp"}[name]
            return m.group(0)

        return re.sub(r"\{(\w+)(?::([^{}]+))?\}", sub, text)

    def entry(self, ts: int, log: str, resource: dict[str, Any], labels: dict[str, str] | None, severity: str | None,
              payload: tuple[str, Any], digits: int = 9) -> str:
        if ts > self.s.end:
            return ""
        e: dict[str, Any] = {
            "insertId": self.insert_id(),
            "logName": f"projects/{self.w['project']}/logs/{log}",
            "receiveTimestamp": fmt_ns(ts + self.jitter(0.4, 4.5)),
            "resource": resource,
            "timestamp": fmt_ns(ts, digits),
            payload[0]: payload[1],
        }
        if labels:
            e["labels"] = labels
        if severity:
            e["severity"] = severity
        self.entries.append((ts, e))
        return e["insertId"]

    def res_cluster(self) -> dict[str, Any]:
        return {"type": "k8s_cluster", "labels": {"project_id": self.w["project"], "location": self.w["location"],
                                                  "cluster_name": self.w["cluster"]}}

    def res_node(self, node: Node) -> dict[str, Any]:
        r = self.res_cluster()
        return {"type": "k8s_node", "labels": {**r["labels"], "node_name": node.name}}

    def res_pod(self, pod: Pod, container: str | None = None) -> dict[str, Any]:
        labels = {**self.res_cluster()["labels"], "namespace_name": self.w["namespace"], "pod_name": pod.name}
        if container:
            labels["container_name"] = container
            return {"type": "k8s_container", "labels": labels}
        return {"type": "k8s_pod", "labels": labels}

    def res_gce(self, node: Node) -> dict[str, Any]:
        return {"type": "gce_instance", "labels": {"project_id": self.w["project"], "instance_id": node.instance_id,
                                                   "zone": self.zone}}

    def container_labels(self, pod: Pod) -> dict[str, str]:
        js = self.w["jobset"]
        return {
            "compute.googleapis.com/resource_name": pod.node.name if pod.node else "",
            "k8s-pod/batch_kubernetes_io/job-name": pod.job.name,
            "k8s-pod/jobset_sigs_k8s_io/jobset-name": js,
            "k8s-pod/jobset_sigs_k8s_io/replicatedjob-name": pod.job.rjob,
            "k8s-pod/jobset_sigs_k8s_io/job-index": str(pod.job.index),
            "k8s-pod/jobset_sigs_k8s_io/restart-attempt": str(pod.ref.attempt),
            "logging.gke.io/top_level_controller_name": js,
            "logging.gke.io/top_level_controller_type": "JobSet",
        }

    def clog(self, pod: Pod, container: str, ts: int, text: str, stream: str = "stderr",
             severity: str | None = None) -> str:
        if not self.s.sources["container_logs"]:
            return ""
        sev = severity or ("INFO" if stream == "stdout" else "ERROR")
        return self.entry(ts, stream, self.res_pod(pod, container), self.container_labels(pod), sev,
                          ("textPayload", text))

    def glog(self, level: str, ts: int, tid: int, src: str, msg: str) -> str:
        return f"{level}{glog_stamp(ts)} {tid:>7} {src}] {msg}"

    def node_log(self, node: Node, ts: int, log: str, text: str, severity: str = "INFO") -> str:
        if not self.s.sources["node_logs"]:
            return ""
        unit = {"kubelet": "kubelet.service", "container-runtime": "containerd.service",
                "node-problem-detector": "node-problem-detector.service"}.get(log, log + ".service")
        payload = {"MESSAGE": text, "PRIORITY": "6" if severity == "INFO" else "3", "SYSLOG_IDENTIFIER": log,
                   "_BOOT_ID": node.boot_id, "_HOSTNAME": node.name, "_SYSTEMD_UNIT": unit}
        return self.entry(ts, log, self.res_node(node), {"compute.googleapis.com/resource_name": node.name},
                          severity, ("jsonPayload", payload))

    # events ------------------------------------------------------------------------------------------------------
    def emit_event(self, ts: int, obj: dict[str, Any], reason: str, message: str, type_: str, component: str,
                   host: str, resource: dict[str, Any], labels: dict[str, str] | None = None) -> Event:
        key = (obj.get("uid"), obj.get("fieldPath"), reason, message, component)
        ev = self.events.get(key)
        if ev is None:
            ev = Event(self.uid(), f"{obj['name']}.{self.hexs(16)}", obj, reason, message, type_, component, host,
                       resource, labels or {})
            self.events[key] = ev
        ts = ts // NS * NS  # Events carry whole seconds
        if ts > self.s.end:
            return ev
        ev.times.append(ts)
        if self.s.sources["events_log"] and (resource["type"] != "k8s_node" or self.s.sources["node_logs"]):
            payload = self.event_json(ev, ts, log=True)
            ins = self.entry(ts, "events", resource, ev.labels or None, "WARNING" if type_ == "Warning" else "INFO",
                             ("jsonPayload", payload), digits=0)
            ev.inserts.append(ins)
        return ev

    def event_json(self, ev: Event, last: int, log: bool) -> dict[str, Any]:
        d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "involvedObject": ev.obj,
            "lastTimestamp": fmt_ns(last, 0),
            "message": ev.message,
            "metadata": {"name": ev.name, "namespace": self.w["namespace"], "uid": ev.uid,
                         "resourceVersion": str(self.rng.randrange(10**6, 10**8)),
                         "creationTimestamp": fmt_ns(ev.times[0], 0)},
            "reason": ev.reason,
            "reportingComponent": ev.component,
            "reportingInstance": ev.host,
            "source": {"component": ev.component, **({"host": ev.host} if ev.host else {})},
            "type": ev.type,
        }
        if not log:
            d.update(count=len(ev.times), firstTimestamp=fmt_ns(ev.times[0], 0), eventTime=None)
        return d

    def pod_obj(self, pod: Pod, container: str | None = None) -> dict[str, Any]:
        o = {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "namespace": self.w["namespace"], "uid": pod.uid,
             "resourceVersion": str(self.rng.randrange(10**6, 10**8))}
        if container:
            where = "initContainers" if pod.ctrs[container].init else "containers"
            o["fieldPath"] = f"spec.{where}{{{container}}}"
        return o

    def event_pod(self, pod: Pod, ts: int, reason: str, message: str, type_: str = "Normal",
                  container: str | None = None, component: str = "kubelet") -> Event:
        labels = {"logging.gke.io/top_level_controller_name": self.w["jobset"],
                  "logging.gke.io/top_level_controller_type": "JobSet",
                  "k8s-pod/jobset_sigs_k8s_io/jobset-name": self.w["jobset"],
                  "k8s-pod/jobset_sigs_k8s_io/jobset-uid": self.jobset_uid,
                  "k8s-pod/jobset_sigs_k8s_io/restart-attempt": str(pod.ref.attempt)}
        host = pod.node.name if (component == "kubelet" and pod.node) else ""
        return self.emit_event(ts, self.pod_obj(pod, container), reason, message, type_, component, host,
                               self.res_pod(pod), labels)

    def event_cluster(self, ts: int, kind: str, name: str, uid: str, api: str, reason: str, message: str,
                      type_: str, component: str) -> Event:
        obj = {"apiVersion": api, "kind": kind, "name": name, "namespace": self.w["namespace"], "uid": uid,
               "resourceVersion": str(self.rng.randrange(10**6, 10**8))}
        res = self.res_cluster()
        if kind == "Pod":  # a pod the scenario names but does not model (a Job's replacement pod): still a k8s_pod event
            res = {"type": "k8s_pod", "labels": {**res["labels"], "namespace_name": self.w["namespace"], "pod_name": name}}
        return self.emit_event(ts, obj, reason, message, type_, component, "", res)

    def event_node(self, ts: int, node: Node, reason: str, message: str, type_: str, component: str) -> Event:
        obj = {"kind": "Node", "name": node.name, "uid": node.name, "apiVersion": "v1"}
        return self.emit_event(ts, obj, reason, message, type_, component, node.name, self.res_node(node))

    # background: what a healthy run prints -----------------------------------------------------------------------
    def background(self, att: Attempt) -> None:
        js = self.w["jobset"]
        for job in att.jobs.values():
            if (job.rjob == "worker" and not att.workers_created) or "pods_created" in att.blocked:
                continue
            for pod in (p for p in att.pods.values() if p.job is job):
                self.event_cluster(pod.created, "Job", job.name, job.uid, "batch/v1", "SuccessfulCreate",
                                   f"Created pod: {pod.name}", "Normal", "job-controller")
        for pod in att.pods.values():
            if pod.ref.role == "worker" and not att.workers_created:
                continue
            for it in pod.pending:
                self.pending_events(pod, it, att)
            if pod.scheduled is None:
                continue
            self.event_pod(pod, pod.scheduled, "Scheduled",
                           f"Successfully assigned {self.w['namespace']}/{pod.name} to {pod.node.name}",
                           component="default-scheduler")
            self.node_log(pod.node, pod.scheduled + self.jitter(0.05, 0.3), "kubelet", self.glog(
                "I", pod.scheduled, 2187, "kubelet.go:2459",
                f'"SyncLoop ADD" source="api" pods=["{self.w["namespace"]}/{pod.name}"]'))
            for c in pod.ctrs.values():
                self.container_start_events(pod, c, att)
        head = att.pods[("head", 0, 0)]
        ms = att.ms
        rm, px, cl = (head.ctrs[c] for c in HEAD_ORDER)
        for i, r in enumerate(rm.runs):
            self.preamble(head, rm, r.start, self.rm_args())
            t = ms.get("rm_serving") if i == 0 else (r.start + self.jitter(2, 4) if "rm_serving" in ms else None)
            if t:
                self.line(head, rm, t, "server_lib.cc:1473", "Pathways Server serving on [::]:29001", 1)
        for i, r in enumerate(px.runs):
            self.preamble(head, px, r.start, self.proxy_args())
            t = ms.get("proxy_ready") if i == 0 else (r.start + self.jitter(2.5, 4) if "proxy_ready" in ms else None)
            if t:
                self.line(head, px, t, "proxy_server.cc:125", "IFRT proxy server started with status OK", 1)
        workers = [p for k, p in att.pods.items() if k[0] == "worker"]
        for pod in workers:
            c = pod.ctrs["pathways-worker"]
            for r in c.runs:
                self.preamble(pod, c, r.start, self.worker_args())
                self.line(pod, c, r.start + self.jitter(1, 2), "tpu_system.cc:212",
                          f"Found {self.w['chips_per_host']} {sc.CHIP_NAMES.get(self.w['accelerator'], ('TPU', 0))[0]}"
                          f" chips; topology {self.w['topology']}, host {pod.ref.vm} of {self.w['hosts_per_slice']}"
                          f" in slice {pod.ref.slice}", 1)
            k = (pod.ref.slice, pod.ref.vm)
            if f"serving{k}" in ms:
                self.line(pod, c, ms[f"serving{k}"], "server_lib.cc:1473", "Pathways Server serving on [::]:29005", 1)
                if "rm_serving" in ms and rm.alive(ms[f"serving{k}"] + NS):
                    t = max(ms[f"serving{k}"], ms["rm_serving"]) + self.jitter(0.2, 0.9)
                    self.line(head, rm, t, "resource_manager.cc:418",
                              f"Registered worker {pod.hostname}.{js}:29005 (slice {pod.ref.slice}, task {pod.ref.vm})",
                              rm.tid)
            if f"megascale{k}" in ms:
                self.line(pod, c, ms[f"megascale{k}"], "transport_manager.cc:204", "MegaScale transport initialized.", 1)
                self.line(pod, c, ms[f"megascale{k}"] + 5000, "transport_manager.cc:207",
                          "MegaScale transport init succeeded.", 1)
        if "slices_ready" in ms:
            n = self.w["slices"]
            self.line(head, rm, ms["slices_ready"], "multi_job_allocator.cc:1063",
                      f"*** {n}/{n} Pathways Slices Now Ready ***", 1)
        if "workers_ready" in ms:
            self.set_condition(ms["workers_ready"] + self.jitter(1, 3), "StartupPolicyCompleted", "True",
                               "StartupPolicyCompleted", "InOrder startup policy has completed")
        elif att.n == 0:
            self.set_condition(att.start + NS, "StartupPolicyInProgress", "True", "StartupPolicyInProgress",
                               "InOrder startup policy is in progress")
        self.client(att, head, cl)
        self.chatter(att, head, rm, workers)

    def pending_events(self, pod: Pod, it: Item, att: Attempt) -> None:
        t = max(it.at, pod.created + self.jitter(0.3, 1.0))
        msg = self.fmt(it.spec.get("message") or (
            "0/{nodes_total} nodes are available: {cpu_nodes} node(s) didn't match Pod's node affinity/selector, "
            "{tpu_nodes} Insufficient google.com/tpu. preemption: 0/{nodes_total} nodes are available: "
            "{cpu_nodes} Preemption is not helpful for scheduling, {tpu_nodes} No preemption victims found for "
            "incoming pod."), pod, at=t)
        stop = pod.pending_until or att.end or self.s.end
        ev = None
        for ts in self.repeats(it.spec.get("repeat"), t, stop):
            ev = self.event_pod(pod, ts, "FailedScheduling", msg, "Warning", component=it.spec.get(
                "source", "default-scheduler"))
        o = self.out(it)
        o.event, o.pod = o.event or ev, o.pod or pod
        o.uid = o.uid or pod.uid

    def container_start_events(self, pod: Pod, c: Ctr, att: Attempt) -> None:
        if c.pull_at is None:
            return
        img = c.image
        if c.pull_failed:
            self.pull_failure(pod, c, att)
            return
        digest, size = self.image_meta(img)
        for i, r in enumerate(c.runs):
            pull = c.pull_at if i == 0 else r.start - self.jitter(1.5, 3)
            self.event_pod(pod, pull, "Pulling", f'Pulling image "{img}"', container=c.name)
            self.node_log(pod.node, pull + self.jitter(0.01, 0.1), "container-runtime",
                          f'time="{fmt_ns(pull)}" level=info msg="PullImage \\"{img}\\""')
            took = (r.start - pull) / NS - 0.4
            self.event_pod(pod, r.start - NS // 2, "Pulled",
                           f'Successfully pulled image "{img}" in {took:.3f}s ({took:.3f}s including waiting). '
                           f"Image size: {size} bytes.", container=c.name)
            self.event_pod(pod, r.start - NS // 4, "Created", f"Created container: {c.name}", container=c.name)
            self.event_pod(pod, r.start, "Started", f"Started container {c.name}", container=c.name)
            self.node_log(pod.node, r.start + self.jitter(0.05, 0.2), "kubelet", self.glog(
                "I", r.start, 2187, "kubelet.go:2491",
                f'"SyncLoop (PLEG): event for pod" pod="{self.w["namespace"]}/{pod.name}" event={{"ID":"{pod.uid}",'
                f'"Type":"ContainerStarted","Data":"{c.cid}"}}'))
            if i > 0:
                self.event_pod(pod, pull - NS, "BackOff", f"Back-off restarting failed container {c.name} in pod "
                               f"{pod.name}_{self.w['namespace']}({pod.uid})", "Warning", c.name)

    def pull_failure(self, pod: Pod, c: Ctr, att: Attempt) -> None:
        it = next(i for i in self.s.items if i.kind == "pull_failure" and self.pods_of(i)[0] is pod)
        img = self.fmt(it.spec.get("image", c.image), pod, at=it.at)
        c.image = img
        err = self.fmt(it.spec.get("message") or (
            f'rpc error: code = NotFound desc = failed to pull and unpack image "{img}": failed to resolve '
            f'reference "{img}": {img}: not found'), pod, at=it.at)
        stop = min(att.end or self.s.end, self.s.end)
        t, backoff, first = c.pull_at, 10 * NS, None
        while t < stop:
            self.event_pod(pod, t, "Pulling", f'Pulling image "{img}"', container=c.name)
            self.node_log(pod.node, t + self.jitter(0.01, 0.1), "container-runtime",
                          f'time="{fmt_ns(t)}" level=info msg="PullImage \\"{img}\\""')
            tf = t + self.jitter(0.4, 1.6)
            self.node_log(pod.node, tf, "container-runtime", f'time="{fmt_ns(tf)}" level=error msg="PullImage '
                          f'\\"{img}\\" failed" error="{err.replace(chr(34), chr(92) + chr(34))}"', "ERROR")
            ev = self.event_pod(pod, tf, "Failed", f'Failed to pull image "{img}": {err}', "Warning", c.name)
            first = first or ev
            self.event_pod(pod, tf, "Failed", "Error: ErrImagePull", "Warning", c.name)
            tb = tf + self.jitter(0.5, 2)
            self.event_pod(pod, tb, "BackOff", f'Back-off pulling image "{img}"', "Normal", c.name)
            self.event_pod(pod, tb, "Failed", "Error: ImagePullBackOff", "Warning", c.name)
            c.waiting = ("ImagePullBackOff", f'Back-off pulling image "{img}": ErrImagePull: {err}')
            t, backoff = tb + backoff, min(BACKOFF_CAP, backoff * 2)
        o = self.out(it)
        o.event, o.pod, o.container, o.image, o.uid = first, pod, c.name, img, pod.uid

    def rm_args(self) -> list[str]:
        t = sc.INSTANCE_TYPES.get(self.w["accelerator"], "tpu")
        return ["--server_port=29001", f"--gcs_scratch_location={self.w['gcs_scratch']}",
                "--node_type=resource_manager", f"--instance_count={self.w['rm_instance_count']}",
                f"--instance_type={t}:{self.w['topology']}"]

    def proxy_args(self) -> list[str]:
        return ["--server_port=29000", f"--resource_manager_address={self.rm_host}:29001",
                f"--gcs_scratch_location={self.w['gcs_scratch']}"]

    def worker_args(self) -> list[str]:
        rm = self.w["worker_rm_address"] or f"{self.rm_host}:29001"
        return ["--server_port=29005", f"--resource_manager_address={rm}",
                f"--gcs_scratch_location={self.w['gcs_scratch']}"]

    def preamble(self, pod: Pod, c: Ctr, t: int, args: list[str]) -> None:
        binary = "/usr/pathways/bin/proxy_server" if c.name == "pathways-proxy" else "/usr/pathways/bin/server"
        t += self.jitter(0.3, 0.9)
        for i, a in enumerate([binary] + args):
            self.line(pod, c, t + i * 1500, "init_main.cc:81", f"argv[{i}]: '{a}'", 1)
        tag = self.w["proxy_tag"] if c.name == "pathways-proxy" else self.w["server_tag"]
        self.line(pod, c, t + 9000, "init_main.cc:95", f"Pathways build: {tag} (libtpu {self.libtpu()})", 1)

    def libtpu(self) -> str:
        return "0.0." + str(20 + len(self.w["server_tag"]) % 7) + ".dev20261015"

    def line(self, pod: Pod, c: Ctr, t: int, src: str, msg: str, tid: int, level: str = "I") -> str:
        if not c.alive(t, 0):
            return ""
        return self.clog(pod, c.name, t, self.glog(level, t, tid, src, msg))

    def client(self, att: Attempt, head: Pod, cl: Ctr) -> None:
        bg, ms = self.s.background, att.ms
        if not cl.runs:
            return
        t0 = cl.runs[0].start + self.jitter(1, 2.5)
        if "tpu_backend" in bg["noise"]:
            self.cline(head, cl, t0, *sc.NOISE["tpu_backend"])
        if self.w["pathwaysutils"]:
            self.cline(head, cl, t0 + self.jitter(0.3, 0.8), "stderr",
                       "WARNING:absl:pathwaysutils: Detected Pathways-on-Cloud backend. Applying changes.")
        if "compile_cache_off" in bg["noise"]:
            self.cline(head, cl, t0 + self.jitter(0.9, 1.2), *sc.NOISE["compile_cache_off"])
        if "client_connect" not in ms:
            return
        t = ms["client_connect"]
        self.cline(head, cl, t, "stdout", f"System Information: Jax Version: {self.w['jax_version']}")
        self.cline(head, cl, t + 3000, "stdout", f"System Information: Jaxlib Version: {self.w['jax_version']}")
        self.cline(head, cl, t + 6000, "stdout", "System Information: Jax Backend: proxy")
        if "devices" not in ms:
            return
        n = self.w["slices"] * self.w["hosts_per_slice"] * self.w["chips_per_host"]
        self.cline(head, cl, ms["devices"], "stdout",
                   f"Devices: [device(0,TPU_DEVICE,coords=[0,0,0,0],vtask=0,slice=0,default_mem=device,mem_spaces=3),"
                   f" device(1,TPU_DEVICE,coords=[1,0,0,0],vtask=0,slice=0,default_mem=device,mem_spaces=3), ...]"
                   f" ({n} devices)")
        self.cline(head, cl, ms["devices"] + 4000, "stdout", f"Num_devices: {n}, shape (1, 1, {n}, 1, 1, 1, 1, 1)")
        if "cache_key" in bg["noise"]:
            for k in range(3):
                self.cline(head, cl, ms["devices"] + self.jitter(2 + 9 * k, 8 + 9 * k), *sc.NOISE["cache_key"])
        self.progress(att, head, cl)

    def cline(self, pod: Pod, c: Ctr, t: int, stream: str, text: str) -> str:
        if not c.alive(t, 0) or self.ends_before(self.attempts[pod.ref.attempt], t):
            return ""
        return self.clog(pod, c.name, t, text, stream)

    def progress(self, att: Attempt, head: Pod, cl: Ctr) -> None:
        bg = self.s.background
        if bg["progress"] in (None, "none") or "first_step" not in att.ms:
            return
        stream, tmpl = sc.PROGRESS_FORMATS[bg["progress"]]
        stop = min(x for x in (att.progress_stop, att.end, self.s.end, cl.runs[0].end) if x is not None)
        t, step, every = att.ms["first_step"], 0, max(1, int(bg["log_every"]))
        total = bg["steps"] or 100000
        step_ns = bg["step_seconds"] * NS
        ckpt = bg["checkpoint_every"]
        while t < stop and step < total:
            sec = (att.ms["first_step"] - att.ms["devices"]) / NS if step == 0 else bg["step_seconds"] * self.rng.uniform(0.97, 1.04)
            if step % every == 0:
                loss = 2.05 + 8.6 * math.exp(-step / 350) + self.rng.uniform(-0.03, 0.03)
                text = tmpl.format(step=step, sec=sec, tflops=self.rng.uniform(181, 194) if step else 1.2,
                                   tok=self.rng.uniform(5700, 6050) if step else 31.4, weights=65536, loss=loss,
                                   ts=glog_stamp(t), tid=cl.tid, gnorm=self.rng.uniform(0.2, 1.4), sps=1 / sec,
                                   total=total, lr=3e-4 * min(1, (step + 1) / 500))
                self.cline(head, cl, t, stream, text)
            if ckpt and step and step % ckpt == 0:
                self.cline(head, cl, t + 2 * NS, "stderr", f"INFO:absl:Saved a checkpoint at step {step}.")
            step += 1
            t += int(step_ns * self.rng.uniform(0.97, 1.04)) if step > 1 else 0
            if step == 1:
                t += int(step_ns)
        if bg["steps"] and step >= total and t < stop:
            run = cl.runs[-1]
            run.end, run.exit_code, run.reason = t + 4 * NS, 0, "Completed"
            self.cline(head, cl, t + 2 * NS, "stdout", f"Training finished after {total} steps.")

    def chatter(self, att: Attempt, head: Pod, rm: Ctr, workers: list[Pod]) -> None:
        every = parse_duration(f"{self.s.background['worker_chatter_minutes']}m")
        stop = min(att.end or self.s.end, self.s.end)
        multi = self.w["slices"] > 1
        templates = sc.WORKER_CHATTER + (sc.WORKER_CHATTER_MULTISLICE if multi else ())
        jit = min(40.0, every / NS / 4)  # +-40s at the default 6m; a quarter period at the seconds rates bench/ uses
        for pod in workers:
            c = pod.ctrs["pathways-worker"]
            k = (pod.ref.slice, pod.ref.vm)
            if f"megascale{k}" not in att.ms:
                continue
            t = att.ms[f"megascale{k}"] + self.jitter(20, 90)
            while t < stop:
                self.line_raw(pod, c, t, self.rng.choice(templates))
                t += every + self.jitter(-jit, jit)
        if "rm_serving" in att.ms:
            t = att.ms["rm_serving"] + self.jitter(120, 300)
            while t < stop:
                self.line_raw(head, rm, t, self.rng.choice(sc.RM_CHATTER))
                t += 2 * every + self.jitter(-min(60.0, 2 * jit), min(60.0, 2 * jit))
        if "kubelet" in self.s.background["noise"]:
            for pod in [head] + workers:
                if pod.scheduled is None:
                    continue
                t = pod.scheduled + self.jitter(200, 400)
                while t < stop:
                    self.node_log(pod.node, t, "kubelet", self.rng.choice(sc.KUBELET_CHATTER).format(
                        ts=glog_stamp(t), tid=2187))
                    t += 10 * 60 * NS + self.jitter(-30, 30)

    def line_raw(self, pod: Pod, c: Ctr, t: int, template: str) -> None:
        if not c.alive(t, 0):
            return
        gib = sc.CHIP_NAMES.get(self.w["accelerator"], ("", 16.0))[1]
        text = template.format(ts=glog_stamp(t), tid=c.tid, hex16=self.hexs(16), mib=self.rng.randrange(3, 900),
                               gib=gib * self.w["chips_per_host"] * self.rng.uniform(0.55, 0.7),
                               chips=self.w["chips_per_host"], n=self.rng.randrange(200, 4000),
                               ms=self.rng.uniform(0.8, 3.5), ms2=self.rng.uniform(6, 19), small=self.rng.randrange(1, 4),
                               scratch=self.w["gcs_scratch"])
        self.clog(pod, c.name, t, text)

    # incident items ----------------------------------------------------------------------------------------------
    def repeats(self, spec: dict[str, Any] | None, t: int, stop: int | None = None) -> list[int]:
        """Times of an item with `repeat: {every, count | until}`; a bare item happens once."""
        t += self.jitter(0.0, 0.9)  # nothing real happens on a whole second
        if not spec:
            return [t]
        every = parse_duration(spec["every"])
        until = sc.parse_time(spec["until"], self.s.start, self.s.anchors) if "until" in spec else None
        count = int(spec.get("count", 10**6))
        limit = min(x for x in (until, stop, self.s.end) if x is not None)
        out, k = [], 0
        while k < count and t + k * every <= limit:
            out.append(t + k * every + (self.jitter(0, min(2.0, every / NS / 10)) if k else 0))
            k += 1
        return out

    def incident(self) -> None:
        for it in self.s.items:
            handler = getattr(self, "item_" + it.kind, None)
            if handler:
                handler(it)
        for it, pod, c, t in self.later_logs:
            self.emit_lines(it, pod, c, t, self.out(it))

    def item_log(self, it: Item) -> None:
        sp = it.spec
        pods = self.pods_of(it)
        o = self.out(it)
        o.pod = pods[0]
        for n, pod in enumerate(pods):
            c = pod.ctrs.get(sp.get("container") or MAIN[pod.ref.role])
            if c is None:
                raise ShapeError(f"{it.where()}: {pod.ref} has no container {sp.get('container')!r}")
            o.container = o.container or c.name
            o.image = o.image or c.image
            for t in self.repeats(sp.get("repeat"), it.at + (self.jitter(0.05, 0.9) if n else 0)):
                if not c.alive(t):
                    raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} is not running at {fmt_ns(t)}; it runs "
                                     f"{[(fmt_ns(r.start), r.end and fmt_ns(r.end)) for r in c.runs]}")
                self.emit_lines(it, pod, c, t, o)

    def emit_lines(self, it: Item, pod: Pod, c: Ctr, t: int, o: Output) -> None:
        sp = it.spec
        ts = t
        for i, raw in enumerate(str(sp["text"]).rstrip("\n").split("\n")):
            ts += self.rng.randrange(3, 40) * 1000 if i else 0
            text = self.fmt(raw, pod, at=ts, container=c.name)
            if sp.get("step"):
                text = text.replace("{step}", str(self.step_at(pod, t)))
            if sp.get("glog"):
                level, src = sp["glog"].split(None, 1)
                text = self.glog(level, ts, int(sp.get("tid", c.tid)), src, text)
            ins = self.clog(pod, c.name, ts, text, sp.get("stream", "stderr"), sp.get("severity"))
            if ins:
                o.inserts.append(ins)

    def step_at(self, pod: Pod, t: int) -> int:
        att = self.attempts[pod.ref.attempt]
        if "first_step" not in att.ms:
            return 0
        return max(0, int((t - att.ms["first_step"]) / (self.s.background["step_seconds"] * NS)))

    def item_event(self, it: Item) -> None:
        sp = it.spec
        o = self.out(it)
        type_ = sp.get("type", "Warning")
        comp = sp.get("source")
        for t in self.repeats(sp.get("repeat"), it.at):
            if "pod" in sp:
                pod = self.pods_of(it)[0]
                o.pod, o.node = pod, pod.node
                ev = self.event_pod(pod, t, sp["reason"], self.fmt(sp["message"], pod, at=it.at), type_,
                                    sp.get("field_path"), comp or "kubelet")
            elif "node" in sp:
                node = self.node_ref(sp["node"], it.at)
                o.node = node
                ev = self.event_node(t, node, sp["reason"], self.fmt(sp["message"], node=node, at=it.at), type_,
                                     comp or "kubelet")
            else:
                kind, name, uid, api = self.object_of(sp.get("object", "jobset"), it.at)
                ev = self.event_cluster(t, kind, name, uid, api, sp["reason"], self.fmt(sp["message"], at=it.at),
                                        type_, comp or "jobset-controller")
            o.event = o.event or ev

    def object_of(self, obj: Any, at: int) -> tuple[str, str, str, str]:
        if obj == "jobset":
            return "JobSet", self.w["jobset"], self.jobset_uid, "jobset.x-k8s.io/v1alpha2"
        if isinstance(obj, str) and obj.startswith("job/"):
            name = f"{self.w['jobset']}-{obj[4:]}"
            job = self.attempt_at(at).jobs.get(name)
            if job is None:
                raise ShapeError(f"no Job {name} (jobs: {sorted(self.attempt_at(at).jobs)})")
            return "Job", name, job.uid, "batch/v1"
        if isinstance(obj, dict):
            return obj["kind"], self.fmt(obj["name"], at=at), obj.get("uid") or self.uid(), obj.get("apiVersion", "v1")
        raise ShapeError(f"bad event object {obj!r} (jobset, job/<rjob>-<index>, {{kind, name}}, or use pod:/node:)")

    def item_node_log(self, it: Item) -> None:
        node = self.node_ref(it.spec["node"], it.at)
        o = self.out(it)
        o.node = node
        for t in self.repeats(it.spec.get("repeat"), it.at):
            for i, raw in enumerate(str(it.spec["text"]).rstrip("\n").split("\n")):
                ts = t + i * self.rng.randrange(200, 900) * 1000
                ins = self.node_log(node, ts, it.spec.get("log", "kubelet"),
                                    self.fmt(raw, node=node, at=ts), it.spec.get("severity", "INFO"))
                if ins:
                    o.inserts.append(ins)

    def item_serial(self, it: Item) -> None:
        node = self.node_ref(it.spec["node"], it.at)
        o = self.out(it)
        o.node = node
        if not self.s.sources["serial"]:
            return
        for t in self.repeats(it.spec.get("repeat"), it.at):
            for i, raw in enumerate(str(it.spec["text"]).rstrip("\n").split("\n")):
                ts = t + i * self.rng.randrange(5, 90) * 1000
                ins = self.entry(ts, "serialconsole.googleapis.com%2Fserial_port_1_output", self.res_gce(node),
                                 {"compute.googleapis.com/resource_name": node.name}, None,
                                 ("textPayload", self.fmt(raw, node=node, at=ts)))
                if ins:
                    o.inserts.append(ins)

    def item_audit(self, it: Item) -> None:
        sp = it.spec
        if not self.s.sources["audit"]:
            return
        node = self.node_ref(sp["node"], it.at) if "node" in sp else None
        o = self.out(it)
        o.node = node
        log = sp.get("log", "system_event")
        method = sp["method"]
        name = sp.get("resource_name") or (f"projects/{self.w['project']}/zones/{self.zone}/instances/{node.name}"
                                           if node else "")
        pp: dict[str, Any] = {
            "@type": "type.googleapis.com/google.cloud.audit.AuditLog",
            "authenticationInfo": {"principalEmail": sp.get("principal") or (
                "system@google.com" if log == "system_event" else f"{self.project_number}@cloudservices.gserviceaccount.com")},
            "methodName": method,
            "resourceName": self.fmt(name, node=node, at=it.at),
            "serviceName": sp.get("service", "compute.googleapis.com"),
            "requestMetadata": {"callerSuppliedUserAgent": sp.get("user_agent", "GCE Managed Instance Group for GKE")}
            if log == "activity" else {},
        }
        if sp.get("status"):
            pp["status"] = {k: self.fmt(v, node=node, at=it.at) if isinstance(v, str) else v
                            for k, v in sp["status"].items()}
        for k in ("request", "response"):
            if sp.get(k):
                pp[k] = json.loads(self.fmt(json.dumps(sp[k]), node=node, at=it.at))
        if not pp["requestMetadata"]:
            del pp["requestMetadata"]
        res = sp.get("resource")
        resource = ({"type": res, "labels": self.res_cluster()["labels"]} if res in ("k8s_cluster", "gke_cluster") else
                    self.res_gce(node) if node else self.res_cluster())
        op = {"id": f"operation-{self.rng.randrange(10**12, 10**13)}-{self.hexs(12)}", "producer": pp["serviceName"],
              "first": True, "last": True}
        labels = {"compute.googleapis.com/root_trigger_id": self.uid()} if node else None
        ins = self.entry(it.at, f"cloudaudit.googleapis.com%2F{log}", resource, labels,
                         sp.get("severity", "ERROR" if sp.get("status", {}).get("code") else "NOTICE"),
                         ("protoPayload", pp))
        if ins:
            o.inserts.append(ins)
            self.entries[-1][1]["operation"] = op

    def item_autoscaler(self, it: Item) -> None:
        sp = it.spec
        if not self.s.sources["autoscaler"]:
            return
        o = self.out(it)
        for t in self.repeats(sp.get("repeat"), it.at):
            payload = self.autoscaler_payload(sp, t)
            ins = self.entry(t, "container.googleapis.com%2Fcluster-autoscaler-visibility", self.res_cluster(), None,
                             sp.get("severity", "INFO"), ("jsonPayload", payload))
            if ins:
                o.inserts.append(ins)

    def autoscaler_payload(self, sp: dict[str, Any], t: int) -> dict[str, Any]:
        measure = str(t // NS)
        if sp.get("payload"):
            return json.loads(self.fmt(json.dumps(sp["payload"]), at=t))
        pool = lambda p: {"name": self.fmt("{mig:" + p + "}", at=t), "nodepool": p, "zone": self.zone}  # noqa: E731
        if sp.get("decision"):
            d = sp["decision"]
            pods = self.pods_of(Item(-1, "autoscaler", t, None, {"pod": d["pods"]}))
            return {"decision": {"decideTime": measure, "eventId": self.uid(), "scaleUp": {
                "increasedMigs": [{"mig": pool(d["pool"]), "requestedNodes": int(d.get("nodes", len(pods)))}],
                "triggeringPods": [self.sample_pod(p) for p in pods[:1]], "triggeringPodsTotalCount": len(pods)}}}
        if sp.get("result_error"):
            r = sp["result_error"]
            return {"resultInfo": {"measureTime": measure, "results": [{"eventId": self.uid(), "errorMsg": {
                "messageId": r["message_id"], "parameters": [self.fmt(x, at=t) for x in r.get("parameters", [])]}}]}}
        if sp.get("no_scale_up"):
            r = sp["no_scale_up"]
            pods = self.pods_of(Item(-1, "autoscaler", t, None, {"pod": r["pods"]}))
            rejected = [{"mig": pool(p), "reason": {"messageId": r["message_id"],
                                                    "parameters": [self.fmt(x, at=t) for x in r.get("parameters", [])]}}
                        for p in r.get("pools", [])]
            group = {"podGroup": {"samplePod": self.sample_pod(pods[0]), "totalPodCount": len(pods)},
                     "rejectedMigs": rejected}
            if r.get("nap_reason"):
                group["napFailureReasons"] = [{"messageId": r["nap_reason"], "parameters": []}]
            return {"noDecisionStatus": {"measureTime": measure, "noScaleUp": {
                "unhandledPodGroups": [group], "unhandledPodGroupsTotalCount": 1}}}
        raise ShapeError("autoscaler item needs payload, decision, result_error or no_scale_up")

    def sample_pod(self, pod: Pod) -> dict[str, Any]:
        return {"controller": {"apiVersion": "batch/v1", "kind": "Job", "name": pod.job.name}, "name": pod.name,
                "namespace": self.w["namespace"]}

    def set_condition(self, t: int, type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
        for c in self.jobset_conditions:
            if c["type"] == type_:
                c.update(status=status, reason=reason, message=message, lastTransitionTime=fmt_ns(t, 0))
                return c
        if type_ == "StartupPolicyCompleted":
            for c in self.jobset_conditions:
                if c["type"] == "StartupPolicyInProgress":
                    c.update(status="False", lastTransitionTime=fmt_ns(t, 0))
        c = {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": fmt_ns(t, 0)}
        self.jobset_conditions.append(c)
        return c

    def item_jobset(self, it: Item) -> None:
        sp = it.spec
        cond = sp.get("condition", "Failed")
        first = sp.get("first_failed_job")
        reason = sp.get("reason") or {"Failed": "ReachedMaxRestarts", "Completed": "AllJobsCompleted",
                                      "Suspended": "SuspendedJobs"}.get(cond, cond)
        default_msg = {"ReachedMaxRestarts": "jobset failed due to reaching max number of restarts",
                       "FailedJobs": "jobset failed due to one or more job failures",
                       "AllJobsCompleted": "jobset completed successfully"}.get(reason, reason)
        if first:
            default_msg += f" (first failed job: {self.w['jobset']}-{first})"
            kind, name, uid, api = self.object_of(f"job/{first}", it.at)
            self.event_cluster(it.at - NS, kind, name, uid, api, "BackoffLimitExceeded",
                               "Job has reached the specified backoff limit", "Warning", "job-controller")
        msg = self.fmt(sp.get("message") or default_msg, at=it.at)
        self.set_condition(it.at, cond, "True", reason, msg)
        ev = self.event_cluster(it.at, "JobSet", self.w["jobset"], self.jobset_uid, "jobset.x-k8s.io/v1alpha2",
                                reason, msg, "Warning" if cond == "Failed" else "Normal", "jobset-controller")
        if cond in ("Failed", "Completed"):
            self.terminal = (cond, it.at)
            self.delete_active_jobs(self.attempt_at(it.at), first, bool(sp.get("keep_pods")))
        o = self.out(it)
        o.uid, o.event = self.jobset_uid, ev

    def delete_active_jobs(self, att: Attempt, first: str | None, keep: bool) -> None:
        """A finished JobSet deletes its still-active child Jobs (and so their pods); failed Jobs stay."""
        if keep:
            return
        failed = {f"{self.w['jobset']}-{first}"} if first else set()
        for pod in att.pods.values():
            main = pod.ctrs[MAIN[pod.ref.role]]
            if pod.ref.role == "head" and main.runs and main.runs[-1].exit_code not in (None, 143):
                failed.add(pod.job.name)
        for pod in att.pods.values():
            if pod.job.name not in failed:
                pod.deleted = True

    def item_restart(self, it: Item) -> None:
        first = it.spec.get("first_failed_job")
        msg = "applying RestartJobSet failure policy action" + (
            f" (first failed job: {self.w['jobset']}-{first})" if first else "")
        self.restarts += 1
        ev = self.event_cluster(it.at, "JobSet", self.w["jobset"], self.jobset_uid, "jobset.x-k8s.io/v1alpha2",
                                "RestartJobSetFailurePolicyAction", msg, "Warning", "jobset-controller")
        o = self.out(it)
        o.uid, o.event = self.jobset_uid, ev

    # kubectl objects ---------------------------------------------------------------------------------------------
    def ctr_spec(self, pod: Pod, c: Ctr) -> dict[str, Any]:
        w = self.w
        head_env = [{"name": "PATHWAYS_HEAD", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}}]
        spec: dict[str, Any] = {"name": c.name, "image": c.image, "imagePullPolicy": "Always",
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File", "resources": {}}
        if c.name == "pathways-rm":
            spec.update(args=self.rm_args(), ports=[{"containerPort": 29001, "protocol": "TCP"},
                                                    {"containerPort": 29002, "protocol": "TCP"}],
                        env=[{"name": "REPLICATED_JOB_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                              "fieldPath": "metadata.annotations['jobset.sigs.k8s.io/replicatedjob-name']"}}},
                             {"name": "JOBSET_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                              "fieldPath": "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"}}},
                             {"name": "HOST_ADDRESS", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                              "fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}},
                             {"name": "TPU_SKIP_MDS_QUERY", "value": "true"}],
                        resources={"limits": {"cpu": "8", "memory": "32G"}, "requests": {"cpu": "8", "memory": "32G"}},
                        restartPolicy="Always")
        elif c.name == "pathways-proxy":
            spec.update(args=[a.replace(self.rm_host, "$(PATHWAYS_HEAD)") for a in self.proxy_args()],
                        ports=[{"containerPort": 29000, "protocol": "TCP"}], env=head_env,
                        resources={"limits": {"cpu": "16", "memory": "100G"},
                                   "requests": {"cpu": "16", "memory": "100G"}}, restartPolicy="Always")
        elif c.name == SIDECAR:
            spec.update(ports=[{"containerPort": 50051, "protocol": "TCP"}], restartPolicy="Always",
                        env=[{"name": "GRPC_SERVER_ADDRESS", "value": "0.0.0.0:50051"},
                             {"name": "PYTHONUNBUFFERED", "value": "1"}])
        elif c.name == "jax-tpu":
            target = w["backend_target"] or "grpc://$(PATHWAYS_HEAD):29000"
            spec.update(command=["bash", "-c", "python3 -m MaxText.train MaxText/configs/base.yml "
                                 f"run_name={w['jobset']} base_output_directory=gs://{w['project']}-runs/{w['jobset']}"],
                        env=head_env + [{"name": "JAX_PLATFORMS", "value": "proxy"},
                                        {"name": "JAX_BACKEND_TARGET", "value": target},
                                        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"}])
        else:
            rm = w["worker_rm_address"] or "$(PATHWAYS_HEAD):29001"
            spec.update(args=["--server_port=29005", f"--resource_manager_address={rm}",
                              f"--gcs_scratch_location={w['gcs_scratch']}"],
                        ports=[{"containerPort": p, "protocol": "TCP"} for p in (29005, 29006, 8471, 8080)],
                        env=head_env + [{"name": "TPU_MIN_LOG_LEVEL", "value": "0"},
                                        {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "0"},
                                        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
                                        {"name": "MEGASCALE_GRPC_ENABLE_XOR_TRACER", "value": "false"},
                                        {"name": "MEGASCALE_NUM_SLICES", "value": str(w["slices"])},
                                        {"name": "MEGASCALE_SLICE_ID", "value": str(pod.job.index)},
                                        {"name": "MEGASCALE_COORDINATOR_ADDRESS",
                                         "value": f"{w['jobset']}-worker-0-0.{w['jobset']}"}],
                        resources={"limits": {"google.com/tpu": str(w["chips_per_host"])},
                                   "requests": {"google.com/tpu": str(w["chips_per_host"])}},
                        volumeMounts=[{"mountPath": "/tmp", "name": "shared-tmp"}])
        return spec

    def labels(self, pod: Pod) -> dict[str, str]:
        js = self.w["jobset"]
        lab = {
            "batch.kubernetes.io/controller-uid": pod.job.uid,
            "batch.kubernetes.io/job-completion-index": str(pod.ref.vm if pod.ref.role == "worker" else 0),
            "batch.kubernetes.io/job-name": pod.job.name,
            "controller-uid": pod.job.uid,
            "job-name": pod.job.name,
            "jobset.sigs.k8s.io/coordinator": self.rm_host,
            "jobset.sigs.k8s.io/global-replicas": str(1 + self.w["slices"]),
            "jobset.sigs.k8s.io/job-global-index": str(0 if pod.ref.role == "head" else 1 + pod.job.index),
            "jobset.sigs.k8s.io/job-index": str(pod.job.index),
            "jobset.sigs.k8s.io/job-key": self.hexs(40),
            "jobset.sigs.k8s.io/jobset-name": js,
            "jobset.sigs.k8s.io/jobset-uid": self.jobset_uid,
            "jobset.sigs.k8s.io/replicatedjob-name": pod.job.rjob,
            "jobset.sigs.k8s.io/replicatedjob-replicas": str(1 if pod.ref.role == "head" else self.w["slices"]),
            "jobset.sigs.k8s.io/restart-attempt": str(pod.ref.attempt),
        }
        if pod.ref.role == "worker":
            lab["xpk.google.com/workload"] = js
        return lab

    def node_selector(self, pod: Pod) -> dict[str, str]:
        if pod.ref.role == "head":
            return {"cloud.google.com/gke-nodepool": "cpu-np"}
        sel = {"cloud.google.com/gke-tpu-accelerator": self.w["accelerator"],
               "cloud.google.com/gke-tpu-topology": self.w["topology"]}
        if self.w["spot"]:
            sel["cloud.google.com/gke-spot"] = "true"
        sel.update({k: str(v) for k, v in self.w["worker_node_selector"].items()})
        return sel

    def ctr_status(self, pod: Pod, c: Ctr, end: int) -> dict[str, Any]:
        digest, _ = self.image_meta(c.image)
        st: dict[str, Any] = {"name": c.name, "image": c.image, "imageID": "", "lastState": {}, "ready": False,
                              "restartCount": 0, "started": False}
        runs = [r for r in c.runs if r.start <= end]

        def term(r: Run) -> dict[str, Any]:
            cid = c.cid if r is runs[-1] else hashlib.sha256(f"{c.cid}/{r.start}".encode()).hexdigest()
            t = {"containerID": f"containerd://{cid}", "exitCode": r.exit_code, "reason": r.reason,
                 "startedAt": fmt_ns(r.start, 0), "finishedAt": fmt_ns(r.end, 0)}
            if r.message:
                t["message"] = r.message
            return {"terminated": t}

        if not runs:
            reason, msg = c.waiting or (("PodInitializing", "") if pod.scheduled else ("ContainerCreating", ""))
            st["state"] = {"waiting": {"reason": reason, **({"message": msg} if msg else {})}}
            return st
        st["containerID"] = f"containerd://{c.cid}"
        st["imageID"] = f"{c.image.split(':')[0]}@sha256:{digest}"
        st["restartCount"] = len(runs) - 1
        last = runs[-1]
        if len(runs) > 1:
            st["lastState"] = term(runs[-2])
        if last.end is None or last.end > end:
            st.update(state={"running": {"startedAt": fmt_ns(last.start, 0)}}, ready=True, started=True)
        elif c.waiting:
            st.update(state={"waiting": {"reason": c.waiting[0], "message": c.waiting[1]}}, lastState=term(last))
        else:
            st["state"] = term(last)
        if c.init:
            st["restartPolicy"] = "Always"
        return st

    def pod_json(self, pod: Pod) -> dict[str, Any]:
        w, end = self.w, self.s.end
        init = [c for c in pod.ctrs.values() if c.init]
        main = [c for c in pod.ctrs.values() if not c.init]
        spec: dict[str, Any] = {
            "containers": [self.ctr_spec(pod, c) for c in main],
            "dnsPolicy": "ClusterFirstWithHostNet", "enableServiceLinks": True, "hostNetwork": True,
            "hostname": pod.hostname, "nodeSelector": self.node_selector(pod), "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0 if pod.ref.role == "head" else 1000, "restartPolicy": "Never" if pod.ref.role == "head" else "OnFailure",
            "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "subdomain": w["jobset"],
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "tolerationSeconds": 300}],
        }
        if init:
            spec["initContainers"] = [self.ctr_spec(pod, c) for c in init]
        if pod.ref.role == "worker":
            spec["tolerations"].append({"effect": "NoSchedule", "key": "google.com/tpu", "operator": "Exists"})
            spec["priorityClassName"] = "medium"
            spec["volumes"] = [{"hostPath": {"path": "/tmp", "type": ""}, "name": "shared-tmp"}]
        if pod.scheduled is not None and pod.scheduled <= end:
            spec["nodeName"] = pod.node.name
        statuses = {c.name: self.ctr_status(pod, c, end) for c in pod.ctrs.values()}
        conds = []
        ts = lambda t: fmt_ns(t, 0)  # noqa: E731
        if pod.scheduled is None or pod.scheduled > end:
            last = self.events_for(pod, "FailedScheduling")
            conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                          "message": last.message if last else "", "lastProbeTime": None,
                          "lastTransitionTime": ts(pod.created + NS)})
            phase = "Pending"
        else:
            mc = pod.ctrs[MAIN[pod.ref.role]]
            mstate = statuses[mc.name]["state"]
            all_ready = all(s["ready"] for s in statuses.values())
            inited = all(c.runs and c.runs[0].start <= end for c in init)  # sticky once sidecars started
            if "terminated" in mstate:
                phase = "Succeeded" if mstate["terminated"]["exitCode"] == 0 else "Failed"
            elif pod.shutdown:
                phase = "Failed"
            elif mstate.get("running"):
                phase = "Running"
            else:
                phase = "Pending"
            t_ready = max((c.runs[-1].start for c in pod.ctrs.values() if c.runs), default=pod.scheduled)
            ended = [c.runs[-1].end for c in pod.ctrs.values() if c.runs and c.runs[-1].end and c.runs[-1].end <= end]
            if not all_ready and ended:
                t_ready = min(ended)
            conds += [
                {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": ts(pod.scheduled + 2 * NS)},
                {"type": "Initialized", "status": "True" if inited else "False", "lastProbeTime": None,
                 "lastTransitionTime": ts(t_ready if inited else pod.scheduled),
                 **({} if inited else {"reason": "ContainersNotInitialized",
                                       "message": "containers with incomplete status: [" +
                                       " ".join(c.name for c in init if not statuses[c.name]["started"]) + "]"})},
                {"type": "Ready", "status": "True" if all_ready else "False", "lastProbeTime": None,
                 "lastTransitionTime": ts(t_ready), **({} if all_ready else self.not_ready(statuses))},
                {"type": "ContainersReady", "status": "True" if all_ready else "False", "lastProbeTime": None,
                 "lastTransitionTime": ts(t_ready), **({} if all_ready else self.not_ready(statuses))},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": ts(pod.scheduled)},
            ]
            if pod.shutdown:
                conds.append({"type": "DisruptionTarget", "status": "True", "reason": pod.shutdown_reasons[1],
                              "message": pod.shutdown[1], "lastProbeTime": None,
                              "lastTransitionTime": ts(pod.shutdown[0])})
        status: dict[str, Any] = {"phase": phase, "conditions": conds, "qosClass": "Burstable" if pod.ref.role == "head" else "BestEffort"}
        if pod.scheduled is not None and pod.scheduled <= end:
            status.update(hostIP=pod.node.ip, hostIPs=[{"ip": pod.node.ip}], podIP=pod.node.ip,
                          podIPs=[{"ip": pod.node.ip}], startTime=ts(pod.scheduled))
            status["containerStatuses"] = [statuses[c.name] for c in main]
            if init:
                status["initContainerStatuses"] = [statuses[c.name] for c in init]
        if pod.shutdown:
            status.update(reason=pod.shutdown_reasons[0], message=pod.shutdown[1])
        annotations = {"batch.kubernetes.io/job-completion-index": self.labels(pod)["batch.kubernetes.io/job-completion-index"],
                       "jobset.sigs.k8s.io/jobset-name": w["jobset"], "jobset.sigs.k8s.io/replicatedjob-name": pod.job.rjob,
                       "alpha.jobset.sigs.k8s.io/exclusive-topology":
                           "kubernetes.io/hostname" if pod.ref.role == "head" else "cloud.google.com/gke-nodepool"}
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"annotations": annotations, "creationTimestamp": ts(pod.created),
                         "generateName": pod.name[:-5], "labels": self.labels(pod), "name": pod.name,
                         "namespace": w["namespace"],
                         "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True,
                                              "kind": "Job", "name": pod.job.name, "uid": pod.job.uid}],
                         "resourceVersion": str(self.rng.randrange(10**6, 10**8)), "uid": pod.uid},
            "spec": spec, "status": status,
        }

    def not_ready(self, statuses: dict[str, Any]) -> dict[str, str]:
        bad = [n for n, s in statuses.items() if not s["ready"]]
        return {"reason": "ContainersNotReady", "message": f"containers with unready status: [{' '.join(bad)}]"}

    def events_for(self, pod: Pod, reason: str) -> Event | None:
        found = [e for e in self.events.values() if e.obj.get("uid") == pod.uid and e.reason == reason and e.times]
        return found[-1] if found else None

    def final_pods(self) -> list[Pod]:
        att = self.attempts[-1]
        return sorted((p for p in att.pods.values() if ((p.ref.role == "head" and "pods_created" not in att.blocked)
                                                        or att.workers_created)
                       and not p.deleted and p.created <= self.s.end and att.start <= self.s.end),
                      key=lambda p: p.name)

    def jobset_json(self) -> dict[str, Any]:
        w = self.w
        att = self.attempts[-1]
        final = {p.name: self.pod_json(p) for p in att.pods.values() if p.created <= self.s.end
                 and "pods_created" not in att.blocked}
        head = att.pods[("head", 0, 0)]
        tmpl = lambda pod: {"metadata": {"annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": (  # noqa: E731
            "kubernetes.io/hostname" if pod.ref.role == "head" else "cloud.google.com/gke-nodepool")}},
            "spec": {k: v for k, v in self.pod_json(pod)["spec"].items() if k not in ("nodeName", "hostname", "subdomain")}}
        w0 = att.pods.get(("worker", 0, 0))
        rjobs = [{"name": "pathways-head", "replicas": 1, "template": {"spec": {
            "backoffLimit": 0, "completionMode": "Indexed", "completions": 1, "parallelism": 1, "template": tmpl(head)}}}]
        if w0:
            hosts = w["hosts_per_slice"]
            rjobs.append({"name": "worker", "replicas": w["slices"], "template": {"spec": {
                "backoffLimit": hosts, "completionMode": "Indexed", "completions": hosts, "parallelism": hosts,
                "template": tmpl(w0)}}})
        rstat = []
        suspended = any(c["type"] == "Suspended" and c["status"] == "True" for c in self.jobset_conditions)
        for rj in ("pathways-head", "worker"):
            jobs = [j for j in att.jobs.values() if j.rjob == rj]
            if suspended:  # Kueue holds the JobSet: every child Job exists, suspended, with no pods
                rstat.append({"name": rj, "active": 0, "failed": 0, "ready": 0, "succeeded": 0, "suspended": len(jobs)})
                continue
            if rj == "worker" and not att.workers_created:
                rstat.append({"name": rj, "active": 0, "failed": 0, "ready": 0, "succeeded": 0, "suspended": 0})
                continue
            phases = {j.name: [final[p.name]["status"]["phase"] for p in att.pods.values() if p.job is j and p.name in final]
                      for j in jobs}
            failed = sum(1 for ph in phases.values() if "Failed" in ph)
            succeeded = sum(1 for ph in phases.values() if ph and all(x == "Succeeded" for x in ph))
            ready = sum(1 for j in jobs if phases[j.name] and all(
                final[p.name]["status"]["phase"] == "Running" and all(c["status"] == "True" for c in final[p.name]["status"]["conditions"] if c["type"] == "Ready")
                for p in att.pods.values() if p.job is j and p.name in final))
            active = len(jobs) - failed - succeeded if self.terminal is None else 0
            if self.terminal:
                failed = sum(1 for j in jobs if not all(p.deleted for p in att.pods.values() if p.job is j) and
                             "Failed" in phases[j.name])
            rstat.append({"name": rj, "active": active, "failed": failed, "ready": ready, "succeeded": succeeded,
                          "suspended": 0})
        status: dict[str, Any] = {"conditions": self.jobset_conditions, "restarts": self.restarts,
                                  "restartsCountTowardsMax": self.restarts, "replicatedJobsStatus": rstat}
        if self.terminal:
            status["terminalState"] = self.terminal[0]
        return {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"annotations": {"xpk.google.com/workload-create-time": fmt_ns(self.s.start - 20 * NS, 0)},
                         "creationTimestamp": fmt_ns(self.s.start, 0), "generation": 1,
                         "labels": {"kueue.x-k8s.io/queue-name": w["queue"], "xpk.google.com/workload": w["jobset"]},
                         "name": w["jobset"], "namespace": w["namespace"],
                         "resourceVersion": str(self.rng.randrange(10**6, 10**8)), "uid": self.jobset_uid},
            "spec": {"coordinator": {"jobIndex": 0, "podIndex": 0, "replicatedJob": "pathways-head"},
                     "failurePolicy": {"maxRestarts": w["max_restarts"], "restartStrategy": "Recreate"},
                     "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                     "replicatedJobs": rjobs, "startupPolicy": {"startupPolicyOrder": "InOrder"},
                     "successPolicy": {"operator": "All", "targetReplicatedJobs": ["pathways-head"]},
                     "suspend": any(c["type"] == "Suspended" and c["status"] == "True" for c in self.jobset_conditions)},
            "status": status,
        }

    def events_json(self) -> list[dict[str, Any]]:
        cut = self.s.end - parse_duration(self.s.sources["events_retention"])
        items = []
        for ev in self.events.values():
            times = [t for t in ev.times if t <= self.s.end]
            if not times or times[-1] < cut:
                continue
            if ev.obj["kind"] == "Node" and self.w["namespace"] != "default":
                continue
            items.append(self.event_json(Event(**{**ev.__dict__, "times": times}), times[-1], log=False))
        return sorted(items, key=lambda e: e["metadata"]["name"])

    # expected.yaml -----------------------------------------------------------------------------------------------
    def resolve_expected(self, files: dict[str, Any]) -> dict[str, Any] | None:
        exp = self.s.expected
        if exp is None:
            return None
        present = ids_in(files)
        out: dict[str, Any] = {"failure_class": exp["failure_class"], "status": exp["status"]}
        ents = []
        for e in exp.get("root_cause_entities") or []:
            ents.append({"kind": e["kind"], "name": self.entity_name(e)})
        out["root_cause_entities"] = ents
        ev = []
        for ref in exp.get("evidence") or []:
            i = self.evidence_id(str(ref), files)
            if i not in present:
                raise ShapeError(f"expected.evidence {ref!r} resolved to {i!r}, which is in no exported file")
            ev.append(i)
        out["evidence"] = ev
        out["fix_requires"] = list(exp.get("fix_requires") or [])
        out["data_gaps_require"] = list(exp.get("data_gaps_require") or [])
        out["tags"] = list(exp.get("tags") or [])
        return out

    def entity_name(self, e: dict[str, Any]) -> str:
        if "name" in e:
            return self.fmt(str(e["name"]), at=self.s.end)
        if "ref" in e:
            pod = self.pod_ref(e["ref"], self.s.end)
            return {"Pod": pod.name, "Node": pod.node.name if pod.node else "",
                    "Container": f"{pod.name}/{e.get('container', MAIN[pod.ref.role])}"}[e["kind"]]
        o = self.outputs.get(e.get("of", ""))
        if o is None:
            raise ShapeError(f"entity {e}: needs name, ref or of: <incident key>")
        kind = e["kind"]
        if kind == "Pod" and o.pod:
            return o.pod.name
        if kind == "Node" and (o.node or (o.pod and o.pod.node)):
            return (o.node or o.pod.node).name
        if kind == "Container" and o.pod:
            return f"{o.pod.name}/{o.container or MAIN[o.pod.ref.role]}"
        if kind == "Image" and (o.image or (o.pod and o.container)):
            return o.image or o.pod.ctrs[o.container].image
        if kind == "JobSet":
            return self.w["jobset"]
        if kind == "Job" and o.pod:
            return o.pod.job.name
        if kind == "NodePool" and (o.node or (o.pod and o.pod.node)):
            return (o.node or o.pod.node).pool
        raise ShapeError(f"entity {e}: incident item {e.get('of')!r} has nothing of kind {kind}")

    def evidence_id(self, ref: str, files: dict[str, Any]) -> str:
        if ref == "jobset":
            return self.jobset_uid
        if ref.startswith("pod:"):
            return self.pod_ref(ref[4:], self.s.end).uid
        if ref.startswith("text:"):
            hits = [e for e in reversed(files.get("logs.json", [])) if ref[5:] in json.dumps(
                e.get("textPayload") or e.get("jsonPayload") or e.get("protoPayload"), ensure_ascii=False)]
            if not hits:
                raise ShapeError(f"expected.evidence {ref!r}: no log entry contains that text")
            return hits[0]["insertId"]
        key, _, how = ref.partition(":")
        o = self.outputs.get(key)
        if o is None:
            raise ShapeError(f"expected.evidence {ref!r}: no incident item with that key")
        uids_json = {e["metadata"]["uid"] for e in files.get("events.json", {}).get("items", [])}
        if how.startswith("insert"):
            n = int(how.split(":")[1]) if ":" in how else 0
            ins = o.inserts or (o.event.inserts if o.event else [])
            if n >= len(ins):
                raise ShapeError(f"expected.evidence {ref!r}: the item exported {len(ins)} log entries")
            return ins[n]
        if how == "uid" or (not how and o.event is None and not o.inserts):
            if o.uid is None:
                raise ShapeError(f"expected.evidence {ref!r}: the item has no object uid")
            return o.uid
        if o.event is not None:
            if o.event.uid in uids_json:
                return o.event.uid
            if o.event.inserts:
                return o.event.inserts[0]
            if o.uid:
                return o.uid
            raise ShapeError(f"expected.evidence {ref!r}: the event is neither in events.json nor in logs.json")
        if o.inserts:
            return o.inserts[0]
        raise ShapeError(f"expected.evidence {ref!r}: the item exported nothing")

    # the whole build ---------------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self.make_nodes()
        self.make_attempts()
        self.apply_items_before_timeline()
        for att in self.attempts:
            self.timeline(att)
        self.apply_exits()
        self.stop_progress_on_server_exits()
        self.end_attempts()
        for att in self.attempts:
            self.background(att)
        self.incident()
        src = self.s.sources
        files: dict[str, Any] = {}
        entries = [e for t, e in sorted(self.entries, key=lambda x: (x[0], x[1]["insertId"]), reverse=True)]
        if entries:
            files["logs.json"] = entries
        if src["events_json"]:
            files["events.json"] = {"apiVersion": "v1", "items": self.events_json(), "kind": "List",
                                    "metadata": {"resourceVersion": ""}}
        if src["pods_json"]:
            files["pods.json"] = {"apiVersion": "v1", "items": [self.pod_json(p) for p in self.final_pods()],
                                  "kind": "List", "metadata": {"resourceVersion": ""}}
        if src["jobset_json"]:
            files["jobset.json"] = self.jobset_json()
        return files

    def timeline_report(self) -> str:
        lines = []
        for att in self.attempts:
            lines.append(f"attempt {att.n}: start {fmt_ns(att.start, 3)}  end {att.end and fmt_ns(att.end, 3)}")
            for k, v in sorted(att.ms.items(), key=lambda kv: kv[1]):
                lines.append(f"  {fmt_ns(v, 3)}  +{(v - self.s.start) / NS:8.1f}s  {k}")
            for p in att.pods.values():
                for c in p.ctrs.values():
                    runs = ", ".join(f"{(r.start - self.s.start) / NS:.0f}s..{'' if r.end is None else f'{(r.end - self.s.start) / NS:.0f}s'}" for r in c.runs)
                    lines.append(f"  {str(p.ref):22} {c.name:16} {p.name}  runs [{runs}]")
        return "\n".join(lines)


def go_duration(ns: int) -> str:
    """Go's time.Duration.String() for whole seconds: 10s, 2m40s, 5m0s."""
    m, sec = divmod(ns // NS, 60)
    return f"{m}m{sec}s" if m else f"{sec}s"


def ids_in(files: dict[str, Any]) -> set[str]:
    """Every citable id: LogEntry insertIds and metadata.uid of every exported object."""
    out: set[str] = set()
    for e in files.get("logs.json", []):
        out.add(e["insertId"])
    for name in ("events.json", "pods.json"):
        for o in files.get(name, {}).get("items", []):
            out.add(o["metadata"]["uid"])
    if "jobset.json" in files:
        out.add(files["jobset.json"]["metadata"]["uid"])
    return out


def dump(name: str, data: Any) -> str:
    """gcloud prints 2-space indent, kubectl 4-space; both sort keys (maps all the way down)."""
    return json.dumps(data, indent=2 if name == "logs.json" else 4, sort_keys=True, ensure_ascii=False) + "\n"


def render(scenario_path: Path) -> dict[str, str]:
    """Scenario file -> {file name: exact file text} for the case folder."""
    s = sc.load(scenario_path)
    b = Builder(s)
    files = b.run()
    out = {name: dump(name, data) for name, data in files.items()}
    exp = b.resolve_expected(files)
    if exp is not None:
        out["expected.yaml"] = f"# generated by evals/builder.py from scenario.yaml; edit that instead\n" + yaml.safe_dump(
            exp, sort_keys=False, width=120, allow_unicode=True)
    return out


GENERATED = ("logs.json", "events.json", "pods.json", "jobset.json", "expected.yaml")


def build(scenario_path: Path, out_dir: Path) -> None:
    """Write the generated files of one scenario into out_dir (removing generated files the scenario no longer makes)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = render(Path(scenario_path))
    for name in GENERATED:
        if name not in files and (out_dir / name).exists():
            (out_dir / name).unlink()
    for name, text in files.items():
        (out_dir / name).write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.builder", description=__doc__.split("\n")[0])
    p.add_argument("scenarios", nargs="*", type=Path, help="scenario.yaml files (output goes beside each)")
    p.add_argument("--all", type=Path, metavar="DIR", help="rebuild every DIR/*/scenario.yaml")
    p.add_argument("--timeline", action="store_true", help="print the computed start-up timeline instead of writing")
    args = p.parse_args(argv)
    paths = list(args.scenarios)
    if args.all:
        paths += sorted(args.all.glob("*/scenario.yaml"))
    if not paths:
        p.error("give scenario files or --all DIR")
    for path in paths:
        try:
            if args.timeline:
                b = Builder(sc.load(path))
                b.run()
                print(f"== {path}\n{b.timeline_report()}")
                continue
            build(path, path.parent)
        except ScenarioError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
        sizes = ", ".join(f"{f.name} {f.stat().st_size // 1024}K" for f in sorted(path.parent.glob("*.json")))
        print(f"built {path.parent}: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
