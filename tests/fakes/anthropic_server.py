"""A loopback replay fake of the Anthropic Messages API (POST /v1/messages), fed from recorded conversations.

Each request pops the next recorded `Message` JSON; `"stream": true` requests get the SSE event sequence of that
message. Queued `("error", status, body)` tuples become error responses. When the script is exhausted the fake
answers 500 with `x-should-retry: false`, so the client never retries silently. Every request body is kept in
`requests` for assertions.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"


def load_recording(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text())


def answer_turn(doc: dict, *, text: str = "", n: int = 99, usage: dict | None = None) -> dict:
    """A recorded assistant turn that answers through `submit_diagnosis` (after optional prose)."""
    content = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": f"toolu_answer_{n}", "name": "submit_diagnosis", "input": doc}]
    return {"id": f"msg_answer_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": "tool_use", "stop_sequence": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 5}}


def _sse(msg: dict) -> bytes:
    events = []

    def ev(kind: str, data: dict) -> None:
        events.append(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n")

    start = {**msg, "content": [], "stop_reason": None, "usage": {**msg["usage"], "output_tokens": 0}}
    ev("message_start", {"message": start})
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            ev("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
            ev("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            ev("content_block_start", {"index": i, "content_block": {**block, "input": {}}})
            ev("content_block_delta", {"index": i, "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}})
        ev("content_block_stop", {"index": i})
    ev("message_delta", {"delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                         "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
    ev("message_stop", {})
    return "".join(events).encode()


class FakeAnthropic:
    """`with FakeAnthropic(turns) as fake: Anthropic(api_key="test", base_url=fake.url, max_retries=0)`."""

    def __init__(self, turns: list):
        self.queue: deque = deque(turns)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json", headers=None) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.paths.append(self.path)
                fake.requests.append(body)
                if self.path.split("?")[0] != "/v1/messages":
                    return self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
                if not fake.queue:
                    return self._send(500, json.dumps({"type": "error", "error": {
                        "type": "api_error", "message": "replay script exhausted"}}).encode(),
                        headers={"x-should-retry": "false"})
                item = fake.queue.popleft()
                if isinstance(item, (tuple, list)) and item and item[0] == "error":
                    _, status, err = item[:3]
                    return self._send(status, json.dumps(err).encode(), headers={"x-should-retry": "false"})
                if body.get("stream"):
                    return self._send(200, _sse(item), "text/event-stream")
                return self._send(200, json.dumps(item).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
