"""The JobSet: its conditions, the jobset and restart items, deleting active Jobs, and jobset.json."""

from __future__ import annotations

from typing import Any

from pathways_workload.evals.scenarios import NS, Item, fmt_ns

from .events import Events
from .model import MAIN, Attempt


class JobSetPart(Events):
    """The JobSet controller's view of the run."""

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

    def jobset_labels(self) -> dict[str, str]:
        """The JobSet's labels: the Kueue queue and the launcher's workload label."""
        lab = {"kueue.x-k8s.io/queue-name": self.w["queue"]}
        if self.launcher.label:
            lab[self.launcher.label] = self.w["jobset"]
        return lab

    def jobset_annotations(self) -> dict[str, str]:
        """xpk stamps the creation time; the other launchers add nothing."""
        if self.w["launcher"] != "xpk":
            return {}
        return {"xpk.google.com/workload-create-time": fmt_ns(self.s.start - 20 * NS, 0)}

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
            rjobs.append({"name": self.launcher.worker_job, "replicas": w["slices"], "template": {"spec": {
                "backoffLimit": hosts, "completionMode": "Indexed", "completions": hosts, "parallelism": hosts,
                "template": tmpl(w0)}}})
        rstat = []
        suspended = any(c["type"] == "Suspended" and c["status"] == "True" for c in self.jobset_conditions)
        for rj in ("pathways-head", self.launcher.worker_job):
            jobs = [j for j in att.jobs.values() if j.rjob == rj]
            if suspended:  # Kueue holds the JobSet: every child Job exists, suspended, with no pods
                rstat.append({"name": rj, "active": 0, "failed": 0, "ready": 0, "succeeded": 0, "suspended": len(jobs)})
                continue
            if rj != "pathways-head" and not att.workers_created:
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
            "metadata": {"annotations": self.jobset_annotations(),
                         "creationTimestamp": fmt_ns(self.s.start, 0), "generation": 1,
                         "labels": self.jobset_labels(),
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
