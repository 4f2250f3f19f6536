"""What Cloud Monitoring's series say about failure classes, as data (docs/metrics.md has the table): which class an
interruption's type and reason name, which class HBM at its total supports, which classes the chips' duty cycle
decides, and the PromQL a user pastes into Cloud Monitoring to see the series that tell a class from its rivals.

Source of every meaning: google/skills `gke-ai-troubleshooting-tpu-metrics-monitoring` and
`gke-ai-troubleshooting-jobset-interruption` (../shared/reference/metrics.md)."""

from __future__ import annotations

from . import infra, lifecycle, runtime

SOURCE = "https://github.com/google/skills"
# (interruption_type, interruption_reason or "" for any, the class it names, how much one interruption proves);
# the first row that holds wins
INTERRUPTIONS: tuple[tuple[str, str, str, float], ...] = (
    ("PreemptionEvent", "", infra.SPOT_PREEMPTION.id, 0.95),
    ("MaintenanceEvent", "", infra.HOST_MAINTENANCE.id, 0.95),
    ("TerminationEvent", "HostError", infra.NODE_LOST.id, 0.9),
    ("TerminationEvent", "AutoRepair", infra.NODE_LOST.id, 0.9),
    ("TerminationEvent", "", infra.NODE_LOST.id, 0.8),
    ("", "", infra.NODE_LOST.id, 0.6),  # a type this table does not know: a node went away
)
# (condition, status, the class it speaks for, weight as a cause when nothing else from the node side was read about
# that node, weight as support when something was). A node's Ready condition False or Unknown is the node lost (the
# node controller's NodeNotReady in series form); the pressure conditions only support the class their evictions and
# kills belong to (Kubernetes' node-pressure eviction: MemoryPressure "node memory is low", DiskPressure "disk capacity
# is low"), never a cause alone.
CONDITIONS: tuple[tuple[str, str, str, float, float], ...] = (
    ("Ready", "False", infra.NODE_LOST.id, 0.7, 0.3),
    ("Ready", "Unknown", infra.NODE_LOST.id, 0.7, 0.3),
    ("MemoryPressure", "True", runtime.HOST_OOM.id, 0.0, 0.3),
    ("DiskPressure", "True", infra.HEAD_POD_EVICTED.id, 0.0, 0.3),
)
CONDITIONS_SOURCE = "https://kubernetes.io/docs/reference/node/node-status/#condition"
HBM_FULL = runtime.HBM_OOM.id
# one physical host behind several failed node names: the class a next check weighs against the verdict
SAME_HOST = infra.TPU_HARDWARE_FAILURE.id  # HBM used at its total on a chip supports this class (never a cause alone)
STALL = lifecycle.WORKLOAD_STALLED.id  # every chip idle to the end decides this class

_DUTY = "max by (pod_name) (kubernetes_io:container_accelerator_duty_cycle{{{sel}}})"
_INTERRUPTIONS = ('sum by (node_name, interruption_type, interruption_reason) (kubernetes_io:node_interruption_count'
                  '{{monitored_resource="k8s_node",cluster_name="{cluster}"}})')
_HBM = ("max by (pod_name) (kubernetes_io:container_accelerator_memory_used{{{sel}}}) / "
        "max by (pod_name) (kubernetes_io:container_accelerator_memory_total{{{sel}}})")
# class -> the PromQL template ({sel}: the JobSet's containers, {cluster}) whose series tell it from its rivals
PROMQL: dict[str, str] = {
    **{c.id: _DUTY for c in (lifecycle.WORKLOAD_STALLED, lifecycle.NO_FAILURE_DETECTED, runtime.MEGASCALE_HANG,
                              lifecycle.SLICES_NOT_READY)},
    **{c.id: _INTERRUPTIONS for c in (infra.SPOT_PREEMPTION, infra.HOST_MAINTENANCE, infra.NODE_LOST,
                                       lifecycle.HOT_SWAP_FAILURE, lifecycle.ELASTIC_RECOVERY_EXHAUSTED,
                                       lifecycle.SUSPEND_RESUME_FAILURE)},
    runtime.HBM_OOM.id: _HBM,
}
