"""A fixture served by the loopback fakes (Cloud Logging, Kubernetes, Cloud Monitoring), and the diagnose_live arguments that read it (shared by faults and load)."""

from __future__ import annotations

import random
from pathlib import Path

from pathways_workload.skill.diagnose_live import diagnose_live
from pathways_workload.skill.reading.records import format_ns, parse_ts
from pathways_workload.skill.reading.sources.cloud_logging import Limits

from .kube_server import FakeKube, KubeServer, load_objects
from .logging_server import FakeLogging, LoggingServer, load_entries, project_of
from .monitoring_server import MonitoringFake, load_series

FAST = dict(backoff_initial_s=0.001, backoff_max_s=0.005, rate_per_minute=60_000, burst=1000)
JOBSET_LABEL = "k8s-pod/jobset_sigs_k8s_io/jobset-name"


def fast(**kw) -> Limits:
    """Limits with tiny backoffs and no pacing, for tests; anything else as given."""
    return Limits(**{**FAST, **kw})


class LiveCase:
    """`with LiveCase(case) as lv: lv.diagnose(...)`: the case's entries in FakeLogging, its objects in FakeKube."""

    def __init__(self, case: Path, entries: list[dict] | None = None):
        self.case = case
        self.entries = entries if entries is not None else load_entries(case)
        self.objects = load_objects(case)
        self.project = project_of(self.entries)
        self.logging = FakeLogging(self.entries, project=self.project)
        self.kube = FakeKube(self.objects)
        times = [parse_ts(e.get("timestamp")) for e in self.entries]
        self.start, self.end = format_ns(min(times)), format_ns(max(times))
        rl = next(e for e in self.entries if (e.get("resource") or {}).get("labels", {}).get("cluster_name"))["resource"]["labels"]
        self.cluster, self.location = rl["cluster_name"], rl.get("location", "us-east5")
        self.jobset = next((o["metadata"]["name"] for o in self.objects if o.get("kind") == "JobSet"), None) or next(
            e["labels"][JOBSET_LABEL] for e in self.entries if JOBSET_LABEL in (e.get("labels") or {}))
        # what an engineer would pass as --namespace: the JobSet's, else its pods' (most cases run in default)
        self.namespace = next((o["metadata"].get("namespace") for o in self.objects if o.get("kind") == "JobSet"
                               and o["metadata"].get("namespace")), None) or next(
            (e["resource"]["labels"]["namespace_name"] for e in self.entries
             if (e.get("resource") or {}).get("type") == "k8s_container"
             and (e.get("labels") or {}).get(JOBSET_LABEL) == self.jobset), "default")

        self.series = load_series(case, self.cluster, self.project, self.location)  # served by a Monitoring fake
        if self.series:  # the window ends with the data, its last series point included (as replay's does)
            self.end = format_ns(max(parse_ts(self.end), max(s.points[-1][0] for s in self.series)))
        self._ms: MonitoringFake | None = None

    def __enter__(self):
        self._ls = LoggingServer(self.logging).__enter__()
        self._ks = KubeServer(self.kube).__enter__()
        self._ms = MonitoringFake(self.series).__enter__()
        return self

    def __exit__(self, *exc):
        self._ls.__exit__(*exc)
        self._ks.__exit__(*exc)
        if self._ms is not None:
            self._ms.__exit__(*exc)

    @property
    def logging_url(self) -> str:
        return self._ls.url

    @property
    def kube_url(self) -> str:
        return self._ks.url

    @property
    def monitoring_url(self) -> str | None:
        return self._ms.url if self._ms is not None else None

    def args(self, **kw) -> dict:
        args = dict(project=self.project, location=self.location, cluster=self.cluster, jobset=self.jobset,
                    namespace=self.namespace, start=self.start, end=self.end, logging_endpoint=self._ls.url,
                    kube_server=self._ks.url, limits=fast(), rng=random.Random(7),
                    monitoring_endpoint=self.monitoring_url)
        args.update(kw)
        return args

    def diagnose(self, **kw):
        return diagnose_live(**self.args(**kw))
