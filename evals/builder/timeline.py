"""The timeline of a run: scheduling, container starts, start-up milestones, exits, crash loops, attempt ends."""

from __future__ import annotations

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import NS, Item, fmt_ns, parse_duration

from .model import BACKOFF_CAP, HEAD_ORDER, SIDECAR, Attempt, Pod, Run, ShapeError, go_duration
from .world import World


class Timeline(World):
    """When every pod is scheduled, every container runs, and every milestone is reached."""

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
                c = self.ctr_of(pod, it)
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
            pull = self.jitter(14, 32) if c.key == "jax-tpu" else self.jitter(3, 9)
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
            ready = self.start_containers(head, list(HEAD_ORDER), head.placed, att)
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
                started = self.start_containers(pod, list(pod.ctrs), pod.placed, att)
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
                c = self.ctr_of(pod, it)
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
                c = self.ctr_of(pod, it)
                c.waiting = (it.spec["reason"], it.spec.get("message", ""))
                self.out(it).pod, self.out(it).uid, self.out(it).container = pod, pod.uid, c.name

    def crashloop(self, it: Item) -> None:
        """A container that dies `after` each start, is restarted with kubelet back-off, and logs `text` each time."""
        pod = self.pods_of(it)[0]
        c = self.ctr_of(pod, it)
        if not c.runs:
            raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} never starts, so it cannot crash-loop")
        att = self.attempts[pod.attempt]
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
                    if c.key in ("jax-tpu", SIDECAR) or not c.runs or c.runs[0].end is None:
                        continue
                    t = c.runs[0].end
                    att.progress_stop = t if att.progress_stop is None else min(att.progress_stop, t)

    def end_attempts(self) -> None:
        """Containers still running when an attempt ends (restart, terminal JobSet) get SIGTERM'd (a node that a
        `condition` item took away reports no Killing: its kubelet is not there to)."""
        gone = {self.node_ref(str(i.spec["node"]), i.at).name: i.at for i in self.s.items
                if i.kind == "condition" and i.spec.get("condition", "Ready") == "Ready"}
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
                        if pod.node and not gone.get(pod.node.name, r.end + 1) <= r.end:
                            self.event_pod(pod, r.end - NS // 3, "Killing", f"Stopping container {c.name}",
                                           "Normal", c.name)
