"""A 127.0.0.1 HTTP server for the benchmarks: one prebuilt answer, sent as fast as possible.

The test server (tests/support/llm_server.py) writes event by event, which would make it the
bottleneck of a throughput figure; this one sends a prebuilt body with one `sendall`. It also
records when each request's first byte arrived (time.monotonic, shared with child processes
on Linux), which figure 2 measures against. Bounded: a fixed number of connections, each with
a socket timeout, and the server stops when its `with` block ends.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

SOCKET_TIMEOUT_S = 60.0


class LoopbackServer:
    def __init__(
        self, body: bytes, *, content_type: str = "text/event-stream", max_connections: int = 200
    ) -> None:
        self._head = (
            "HTTP/1.1 200 OK\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        self._body = body
        self._left = max_connections
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._arrivals: list[float] = []
        self._arrived = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

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
            return self._arrivals[index]

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
                with self._arrived:
                    self._arrivals.append(time.monotonic())
                    self._arrived.notify_all()
                _read_request(conn, data)
                conn.sendall(self._head + self._body)
            except OSError:
                return


def _read_request(conn: socket.socket, data: bytes) -> None:
    """Drain the headers and the Content-Length body, so closing does not reset the client."""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        more = conn.recv(65536)
        if not more:
            return
        rest += more


def chat_completion_sse(chunks: int, word: str = "tok ") -> bytes:
    """`chunks` Chat Completions text chunks, the finish chunk, a usage chunk and [DONE]."""
    base: dict[str, Any] = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "bench-model",
    }

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        payload = base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(payload | extra).encode() + b"\n\n"

    first = event({"role": "assistant", "content": ""})
    middle = event({"content": word}) * chunks
    usage = {"prompt_tokens": 10, "completion_tokens": chunks, "total_tokens": chunks + 10}
    tail = (
        event({}, "stop")
        + b"data: "
        + json.dumps(base | {"choices": [], "usage": usage}).encode()
        + b"\n\ndata: [DONE]\n\n"
    )
    return first + middle + tail
