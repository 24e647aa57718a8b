"""A 127.0.0.1 HTTP server for the benchmarks: prebuilt answers, sent as fast as possible.

The test server (tests/support/llm_server.py) writes event by event, which would make it the
bottleneck of a throughput figure; this one sends a prebuilt body with one `sendall`: either
the same body for every request, or what a `ScriptedModel` answers to the request's JSON (the
agents' own wire formats, see wire.py). It records when each request's first byte arrived
(time.monotonic, shared with child processes on Linux) and how many tool results its
conversation held, and can call a hook before it answers (the client is then waiting, idle).
Bounded: a fixed number of connections, each with a socket timeout, and the server stops when
its `with` block ends. GET requests (model lists) get an empty list.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scripts.bench.wire import JSON, SSE, ScriptedModel, tool_results

SOCKET_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Arrival:
    at: float
    """time.monotonic() when the request's first byte arrived."""
    path: str
    tool_results: int
    """Tool results in the request's conversation: the loop's turn, for a scripted model."""


def response_bytes(content_type: str, body: bytes) -> bytes:
    head = (
        "HTTP/1.1 200 OK\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


class LoopbackServer:
    def __init__(
        self,
        body: bytes | ScriptedModel,
        *,
        content_type: str = SSE,
        max_connections: int = 200,
        on_arrival: Callable[[Arrival], None] | None = None,
    ) -> None:
        self._fixed = response_bytes(content_type, body) if isinstance(body, bytes) else None
        self._model = body if isinstance(body, ScriptedModel) else None
        self._on_arrival = on_arrival
        self._left = max_connections
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._arrivals: list[Arrival] = []
        self._arrived = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def arrivals(self) -> list[Arrival]:
        with self._arrived:
            return list(self._arrivals)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._left = 0
        self._listener.close()
        self._thread.join(timeout=5)

    def wait_arrival(self, index: int, timeout: float) -> float:
        """The monotonic time the `index`-th request's first byte arrived."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self._arrivals) > index, timeout):
                raise TimeoutError(f"no request #{index + 1} within {timeout:g} s")
            return self._arrivals[index].at

    def _serve(self) -> None:
        while self._left > 0:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._left -= 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(SOCKET_TIMEOUT_S)
            try:
                data = conn.recv(65536)
                at = time.monotonic()
                request_line, body = _read_request(conn, data)
                parsed = _json(body)
                path = request_line.split(" ")[1] if request_line.count(" ") >= 2 else ""
                arrival = Arrival(at, path, tool_results(parsed))
                with self._arrived:
                    self._arrivals.append(arrival)
                    self._arrived.notify_all()
                if self._on_arrival:
                    self._on_arrival(arrival)
                conn.sendall(self._response(request_line, parsed))
            except OSError:
                return

    def _response(self, request_line: str, body: Any) -> bytes:
        if self._fixed is not None:
            return self._fixed
        if request_line.startswith("GET ") or self._model is None:
            return response_bytes(JSON, b'{"object":"list","data":[],"models":[]}')
        if "count_tokens" in request_line:
            return response_bytes(JSON, b'{"input_tokens":10}')
        return response_bytes(*self._model.respond(body if isinstance(body, dict) else {}))


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _read_request(conn: socket.socket, data: bytes) -> tuple[str, bytes]:
    """Read the headers and the Content-Length body (also so closing does not reset the client).

    Returns the request line and the body.
    """
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return "", b""
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        more = conn.recv(65536)
        if not more:
            break
        rest += more
    return lines[0].decode(errors="replace"), rest
