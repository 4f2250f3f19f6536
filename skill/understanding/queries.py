"""The Logging filters for one workload: narrow on the server, the same strings evaluated locally in replay."""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.symptoms import PROGRESS_RX
from ..reading.query import quote
from ..reading.records import ERROR_KEYS, STEP_KEYS
from ..reading.records import format_ns
from .signals import pushdown_regex, pushdown_regexes
from ..reading.sources.base import LogQuery

MARGIN_NS = 10 * 60 * 1_000_000_000
CONTROL_CONTAINERS = ("pathways-rm", "pathways-proxy")
PROGRESS_SAMPLE = 200
LAUNCH_SAMPLE = 1000  # one page of the newest reports
CONTROL_CAP = 5000
# Where a container line's text may be: plain text, or a structured logger's message under either common key.
TEXT_FIELDS = ("textPayload", "jsonPayload.message", "jsonPayload.msg")
# Structured loggers' exceptions beside the message, and lines logged at a fatal severity whatever their text.
STRUCTURED_ERRORS = " OR ".join([f"jsonPayload.{k}:*" for k in ERROR_KEYS] + ["severity>=CRITICAL"])
NODE_BATCH = 400  # node names per filter at most; fewer when the names and the query's regex would pass FILTER_LIMIT
FILTER_LIMIT = 19_500  # Cloud Logging rejects filters over 20,000 characters; keep a margin


@dataclass(frozen=True)
class Scope:
    """Which workload and window to read."""

    jobset: str
    start_ns: int
    end_ns: int
    namespace: str | None = None
    cluster: str | None = None
    project: str | None = None
    location: str | None = None  # where it runs, when the caller knows (a record's own location label wins)


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
    # The signature regex appears once per text field (TEXT_FIELDS): cut it so each filter stays under FILTER_LIMIT.
    rx_room = (FILTER_LIMIT - len(base) - 600 - len(STRUCTURED_ERRORS)) // len(TEXT_FIELDS)
    signatures = [quote(r) for r in pushdown_regexes("container", rx_room)]
    while max(len(r) for r in signatures) > rx_room:  # quoting doubles backslashes: shrink until the quoted pieces fit
        signatures = [quote(r) for r in pushdown_regexes("container", int(rx_room * 0.8 * rx_room / max(map(len, signatures))))]
    progress = quote(PROGRESS_RX)  # the catalog's progress milestones
    not_control = " AND ".join(f"resource.labels.container_name!={quote(c)}" for c in CONTROL_CONTAINERS)
    pod_prefix = quote(scope.jobset + "-")
    ev_ns = f" jsonPayload.involvedObject.namespace={quote(scope.namespace)}" if scope.namespace else ""
    return [
        LogQuery("control-plane", f"{base} ({control})", "asc", CONTROL_CAP),
        # The first piece also takes structured logs' exceptions (what a JSON formatter puts beside the message).
        *(LogQuery("signatures" if i == 0 else f"signatures-{i + 1}",
                   f"{base} {not_control} ({_any_text(rx)}{f' OR {STRUCTURED_ERRORS}' if i == 0 else ''})")
          for i, rx in enumerate(signatures)),
        LogQuery("progress", f"{base} {not_control} ({_any_text(progress)} OR "
                             + " OR ".join(f"jsonPayload.{k}:*" for k in STEP_KEYS) + ")", "desc", PROGRESS_SAMPLE),
        # The executor's periodic launch reports, newest first and capped: enough to see the program ran on after a fault
        # the client printed no step lines about, without reading every host's chatter.
        LogQuery("launches", f"{base} resource.labels.container_name=\"pathways-worker\" "
                             f"({_any_text(quote(r'Completed [0-9]+ program launches'))})", "desc", LAUNCH_SAMPLE),
        # ... and any pod the scheduler preempted meanwhile (a standby workload making room for a hot swap): low volume.
        LogQuery("events", f'log_id("events") {_cluster(scope)} {_window(scope)} '
                           f"(({ev_ns.strip() + ' ' if ev_ns else ''}(jsonPayload.involvedObject.name:{pod_prefix} OR "
                           f"jsonPayload.involvedObject.name={quote(scope.jobset)} OR "
                           f"labels.\"logging.gke.io/top_level_controller_name\"={quote(scope.jobset)})) OR "
                           f'jsonPayload.reason="Preempted")'),
        # Kubernetes audit of the JobSet's pods: who evicted one (kubectl drain, a node-pool upgrade; the eviction itself
        # leaves no Kubernetes event), and who port-forwarded to one (a second client that takes the proxy session).
        # Who evicted or port-forwarded to a pod (Kubernetes audit), a VM Compute Engine refused to create, and the
        # autoscaler's scale-up failures and the scale-downs that evict one of the JobSet's pods: all low volume, one read.
        LogQuery("cluster-activity", f"{_window(scope)} "
                                     f'((log_id("cloudaudit.googleapis.com/activity") '
                                     f'((resource.type="k8s_cluster" {_cluster(scope)} '
                                     f'(protoPayload.methodName="io.k8s.core.v1.pods.eviction.create" OR '
                                     f'protoPayload.methodName="io.k8s.core.v1.pods.portforward.create") '
                                     f"protoPayload.resourceName:{quote('/pods/' + scope.jobset + '-')}){_refused_vms(scope)})) "
                                     f"OR {_autoscaler(scope)})"),
    ]


