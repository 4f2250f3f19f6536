"""A cited record as the contract's evidence item, with the Logs Explorer link whose query finds exactly that entry."""

from __future__ import annotations

from typing import cast
from urllib.parse import quote as urlquote

from ..diagnosis import Evidence, EvidenceSource
from ..reading.query import quote
from ..reading.records import Record, format_ns
from ..reading.sources.metrics import PROMQL_NAMES
from .excerpt import excerpt

LINK_MARGIN_NS = 10 * 60 * 1_000_000_000
PROMETHEUS_NAMES = {v: k for k, v in PROMQL_NAMES.items()}  # Cloud Monitoring type -> Prometheus name


def logs_explorer_link(r: Record, project: str | None) -> str | None:
    """A Logs Explorer URL whose query finds exactly this entry, with the cursor on its time; None for object facts.

    The form is the one the console produces when you copy a link to a query:
    https://console.cloud.google.com/logs/query;query=...;cursorTimestamp=...;startTime=...;endTime=...?project=P
    An Event exported by kubectl is cited by its uid, which the events log keeps as jsonPayload.metadata.uid.
    """
    if not project or r.source in ("object", "metric"):
        return None
    if r.source == "event" and r.log == "events":
        query = f'logName="projects/{project}/logs/events"\n(insertId={quote(r.id)} OR jsonPayload.metadata.uid={quote(r.id)})'
    else:
        query = f"insertId={quote(r.id)}"
    parts = [f"query={urlquote(query, safe='')}"]
    if r.ts:
        parts += [f"cursorTimestamp={r.time}", f"startTime={format_ns(r.ts - LINK_MARGIN_NS)}",
                  f"endTime={format_ns(r.ts + LINK_MARGIN_NS)}"]
    return f"https://console.cloud.google.com/logs/query;{';'.join(parts)}?project={urlquote(project, safe='')}"


def query_link(filter_: str, project: str | None) -> str | None:
    """A Logs Explorer URL that runs a whole Logging filter (the console's own link form); None without a project."""
    if not project:
        return None
    return (f"https://console.cloud.google.com/logs/query;query={urlquote(filter_, safe='')}"
            f"?project={urlquote(project, safe='')}")


def point_promql(r: Record) -> str | None:
    """The PromQL that draws a cited series point's series in Cloud Monitoring (its Prometheus name and labels; a GKE
    system metric also its `monitored_resource`); None for anything but a series point."""
    series = r.extra.get("series") if r.source == "metric" else None
    if not isinstance(series, dict):
        return None
    name = PROMETHEUS_NAMES.get(r.log) or r.log
    if name.startswith("kubernetes.io/"):  # Managed Service for Prometheus' rule: kubernetes.io/a/b_c -> kubernetes_io:a_b_c
        name = "kubernetes_io:" + name[len("kubernetes.io/"):].replace("/", "_")
    labels = {k: v for k, v in series.get("labels", {}).items() if k not in ("project_id", "location")}
    if r.log.startswith("kubernetes.io/") and str(series.get("type", "")).startswith("k8s_"):
        labels = {"monitored_resource": series["type"], **labels}
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def evidence_item(r: Record, project: str | None = None) -> Evidence:
    """The record as cited evidence: its id, time, source, resource, a redacted excerpt, its Logs Explorer link or,
    for a series point, the PromQL that draws its series."""
    return Evidence(id=r.id, timestamp=r.time or None, source=cast(EvidenceSource, r.source), resource=r.resource, excerpt=excerpt(r.text),
                    link=logs_explorer_link(r, project or r.project), promql=point_promql(r))
