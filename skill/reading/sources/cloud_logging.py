"""The live source: Cloud Logging through google-cloud-logging's REST connection, Kubernetes objects through kube.py.

Cloud Logging's `entries.list` is called page by page through the client's own authorised JSON connection
(`client._connection.api_request`, the call `list_entries` makes on the HTTP path), so each entry arrives as the raw
LogEntry dict — nanosecond timestamps, `receiveTimestamp` and every field intact, which `to_api_repr()` would lose — and
each page is one request we can rate-limit, retry, count and cut. See ../shared/reference/client-apis.md §2.

Quota: "entries.list ... 60 requests per minute, per Google Cloud project" (Cloud Logging "Quotas and limits" page,
https://cloud.google.com/logging/quotas, section "Logging API quotas and limits"; not raisable). The limiter below
keeps us at that rate with a small burst; a 429 RESOURCE_EXHAUSTED still gets exponential backoff with full jitter.

Failing fast: only 429, 500, 502, 503, 504 and transient network errors (a reset, a read timeout, a body that is not a
page) are retried, a bounded number of times. An endpoint that cannot be connected to at all (refused, unknown host,
TLS, connect timeout) before it has ever answered is one SourceError at once, as are 400/401/403/404 and missing
credentials; once a query has run out of retries, later pages get one attempt each, so a dead service costs seconds,
not a retry series per query.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ...errors import SourceError
from ..objects import usable_objects
from ..records import format_ns, parse_ts
from .metrics import SeriesSet
from .base import LogQuery, Source, SourceStats, connection_failure, google_client, past_deadline, unreachable

Progress = Callable[[str], None]
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
DEFAULT_ENDPOINT = "https://logging.googleapis.com"


@dataclass
class Limits:
    """Budgets for one diagnosis. Tests inject tiny backoffs; production keeps the defaults."""

    deadline_s: float = 120.0  # the whole diagnosis (Kubernetes and Logging reads)
    max_requests: int = 60  # entries.list calls per diagnosis: one minute of the project's quota
    max_entries_per_query: int = 10_000  # an uncapped query stops here (and says so in data_gaps)
    page_size: int = 1000  # the API maximum
    rate_per_minute: float = 60.0  # the per-project entries.list quota (see the module docstring)
    burst: int = 10  # requests allowed back to back before the limiter paces them
    retries: int = 6  # attempts per page on 429/500/502/503/504 (DEADLINE_EXCEEDED)
    network_retries: int = 4  # attempts per page on a reset, a read timeout or a body that is not a page
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 32.0
    request_timeout_s: float = 60.0
    connect_timeout_s: float = 10.0  # a TCP/TLS connection not made in this time is "unreachable", not a slow page


class Deadline:
    """A wall-clock budget shared by every read of one diagnosis."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds = seconds
        self.clock = clock
        self.end = clock() + seconds

    def remaining(self) -> float:
        return self.end - self.clock()

    def expired(self) -> bool:
        return self.remaining() <= 0


