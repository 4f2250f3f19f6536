"""Incident items from Google Cloud rather than the cluster: Cloud Audit Logs and cluster-autoscaler visibility."""

from __future__ import annotations

import json
from typing import Any

from pathways_workload.evals.scenarios import NS, Item

from .logs import Logs
from .model import Pod, ShapeError


class Cloud(Logs):
    """The audit and autoscaler items."""

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
        if res in ("k8s_cluster", "gke_cluster"):
            resource = {"type": res, "labels": self.res_cluster()["labels"]}
        elif node:
            resource = self.res_gce(node)
        elif "compute." in pp["methodName"]:  # a VM that never came to be (a refused insert): no instance id yet
            resource = {"type": "gce_instance", "labels": {"project_id": self.w["project"], "instance_id": "",
                                                           "zone": self.zone}}
        else:
            resource = self.res_cluster()
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
