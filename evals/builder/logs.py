"""LogEntries for logs.json: placeholders in scenario text, monitored resources, container and node logs."""

from __future__ import annotations

import re
from typing import Any

from pathways_workload.evals.scenarios import fmt_ns, glog_stamp

from .model import Node, Pod
from .world import World


class Logs(World):
    """Turns text into exported log entries with the resource and labels Cloud Logging gives them."""

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
                return p.container(cname).cid
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
             severity: str | None = None, json_payload: dict[str, Any] | None = None) -> str:
        """A container log entry: textPayload, or jsonPayload when the line was a JSON record."""
        c = pod.ctr(container)
        if not self.s.sources["container_logs"] or (c is not None and c.hidden):
            return ""
        only = self.s.sources["containers"]
        if only is not None and container not in only and (c is None or c.key not in only):
            return ""
        sev = severity or ("INFO" if stream == "stdout" else "ERROR")
        payload = ("textPayload", text) if json_payload is None else ("jsonPayload", json_payload)
        return self.entry(ts, stream, self.res_pod(pod, container), self.container_labels(pod), sev, payload)

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
