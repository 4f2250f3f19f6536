"""The Kubernetes side of the live source: Events, the JobSet's Pods, the JobSet and its Nodes, read-only.

Only get and list calls exist here (CoreV1Api.list_namespaced_event / list_namespaced_pod / read_node / list_node,
CustomObjectsApi.get_namespaced_custom_object). Events go through core/v1: EventsV1Api rejects the `eventTime: null` of
ordinary events (../shared/reference/client-apis.md §4.2). Responses are read raw (`_preload_content=False`) and
returned as the API server's camelCase JSON, with the item kinds a List leaves out filled in.

Failing fast: an API server that cannot be connected to at all (refused, unknown host, TLS, connect timeout) before it
has ever answered is one SourceError, as are 401/403 and a missing kubeconfig context; after it has answered, a failed
read is a data gap, and once a connection cannot be made at all the remaining reads are not attempted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import cast

from ...errors import SourceError
from .base import SourceStats, connection_failure, past_deadline, read_timed_out
from .cloud_logging import Deadline

JOBSET_GROUP, JOBSET_VERSION, JOBSET_PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
PAGE = 500
MAX_ITEMS = 5000  # per list; Kubernetes keeps events about an hour, so this is far above a normal namespace
URLLIB3_RETRIES = 3  # urllib3's default Retry(total=3), which the kubernetes client's pool manager uses
READ_NODES_ONE_BY_ONE = 20  # more nodes than this: one paged list_node instead of a read per node
CONNECT_TIMEOUT_S = 5.0  # per connection attempt; urllib3 makes up to 1 + URLLIB3_RETRIES of them


class _Expired(Exception):
    """A list's continue token is too old (HTTP 410 Gone): the list must start again."""


def gke_context(project: str, location: str, cluster: str) -> str:
    """The kubeconfig context `gcloud container clusters get-credentials` writes."""
    return f"gke_{project}_{location}_{cluster}"


