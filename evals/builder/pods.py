"""pods.json: container specs and statuses, labels, node selectors and conditions of the pods that still exist."""

from __future__ import annotations

import hashlib
from typing import Any

from pathways_workload.evals.scenarios import NS, fmt_ns

from .model import MAIN, SIDECAR, Ctr, Pod, Run
from .world import World


class Pods(World):
    """`kubectl get pods -o json` of the last attempt."""

    def ctr_spec(self, pod: Pod, c: Ctr) -> dict[str, Any]:
        w = self.w
        head_env = [{"name": "PATHWAYS_HEAD", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}}]
        spec: dict[str, Any] = {"name": c.name, "image": c.image, "imagePullPolicy": "Always",
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File", "resources": {}}
        if c.key == "pathways-rm":
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
        elif c.key == "pathways-proxy":
            spec.update(args=[a.replace(self.rm_host, "$(PATHWAYS_HEAD)") for a in self.proxy_args()],
                        ports=[{"containerPort": 29000, "protocol": "TCP"}], env=head_env,
                        resources={"limits": {"cpu": "16", "memory": "100G"},
                                   "requests": {"cpu": "16", "memory": "100G"}}, restartPolicy="Always")
        elif c.name == SIDECAR:
            spec.update(ports=[{"containerPort": 50051, "protocol": "TCP"}], restartPolicy="Always",
                        env=[{"name": "GRPC_SERVER_ADDRESS", "value": "0.0.0.0:50051"},
                             {"name": "PYTHONUNBUFFERED", "value": "1"}])
        elif c.key == "jax-tpu":
            target = w["backend_target"] or "grpc://$(PATHWAYS_HEAD):29000"
            cmd = w["client_command"] or ("python3 -m MaxText.train MaxText/configs/base.yml "
                                          f"run_name={w['jobset']} base_output_directory=gs://{w['project']}-runs/{w['jobset']}")
            spec.update(command=["bash", "-c", self.fmt(cmd)],
                        env=head_env + [{"name": "JAX_PLATFORMS", "value": "proxy"},
                                        {"name": "JAX_BACKEND_TARGET", "value": target},
                                        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"}]
                        + [{"name": str(k), "value": self.fmt(str(v))} for k, v in w["client_env"].items()])
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
                                         "value": f"{w['jobset']}-{self.launcher.worker_job}-0-0.{w['jobset']}"}],
                        resources={"limits": {"google.com/tpu": str(w["chips_per_host"])},
                                   "requests": {"google.com/tpu": str(w["chips_per_host"])}},
                        volumeMounts=[{"mountPath": "/tmp", "name": "shared-tmp"}])
        return spec

    def main_ctr(self, pod: Pod) -> Ctr:
        """The container whose state is the pod's phase: the client, or the RM in a headless head."""
        c = pod.ctrs[MAIN[pod.ref.role]]
        return pod.ctrs["pathways-rm"] if c.hidden else c

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
        if pod.ref.role == "worker" and self.launcher.label:
            lab[self.launcher.label] = js
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
            assert r.end is not None  # a terminated run
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
        init = [c for c in pod.ctrs.values() if c.init and not c.hidden]
        main = [c for c in pod.ctrs.values() if not c.init and not c.hidden]
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
            spec["nodeName"] = pod.host.name
        statuses = {c.name: self.ctr_status(pod, c, end) for c in pod.ctrs.values() if not c.hidden}
        conds = []
        ts = lambda t: fmt_ns(t, 0)  # noqa: E731
        if pod.scheduled is None or pod.scheduled > end:
            last = self.events_for(pod, "FailedScheduling")
            conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                          "message": last.message if last else "", "lastProbeTime": None,
                          "lastTransitionTime": ts(pod.created + NS)})
            phase = "Pending"
        else:
            mc = self.main_ctr(pod)
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
            status.update(hostIP=pod.host.ip, hostIPs=[{"ip": pod.host.ip}], podIP=pod.host.ip,
                          podIPs=[{"ip": pod.host.ip}], startTime=ts(pod.scheduled))
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

    def final_pods(self) -> list[Pod]:
        att = self.attempts[-1]
        return sorted((p for p in att.pods.values() if ((p.ref.role == "head" and "pods_created" not in att.blocked)
                                                        or att.workers_created)
                       and not p.deleted and p.created <= self.s.end and att.start <= self.s.end),
                      key=lambda p: p.name)
