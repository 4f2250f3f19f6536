"""The live metrics source: the workload's time series read from Cloud Monitoring with the real client
(`google-cloud-monitoring`, `MetricServiceClient.list_time_series`; the installed client has only its gRPC transport,
which a loopback fake serves: evals/fakes/monitoring_server.py), one filter per metric type
scoped to the cluster, the namespace and the JobSet's pods, aligned to 60 s, inside the diagnosis' `--deadline`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...errors import SourceError
from .base import google_client, unreachable
from .metrics import SeriesSet

ENV = "PATHWAYS_WORKLOAD_MONITORING_ENDPOINT"
DEFAULT = "monitoring.googleapis.com"
MAX_REQUESTS = 20  # list_time_series calls (pages included) per diagnosis: far under the read quota
CONTAINER = ("kubernetes.io/container/accelerator/duty_cycle", "kubernetes.io/container/accelerator/memory_used",
             "kubernetes.io/container/accelerator/memory_total")
NODE = ("kubernetes.io/node/interruption_count", "kubernetes.io/node/status_condition")
POOL = "kubernetes.io/node_pool/interruption_count"
RESTARTS = "prometheus.googleapis.com/kube_jobset_restarts/gauge"
ALIGNER = {"kubernetes.io/node/interruption_count": "ALIGN_SUM", "kubernetes.io/node/status_condition": "ALIGN_MAX",
           POOL: "ALIGN_SUM", RESTARTS: "ALIGN_MAX"}  # the rest: ALIGN_MEAN


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def filters(cluster: str, namespace: str, jobset: str) -> list[tuple[str, str]]:
    """(metric type, Monitoring filter) for every series a diagnosis reads: the JobSet's containers, the cluster's
    nodes and node pools (narrowed to the workload's own by the facts), the JobSet's restart gauge."""
    c = f"resource.labels.cluster_name = {_quote(cluster)}"
    out = [(t, f'metric.type = "{t}" AND resource.type = "k8s_container" AND {c} AND resource.labels.namespace_name = '
               f'{_quote(namespace)} AND resource.labels.pod_name = starts_with({_quote(jobset + "-")})') for t in CONTAINER]
    out += [(t, f'metric.type = "{t}" AND resource.type = "k8s_node" AND {c}') for t in NODE]
    out.append((POOL, f'metric.type = "{POOL}" AND resource.type = "k8s_node_pool" AND {c}'))
    out.append((RESTARTS, f'metric.type = "{RESTARTS}" AND {c} AND metric.labels.jobset_name = {_quote(jobset)}'))
    return out


@dataclass
class MonitoringSource:
    """Reads the workload's series; `requests` counts list_time_series pages."""

    project: str
    endpoint: str | None = None
    remaining: Callable[[], float] = lambda: 60.0  # seconds left of the diagnosis' deadline
    progress: Callable[[str], None] = lambda _m: None
    client: object = None
    requests: int = 0

    def _client(self):
        """The real client on its gRPC transport: a plain `http://host:port` endpoint (a loopback fake, an emulator) gets
        an insecure channel and no credentials; otherwise Application Default Credentials over TLS."""
        if self.client is None:
            try:
                from google.cloud import monitoring_v3
            except ImportError as err:
                raise SourceError("reading metrics live needs google-cloud-monitoring (a dependency: reinstall "
                                  "pathways-workload), or leave the series out with --no-metrics") from err
            if self.endpoint and self.endpoint.startswith("http://"):
                import grpc
                from google.auth.credentials import AnonymousCredentials
                from google.cloud.monitoring_v3.services.metric_service.transports import MetricServiceGrpcTransport

                channel = grpc.insecure_channel(self.endpoint.removeprefix("http://").rstrip("/"))
                self.client = monitoring_v3.MetricServiceClient(transport=MetricServiceGrpcTransport(
                    channel=channel, credentials=AnonymousCredentials()))
            else:
                options = {"api_endpoint": self.endpoint.removeprefix("https://")} if self.endpoint else None
                self.client = google_client(monitoring_v3.MetricServiceClient, None, client_options=options)
        return self.client

    def read(self, cluster: str, namespace: str, jobset: str, start_ns: int, end_ns: int) -> SeriesSet:
        """Every series `filters` names over [start, end]; a connection that cannot be made, a refusal or no answer
        within the deadline is one SourceError (the CLI's exit 2)."""
        from google.api_core import exceptions as gx
        from google.cloud import monitoring_v3

        found = SeriesSet()
        client = self._client()
        interval = {"start_time": {"seconds": start_ns // 10**9}, "end_time": {"seconds": -(-end_ns // 10**9)}}
        for metric, flt in filters(cluster, namespace, jobset):
            aggregation = {"alignment_period": {"seconds": 60},
                           "per_series_aligner": getattr(monitoring_v3.Aggregation.Aligner, ALIGNER.get(metric, "ALIGN_MEAN"))}
            request = {"name": f"projects/{self.project}", "filter": flt, "interval": interval,
                       "aggregation": aggregation, "view": monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.FULL}
            left = self.remaining()
            if left <= 0:
                raise SourceError(f"Cloud Monitoring: no answer within --deadline ({metric} not read)")
            try:
                pages = client.list_time_series(request=request, retry=None, timeout=left).pages
                for page in pages:  # each page is one request
                    self.requests += 1
                    doc = type(page).to_dict(page, preserving_proto_field_name=False, use_integers_for_enums=False)
                    found.take({"timeSeries": doc.get("timeSeries") or []}, "Cloud Monitoring")
                    if self.requests >= MAX_REQUESTS and page.next_page_token:
                        found.problems.append(f"Cloud Monitoring: stopped after {MAX_REQUESTS} requests; "
                                              "later series not read")
                        return found
            except gx.DeadlineExceeded as err:
                raise SourceError(f"Cloud Monitoring: no answer within --deadline ({metric} not read)") from err
            except gx.ServiceUnavailable as err:  # gRPC's word for a connection that could not be made
                raise SourceError(unreachable("Cloud Monitoring", self.endpoint, DEFAULT, f"{ENV}",
                                              "cannot connect")) from err
            except gx.GoogleAPICallError as err:
                raise SourceError(f"Cloud Monitoring refused the read of {metric}: {err.code} {err.message}"
                                  " (roles/monitoring.viewer is needed)") from err
        self.progress(f"read {len(found.series)} time series in {self.requests} Cloud Monitoring requests")
        return found


def read_live(project: str, cluster: str, namespace: str, jobset: str, start_ns: int, end_ns: int, *,
              endpoint: str | None, logging_endpoint: str | None, remaining: Callable[[], float],
              progress: Callable[[str], None]) -> SeriesSet:
    """The workload's series for a live diagnosis, or an empty set whose problems say why none were read: the client
    is not installed, or Cloud Logging is an emulator and no Monitoring endpoint was given (never the real API beside a
    fake). A refused or silent endpoint is a SourceError."""
    if remaining() <= 0:  # the other reads spent the deadline: the series are extra evidence, not worth an error
        return SeriesSet(problems=["Cloud Monitoring not read: --deadline was spent by the other reads"])
    if endpoint is None and logging_endpoint:
        return SeriesSet(problems=["Cloud Monitoring not read: a Cloud Logging endpoint was given and no Monitoring "
                                   f"endpoint ({ENV})"])
    try:
        import google.cloud.monitoring_v3  # noqa: F401
    except ImportError:
        return SeriesSet(problems=["Cloud Monitoring not read: google-cloud-monitoring is not installed"])
    src = MonitoringSource(project, endpoint=endpoint, remaining=remaining, progress=progress)
    return src.read(cluster, namespace, jobset, start_ns, end_ns)
