"""Time series beside the logs: Cloud Monitoring API v3 `projects.timeSeries.list` responses and Managed Service for
Prometheus `query_range` results, recognised by content (any file name) and read into one typed shape."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeGuard

from ..records import format_ns, parse_ts

NS = 1_000_000_000
# Prometheus names of the Cloud Monitoring types read here (Managed Service for Prometheus writes `kubernetes.io/a/b_c`
# as `kubernetes_io:a_b_c`, which cannot be turned back by rule: `/` and `_` both became `_`).
PROMQL_NAMES = {
    "kubernetes_io:container_accelerator_duty_cycle": "kubernetes.io/container/accelerator/duty_cycle",
    "kubernetes_io:container_accelerator_memory_used": "kubernetes.io/container/accelerator/memory_used",
    "kubernetes_io:container_accelerator_memory_total": "kubernetes.io/container/accelerator/memory_total",
    "kubernetes_io:node_accelerator_duty_cycle": "kubernetes.io/node/accelerator/duty_cycle",
    "kubernetes_io:node_accelerator_memory_used": "kubernetes.io/node/accelerator/memory_used",
    "kubernetes_io:node_accelerator_memory_total": "kubernetes.io/node/accelerator/memory_total",
    "kubernetes_io:node_interruption_count": "kubernetes.io/node/interruption_count",
    "kubernetes_io:node_pool_interruption_count": "kubernetes.io/node_pool/interruption_count",
    "kubernetes_io:node_status_condition": "kubernetes.io/node/status_condition",
    "kube_jobset_restarts": "prometheus.googleapis.com/kube_jobset_restarts/gauge",
}
# Labels of a Prometheus sample that are resource labels in Cloud Monitoring's shape (the rest are metric labels).
RESOURCE_KEYS = ("project_id", "location", "cluster_name", "namespace_name", "pod_name", "container_name",
                 "node_name", "nodepool_name", "instance", "job")
MAX_PROBLEMS = 5  # lines per file about series that cannot be read (then one line for the rest)
SCOPE_KEYS = frozenset({"project_id", "location", "cluster_name"})  # the same for every series of one cluster: not named


@dataclass(frozen=True)
class Series:
    """One time series: what is measured (type, labels), about what (resource), and its points, oldest first."""

    metric: str  # the Cloud Monitoring metric type (a Prometheus name we do not know stays as it is)
    labels: dict[str, str]  # metric labels (interruption_type, condition, accelerator_id ...)
    resource_type: str  # k8s_container, k8s_node, prometheus_target ...
    resource: dict[str, str]  # resource labels (cluster_name, namespace_name, pod_name, node_name ...)
    metadata: dict[str, str]  # user and system metadata labels (gce_topology_host), when the export asked for them
    kind: str  # GAUGE | DELTA | CUMULATIVE ('' for Prometheus)
    points: tuple[tuple[int, float], ...]  # (end time ns, value), oldest first
    origin: str  # the file it came from

    @property
    def key(self) -> str:
        """The series' name in citations: its type and the labels that tell it from its siblings (not the cluster's)."""
        named = {**{k: v for k, v in self.resource.items() if k not in SCOPE_KEYS}, **self.labels}
        return self.metric + "{" + ",".join(f"{k}={v}" for k, v in sorted(named.items())) + "}"

    def point_id(self, ts: int) -> str:
        """A point's citable id: the series' key and the point's end time (both read off the export, so stable)."""
        return f"{self.key}@{format_ns(ts)}"

    @property
    def pod(self) -> str | None:
        return self.resource.get("pod_name")

    @property
    def node(self) -> str | None:
        return self.resource.get("node_name")


@dataclass
class SeriesSet:
    """Every series read from an export folder (or a live read), with what could not be read."""

    series: list[Series] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def take(self, doc: dict, origin: str) -> None:
        """Read one recognised document (is_series_doc) into series; what cannot be read is one problem line each."""
        self.files.add(origin)
        if "timeSeries" in doc or ("metric" in doc and "points" in doc):
            raw = doc.get("timeSeries") if "timeSeries" in doc else [doc]
            if not isinstance(raw, list):
                self.problems.append(f"{origin}: timeSeries is not a list; skipped it")
                return
            for i, ts in enumerate(raw, 1):
                self._add(monitoring_series(ts, origin), origin, i)
        else:
            data = doc.get("data")
            if doc.get("status") != "success" or not isinstance(data, dict) or data.get("resultType") != "matrix":
                why = doc.get("error") or (f"resultType {data.get('resultType')!r}" if isinstance(data, dict) else "no data")
                self.problems.append(f"{origin}: a Prometheus answer that is not a range result ({why}); skipped it")
                return
            for i, res in enumerate(data.get("result") or [], 1):
                self._add(prometheus_series(res, origin), origin, i)

    def _add(self, s: Series | str, origin: str, i: int) -> None:
        if not isinstance(s, str):
            self.series.append(s)
            return
        mine = [p for p in self.problems if p.startswith(f"{origin}: ")]
        if len(mine) < MAX_PROBLEMS:
            self.problems.append(f"{origin}: time series {i} {s}; skipped it")
        elif len(mine) == MAX_PROBLEMS:
            self.problems.append(f"{origin}: more time series that cannot be read; skipped them")

    @property
    def last_ts(self) -> int:
        """The end time of the latest point of any series (0 without series)."""
        return max((s.points[-1][0] for s in self.series), default=0)

    def of(self, metric: str) -> list[Series]:
        return [s for s in self.series if s.metric == metric]