class RateLimiter:
    """A token bucket: `burst` requests at once, refilled at `per_minute`/60 per second."""

    def __init__(self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rate = per_minute / 60.0
        self.capacity = float(max(1, burst))
        self.tokens = self.capacity
        self.clock, self.sleep = clock, sleep
        self.last = clock()
        self.lock = threading.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now

    def wait_time(self) -> float:
        with self.lock:
            self._refill()
            return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def acquire(self, deadline: Deadline | None = None) -> bool:
        """Take a token, sleeping for it; False (nothing taken) when the wait would pass the deadline."""
        wait = self.wait_time()
        if wait > 0:
            if deadline is not None and wait >= deadline.remaining():
                return False
            self.sleep(wait)
        with self.lock:
            self._refill()
            self.tokens -= 1
        return True

    def left(self) -> int:
        with self.lock:
            self._refill()
            return int(self.tokens)


class _Cut(Exception):
    """A read stopped for a reason that is a data gap, not an error the user must fix; `late` says what the
    --deadline cut short (the last failure, or that no time was left), empty for other reasons."""

    def __init__(self, why: str, late: str = ""):
        super().__init__(why)
        self.late = late


def _retryable(err: Exception) -> str | None:
    """'status' for a retryable HTTP status, 'network' for a transient network error, None for anything else."""
    from google.api_core import exceptions as gx
    import requests

    if isinstance(err, (gx.TooManyRequests, gx.InternalServerError, gx.BadGateway, gx.ServiceUnavailable,
                        gx.GatewayTimeout, gx.DeadlineExceeded)):
        return "status"
    if isinstance(err, (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                        requests.exceptions.JSONDecodeError, _NotAPage)):
        return "network"
    return None


class _NotAPage(Exception):
    """A 200 whose body is JSON but not an entries.list page (a proxy or a captive portal answered)."""


def _describe(err: Exception) -> str:
    code = getattr(err, "code", None)
    if isinstance(code, int):
        return f"HTTP {code} {getattr(err, 'message', '') or type(err).__name__}".strip()
    return type(err).__name__


def _short(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def make_logging_client(project: str, endpoint: str | None = None):
    """A google.cloud.logging Client on the REST transport: ADC, or anonymous for a plain http:// endpoint."""
    from google.cloud import logging as gcl

    options = None
    if endpoint:
        endpoint = endpoint.rstrip("/")
        if endpoint.endswith("/v2"):
            endpoint = endpoint[:-3]
        options = {"api_endpoint": endpoint}
    return google_client(gcl.Client, endpoint, project=project, client_options=options, _use_grpc=False)


class CloudLoggingSource:
    """Reads the engine's LogQuery filters from Cloud Logging, within the quota, a deadline and caps."""

    def __init__(self, project: str, *, endpoint: str | None = None, client=None, limits: Limits | None = None,
                 deadline: Deadline | None = None, progress: Progress | None = None,
                 resource_names: Sequence[str] | None = None, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None):
        self.project = project
        self.limits = limits or Limits()
        self.deadline = deadline or Deadline(self.limits.deadline_s)
        self.client = client or make_logging_client(project, endpoint)
        self.resource_names = list(resource_names or [f"projects/{project}"])
        self.progress = progress or (lambda _msg: None)
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.limiter = RateLimiter(self.limits.rate_per_minute, self.limits.burst, sleep=sleep)
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.stats = SourceStats()
        self.retried = 0
        self.answered = False  # the endpoint has sent an HTTP response: a failed connection is transient from now on
        self.exhausted = False  # a page ran out of retries; later ones get one attempt until one succeeds

    def objects(self) -> list[dict]:
        return []

    # -- one page --------------------------------------------------------------------------------------------

    def _request(self, body: dict) -> dict:
        timeout = max(0.5, min(self.limits.request_timeout_s, self.deadline.remaining()))
        return self.client._connection.api_request(method="POST", path="/entries:list", data=body,
                                                   timeout=(min(self.limits.connect_timeout_s, timeout), timeout))

    def _page(self, q: LogQuery, token: str | None, size: int) -> dict:
        """One entries.list page, rate-limited and retried; SourceError for what the user must fix, _Cut for gaps."""
        body = {"resourceNames": self.resource_names, "filter": q.filter,
                "orderBy": f"timestamp {'desc' if q.order == 'desc' else 'asc'}", "pageSize": size}
        if token:
            body["pageToken"] = token
        allowed = {"status": self.limits.retries, "network": self.limits.network_retries}
        used = {"status": 0, "network": 0}
        while True:
            if self.stats.logging_requests >= self.limits.max_requests:
                raise _Cut(f"the cap of {self.limits.max_requests} entries.list requests per diagnosis was reached")
            if self.deadline.expired() or not self.limiter.acquire(self.deadline):
                late = "no time was left" if self.deadline.expired() else "the quota's wait would have passed it"
                raise _Cut(f"the {self.deadline.seconds:g} s --deadline passed ({late})", late)
            self.stats.logging_requests += 1
            try:
                page = self._request(body) or {}
            except Exception as err:  # noqa: BLE001 - _retry_kind re-raises all but a retryable failure
                last, kind = err, self._retry_kind(err, q, token)
            else:
                self.answered = True
                if isinstance(page, dict):
                    self.exhausted = False
                    return page
                last, kind = _NotAPage(f"a {type(page).__name__} instead of an entries.list page"), "network"
            used[kind] += 1
            if self.exhausted:  # an earlier query ran out of retries: one attempt each until a page comes back
                raise _Cut(f"{_describe(last)} (not retried: an earlier query already ran out of retries)")
            if used[kind] >= max(1, allowed[kind]):
                self.exhausted = True
                raise _Cut(f"{_describe(last)} after {sum(used.values())} attempts")
            cap = min(self.limits.backoff_max_s, self.limits.backoff_initial_s * (2 ** (used[kind] - 1)))
            pause = self.rng.uniform(0, cap)  # "full jitter"
            if pause >= self.deadline.remaining():
                raise _Cut(f"{_describe(last)}, and the {self.deadline.seconds:g} s --deadline left no time to retry",
                           _describe(last))
            self.retried += 1
            self.progress(f"Cloud Logging {_describe(last)} on {q.name}; retry {sum(used.values())} in {pause:.1f}s")
            self.sleep(pause)

    def _retry_kind(self, err: Exception, q: LogQuery, token: str | None) -> str:
        """'status' or 'network' for a failure worth another attempt; SourceError (or _Cut) for the rest."""
        from google.api_core import exceptions as gx
        from google.auth import exceptions as auth_x

        if isinstance(err, gx.GoogleAPICallError):
            self.answered = True  # an HTTP status: the endpoint is there
        if isinstance(err, gx.Forbidden):
            raise SourceError(self._forbidden(err)) from err
        if isinstance(err, gx.Unauthorized):
            raise SourceError(f"Cloud Logging rejected the credentials (HTTP 401) for project {self.project}: run "
                              "`gcloud auth application-default login`") from err
        if isinstance(err, gx.BadRequest):
            if token and "page token" in str(err.message).lower():
                # The filter already worked for the first page: an expired or refused token is a gap, not a bad query.
                raise _Cut(f"Cloud Logging refused the page token (HTTP 400: {_short(err.message, 120)})") from err
            raise SourceError(f"Cloud Logging rejected the filter of query {q.name!r} (HTTP 400: "
                              f"{_short(err.message, 200)}); filter: {' '.join(q.filter.split())}") from err
        if isinstance(err, gx.NotFound):
            raise SourceError(f"project {self.project!r} not found by Cloud Logging (HTTP 404): check --project "
                              "(the project id, not its name or number)") from err
        if isinstance(err, (auth_x.RefreshError, auth_x.DefaultCredentialsError, auth_x.TransportError)):
            raise SourceError("Google Cloud credentials could not be used (" + _short(str(err), 120) + "): run "
                              "`gcloud auth application-default login`") from err
        kind = _retryable(err)
        why = connection_failure(err) if kind == "network" and not self.answered else None
        if why:
            raise SourceError(self._unreachable(why)) from err
        if kind is None:
            raise err  # not a failure of the service: a bug of ours, shown as an internal error
        return kind

    def _unreachable(self, why: str) -> str:
        return unreachable("Cloud Logging", self.endpoint, DEFAULT_ENDPOINT, "--logging-endpoint (or PATHWAYS_WORKLOAD_LOGGING_ENDPOINT)", why)

    def _forbidden(self, err) -> str:
        msg = str(getattr(err, "message", "") or err)
        if "SERVICE_DISABLED" in msg or "has not been used" in msg or "is disabled" in msg:
            return (f"the Cloud Logging API is disabled in project {self.project} (HTTP 403): enable it with "
                    f"`gcloud services enable logging.googleapis.com --project {self.project}`")
        return (f"permission denied reading logs of project {self.project} (HTTP 403): the caller needs "
                f"logging.logEntries.list, e.g. `roles/logging.viewer` on project {self.project}")

    # -- the queries ----------------------------------------------------------------------------------------

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        for q in queries:
            yield from self._read_one(q)

    def _read_one(self, q: LogQuery) -> Iterator[tuple[LogQuery, dict]]:
        cap = q.limit or self.limits.max_entries_per_query
        got, token, edge = 0, None, 0
        self.progress(f"Cloud Logging: reading {q.name} ({self.limiter.left()} requests left in the quota window)")
        while True:
            size = max(1, min(self.limits.page_size, cap - got))
            try:
                page = self._page(q, token, size)
            except _Cut as cut:
                self._gap_cut(q, str(cut), got, edge)
                if cut.late:
                    at = f" at {self.endpoint}" if self.endpoint else ""
                    self.stats.deadline_passed(past_deadline(f"Cloud Logging{at}", f"query {q.name!r}",
                                                             self.deadline.seconds, f"{cut.late}; {got} entries read"))
                return
            for entry in page.get("entries") or ():
                if not isinstance(entry, dict):
                    self.stats.entries_skipped += 1
                    continue
                ts = parse_ts(entry.get("timestamp")) or parse_ts(entry.get("receiveTimestamp"))
                if ts:
                    edge = ts
                    self.stats.last_ts = max(self.stats.last_ts, ts)
                    self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
                self.stats.entries_read += 1
                got += 1
                yield q, entry
            token = page.get("nextPageToken")
            if token and got >= cap:
                if not q.limit:  # a declared limit is a sample by design; the safety cap is a gap
                    self._gap_cut(q, f"the cap of {cap} entries per query was reached", got, edge)
                return
            if not token:
                if got:
                    self.progress(f"Cloud Logging: {q.name}: {got} entries, {self.stats.logging_requests} requests so far")
                return

    def _gap_cut(self, q: LogQuery, why: str, got: int, edge: int) -> None:
        if got and edge:
            side = "before" if q.order == "desc" else "after"
            rest = f"entries {side} {format_ns(edge)} were not read"
        else:
            rest = "nothing of it was read"
        self.stats.gap(f"Cloud Logging query {q.name!r} cut short after {got} entries: {why}; {rest}")
        self.progress(f"Cloud Logging: {q.name}: stopped ({why})")


class LiveSource:
    """The Source protocol over a live workload: objects from the Kubernetes API, log entries from Cloud Logging."""

    def __init__(self, logging: Source, kube=None, *, keep: bool = False):
        self.logging = logging
        self.kube = kube
        self.stats = logging.stats
        if kube is not None:
            kube.stats = self.stats  # one account of requests and gaps
        self.keep = keep
        self.entries: dict[str, dict] = {}
        self._objects: list[dict] | None = None
        self.metrics: SeriesSet | None = None  # the workload's time series, when read (skill/reading/sources/monitoring.py)

    def objects(self) -> list[dict]:
        """The Kubernetes objects in the shape the engine reads; the others are counted skipped and named in the gaps."""
        if self._objects is None:
            if self.kube is None:
                self._objects = []
                self.stats.gap("Kubernetes API not read (--no-kube): Pods, the JobSet and events come from "
                               "Cloud Logging only")
            else:
                self._objects = usable_objects(self.kube.objects(), self.stats)
        return self._objects

    def expect(self, queries: Sequence[LogQuery]) -> None:
        """Pass templates of later reads on to a log source that reads ahead (Log Analytics); others ignore them."""
        ahead = getattr(self.logging, "expect", None)
        if ahead is not None:
            ahead(queries)

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        for q, entry in self.logging.read(queries):
            if self.keep and isinstance(entry.get("insertId"), str):
                self.entries.setdefault(entry["insertId"], entry)
            yield q, entry
