"""Live diagnosis: a workload read from Cloud Logging and the Kubernetes API, with the engine replay uses.

`diagnose_live(...)` builds the Scope, reads through `LiveSource` (skill/reading/sources/cloud_logging.py + kube.py) and returns the
same Diagnosis contract; `save_dir` writes everything fetched as a replay folder, so `diagnose --replay DIR --at END`
gives the same verdict. `diagnose_log_analytics(...)` reads the same queries from a Log Analytics linked dataset
(skill/reading/sources/log_analytics.py). Environment: PATHWAYS_WORKLOAD_LOGGING_ENDPOINT, PATHWAYS_WORKLOAD_KUBE_SERVER,
PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from .diagnosis import Diagnosis
from .errors import InputError, SourceError
from .pipeline import run
from .telling.explain import build
from .understanding.queries import Scope
from .reading.records import format_ns, parse_ts, time_arg
from .reading.sources.cloud_logging import CloudLoggingSource, Deadline, Limits, LiveSource

ENV_LOGGING = "PATHWAYS_WORKLOAD_LOGGING_ENDPOINT"
ENV_KUBE = "PATHWAYS_WORKLOAD_KUBE_SERVER"
ENV_BIGQUERY = "PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT"
NS = 1_000_000_000
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str) -> int:
    """'2h', '90m', '1d', '45s', '1h30m' -> nanoseconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhdw])", str(text).strip().lower())
    if not parts or re.sub(r"[\d.\s smhdw]", "", str(text).lower()):
        raise InputError(f"--since {text!r}: not a duration (e.g. 2h, 90m, 1d)")
    return int(sum(float(n) * _UNITS[u] for n, u in parts) * NS)


_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _kube_name(flag: str, value: str, pattern: re.Pattern[str], limit: int) -> None:
    """Names go into label selectors and URL paths: only what Kubernetes itself accepts (DNS-1123) gets there."""
    if len(value) > limit or not pattern.fullmatch(value):
        raise InputError(f"{flag} {value!r}: not a Kubernetes name (lower-case letters, digits and '-', "
                         f"at most {limit} characters)")


def _check_deadline(seconds: float) -> None:
    if not seconds > 0 or seconds == float("inf"):  # also refuses NaN
        raise InputError(f"--deadline {seconds:g}: must be a positive number of seconds (e.g. 60)")


def _workload_window(jobset: str, namespace: str | None, start: str | None, end: str | None,
                     since: str | None) -> tuple[str, int, int]:
    """The namespace (default "default") and the [start, end] window in ns of a live read, checked: Kubernetes names,
    RFC 3339 times, a window that is not empty."""
    namespace = namespace or "default"
    _kube_name("--jobset", jobset, _SUBDOMAIN, 253)
    _kube_name("--namespace", namespace, _LABEL, 63)
    end_ns = time_arg("--end", end) or time.time_ns()
    start_ns = time_arg("--start", start) or end_ns - parse_since(since or "2h")
    if start_ns >= end_ns:
        raise InputError(f"the window is empty: start {format_ns(start_ns)} is not before end {format_ns(end_ns)}")
    return namespace, start_ns, end_ns


