"""The base of a build: its state, seeded ids, and the cluster's nodes, attempts, pods and references to them."""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING, Any

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import NS, Item, PodRef, Scenario, parse_duration

from .launchers import LAUNCHERS
from .model import HEAD_ORDER, IMAGE_BASE, SIDECAR, Attempt, Ctr, Event, Job, Node, Output, Pod, ShapeError


class World:
    """One build of one scenario; all state lives here (the other parts are mixins over it)."""

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
        self.node_since: dict[str, int] = {}  # a replacement node -> when it joined (restart.replace_nodes)
        self.host_of: dict[str, str] = {}  # a replacement node -> the node whose physical host it landed on
        self.pools: dict[str, str] = {}
        self.later_logs: list[tuple[Item, Pod, Ctr, int]] = []
        self.object_uids: dict[tuple[str, str], str] = {}  # (kind, name) -> uid, for `object:` without one
        self.attempts: list[Attempt] = []
        self.project_number = str(self.w["project_number"] or self.rng.randrange(10**11, 10**12))
        self.zone = self.w["location"] if self.w["location"].count("-") == 2 else self.w["location"] + "-a"
        self.rm_host = f"{self.w['jobset']}-pathways-head-0-0.{self.w['jobset']}"
        self.launcher = LAUNCHERS[self.w["launcher"]]

    # ids ---------------------------------------------------------------------------------------------------------
    if TYPE_CHECKING:  # what one mixin calls of another's (they all meet in core.Builder), typed once here
        def fmt(self, text: str, pod: Pod | None = None, node: Node | None = None, at: int = 0,
                container: str | None = None) -> str: ...
        def repeats(self, spec: dict[str, Any] | None, t: int, stop: int | None = None) -> list[int]: ...
        def set_condition(self, t: int, type_: str, status: str, reason: str, message: str) -> dict[str, Any]: ...
        def client(self, att: Attempt, head: Pod, cl: Ctr) -> None: ...
        def chatter(self, att: Attempt, head: Pod, rm: Ctr, workers: list[Pod]) -> None: ...
        def ends_before(self, att: Attempt, t: int) -> bool: ...
        def event_pod(self, pod: Pod, ts: int, reason: str, message: str, type_: str = "Normal",
                      container: str | None = None, component: str = "kubelet") -> Event: ...
        def events_for(self, pod: Pod, reason: str) -> Event | None: ...
        def pod_json(self, pod: Pod) -> dict[str, Any]: ...
        def rm_args(self) -> list[str]: ...
        def proxy_args(self) -> list[str]: ...

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
        base = self.w["image_base"] or IMAGE_BASE
        if container == "pathways-proxy":
            return f"{base}/proxy_server:{self.w['proxy_tag']}"
        if container == "jax-tpu":
            return self.w["user_image"]
        if container == SIDECAR:
            tag = str(self.w["colocated_python"])
            return tag if "/" in tag else f"{base}-colocated-python/sidecar:{tag}"
        return self.w["server_image"] or f"{base}/server:{self.w['server_tag']}"

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
                self.replace_nodes(r, start)
        for att in self.attempts:
            self.make_pods(att)

    def replace_nodes(self, r: Item, start: int) -> None:
        """A restart's `replace_nodes`: new nodes for those TPU slots from `start` (on the old hosts with same_host)."""
        for ref in r.spec.get("replace_nodes") or []:
            kind, a, b = sc.parse_node_ref(str(ref))
            old = next(n for n in reversed(self.nodes) if n.kind == kind == "tpu" and n.index == (a, b))
            ip = f"10.{self.rng.randrange(128, 200)}.{self.rng.randrange(0, 255)}.{self.rng.randrange(2, 250)}"
            new = Node(f"gke-{self.w['cluster']}-{old.pool}-{self.pools[old.pool]}-{self.alnum(4)}", old.pool, "tpu",
                       old.index, self.uid(), str(self.rng.randrange(10**18, 10**19)), ip, self.uid().replace("-", ""))
            self.nodes.append(new)
            self.node_since[new.name] = start
            if r.spec.get("same_host"):
                self.host_of[new.name] = self.host_of.get(old.name, old.name)

    def make_pods(self, att: Attempt) -> None:
        js = self.w["jobset"]
        head_job = Job(f"{js}-pathways-head-0", self.uid(), "pathways-head", 0)
        att.jobs[head_job.name] = head_job
        t = att.start + self.jitter(0.2, 0.6)
        head = Pod(PodRef("head", attempt=att.n), f"{head_job.name}-0-{self.alnum(5)}", self.uid(), head_job,
                   self.node_at("cpu", 0) if self.w["cpu_nodes"] else None, t,
                   {c: self.head_ctr(c) for c in HEAD_ORDER})
        att.pods[("head", 0, 0)] = head
        for s in range(self.w["slices"]):
            job = Job(f"{js}-{self.launcher.worker_job}-{s}", self.uid(), self.launcher.worker_job, s)
            att.jobs[job.name] = job
            for v in range(self.w["hosts_per_slice"]):
                node = next((n for n in reversed(self.nodes) if n.kind == "tpu" and n.index == (s, v)
                             and self.node_since.get(n.name, 0) <= att.start), None)
                ctrs = {SIDECAR: Ctr(SIDECAR, self.image(SIDECAR), True)} if self.w["colocated_python"] else {}
                ctrs["pathways-worker"] = Ctr("pathways-worker", self.image("pathways-worker"), False)
                att.pods[("worker", s, v)] = Pod(
                    PodRef("worker", s, v, att.n), f"{job.name}-{v}-{self.alnum(5)}", self.uid(), job, node, 0, ctrs)
        for pod in att.pods.values():
            for c in pod.ctrs.values():
                c.cid = self.hexs(64)
                c.tid = self.rng.randrange(40, 9000)

    def head_ctr(self, key: str) -> Ctr:
        """A head container as the launcher names and declares it (RM and proxy native sidecars or not)."""
        lw = self.launcher
        if key == "jax-tpu":
            return Ctr(lw.client or key, self.image(key), False, key=key, hidden=lw.client is None)
        return Ctr(key, self.image(key), lw.sidecar_head)

    def attempt_at(self, t: int) -> Attempt:
        for att in reversed(self.attempts):
            if t >= att.start:
                return att
        return self.attempts[0]

    def ctr_of(self, pod: Pod, item: Item) -> Ctr:
        """The container an item names (by the builder's name or the launcher's), else the pod's main one."""
        c = pod.ctr(item.spec.get("container"))
        if c is None:
            raise ShapeError(f"{item.where()}: {pod.ref} has no container {item.spec.get('container')!r}")
        return c

    def targets(self, item: Item) -> tuple[Output, list[tuple[int, Pod, Ctr]]]:
        """The pods an item writes to and the container of each (ctr_of); its output names the first pod, container
        and image."""
        o = self.out(item)
        pods = self.pods_of(item)
        o.pod = pods[0]
        out = []
        for n, pod in enumerate(pods):
            c = self.ctr_of(pod, item)
            o.container = o.container or c.name
            o.image = o.image or c.image
            out.append((n, pod, c))
        return o, out

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

    def out(self, it: Item) -> Output:
        return self.outputs.setdefault(it.key or f"#{it.index}", Output())