def is_series_doc(doc: object) -> TypeGuard[dict]:
    """A Monitoring API list response (or one TimeSeries), or a Prometheus HTTP API answer."""
    if not isinstance(doc, dict) or "kind" in doc:
        return False
    return "timeSeries" in doc or ("metric" in doc and "points" in doc and "resource" in doc) \
        or (doc.get("status") in ("success", "error") and "data" in doc or "errorType" in doc)


def _strs(d: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in d.items() if isinstance(v, (str, int, float))} if isinstance(d, dict) else {}


def _value(v: object) -> float | None:
    """A TypedValue's number: doubleValue, int64Value (a string in proto3 JSON) or boolValue; None otherwise."""
    if not isinstance(v, dict):
        return None
    for key in ("doubleValue", "int64Value"):
        if key in v:
            try:
                x = float(v[key])
            except (TypeError, ValueError):
                return None
            return x if math.isfinite(x) else None
    if isinstance(v.get("boolValue"), bool):
        return 1.0 if v["boolValue"] else 0.0
    return None


def monitoring_series(ts: object, origin: str) -> Series | str:
    """One TimeSeries of the Monitoring API v3 as a Series, or why it cannot be read."""
    if not isinstance(ts, dict) or not isinstance(ts.get("metric"), dict) or not ts["metric"].get("type"):
        return "has no metric.type"
    res: dict = ts["resource"] if isinstance(ts.get("resource"), dict) else {}
    meta: dict = ts["metadata"] if isinstance(ts.get("metadata"), dict) else {}
    points = []
    for p in ts.get("points") or []:
        end = parse_ts((p.get("interval") or {}).get("endTime")) if isinstance(p, dict) else 0
        val = _value(p.get("value")) if isinstance(p, dict) else None
        if end and val is not None:
            points.append((end, val))
    if not points:
        return "has no point with an end time and a number"
    metadata = {**_strs(meta.get("systemLabels")), **_strs(meta.get("userLabels"))}
    return Series(str(ts["metric"]["type"]), _strs(ts["metric"].get("labels")), str(res.get("type") or ""),
                  _strs(res.get("labels")), metadata, str(ts.get("metricKind") or ""), _sorted(points), origin)


def prometheus_series(res: object, origin: str) -> Series | str:
    """One `result` element of a Prometheus range query as a Series, or why it cannot be read."""
    if not isinstance(res, dict) or not isinstance(res.get("metric"), dict):
        return "has no metric labels"
    labels = _strs(res["metric"])
    name = labels.pop("__name__", "")
    if not name:
        return "has no __name__ (an aggregation drops it: keep it with `by (__name__, ...)`)"
    points = []
    for pair in res.get("values") or ([res["value"]] if "value" in res else []):
        try:
            t, v = float(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if math.isfinite(t) and math.isfinite(v):
            points.append((int(round(t * NS)), v))
    if not points:
        return "has no [time, value] sample"
    resource = {k: labels.pop(k) for k in RESOURCE_KEYS if k in labels}
    rtype = labels.pop("monitored_resource", "prometheus_target")
    metadata = {k.split(":", 1)[-1]: labels.pop(k) for k in [k for k in labels if k.startswith("metadata_")]}
    metadata = {k.removeprefix("metadata_user_").removeprefix("metadata_system_"): v for k, v in metadata.items()}
    return Series(PROMQL_NAMES.get(name, name), labels, rtype, resource, metadata, "", _sorted(points), origin)


def _sorted(points: Iterable[tuple[int, float]]) -> tuple[tuple[int, float], ...]:
    """Points oldest first, one per time ("points are returned in reverse time order" by the Monitoring API)."""
    return tuple(sorted(dict(points).items()))