def diagnose_live(project: str, location: str | None, cluster: str, jobset: str, namespace: str | None = "default",
                  start: str | None = None, end: str | None = None, since: str | None = "2h", no_kube: bool = False,
                  logging_endpoint: str | None = None, kube_server: str | None = None, save_dir: str | Path | None = None,
                  deadline_s: float = 120.0, *, limits: Limits | None = None,
                  progress: Callable[[str], None] | None = None, sleep: Callable[[float], None] = time.sleep,
                  rng=None, no_metrics: bool = False, monitoring_endpoint: str | None = None) -> Diagnosis:
    """Diagnose a live JobSet. Window: [start, end], or the `since` before `end` (default: now). Read-only."""
    missing = [f"--{n}" for n, v in (("project", project), ("cluster", cluster), ("jobset", jobset)) if not v]
    if not location and not no_kube and not (kube_server or os.environ.get(ENV_KUBE)):
        missing.append("--location")
    if missing:
        raise InputError("live diagnosis needs " + ", ".join(missing) + " (or --replay DIR for an export)")
    _check_deadline(deadline_s)
    namespace, start_ns, end_ns = _workload_window(jobset, namespace, start, end, since)
    limits = limits or Limits(deadline_s=deadline_s)
    deadline = Deadline(limits.deadline_s)
    say = progress or (lambda _m: None)
    logs = CloudLoggingSource(project, endpoint=logging_endpoint or os.environ.get(ENV_LOGGING) or None,
                              limits=limits, deadline=deadline, progress=say, sleep=sleep, rng=rng)
    kube = None
    if not no_kube:
        from .reading.sources.kube import KubernetesSource

        kube = KubernetesSource(jobset=jobset, namespace=namespace, project=project, location=location or "",
                                cluster=cluster, server=kube_server or os.environ.get(ENV_KUBE) or None,
                                deadline=deadline, progress=say)
    source = LiveSource(logs, kube, keep=save_dir is not None)
    objects = source.objects()
    if not no_metrics:
        _read_series(source, project, cluster, namespace, jobset, start_ns, end_ns, monitoring_endpoint,
                     logging_endpoint or os.environ.get(ENV_LOGGING) or None, deadline, say)
    scope = Scope(jobset=jobset, start_ns=start_ns, end_ns=end_ns, namespace=namespace, cluster=cluster,
                  project=project, location=location)

    def nothing_read() -> SourceError:  # say what was read instead, and why nothing was
        if source.stats.timed_out:  # an endpoint that never answered: the flags are not what to check
            return SourceError(f"nothing was read for JobSet {namespace}/{jobset}: {source.stats.timed_out}")
        why = "; ".join(source.stats.gaps[:2]) or "no entries matched in the window"
        return SourceError(f"nothing was read for JobSet {namespace}/{jobset} between {format_ns(start_ns)} and "
                           f"{format_ns(end_ns)} (no log entries, no Kubernetes objects): {why}; check --project, "
                           "--cluster, --jobset, --namespace and the window")
    analysis = run(source, scope, objects, now_ns=end_ns, nothing_read=nothing_read)
    if save_dir is not None:
        path = write_replay_folder(save_dir, list(source.entries.values()), objects, jobset=jobset, end_ns=end_ns)
        say(f"saved {len(source.entries)} log entries and {len(objects)} objects to {path} "
            f"(replay: pathways-workload diagnose --replay {path} --jobset {jobset} --at {format_ns(end_ns)})")
    say(f"done: {source.stats.logging_requests} entries.list requests, {source.stats.entries_read} entries")
    return build(analysis, logging_requests=source.stats.logging_requests)


def _read_series(source: LiveSource, project: str, cluster: str, namespace: str, jobset: str, start_ns: int,
                 end_ns: int, endpoint: str | None, emulator: str | None, deadline: Deadline,
                 say: Callable[[str], None]) -> None:
    """The chips' series beside the logs (skill/reading/sources/monitoring.py), within the same deadline; why none
    were read goes to data_gaps."""
    from .reading.sources.monitoring import ENV as ENV_MONITORING, read_live

    source.metrics = read_live(project, cluster, namespace, jobset, start_ns, end_ns, progress=say,
                               endpoint=endpoint or os.environ.get(ENV_MONITORING) or None, logging_endpoint=emulator,
                               remaining=deadline.remaining)
    for gap in source.metrics.problems:
        source.stats.gap(gap)


