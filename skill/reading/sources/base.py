"""What every source offers the engine: Kubernetes objects, and log entries selected by Logging filters."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from ...errors import SourceError

# What a connection failure is, when no retry mends it: the first exception type found in the chain names it.
_UNREACHABLE = (
    ("unknown host", ("gaierror", "NameResolutionError")),
    ("connection refused", ("ConnectionRefusedError",)),
    ("TLS handshake failed", ("SSLError", "SSLCertVerificationError")),
    ("cannot connect", ("NewConnectionError",)),  # no route, network unreachable (urllib3 2 makes it a
    ("connection timed out", ("ConnectTimeoutError",)),  # ConnectTimeoutError subclass, hence the order)
)


@dataclass(frozen=True)
class LogQuery:
    """One Cloud Logging read: a filter string, an order and an optional cap on entries."""

    name: str
    filter: str
    order: str = "asc"  # "asc" or "desc", as Cloud Logging's orderBy "timestamp asc|desc"
    limit: int | None = None
    # a template announced to a source ahead (Source.expect): the limit holds per route (logName, resource, labels)
    per_route: bool = False


@dataclass
class SourceStats:
    """What a source read and what it could not; the engine copies this into budget and data_gaps."""

    logging_requests: int = 0
    entries_read: int = 0
    entries_skipped: int = 0
    gaps: list[str] = field(default_factory=list)
    last_ts: int = 0  # newest timestamp seen in any entry read (replay: "now")
    first_ts: int = 0
    files: int | None = None  # replay: the export files read (None for live sources)
    timed_out: str = ""  # the first read that did not finish within --deadline, in one line (past_deadline)

    def gap(self, text: str) -> None:
        if text not in self.gaps:
            self.gaps.append(text)

    def deadline_passed(self, line: str) -> None:
        """Note a read the --deadline cut (the first one is what a diagnosis with nothing read reports)."""
        self.timed_out = self.timed_out or line


class Source(Protocol):
    """A place the evidence comes from: an export folder, or Cloud Logging plus the Kubernetes API.

    A source that pays per scan may also offer `expect(templates)`: the engine announces there, before its first
    read, templates of the reads it will make later (LogQuery, `per_route` where its limit holds per route), so one
    scan can serve several phases (skill/reading/sources/log_analytics.py). The others need not have it."""

    stats: SourceStats

    def objects(self) -> list[dict]:
        """Kubernetes objects (Pods, Events, JobSets, Nodes ...) as plain JSON dicts."""
        ...

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """Raw LogEntry dicts (camelCase) matching each query, tagged with the query."""
        ...


def google_client(make: Callable[..., Any], endpoint: str | None, **kwargs: Any) -> Any:
    """A Google Cloud client from `make(**kwargs)`: anonymous against a plain http:// endpoint (an emulator or a
    loopback fake: no credentials to send, none to find), else Application Default Credentials; missing ones are one
    SourceError saying how to get them."""
    from google.auth import exceptions as auth_x

    try:
        if endpoint and urlsplit(endpoint).scheme == "http":
            from google.auth.credentials import AnonymousCredentials

            return make(credentials=AnonymousCredentials(), **kwargs)
        return make(**kwargs)
    except auth_x.DefaultCredentialsError as err:
        raise SourceError("no Google Cloud credentials found (Application Default Credentials): run "
                          "`gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS") from err


def unreachable(service: str, endpoint: str | None, default: str, flag: str, why: str) -> str:
    """One line for an endpoint no connection could be made to (`why`: connection_failure's words), with what to check
    for that kind of failure; `flag` is the option that set `endpoint`, when it was given."""
    given = endpoint is not None
    fix = {
        "connection refused": f"nothing listens there: check {flag}, or leave it unset for the real API"
                              if given else "check the network and proxy (HTTPS_PROXY) settings",
        "unknown host": f"the host name does not resolve: check {flag} and DNS" if given
                        else "the host name does not resolve: check DNS and the proxy (HTTPS_PROXY) settings",
        "TLS handshake failed": "check the scheme (http:// for a plain-HTTP emulator) and the CA bundle "
                                "(REQUESTS_CA_BUNDLE)",
    }.get(why, "check the network path and proxy (HTTPS_PROXY) settings" + (f", and {flag}" if given else ""))
    return f"cannot reach {service} at {endpoint or default} ({why}): {fix}"


def past_deadline(service: str, what: str, seconds: float, detail: str, fix: str = "narrow the window") -> str:
    """One line for a read that did not finish within --deadline, the same words for every source."""
    return (f"{service} {what} did not finish within the {seconds:g} s --deadline ({detail}): retry later, raise "
            f"--deadline or {fix}")


def read_timed_out(err: BaseException) -> bool:
    """Whether `err` (a requests or urllib3 error, or what it wraps) is an answer that did not come in time (a read
    timeout), as opposed to a connection never made or a reset."""
    slow = (("read timeout", ("ReadTimeout", "ReadTimeoutError", "TimeoutError")),)
    return connection_failure(err) is None and _kinds(err, slow) is not None


def connection_failure(err: BaseException) -> str | None:
    """'unknown host', 'connection refused', 'TLS handshake failed', 'cannot connect' or 'connection timed out' when
    `err` (a requests or urllib3 error, or what it wraps) is a connection that could not be made at all; None for
    anything else (a reset, a read timeout, an HTTP status), which may pass on a retry."""
    return _kinds(err, _UNREACHABLE)


def _kinds(err: BaseException, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    """The first kind of `table` one of whose exception type names is in err's chain."""
    names: set[str] = set()
    todo: list[BaseException] = [err]
    seen: set[int] = set()
    while todo and len(seen) < 32:  # the chain: urllib3's `reason`, __cause__/__context__, exceptions in args
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        names.update(t.__name__ for t in type(e).__mro__)
        todo += [x for x in (getattr(e, "reason", None), e.__cause__, e.__context__, *e.args)
                 if isinstance(x, BaseException)]
    return next((kind for kind, types in table if names.intersection(types)), None)
