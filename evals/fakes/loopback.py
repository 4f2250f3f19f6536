"""A threaded HTTP server on 127.0.0.1:<free port>, started and stopped as a context manager."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Request:
    """One request a fake served, as its request log keeps it (entries: how many LogEntries a page returned)."""

    method: str
    path: str
    body: dict
    status: int = 200
    entries: int = 0


class JSONHandler(BaseHTTPRequestHandler):
    """What every fake's request handler shares: no access log, and JSON replies."""

    content_type = "application/json; charset=UTF-8"

    def log_message(self, *a) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that gave up (a timeout, a reset the test injected) is expected; anything else is still shown.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    """Serves `handler` on loopback in a daemon thread; `url` is what a client is pointed at."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0):
        self.httpd = _QuietServer(("127.0.0.1", port), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
