"""A loopback fake Kubernetes API server: events, pods, nodes and JobSets from a fixture, GET only.

Serves /api/v1/namespaces/N/events (fieldSelector a=b,c!=d; limit/continue), /api/v1/namespaces/N/pods
(labelSelector k=v; limit/continue), /api/v1/nodes/NAME and /apis/jobset.x-k8s.io/v1alpha2/namespaces/N/jobsets/NAME.
List items carry no kind/apiVersion, as the real API server sends them. Every verb but GET is recorded and answered 405;
tests assert that none arrived. Faults can be injected: 401/403 on everything, a 410 Gone for a stale `continue`
token, a server-side page cap (fewer items than `limit`, with a continue token, as a real API server may send),
connection resets, slow answers and 5xx on chosen paths.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from .exports import LIST_ITEM_KIND, load_objects  # noqa: F401 - where importers of the fake have found them
from .loopback import JSONHandler, LoopbackServer

LIST_KIND = {"Event": "EventList", "Pod": "PodList", "Node": "NodeList"}


@dataclass
class FakeKube:
    objects: list[dict]
    requests: list[tuple[str, str]] = field(default_factory=list)  # (verb, path?query)
    deny: int | None = None  # 401 or 403 for every request when set
    expire_continue: int = 0  # answer this many requests with a continue token 410 Gone (reason Expired)
    page_cap: int | None = None  # at most this many items per list page, whatever the limit asked
    reset: int = 0  # close this many connections with an RST instead of answering
    delay_s: float = 0.0  # before each answer
    error_paths: dict[str, int] = field(default_factory=dict)  # path substring -> HTTP status to answer
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def non_get(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] != "GET"]

    def of_kind(self, kind: str, namespace: str | None = None) -> list[dict]:
        return [o for o in self.objects if o.get("kind") == kind
                and (namespace is None or (o.get("metadata") or {}).get("namespace", "default") == namespace)]

    def get(self, path: str, query: dict) -> tuple[int, dict]:
        parts = [p for p in path.split("/") if p]
        for fragment, code in self.error_paths.items():
            if fragment in path:
                return code, status(code, "InternalError", f"fake {code} for {path}")
        if self.expire_continue > 0 and query.get("continue"):
            self.expire_continue -= 1
            return 410, status(410, "Expired", "The provided continue parameter is too old to display a consistent "
                                               "list result. You can start a new list without the continue parameter.")
        if self.deny:
            return self.deny, status(self.deny, "Forbidden" if self.deny == 403 else "Unauthorized",
                                     f'{path} is forbidden: User "fake" cannot get this resource')
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 5 and parts[4] in ("events", "pods"):
            kind = "Event" if parts[4] == "events" else "Pod"
            items = self.of_kind(kind, parts[3])
            if "fieldSelector" in query:
                items = [o for o in items if _fields(o, query["fieldSelector"])]
            if "labelSelector" in query:
                items = [o for o in items if _labels(o, query["labelSelector"])]
            return 200, _page(kind, items, query, self.page_cap)
        if parts[:3] == ["api", "v1", "nodes"] and len(parts) == 4:
            for o in self.of_kind("Node"):
                if o["metadata"]["name"] == parts[3]:
                    return 200, o
            return 404, status(404, "NotFound", f'nodes "{parts[3]}" not found')
        if parts[:4] == ["apis", "jobset.x-k8s.io", "v1alpha2", "namespaces"] and len(parts) == 7 and parts[5] == "jobsets":
            for o in self.of_kind("JobSet", parts[4]):
                if o["metadata"]["name"] == parts[6]:
                    return 200, o
            return 404, status(404, "NotFound", f'jobsets.jobset.x-k8s.io "{parts[6]}" not found')
        return 404, status(404, "NotFound", "the server could not find the requested resource")


def status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def _page(kind: str, items: list[dict], query: dict, cap: int | None = None) -> dict:
    start = int(query.get("continue") or 0)
    limit = int(query.get("limit") or 0) or len(items) or 1
    limit = min(limit, cap) if cap else limit
    page = items[start:start + limit]
    meta = {"resourceVersion": "1000"}
    if start + limit < len(items):
        meta["continue"] = str(start + limit)
    stripped = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
    return {"kind": LIST_KIND[kind], "apiVersion": "v1", "metadata": meta, "items": stripped}


def _path_value(obj: dict, dotted: str):
    cur: object = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _fields(obj: dict, selector: str) -> bool:
    for term in filter(None, selector.split(",")):
        neg = "!=" in term
        key, val = term.split("!=" if neg else "=", 1)
        got = str(_path_value(obj, key.strip()) or "")
        if (got == val) == neg:
            return False
    return True


def _labels(obj: dict, selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, val = term.split("=", 1)
        if labels.get(key.strip()) != val.strip():
            return False
    return True


def _handler(state: FakeKube):
    class Handler(JSONHandler):
        content_type = "application/json"

        def do_GET(self):
            with state.lock:
                state.requests.append(("GET", self.path))
                drop = state.reset > 0
                state.reset -= 1 if drop else 0
            if drop:
                self.close_connection = True
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                return
            if state.delay_s:
                time.sleep(state.delay_s)
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            self._send(*state.get(url.path, query))

        def _refuse(self):
            with state.lock:
                state.requests.append((self.command, self.path))
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            self._send(405, status(405, "MethodNotAllowed", f"{self.command} is not allowed by the fake"))

        do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _refuse

    return Handler


class KubeServer(LoopbackServer):

    def __init__(self, state: FakeKube, port: int = 0):
        self.state = state
        super().__init__(_handler(state), port)


def main() -> int:
    """python -m pathways_workload.evals.fakes.kube_server DIR [--port N]: the folder's Kubernetes objects behind a read-only API."""
    from . import serve

    args = serve.arguments("pathways_workload.evals.fakes.kube_server")
    s = serve.describe(args.folder)
    server = KubeServer(FakeKube(s.objects), args.port)
    return serve.run(server, f"Kubernetes API fake: {len(s.objects)} objects of {args.folder}",
                     f"pathways-workload diagnose --project {s.project} --location {s.location or 'LOCATION'} "
                     f"--logging-endpoint LOGGING_FAKE_URL --kube-server {{url}} {serve.window(s)}")


if __name__ == "__main__":
    raise SystemExit(main())
