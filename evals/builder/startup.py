"""What a healthy start-up prints: pod creation and container start Events, server preambles and milestones."""

from __future__ import annotations

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import NS, Item, fmt_ns

from .events import Events
from .model import BACKOFF_CAP, HEAD_ORDER, Attempt, Ctr, Pod, ShapeError


class Startup(Events):
    """The background of every attempt up to its first training step."""

    def background(self, att: Attempt) -> None:
        js = self.w["jobset"]
        for job in att.jobs.values():
            if (job.rjob != "pathways-head" and not att.workers_created) or "pods_created" in att.blocked:
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
                           f"Successfully assigned {self.w['namespace']}/{pod.name} to {pod.host.name}",
                           component="default-scheduler")
            self.node_log(pod.host, pod.scheduled + self.jitter(0.05, 0.3), "kubelet", self.glog(
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
            self.node_log(pod.host, pull + self.jitter(0.01, 0.1), "container-runtime",
                          f'time="{fmt_ns(pull)}" level=info msg="PullImage \\"{img}\\""')
            took = (r.start - pull) / NS - 0.4
            self.event_pod(pod, r.start - NS // 2, "Pulled",
                           f'Successfully pulled image "{img}" in {took:.3f}s ({took:.3f}s including waiting). '
                           f"Image size: {size} bytes.", container=c.name)
            self.event_pod(pod, r.start - NS // 4, "Created", f"Created container: {c.name}", container=c.name)
            self.event_pod(pod, r.start, "Started", f"Started container {c.name}", container=c.name)
            self.node_log(pod.host, r.start + self.jitter(0.05, 0.2), "kubelet", self.glog(
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
        if c.pull_at is None:
            raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} is never pulled")
        t, backoff, first = c.pull_at, 10 * NS, None
        while t < stop:
            self.event_pod(pod, t, "Pulling", f'Pulling image "{img}"', container=c.name)
            self.node_log(pod.host, t + self.jitter(0.01, 0.1), "container-runtime",
                          f'time="{fmt_ns(t)}" level=info msg="PullImage \\"{img}\\""')
            tf = t + self.jitter(0.4, 1.6)
            self.node_log(pod.host, tf, "container-runtime", f'time="{fmt_ns(tf)}" level=error msg="PullImage '
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
