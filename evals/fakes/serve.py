"""Start a loopback fake on an export folder, to try live and Log Analytics diagnosis without a cloud project.

    python -m pathways_workload.evals.fakes.logging_server DIR [--port N]                        # Cloud Logging entries.list
    python -m pathways_workload.evals.fakes.kube_server DIR [--port N]                           # the Kubernetes API (read-only)
    python -m pathways_workload.evals.fakes.bigquery_server DIR [--port N] [--dataset P.D]       # BigQuery over `P.D._AllLogs`
    python -m pathways_workload.evals.fakes.monitoring_server DIR [--port N]                     # Cloud Monitoring (gRPC)

DIR is an export folder as the README describes it (a LogEntry array from `gcloud logging read`, `kubectl get ... -o
json` lists), e.g. a bundled fixture. Each prints where it listens and the `pathways-workload diagnose` command that
reads the folder's workload through it, then serves on 127.0.0.1 until interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pathways_workload.skill.reading.records import format_ns, parse_ts

from .exports import load_entries, load_objects, project_of

JOBSET_LABEL = "k8s-pod/jobset_sigs_k8s_io/jobset-name"


@dataclass(frozen=True)
class Served:
    """What a folder holds, as the diagnose command must name it."""

    entries: list[dict]
    objects: list[dict]
    project: str
    cluster: str
    location: str
    jobset: str
    namespace: str
    start: str
    end: str


def describe(folder: Path) -> Served:
    """The folder's entries and objects, and the workload they are about (its JobSet, cluster, window)."""
    if not folder.is_dir():
        raise SystemExit(f"{folder}: not a folder (give an export folder, e.g. fixtures/case-001)")
    entries, objects = load_entries(folder), load_objects(folder)
    if not entries:
        raise SystemExit(f"{folder}: no log entries (a JSON array of LogEntries, as `gcloud logging read "
                         "--format=json` writes it)")
    times = sorted(t for t in (parse_ts(e.get("timestamp")) for e in entries) if t)
    labels = next(((e.get("resource") or {}).get("labels") or {} for e in entries
                   if ((e.get("resource") or {}).get("labels") or {}).get("cluster_name")), {})
    jobset = next((o["metadata"]["name"] for o in objects if o.get("kind") == "JobSet"), None) or next(
        (e["labels"][JOBSET_LABEL] for e in entries if JOBSET_LABEL in (e.get("labels") or {})), "")
    namespace = next((o["metadata"].get("namespace") for o in objects if o.get("kind") == "JobSet"
                      and o["metadata"].get("namespace")), None) or "default"
    return Served(entries, objects, project_of(entries), labels.get("cluster_name", ""),
                  labels.get("location", ""), jobset, namespace, format_ns(times[0]), format_ns(times[-1]))


def arguments(prog: str, extra: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=f"python -m {prog}", description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="an export folder (e.g. fixtures/case-001)")
    ap.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    if extra:
        extra(ap)
    return ap.parse_args(sys.argv[1:])


def run(server, what: str, command: str, *, stop: threading.Event | None = None) -> int:
    """Serve until interrupted (or `stop` is set), having said where and how to use it."""
    with server:
        print(f"{what} at {server.url} (Ctrl-C stops it)\ntry:\n  {command.format(url=server.url)}", flush=True)
        try:
            (stop or threading.Event()).wait()
        except KeyboardInterrupt:
            pass
    return 0


def window(s: Served) -> str:
    return f"--cluster {s.cluster} --jobset {s.jobset} --namespace {s.namespace} --start {s.start} --end {s.end}"
