"""A 127.0.0.1 HTTP server for the benchmarks: prebuilt answers, sent as fast as possible.

The test server (tests/support/llm_server.py) writes event by event, which would make it the
bottleneck of a throughput figure; this one sends a prebuilt body with one `sendall`: either
the same body for every request, or what a `ScriptedModel` answers to the request's JSON (the
agents' own wire formats, see wire.py). It records when each request's first byte arrived
(time.monotonic, shared with child processes on Linux) and how many tool results its
conversation held, and can call a hook before it answers (the client is then waiting, idle).
Connections are kept alive as HTTP/1.1 servers do (llama-server, vLLM, OpenAI): requests framed
by Content-Length are answered in turn on one connection until the client closes it or asks
`Connection: close`, so an agent that reuses its connection pays no new connect per request.
Bounded: a fixed number of connections, each with a socket timeout, and the server stops when
its `with` block ends. GET requests (model lists) get an empty list.
"""

from __future__ import annotations

import contextlib
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
    connection: int = 0
    """Which connection carried it, counting from 0 in the order they were accepted."""


def response_bytes(content_type: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
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
        self._max_connections = max_connections
        self._accepted = 0
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

    @property
    def connections(self) -> int:
        """How many connections the clients opened so far."""
        return self._accepted

    def __exit__(self, *_exc: object) -> None:
        self._max_connections = 0
        with contextlib.suppress(OSError):  # wakes the blocked accept(); close() alone does not
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=5)

    def wait_arrival(self, index: int, timeout: float) -> float:
        """The monotonic time the `index`-th request's first byte arrived."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self._arrivals) > index, timeout):
                raise TimeoutError(f"no request #{index + 1} within {timeout:g} s")
            return self._arrivals[index].at

    def _serve(self) -> None:
        while self._accepted < self._max_connections:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            number, self._accepted = self._accepted, self._accepted + 1
            threading.Thread(target=self._answer, args=(conn, number), daemon=True).start()

    def _answer(self, conn: socket.socket, number: int) -> None:
        """Answer the connection's requests in turn until the client closes it (or asks to)."""
        with conn:
            conn.settimeout(SOCKET_TIMEOUT_S)
            reader = _RequestReader(conn)
            try:
                while (request := reader.next()) is not None:
                    parsed = _json(request.body)
                    arrival = Arrival(request.at, request.path, tool_results(parsed), number)
                    with self._arrived:
                        self._arrivals.append(arrival)
                        self._arrived.notify_all()
                    if self._on_arrival:
                        self._on_arrival(arrival)
                    conn.sendall(self._response(request.line, parsed))
                    if request.close:
                        return
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


@dataclass(frozen=True, slots=True)
class _Request:
    at: float
    line: str
    body: bytes
    close: bool
    """The client sent `Connection: close`: answer, then close."""

    @property
    def path(self) -> str:
        return self.line.split(" ")[1] if self.line.count(" ") >= 2 else ""


class _RequestReader:
    """Requests one after another from a kept-alive connection: headers, then the
    Content-Length body (read whole, also so that closing never resets the client)."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._buffer = b""

    def next(self) -> _Request | None:
        """The next request, or None once the client has closed the connection."""
        if not self._buffer and not self._receive():
            return None
        at = time.monotonic()
        while (end := self._buffer.find(b"\r\n\r\n")) < 0:
            if not self._receive():
                return None
        lines = self._buffer[:end].split(b"\r\n")
        self._buffer = self._buffer[end + 4 :]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip().lower()
        length = int(headers.get(b"content-length") or 0)
        parts, size = [self._buffer[:length]], min(len(self._buffer), length)
        self._buffer = self._buffer[length:]
        while size < length:
            more = self._conn.recv(max(65536, length - size))
            if not more:
                return None
            parts.append(more[: length - size])
            self._buffer = more[length - size :]
            size += len(parts[-1])
        close = headers.get(b"connection") == b"close"
        return _Request(at, lines[0].decode(errors="replace"), b"".join(parts), close)

    def _receive(self) -> bool:
        more = self._conn.recv(65536)
        self._buffer += more
        return bool(more)
