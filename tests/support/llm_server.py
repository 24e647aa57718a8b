"""A real HTTP/1.1 model server on 127.0.0.1 for tests: OpenAI Chat Completions and Responses,
Anthropic Messages and Gemini wire formats.

It runs in a background thread, so in-process async tests and `di-code` subprocesses can both
talk to it. Scripted items are served in order, whichever endpoint is hit:

- `Turn(text=..., thinking=..., tool_calls=(ToolCallSpec(name, arguments, id),), stop_reason,
  input_tokens, output_tokens, chunk_size, delay, first_delay, fault, fault_after)`: a streamed
  reply, rendered as Chat Completions chunks on POST /v1/chat/completions or as Messages events on
  POST /v1/messages (chunked SSE). `fault` is "drop" (close the connection mid-stream),
  "malformed" (send a chunk that is not JSON, then end) or "stall" (send nothing more until the
  client closes), after `fault_after` events. `delay` waits between events, `first_delay`
  between the headers and the first event (a model slow to answer).
- `HttpError(status, message, headers={"retry-after": "0"}, body=None, error_type=...)`: an
  error status whose body is the service's error JSON (or `body` verbatim).
- `Replay(path, cuts=(10, 57), delay=0, headers={})`: a raw .sse file written in pieces cut at
  byte offsets, with extra response headers (`content-encoding: gzip` for a compressed file).

A Turn is also rendered as Responses API events on POST /v1/responses and as Gemini chunks on
POST /v1beta/models/MODEL:streamGenerateContent?alt=sse (tests/support/wire_responses.py,
wire_gemini.py), with the same faults. A Responses or Gemini request of a shape the real
service refuses is answered 400, as it would be, without taking a scripted reply.

With the script empty the server answers 400 `llm_server: no scripted reply left`.
GET /v1/models lists `test-model`. `server.publish(path, payload)` answers GET or POST `path`
with that JSON (a local server's `/props`, `/api/show`, ...); other paths answer 404.
`server.requests` records `RecordedRequest(method, path,
headers (lower-case names), body (parsed JSON))`; `server.wait_disconnects(n)` waits until the
server has seen `n` streams closed by the client; `server.connections` counts the connections
clients opened (connections are kept alive between requests, as real servers keep them).

    from tests.support.llm_server import LLMServer, Turn, ToolCallSpec

    with LLMServer() as server:
        server.script(Turn(text="Hello"), Turn(tool_calls=(ToolCallSpec("ls", {}),)))
        env = {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test-key"}
        ...  # run di-code against it
        assert server.requests[0].body["stream"] is True

Base URLs: `server.openai_base_url` ends in /v1; `server.anthropic_base_url` (also Gemini's)
has none.
In tests use the `llm_server` fixture from tests/conftest.py.
"""

from __future__ import annotations

import itertools
import json
import re
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support.wire import (
    MALFORMED,
    WHOLE,
    HttpError,
    Replay,
    Script,
    ToolCallSpec,
    Turn,
    anthropic_error_body,
    call,
    openai_error_body,
    render_anthropic,
    render_openai,
)
from tests.support.wire_gemini import (
    MALFORMED_GEMINI,
    check_gemini_request,
    gemini_error_body,
    render_gemini,
)
from tests.support.wire_responses import (
    MALFORMED_RESPONSES,
    check_responses_request,
    render_responses,
    responses_error_body,
)

__all__ = [
    "WHOLE",
    "HttpError",
    "LLMServer",
    "RecordedRequest",
    "Replay",
    "ToolCallSpec",
    "Turn",
    "call",
]

_ROUTES = {
    "/v1/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
}
_GEMINI_PATH = re.compile(r"/v1beta/models/[^/:]+:streamGenerateContent")
_RENDER = {
    "openai": render_openai,
    "anthropic": render_anthropic,
    "responses": render_responses,
    "gemini": render_gemini,
}
_ERROR_BODY = {
    "openai": openai_error_body,
    "anthropic": anthropic_error_body,
    "responses": responses_error_body,
    "gemini": gemini_error_body,
}
_MALFORMED = {**MALFORMED, "responses": MALFORMED_RESPONSES, "gemini": MALFORMED_GEMINI}
_CHECK = {"responses": check_responses_request, "gemini": check_gemini_request}


def _route(path: str) -> str | None:
    """The wire format a POST path speaks; Gemini's must ask for SSE (`alt=sse`)."""
    parts = urlsplit(path)
    if _GEMINI_PATH.fullmatch(parts.path):
        return "gemini" if parts.query == "alt=sse" else None
    return _ROUTES.get(path)


_POLL = 0.05  # how often a waiting handler checks for a closed client or a server shutdown


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    accepted = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        self.accepted += 1  # only the serving thread accepts: no lock needed
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client dropping an idle keep-alive connection is normal
        super().handle_error(request, client_address)