def make_api_client(project: str, location: str, cluster: str, server: str | None = None):
    """An ApiClient for an explicit server (no auth: a fake, or `kubectl proxy`), the cluster's kubeconfig context,
    or the in-cluster service account."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    if server:
        return client.ApiClient(client.Configuration(host=server.rstrip("/")))
    want = gke_context(project, location, cluster)
    hint = (f"run `gcloud container clusters get-credentials {cluster} --location {location} --project {project}`, "
            "or pass --no-kube to diagnose from Cloud Logging only")
    try:
        contexts, _current = config.list_kube_config_contexts()
    except (ConfigException, OSError):
        contexts = []
    for ctx in contexts or ():
        if ctx.get("name") == want or (ctx.get("context") or {}).get("cluster") == want:
            try:
                return config.new_client_from_config(context=ctx["name"])
            except ConfigException as err:
                raise SourceError(f"kubeconfig context {ctx['name']} is unusable ({err}): {hint}") from err
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            config.load_incluster_config()
            return client.ApiClient()
        except ConfigException:
            pass
    raise SourceError(f"no kubeconfig context for cluster {cluster} ({want}): {hint}")


class KubernetesSource:
    """The JobSet's objects from the Kubernetes API: Events of its namespace, its Pods, the JobSet, their Nodes."""

    def __init__(self, *, jobset: str, namespace: str = "default", project: str = "", location: str = "",
                 cluster: str = "", server: str | None = None, api_client=None, deadline: Deadline | None = None,
                 progress: Callable[[str], None] | None = None):
        self.jobset, self.namespace = jobset, namespace or "default"
        self.project, self.location, self.cluster = project, location, cluster
        self.api = api_client or make_api_client(project, location, cluster, server)
        self.deadline = deadline
        self.progress = progress or (lambda _msg: None)
        self.stats = SourceStats()
        self.requests = 0
        self.server = server
        self.answered = False  # the API server has sent an HTTP response
        self.down: str | None = None  # why the API server was found unreachable; later reads are then skipped

    # -- calls ----------------------------------------------------------------------------------------------

    def _timeout(self) -> tuple[float, float]:
        # urllib3 retries a failed GET up to URLLIB3_RETRIES times, each attempt with the whole timeout; a share of
        # what is left keeps even a hanging API server inside the diagnosis deadline.
        left = self.deadline.remaining() if self.deadline else 30.0
        read = max(0.5, min(30.0, left / (1 + URLLIB3_RETRIES)))
        return min(CONNECT_TIMEOUT_S, read), read

    def _call(self, what: str, fn, *args, **kw) -> dict | None:
        """One GET; the parsed JSON, None for 404; SourceError for auth; a gap (and None) for other failures."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        if self.deadline is not None and self.deadline.expired():
            self.stats.gap(f"Kubernetes API: {what} not read (the {self.deadline.seconds:g} s --deadline passed)")
            self.stats.deadline_passed(past_deadline(f"Kubernetes API at {self._host()}", f"read of {what}",
                                                     self.deadline.seconds, "no time was left", fix="pass --no-kube"))
            return None
        if self.down:
            self.stats.gap(f"Kubernetes API: {what} not read (the API server was unreachable: {self.down})")
            return None
        self.requests += 1
        timeout = self._timeout()
        try:
            resp = fn(*args, _preload_content=False, _request_timeout=timeout, **kw)
            self.answered = True
            return json.loads(resp.data or b"{}")
        except ApiException as err:
            self.answered = True
            if err.status in (401, 403):
                verb = "authentication failed" if err.status == 401 else "permission denied"
                raise SourceError(
                    f"Kubernetes API {verb} reading {what} in cluster {self.cluster or self._host()} (HTTP {err.status}): "
                    f"the caller needs get/list on pods, events, nodes and jobsets.jobset.x-k8s.io, e.g. "
                    f"`roles/container.viewer` on project {self.project or '<project>'}"
                    + (" (or refresh credentials: `gcloud container clusters get-credentials`)" if err.status == 401 else "")
                    + "; or pass --no-kube") from err
            if err.status == 404:
                return None
            if err.status == 410 and kw.get("_continue"):
                raise _Expired(what) from err
            self.stats.gap(f"Kubernetes API: {what} not read (HTTP {err.status} {err.reason})")
        except (HTTPError, OSError, ValueError) as err:
            why = connection_failure(err)
            if why and not self.answered:
                raise SourceError(self._unreachable(why)) from err
            self.down = why  # no connection at all (a read timeout or a reset may pass by the next read)
            if read_timed_out(err):
                self._slow(what, timeout[1])
            else:
                self.stats.gap(f"Kubernetes API at {self._host()} unreachable reading {what} ({type(err).__name__}); "
                               "diagnosed from Cloud Logging only for it")
        return None

    def _slow(self, what: str, share: float) -> None:
        """A read the API server sent no answer to in the share of the --deadline it had (each attempt a part of what
        was left): a gap, and the line a diagnosis with nothing read reports."""
        spent = self.deadline is None or self.deadline.remaining() < 1.0
        why = "read timeout" if spent else f"no answer in the {share:.1f} s it had of it"
        self.stats.gap(f"Kubernetes API at {self._host()}: {what} not read ({why}); diagnosed from Cloud Logging only "
                       "for it")
        if self.deadline is not None:
            self.stats.deadline_passed(past_deadline(f"Kubernetes API at {self._host()}", f"read of {what}",
                                                     self.deadline.seconds, why, fix="pass --no-kube"))

    def _unreachable(self, why: str) -> str:
        """One line for an API server no connection could be made to, with what to check."""
        if self.server:
            fix = "check --kube-server (or PATHWAYS_WORKLOAD_KUBE_SERVER)"
        else:
            fix = (f"check that the cluster is up and its endpoint reachable from here (a private endpoint needs a "
                   f"machine in its network), or refresh the context: `gcloud container clusters get-credentials "
                   f"{self.cluster} --location {self.location} --project {self.project}`")
        return f"cannot reach the Kubernetes API at {self._host()} ({why}): {fix}; or pass --no-kube"

    def _host(self) -> str:
        return getattr(self.api.configuration, "host", "?")

    def _list(self, what: str, kind: str, fn, *args, **kw) -> list[dict]:
        items: list[dict] = []
        cont, restarted = None, False
        while True:
            extra: dict[str, str] = {"_continue": cont} if cont else {}
            try:
                doc = self._call(what, fn, *args, limit=PAGE, **kw, **extra)
            except _Expired:
                # 410 Gone: the list changed too much to continue; the API server says to start it again, once.
                if restarted:
                    self.stats.gap(f"Kubernetes API: {what}: the continue token expired again (HTTP 410 Gone); "
                                   f"stopped after {len(items)} items")
                    return items
                items, cont, restarted = [], None, True
                continue
            if doc is None:
                return items
            for item in doc.get("items") or ():
                if isinstance(item, dict):
                    items.append({"kind": kind, "apiVersion": doc.get("apiVersion", "v1"), **item}
                                 if "kind" not in item else item)
            cont = (doc.get("metadata") or {}).get("continue")
            if not cont:
                return items
            if len(items) >= MAX_ITEMS:
                self.stats.gap(f"Kubernetes API: {what}: stopped after {len(items)} items (cap)")
                return items
            if self.deadline and self.deadline.expired():
                self.stats.gap(f"Kubernetes API: {what}: stopped after {len(items)} items (deadline)")
                return items

    # -- what the engine needs ------------------------------------------------------------------------------

    def objects(self) -> list[dict]:
        from kubernetes import client

        core = client.CoreV1Api(self.api)
        custom = client.CustomObjectsApi(self.api)
        ns, js = self.namespace, self.jobset
        self.progress(f"Kubernetes: reading JobSet {ns}/{js}, its pods, events and nodes")
        jobset = self._call(f"JobSet {ns}/{js}", custom.get_namespaced_custom_object,
                            JOBSET_GROUP, JOBSET_VERSION, ns, JOBSET_PLURAL, js)
        jobsets = [jobset] if jobset is not None and jobset.get("kind") == "JobSet" else []
        pods = self._list(f"pods of JobSet {js}", "Pod", core.list_namespaced_pod, ns,
                          label_selector=f"{JOBSET_LABEL}={js}")
        if not jobsets and not pods:
            self.stats.gap(f"Kubernetes API: JobSet {js} not found in namespace {ns} and no pods carry its label "
                           "(deleted, or a different namespace?); diagnosed from Cloud Logging")
        events = self._list(f"events of namespace {ns}", "Event", core.list_namespaced_event, ns)
        if ns != "default":  # node events are recorded in the default namespace
            events += self._list("node events", "Event", core.list_namespaced_event, "default",
                                 field_selector="involvedObject.kind=Node")
        names = cast(list[str], sorted({(p.get("spec") or {}).get("nodeName") for p in pods} - {None, ""}))
        nodes = self._nodes(core, names)
        # The order a saved folder replays in (events.json, jobset.json, nodes.json, pods.json), so ties between
        # equally good evidence break the same way live and in replay.
        out = events + jobsets + nodes + pods
        self.progress(f"Kubernetes: {len(out)} objects ({len(pods)} pods, {len(names)} nodes), {self.requests} requests")
        return out

    def _nodes(self, core, names: list[str]) -> list[dict]:
        found: list[dict] = []
        if len(names) > READ_NODES_ONE_BY_ONE:
            wanted = set(names)
            found = [n for n in self._list("nodes", "Node", core.list_node)
                     if (n.get("metadata") or {}).get("name") in wanted]
        else:
            for name in names:
                doc = self._call(f"node {name}", core.read_node, name)
                if doc is not None:
                    found.append(doc if "kind" in doc else {"kind": "Node", "apiVersion": "v1", **doc})
        missing = sorted(set(names) - {(n.get("metadata") or {}).get("name") for n in found})
        if missing:
            self.stats.gap(f"Kubernetes API: {len(missing)} node(s) the pods ran on no longer exist "
                           f"({', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}); node facts come from logs")
        return found
