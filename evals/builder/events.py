"""Kubernetes Events: emitted and aggregated per object and reason, the `event` item, and events.json."""

from __future__ import annotations

from typing import Any

from pathways_workload.evals.scenarios import NS, Item, fmt_ns, parse_duration

from .logs import Logs
from .model import Event, Node, Pod, ShapeError


class Events(Logs):
    """Events on pods, nodes and cluster objects, each also logged to the `events` log."""

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
            where = "initContainers" if pod.container(container).init else "containers"
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
        c = pod.ctr(container) if container else None
        if c and c.hidden:  # a headless launcher's client runs outside the cluster: no kubelet events of it
            return Event("", "", self.pod_obj(pod), reason, message, type_, component, host, self.res_pod(pod), {})
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
            kind, name = obj["kind"], self.fmt(obj["name"], at=at)
            return kind, name, obj.get("uid") or self.object_uid(kind, name), obj.get("apiVersion", "v1")
        raise ShapeError(f"bad event object {obj!r} (jobset, job/<rjob>-<index>, {{kind, name}}, or use pod:/node:)")

    def object_uid(self, kind: str, name: str) -> str:
        """The uid of an object the scenario names without one: drawn once, so repeats aggregate into one Event."""
        if (kind, name) not in self.object_uids:
            self.object_uids[(kind, name)] = self.uid()
        return self.object_uids[(kind, name)]

    def events_for(self, pod: Pod, reason: str) -> Event | None:
        found = [e for e in self.events.values() if e.obj.get("uid") == pod.uid and e.reason == reason and e.times]
        return found[-1] if found else None

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
