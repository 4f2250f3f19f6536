"""A loopback fake of Cloud Monitoring's `MetricService.ListTimeSeries` on its gRPC wire protocol (the only transport
the installed `google-cloud-monitoring` client has), serving an export folder's series: its Monitoring API answers as they are, its Prometheus range
results as the `k8s_container` / `k8s_node` series they were queried from. The filter terms the live source sends are
evaluated (`metric.type`, `resource.type`, `resource.labels.*`, `metric.labels.*`: `=` a string or `starts_with(...)`,
joined by AND); anything else is INVALID_ARGUMENT, as the API answers a filter it cannot parse.

    python -m pathways_workload.evals.fakes.monitoring_server DIR [--port N]
"""

from __future__ import annotations

import re
from pathlib import Path

from pathways_workload.skill.reading.records import format_ns, parse_ts
from pathways_workload.skill.reading.sources.files import FileReport, iter_documents, list_files
from pathways_workload.skill.reading.sources.metrics import Series, SeriesSet, is_series_doc

PAGE = 50  # series per page unless the client asks for fewer
_TERM = re.compile(r'^\s*([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|starts_with\(\s*"((?:[^"\\]|\\.)*)"\s*\))\s*$')


def load_series(folder: Path, cluster: str = "", project: str = "", location: str = "") -> list[Series]:
    """Every series of the folder's metric files; a Prometheus pod series gets the resource labels it was read from."""
    found = SeriesSet()
    for path in list_files(folder):
        for doc in iter_documents(path, FileReport(path)):
            if is_series_doc(doc):
                found.take(doc, path.name)
    out = []
    for s in found.series:
        if not s.resource_type or s.resource_type == "prometheus_target":
            rtype = "k8s_container" if s.pod else "k8s_node" if s.node else "prometheus_target"
            scope = {k: v for k, v in (("project_id", project), ("location", location), ("cluster_name", cluster)) if v}
            s = Series(s.metric, s.labels, rtype, {**scope, **s.resource}, s.metadata, s.kind or "GAUGE", s.points, s.origin)
        out.append(s)
    return out


def matches(s: Series, flt: str) -> bool:
    """Whether the series passes every `AND` term of a Monitoring filter; ValueError for a term it cannot read."""
    for term in re.split(r"\s+AND\s+", flt.strip()):
        m = _TERM.match(term)
        if not m:
            raise ValueError(f"cannot parse filter term {term!r}")
        key, eq, prefix = m.group(1), m.group(2), m.group(3)
        if key == "metric.type":
            have = s.metric
        elif key == "resource.type":
            have = s.resource_type
        elif key.startswith("resource.labels."):
            have = s.resource.get(key.removeprefix("resource.labels."), "")
        elif key.startswith("metric.labels."):
            have = s.labels.get(key.removeprefix("metric.labels."), "")
        else:
            raise ValueError(f"unknown filter field {key!r}")
        if (eq is not None and have != eq) or (prefix is not None and not have.startswith(prefix)):
            return False
    return True


def as_time_series(s: Series, start: int, end: int) -> dict:
    """The series as the API returns it: points in [start, end], newest first, int64 as strings."""
    pts = [{"interval": {"startTime": format_ns(t - 60 * 10**9), "endTime": format_ns(t)},
            "value": {"doubleValue": v} if s.metric.endswith(("duty_cycle", "memory_used", "memory_total"))
            else {"int64Value": str(int(v))}} for t, v in reversed(s.points) if start <= t <= end]
    out = {"metric": {"type": s.metric, "labels": s.labels}, "resource": {"type": s.resource_type, "labels": s.resource},
           "metricKind": s.kind or "GAUGE", "valueType": "DOUBLE" if "doubleValue" in (pts[0]["value"] if pts else {}) else "INT64",
           "points": pts}
    if s.metadata:
        out["metadata"] = {"userLabels": s.metadata}
    return out


class MonitoringFake:
    """`google.monitoring.v3.MetricService/ListTimeSeries` over gRPC on 127.0.0.1 (a context manager); `url` is what the
    client is pointed at, `requests` the ListTimeSeriesRequest of every call as dicts. `silent`: a port that accepts
    connections and never answers (a hung endpoint)."""

    def __init__(self, series: list[Series], port: int = 0, *, silent: bool = False):
        import socket
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        self.requests: list = []
        self.series, self.silent = series, silent
        if silent:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", port))
            self.sock.listen(16)  # the kernel completes handshakes; nobody reads
            self.port = self.sock.getsockname()[1]
            return
        from google.cloud import monitoring_v3

        handler = grpc.unary_unary_rpc_method_handler(
            self._list, request_deserializer=monitoring_v3.ListTimeSeriesRequest.deserialize,
            response_serializer=monitoring_v3.ListTimeSeriesResponse.serialize)
        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("google.monitoring.v3.MetricService", {"ListTimeSeries": handler}),))
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> MonitoringFake:
        if not self.silent:
            self.server.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.silent:
            self.sock.close()
        else:
            self.server.stop(0)

    def _list(self, request, context):
        import grpc
        from google.cloud import monitoring_v3

        req = type(request).to_dict(request)
        self.requests.append(req)
        if not re.fullmatch(r"projects/[^/]+", request.name):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad name {request.name!r}")
        try:
            chosen = [s for s in self.series if matches(s, request.filter)]
        except ValueError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        iv = request.interval
        start = int(iv.start_time.timestamp()) * 10**9 if iv.start_time else 0
        end = int(iv.end_time.timestamp()) * 10**9 if iv.end_time else 2**62
        docs = [d for d in (as_time_series(s, start, end) for s in chosen) if d["points"]]
        at, size = int(request.page_token or 0), request.page_size or PAGE
        body: dict = {"timeSeries": docs[at:at + size]}
        if at + size < len(docs):
            body["nextPageToken"] = str(at + size)
        import json

        return monitoring_v3.ListTimeSeriesResponse.from_json(json.dumps(body), ignore_unknown_fields=True)


def main() -> int:
    from .serve import arguments, describe, run

    args = arguments("pathways_workload.evals.fakes.monitoring_server")
    w = describe(args.folder)
    series = load_series(args.folder, w.cluster, w.project, w.location)
    if not series:
        raise SystemExit(f"{args.folder}: no time series (a Monitoring API timeSeries.list answer or a Prometheus "
                         "query_range result)")
    end = format_ns(max(max(s.points[-1][0] for s in series), parse_ts(w.end)))  # the data ends with its last point
    return run(MonitoringFake(series, args.port), f"Cloud Monitoring fake ({len(series)} series, gRPC)",
               f"pathways-workload diagnose --project {w.project} --location {w.location} --cluster {w.cluster} "
               f"--jobset {w.jobset} --namespace {w.namespace} --start {w.start} --end {end} --no-kube "
               "--monitoring-endpoint {url} --logging-endpoint LOGGING_FAKE_URL")


if __name__ == "__main__":
    raise SystemExit(main())