def _any_text(rx: str) -> str:
    """The quoted regex rx on any of the fields a container line's text may be in."""
    return " OR ".join(f"{f}=~{rx}" for f in TEXT_FIELDS)


def _autoscaler(scope: Scope) -> str:
    return (f'(log_id("container.googleapis.com/cluster-autoscaler-visibility") {_cluster(scope)} '
            '(jsonPayload.resultInfo.results.errorMsg.messageId:"scale.up.error" OR '
            "jsonPayload.noDecisionStatus.noScaleUp:* OR "
            # a scale-down that evicts one of the JobSet's pods (the head on cpu-np)
            "jsonPayload.decision.scaleDown.nodesToBeRemoved.evictedPods.name:"
            f"{quote(scope.jobset + '-')}))")


def _refused_vms(scope: Scope) -> str:
    """OR term: Compute Engine refusing a VM of the cluster's node pools (a reservation or zone without capacity)."""
    if not scope.cluster:
        return ""
    # Precedence: OR binds tighter than the implicit AND, so the caller's terms and these are each parenthesised.
    return (f' OR (resource.type="gce_instance" protoPayload.methodName:"compute.instances.insert" severity>=ERROR '
            f"protoPayload.resourceName:{quote('/instances/gke-' + scope.cluster + '-')})"
            # ... and the autoscaler deleting a node's VM from its instance group (a scale-down carried out)
            f' OR (protoPayload.methodName:"instanceGroupManagers.deleteInstances" '
            f"protoPayload.resourceName:{quote('/instanceGroupManagers/gke-' + scope.cluster + '-')})")


def node_batches(nodes: list[str], fixed_chars: int) -> list[list[str]]:
    """Node names in batches of at most NODE_BATCH whose quoted OR-list keeps a filter of `fixed_chars` other
    characters under FILTER_LIMIT."""
    batches: list[list[str]] = []
    room = FILTER_LIMIT - fixed_chars
    cur: list[str] = []
    used = 0
    for n in nodes:
        cost = len(quote(n)) + 4  # ' OR '
        if cur and (len(cur) >= NODE_BATCH or used + cost > room):
            batches.append(cur)
            cur, used = [], 0
        cur.append(n)
        used += cost
    if cur:
        batches.append(cur)
    return batches


