"""The Logging filters for one workload: narrow on the server, the same strings evaluated locally in replay."""

from __future__ import annotations

from dataclasses import dataclass

from .query import quote
from .records import format_ns
from .signals import pushdown_regex
from .sources.base import LogQuery

MARGIN_NS = 10 * 60 * 1_000_000_000
CONTROL_CONTAINERS = ("pathways-rm", "pathways-proxy")
PROGRESS_SAMPLE = 200
CONTROL_CAP = 5000
NODE_BATCH = 200  # node names per filter: 200 names + the node regex stay under the 20,000-character filter limit


@dataclass(frozen=True)
class Scope:
    """Which workload and window to read."""

    jobset: str
    start_ns: int
    end_ns: int
    namespace: str | None = None
    cluster: str | None = None
    project: str | None = None


def _window(scope: Scope) -> str:
    # Always explicit bounds: without a timestamp term the client library silently adds "the last 24 hours".
    return (f"timestamp>={quote(format_ns(max(1, scope.start_ns - MARGIN_NS)))} "
            f"timestamp<={quote(format_ns(scope.end_ns + MARGIN_NS))}")


def _cluster(scope: Scope) -> str:
    parts = []
    if scope.cluster:
        parts.append(f"resource.labels.cluster_name={quote(scope.cluster)}")
    return " ".join(parts)


def _containers_base(scope: Scope) -> str:
    ns = f" resource.labels.namespace_name={quote(scope.namespace)}" if scope.namespace else ""
    return (f'resource.type="k8s_container" {_cluster(scope)}{ns} '
            f'labels."k8s-pod/jobset_sigs_k8s_io/jobset-name"={quote(scope.jobset)} {_window(scope)}')


def workload_queries(scope: Scope) -> list[LogQuery]:
    """Phase one: the JobSet's containers (control plane whole, the rest narrowed to signatures) and its events."""
    base = _containers_base(scope)
    control = " OR ".join(f"resource.labels.container_name={quote(c)}" for c in CONTROL_CONTAINERS)
    rx = quote(pushdown_regex("container"))
    progress = quote(r"(?i)\bstep\b[\s:=#]*\d+")
    not_control = " AND ".join(f"resource.labels.container_name!={quote(c)}" for c in CONTROL_CONTAINERS)
    pod_prefix = quote(scope.jobset + "-")
    ev_ns = f" jsonPayload.involvedObject.namespace={quote(scope.namespace)}" if scope.namespace else ""
    return [
        LogQuery("control-plane", f"{base} ({control})", "asc", CONTROL_CAP),
        LogQuery("signatures", f"{base} {not_control} (textPayload=~{rx} OR jsonPayload.message=~{rx})"),
        LogQuery("progress", f"{base} {not_control} (textPayload=~{progress} OR jsonPayload.message=~{progress})",
                 "desc", PROGRESS_SAMPLE),
        LogQuery("events", f'log_id("events") {_cluster(scope)} {_window(scope)}{ev_ns} '
                           f"(jsonPayload.involvedObject.name:{pod_prefix} OR "
                           f"jsonPayload.involvedObject.name={quote(scope.jobset)} OR "
                           f"labels.\"logging.gke.io/top_level_controller_name\"={quote(scope.jobset)})"),
        # Kubernetes audit of the JobSet's pods: who evicted one (kubectl drain, a node-pool upgrade; the eviction itself
        # leaves no Kubernetes event), and who port-forwarded to one (a second client that takes the proxy session).
        LogQuery("evictions", f'log_id("cloudaudit.googleapis.com/activity") resource.type="k8s_cluster" '
                              f'{_cluster(scope)} {_window(scope)} '
                              f'(protoPayload.methodName="io.k8s.core.v1.pods.eviction.create" OR '
                              f'protoPayload.methodName="io.k8s.core.v1.pods.portforward.create") '
                              f"protoPayload.resourceName:{quote('/pods/' + scope.jobset + '-')}"),
    ]


def node_queries(scope: Scope, nodes: list[str]) -> list[LogQuery]:
    """Phase two: what the nodes the pods ran on, and their VMs, said (kubelet, NPD, serial console, GCE, events)."""
    queries = []
    node_rx = quote(pushdown_regex("node"))
    serial_rx = quote(pushdown_regex("serial"))
    for i in range(0, len(nodes), NODE_BATCH):
        batch = nodes[i : i + NODE_BATCH]
        names = " OR ".join(quote(n) for n in batch)
        tag = f"{i // NODE_BATCH}"
        queries += [
            LogQuery(f"node-logs-{tag}", f'resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                         f"resource.labels.node_name=({names}) "
                                         f'(log_id("kubelet") OR log_id("node-problem-detector") OR log_id("container-runtime")) '
                                         f"(textPayload=~{node_rx} OR jsonPayload.MESSAGE=~{node_rx} OR jsonPayload.message=~{node_rx})"),
            LogQuery(f"node-events-{tag}", f'log_id("events") resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                           f"jsonPayload.involvedObject.name=({names})"),
            LogQuery(f"serial-{tag}", f'log_id("serialconsole.googleapis.com/serial_port_1_output") {_window(scope)} '
                                      f'labels."compute.googleapis.com/resource_name"=({names}) textPayload=~{serial_rx}'),
            LogQuery(f"gce-{tag}", f'(log_id("cloudaudit.googleapis.com/system_event") OR '
                                   f'log_id("cloudaudit.googleapis.com/activity")) resource.type="gce_instance" {_window(scope)} '
                                   f"protoPayload.resourceName:({names})"),
        ]
    if nodes:
        # The signature reads above return nothing from a healthy node, which would look like "no node logs at all".
        # One newest entry of each kind, over the first batch, tells an export or a project without them apart.
        names = " OR ".join(quote(n) for n in nodes[:NODE_BATCH])
        queries += [
            LogQuery("node-logs-present", f'resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                          f"resource.labels.node_name=({names}) "
                                          f'(log_id("kubelet") OR log_id("node-problem-detector") OR log_id("container-runtime"))',
                     "desc", 1),
            LogQuery("serial-present", f'log_id("serialconsole.googleapis.com/serial_port_1_output") {_window(scope)} '
                                       f'labels."compute.googleapis.com/resource_name"=({names})', "desc", 1),
        ]
    queries.append(LogQuery("autoscaler", f'log_id("container.googleapis.com/cluster-autoscaler-visibility") '
                                          f"{_cluster(scope)} {_window(scope)} "
                                          '(jsonPayload.resultInfo.results.errorMsg.messageId:"scale.up.error" OR '
                                          "jsonPayload.noDecisionStatus.noScaleUp:* OR "
                                          # a scale-down that evicts one of the JobSet's pods (the head on cpu-np)
                                          "jsonPayload.decision.scaleDown.nodesToBeRemoved.evictedPods.name:"
                                          f"{quote(scope.jobset + '-')})"))
    return queries