class LLMServer:
    """Start with `with LLMServer() as server:` (or `start()`/`close()`)."""

    def __init__(self, script: Iterable[Script] = ()) -> None:
        self._queue: deque[Script] = deque(script)
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._disconnects = 0
        self.requests: list[RecordedRequest] = []
        self.published: dict[str, Any] = {}
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": _POLL}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def script(self, *items: Script) -> None:
        with self._lock:
            self._queue.extend(items)

    def publish(self, path: str, payload: Any) -> None:
        """Answer GET or POST `path` with `payload` as JSON."""
        self.published[path] = payload

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop at once: shutting the listening socket down wakes `serve_forever` now, where
        `shutdown()` alone waits for its next poll (up to _POLL at every test's end)."""
        self._stopping.set()
        self._httpd.socket.shutdown(socket.SHUT_RDWR)
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_disconnects(self, count: int = 1, timeout: float = 10.0) -> bool:
        """True once `count` streams have been closed by the client (abort reached the server)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._disconnects >= count, timeout)

    @property
    def connections(self) -> int:
        """How many connections clients have opened to the server so far."""
        return self._httpd.accepted

    @property
    def disconnects(self) -> int:
        with self._lock:
            return self._disconnects

    def _record(self, request: RecordedRequest, *, take: bool) -> Script | None:
        """Keep the request; a POST also takes the next scripted reply."""
        with self._lock:
            self.requests.append(request)
            return self._queue.popleft() if take and self._queue else None

    def _client_closed(self) -> None:
        with self._lock:
            self._disconnects += 1
            self._lock.notify_all()


class _ClientGone(Exception):
    pass


class _Stopping(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small SSE writes must not wait for delayed ACKs

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    @property
    def owner(self) -> LLMServer:
        return self.server.owner  # type: ignore[attr-defined,no-any-return]

    def do_GET(self) -> None:
        self._record(None, take=False)
        if self.path in self.owner.published:
            self._send_json(200, self.owner.published[self.path])
        elif self.path.rstrip("/") != "/v1/models":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
        else:
            model = {"id": "test-model", "object": "model", "type": "model", "display_name": "Test"}
            self._send_json(200, {"object": "list", "data": [model], "has_more": False})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        wire = _route(self.path)
        check = _CHECK.get(wire or "")
        refused = check(body) if check else None
        item = self._record(body, take=wire is not None and refused is None)
        if self.path in self.owner.published:
            self._send_json(200, self.owner.published[self.path])
        elif wire is None:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
        elif refused is not None:
            self._send_error(wire, HttpError(400, refused, error_type="invalid_request_error"))
        elif item is None:
            message = "llm_server: no scripted reply left"
            self._send_error(wire, HttpError(400, message, error_type="invalid_request_error"))
        elif isinstance(item, HttpError):
            self._send_error(wire, item)
        else:
            self._stream(wire, item)

    def _record(self, body: Any, *, take: bool) -> Script | None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = RecordedRequest(self.command, self.path, headers, body)
        return self.owner._record(request, take=take)

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, wire: str, error: HttpError) -> None:
        text = error.body if error.body is not None else _ERROR_BODY[wire](error)
        data = text.encode()
        self.send_response(error.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in error.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, wire: str, item: Turn | Replay) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in (item.headers if isinstance(item, Replay) else {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            if isinstance(item, Replay):
                self._replay(item)
            else:
                self._turn(wire, item)
        except (_ClientGone, OSError):  # OSError: the client went away while we were writing
            self.owner._client_closed()
            self.close_connection = True
        except _Stopping:
            self.close_connection = True

    def _turn(self, wire: str, turn: Turn) -> None:
        events = _RENDER[wire](turn)
        limit = turn.fault_after if turn.fault else len(events)
        if turn.first_delay:
            self._pause(turn.first_delay)
        for index, event in enumerate(events[:limit]):
            if index and turn.delay:
                self._pause(turn.delay)
            self._chunk(event)
        match turn.fault:
            case None:
                self._end()
            case "malformed":
                self._chunk(_MALFORMED[wire])
                self._end()
            case "drop":
                self._drop()
            case "stall":
                self._pause(None)

    def _replay(self, replay: Replay) -> None:
        data = Path(replay.path).read_bytes()
        bounds = [0, *sorted(c for c in replay.cuts if 0 < c < len(data)), len(data)]
        for index, (start, stop) in enumerate(itertools.pairwise(bounds)):
            if index and replay.delay:
                self._pause(replay.delay)
            self._chunk(data[start:stop])
        self._end()

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _pause(self, seconds: float | None) -> None:
        """Wait `seconds` (None: until the client closes); raise _ClientGone if it closes."""
        deadline = None if seconds is None else time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:  # select() fails past descriptor 1023
            selector.register(self.connection, selectors.EVENT_READ)
            while not self.owner._stopping.is_set():
                left = _POLL if deadline is None else min(_POLL, deadline - time.monotonic())
                if left <= 0:
                    return
                if selector.select(left) and not self.connection.recv(1, socket.MSG_PEEK):
                    raise _ClientGone
        raise _Stopping