def ahead_queries(scope: Scope) -> list[LogQuery]:
    """Phases two and three as templates, for a source that pays per scan (Source.expect): each node read without
    its node names (node_queries(scope, nodes) is each of these AND a list of names), and the presence probes as the
    newest entry of each route. Read with phase one, they answer phases two and three without scanning again."""
    node, serial = _node_kinds(scope), presence_kinds(scope)
    return ([LogQuery(f"{name}-any", build(None)) for name, build in node] +
            [LogQuery(f"{name}-any", build(None), "desc", 1, per_route=True) for name, build in serial])


def _names(names: str | None, term: str) -> str:
    """The node-names term of a node read (`term(a OR b) `), or nothing for its template."""
    return "" if names is None else f"{term}({names}) "


SERIAL_NAME = 'labels."compute.googleapis.com/resource_name"='


def _node_kinds(scope: Scope) -> tuple:
    node_rx = quote(pushdown_regex("node"))
    serial_rx = quote(pushdown_regex("serial"))
    return (
        ("node-logs", lambda names: f'resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                    f"{_names(names, 'resource.labels.node_name=')}"
                                    f'(log_id("kubelet") OR log_id("node-problem-detector") OR log_id("container-runtime")) '
                                    f"(textPayload=~{node_rx} OR jsonPayload.MESSAGE=~{node_rx} OR jsonPayload.message=~{node_rx})"),
        ("node-events", lambda names: (f'log_id("events") resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                       f"{_names(names, 'jsonPayload.involvedObject.name=')}").rstrip()),
        ("serial", lambda names: f'log_id("{SERIAL_LOG}") {_window(scope)} '
                                 f"{_names(names, SERIAL_NAME)}textPayload=~{serial_rx}"),
        ("gce", lambda names: (f'(log_id("cloudaudit.googleapis.com/system_event") OR '
                               f'log_id("cloudaudit.googleapis.com/activity")) resource.type="gce_instance" '
                               f"{_window(scope)} {_names(names, 'protoPayload.resourceName:')}").rstrip()),
    )


def presence_kinds(scope: Scope) -> tuple:
    """(name, filter of a list of node names, or of none for the template) of the two presence probes."""
    return (
        ("node-logs-present", lambda names: f'resource.type="k8s_node" {_cluster(scope)} {_window(scope)} '
                                            f"{_names(names, 'resource.labels.node_name=')}"
                                            + "(" + " OR ".join(f'log_id("{n}")' for n in NODE_LOGS) + ")"),
        ("serial-present", lambda names: (f'log_id("{SERIAL_LOG}") {_window(scope)} '
                                          f"{_names(names, SERIAL_NAME)}").rstrip()),
    )


def node_queries(scope: Scope, nodes: list[str]) -> list[LogQuery]:
    """Phase two: what the nodes the pods ran on, and their VMs, said (kubelet, NPD, serial console, GCE, events).

    Each kind of query is batched on its own length: the node-log and serial reads carry a long signature regex, so
    they take fewer names per filter than the node events and GCE audit reads (one request each for a few hundred
    nodes), which keeps a big fleet's request count down.
    """
    kinds = _node_kinds(scope)
    queries = []
    for name, build in kinds:
        fixed = len(build("")) + 200  # the filter without its names, with a margin
        for i, batch in enumerate(node_batches(nodes, fixed)):
            queries.append(LogQuery(f"{name}-{i}", build(" OR ".join(quote(n) for n in batch))))
    return queries


NODE_LOGS = ("kubelet", "node-problem-detector", "container-runtime")
SERIAL_LOG = "serialconsole.googleapis.com/serial_port_1_output"


def presence_queries(scope: Scope, nodes: list[str], logs_seen: set[str]) -> list[LogQuery]:
    """Phase three, only when needed: the signature reads return nothing from a healthy node, which would look like
    "no node logs at all". One newest entry of each kind the first two phases did not see, over the first batch of
    nodes, tells an export or a project without them from a quiet one."""
    if not nodes:
        return []
    names = " OR ".join(quote(n) for n in node_batches(nodes, len(_window(scope)) + len(_cluster(scope)) + 400)[0])
    (logs_name, logs), (serial_name, serial) = presence_kinds(scope)
    queries = []
    if not set(NODE_LOGS) & logs_seen:
        queries.append(LogQuery(logs_name, logs(names), "desc", 1))
    if not any(log.startswith("serialconsole.googleapis.com") for log in logs_seen):
        queries.append(LogQuery(serial_name, serial(names), "desc", 1))
    return queries


CONTEXT_NS = 1_000_000_000  # what a container printed within this long after a line is that line's continuation
CONTEXT_CAP = 200
CONTEXT_LINES = 3  # root-cause lines whose continuation is read
TRACEBACK_NS = 10 * 1_000_000_000  # ... and the traceback printed before them, within this long
TRACEBACK_CAP = 80


def context_queries(scope: Scope, lines: list[tuple[str, str, int]]) -> list[LogQuery]:
    """Phase four: what the root cause's containers printed right after its lines, (pod, container, ts) each: the
    rest of a multi-line error (a memory report, the two types a TypeError compares), which no signature selects;
    and what they printed just before (the traceback an exception line ends)."""
    if not lines:
        return []
    def windows(lo: int, hi: int) -> str:
        return " OR ".join(
            f"(resource.labels.pod_name={quote(pod)} resource.labels.container_name={quote(container)} "
            f"timestamp>={quote(format_ns(ts + lo))} timestamp<={quote(format_ns(ts + hi))})"
            for pod, container, ts in lines[:CONTEXT_LINES])
    base = f'resource.type="k8s_container" {_cluster(scope)}'
    return [LogQuery("context", f"{base} ({windows(0, CONTEXT_NS)})", "asc", CONTEXT_CAP),
            # the traceback a Python exception line ends, printed just before it (newest first, so the cap keeps it)
            LogQuery("traceback", f"{base} ({windows(-TRACEBACK_NS, -1)})", "desc", TRACEBACK_CAP)]



# Phase five, for a run that stopped stepping: what the stalled program printed from its last step on.
LAST_WORDS_CAP = 200  # its statements right after the last step, oldest first
DUMP_CAP = 400  # ... and a Python thread dump it printed later (faulthandler's watchdog), oldest first
# The lines of a CPython thread dump: faulthandler's headers (Modules/faulthandler.c, Python/traceback.c) and frames
# (faulthandler writes `File "p", line N in f`, the traceback module `File "p", line N, in f`).
DUMP_LINE = r'^(?:Timeout \([0-9:.]+\)!|(?:Current thread|Thread) 0x[0-9a-fA-F]+|Stack \(most recent call first\)|\s+File ")'


SAID_BEFORE_CAP = 200  # its latest lines before its last step, newest first (steps among them: the reader skips those)


def last_words_queries(scope: Scope, pod: str, container: str, from_ns: int, to_ns: int) -> list[LogQuery]:
    """Phase five: the stalled container's stream from its last progress line to the end of the data: its first
    statements after that step (what it was doing as it stopped, what it kept printing) and any thread dump; and the
    latest lines before that step (what it said last besides stepping)."""
    def stream(lo: int, hi: int) -> str:
        return (f'resource.type="k8s_container" {_cluster(scope)} resource.labels.pod_name={quote(pod)} '
                f"resource.labels.container_name={quote(container)} "
                f"timestamp>={quote(format_ns(lo))} timestamp<={quote(format_ns(hi))}")
    after = stream(from_ns, to_ns)
    return [LogQuery("last-words", after, "asc", LAST_WORDS_CAP),
            LogQuery("thread-dump", f"{after} ({_any_text(quote(DUMP_LINE))})", "asc", DUMP_CAP),
            LogQuery("said-before", stream(max(1, scope.start_ns - MARGIN_NS), from_ns - 1), "desc", SAID_BEFORE_CAP)]