def write_replay_folder(folder: str | Path, entries: list[dict], objects: list[dict], *, jobset: str = "",
                        end_ns: int = 0) -> Path:
    """Write fetched data as a replay folder: logs.json (gcloud: newest first), events.json, pods.json, nodes.json,
    jobset.json (kubectl -o json shapes). Existing files of those names are replaced."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    entries = sorted(entries, key=lambda e: (parse_ts(e.get("timestamp")), e.get("insertId", "")), reverse=True)
    _dump(path / "logs.json", entries)
    by_kind: dict[str, list[dict]] = {}
    for o in objects:
        by_kind.setdefault(o.get("kind", ""), []).append(o)
    for kind, name in (("Event", "events.json"), ("Pod", "pods.json"), ("Node", "nodes.json")):
        if by_kind.get(kind):
            _dump(path / name, {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                "items": by_kind[kind]})
    jobsets = by_kind.get("JobSet") or []
    if len(jobsets) == 1:
        _dump(path / "jobset.json", jobsets[0])
    elif jobsets:
        _dump(path / "jobset.json", {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": jobsets})
    note = (f"Saved by pathways-workload diagnose (live) for JobSet {jobset}.\n"
            f"Replay with: pathways-workload diagnose --replay {path} --jobset {jobset}"
            + (f" --at {format_ns(end_ns)}\n" if end_ns else "\n"))
    (path / "README.txt").write_text(note)
    return path


def _dump(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def diagnose_log_analytics(dataset: str, cluster: str, jobset: str, *, project: str | None = None,
                           location: str | None = None, namespace: str | None = "default", start: str | None = None,
                           end: str | None = None, since: str | None = "2h", max_bytes: int | None = None,
                           kube: bool = False, bigquery_endpoint: str | None = None, kube_server: str | None = None,
                           deadline_s: float = 120.0, progress: Callable[[str], None] | None = None,
                           client=None, no_metrics: bool = False, monitoring_endpoint: str | None = None) -> Diagnosis:
    """Diagnose a JobSet from a Log Analytics linked dataset (`PROJECT.DATASET._AllLogs`) with BigQuery SQL; the
    Kubernetes API is read only when `kube` is set (else data_gaps say so). `project` is the workload's project (console
    links, the cluster), by default the dataset's; the jobs run in (and bill) the dataset's. See docs/log-analytics.md."""
    from .reading.sources.log_analytics import LogAnalyticsSource, parse_dataset

    data_project = parse_dataset(dataset)[0]
    _check_deadline(deadline_s)
    missing = [f"--{n}" for n, v in (("cluster", cluster), ("jobset", jobset)) if not v]
    if missing:
        raise InputError("--log-analytics needs " + ", ".join(missing))
    namespace, start_ns, end_ns = _workload_window(jobset, namespace, start, end, since)
    say = progress or (lambda _m: None)
    deadline = Deadline(deadline_s)
    logs = LogAnalyticsSource(dataset, location=location, client=client, max_bytes=max_bytes,
                              endpoint=bigquery_endpoint or os.environ.get(ENV_BIGQUERY) or None,
                              timeout_s=deadline_s, progress=say, deadline=deadline)
    kube_source = None
    if kube:
        from .reading.sources.kube import KubernetesSource

        kube_source = KubernetesSource(jobset=jobset, namespace=namespace, project=project or data_project,
                                       location=location or "", cluster=cluster,
                                       server=kube_server or os.environ.get(ENV_KUBE) or None,
                                       deadline=deadline, progress=say)
    source = LiveSource(logs, kube_source)
    objects = source.objects()
    if kube_source is None:  # LiveSource's note names --no-kube; here reading the API is what is opted into
        source.stats.gaps[:] = [g for g in source.stats.gaps if "--no-kube" not in g]
        source.stats.gap("Kubernetes API not read (no --kube): Pods, the JobSet and events come from the "
                         "Log Analytics view only")
    if not no_metrics:
        _read_series(source, project or data_project, cluster, namespace, jobset, start_ns, end_ns, monitoring_endpoint,
                     bigquery_endpoint or os.environ.get(ENV_BIGQUERY) or ("a given client" if client else None),
                     deadline, say)
    scope = Scope(jobset=jobset, start_ns=start_ns, end_ns=end_ns, namespace=namespace, cluster=cluster,
                  project=project or data_project, location=location)

    def nothing_read() -> SourceError:
        why = "; ".join(g for g in source.stats.gaps if not g.startswith("Log Analytics: "))[:300] or \
            "no rows matched in the window"
        return SourceError(f"nothing was read for JobSet {namespace}/{jobset} between {format_ns(start_ns)} and "
                           f"{format_ns(end_ns)} from {logs.table}: {why}; check --log-analytics, --cluster, "
                           "--jobset, --namespace and the window")
    analysis = run(source, scope, objects, now_ns=end_ns, nothing_read=nothing_read)
    u = logs.usage
    say(f"done: {u.queries} BigQuery queries, {u.bytes_scanned:,} bytes scanned, {source.stats.entries_read} entries")
    return build(analysis, logging_requests=source.stats.logging_requests)
