"""A loopback fake of the Cloud Logging v2 REST API: POST /v2/entries:list over fixture entries.

Filters are evaluated by the project's own evaluator (skill.reading.evaluate.compile_filter), so a wrong filter matches nothing, as
in production. Supports orderBy "timestamp asc|desc" (ties by insertId), pageSize (1..1000, default 50) and
nextPageToken; keeps a request log; faults can be injected: an HTTP status, a connection reset, a slow page, a 400 for
a page token, an empty page that only carries a token (a search still in progress), a 200 whose body is not JSON.
Error bodies have the shape the Google client parses: {"error": {"code", "message", "status"}}.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from pathways_workload.skill.errors import FilterSyntaxError
from pathways_workload.skill.reading.evaluate import compile_filter
from pathways_workload.skill.reading.records import parse_ts

from .exports import load_entries, project_of  # noqa: F401 - where importers of the fake have found them
from .loopback import JSONHandler, LoopbackServer, Request

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


@dataclass
class Fault:
    status: int
    times: int = 1
    after: int = 0  # let this many entries:list requests through first
    message: str = ""
    kind: str = "status"  # status | reset | slow | bad_token | empty | garbage
    seconds: float = 0.0  # slow: the delay before the page is answered


@dataclass
class FakeLogging:
    """The server state: entries, the request log, injected faults and delays."""

    entries: list[dict]
    project: str = "p"
    requests: list[Request] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    delay_s: float = 0.0
    _sorted: list[tuple[int, str, dict]] = field(default_factory=list)
    _cache: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        self._sorted = sorted(((parse_ts(e.get("timestamp")), e.get("insertId", ""), e) for e in self.entries),
                              key=lambda t: (t[0], t[1]))

    def fail(self, status: int, times: int = 1, after: int = 0, message: str = "") -> None:
        self.faults.append(Fault(status, times, after, message))

    def inject(self, kind: str, times: int = 1, after: int = 0, seconds: float = 0.0) -> None:
        """A fault that is not a plain status: reset, slow, bad_token (400 on any request with a page token),
        empty ({"nextPageToken": <same token>}, no entries) or garbage (200 with a body that is not JSON)."""
        self.faults.append(Fault(400 if kind == "bad_token" else 200, times, after, kind=kind, seconds=seconds))

    @property
    def list_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.startswith("/v2/entries:list")]

    @property
    def entries_sent(self) -> int:
        return sum(r.entries for r in self.list_requests)

    def _fault(self, body: dict | None = None) -> Fault | None:
        n = len(self.list_requests) - 1
        with self.lock:
            for f in self.faults:
                if f.kind == "bad_token" and not (body or {}).get("pageToken"):
                    continue
                if f.times > 0 and n >= f.after:
                    f.times -= 1
                    return f
        return None

    def matching(self, filt: str, order: str) -> list[dict]:
        key = (filt, order)
        if key not in self._cache:
            pred = compile_filter(filt)
            rows = [e for _, _, e in self._sorted if pred(e)]
            if order == "timestamp desc":
                rows.reverse()
            self._cache[key] = rows
        return self._cache[key]

    def handle(self, body: dict, fault: Fault | None = None) -> tuple[int, dict]:
        """One entries.list call: (status, response body)."""
        if fault and fault.kind == "slow":
            time.sleep(fault.seconds)
        elif fault and fault.kind == "bad_token":
            return 400, error(400, f"Invalid page token: {str(body.get('pageToken'))[:40]!r} (expired or malformed)")
        elif fault and fault.kind == "empty":
            return 200, {"nextPageToken": str(body.get("pageToken") or 0)}
        elif fault and fault.kind == "status":
            return fault.status, error(fault.status, fault.message or f"fake {STATUS.get(fault.status, 'ERROR')}")
        if self.delay_s:
            time.sleep(self.delay_s)
        names = body.get("resourceNames") or []
        if names != [f"projects/{self.project}"]:
            if any(n.startswith("projects/") for n in names):
                return 404, error(404, f"Project {names[0]!r} not found or permission denied.")
            return 400, error(400, "resourceNames: at least one resource name is required")
        order = body.get("orderBy") or "timestamp asc"
        if order not in ("timestamp asc", "timestamp desc"):
            return 400, error(400, f"Invalid orderBy: {order}")
        size = body.get("pageSize") or 50
        if not isinstance(size, int) or size < 1 or size > 1000:
            return 400, error(400, f"pageSize must be between 1 and 1000, got {size}")
        try:
            rows = self.matching(body.get("filter") or "", order)
        except FilterSyntaxError as err:
            return 400, error(400, f"Invalid filter: {err}")
        start = int(body.get("pageToken") or 0)
        page = rows[start:start + size]
        out: dict = {"entries": page} if page else {}
        if start + size < len(rows):
            out["nextPageToken"] = str(start + size)
        return 200, out


def error(code: int, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": STATUS.get(code, "UNKNOWN")}}


def _handler(state: FakeLogging):
    class Handler(JSONHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(n) or b"{}")
            except ValueError:
                body = {}
            req = Request("POST", self.path, body)
            with state.lock:
                state.requests.append(req)
            if not self.path.split("?")[0] == "/v2/entries:list":
                req.status = 404
                return self._send(404, error(404, f"no such method {self.path}"))
            fault = state._fault(body)
            if fault and fault.kind == "reset":
                req.status = -1  # an RST instead of a response, as a dropped connection looks to the client
                self.close_connection = True
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                return
            if fault and fault.kind == "garbage":
                req.status = 200
                data = b"<html><body>502 Bad Gateway (a proxy)</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            status, out = state.handle(body, fault)
            req.status, req.entries = status, len(out.get("entries", ()))
            self._send(status, out)

        def do_GET(self):
            with state.lock:
                state.requests.append(Request("GET", self.path, {}, 404))
            self._send(404, error(404, "not found"))

    return Handler


class LoggingServer(LoopbackServer):
    """Runs a FakeLogging on 127.0.0.1:<free port> in a thread; `url` is the endpoint for the client."""

    def __init__(self, state: FakeLogging, port: int = 0):
        self.state = state
        super().__init__(_handler(state), port)


def main() -> int:
    """python -m pathways_workload.evals.fakes.logging_server DIR [--port N]: the folder's log entries behind entries.list."""
    from . import serve

    args = serve.arguments("pathways_workload.evals.fakes.logging_server")
    s = serve.describe(args.folder)
    server = LoggingServer(FakeLogging(s.entries, project=s.project), args.port)
    return serve.run(server, f"Cloud Logging fake: {len(s.entries)} entries of {args.folder} (project {s.project})",
                     f"pathways-workload diagnose --project {s.project} --location {s.location or 'LOCATION'} "
                     f"--logging-endpoint {{url}} --no-kube {serve.window(s)}")


if __name__ == "__main__":
    raise SystemExit(main())
