"""A listener on a local server's own port (the first of the `llamacpp`, `vllm`, `lmstudio`
and `ollama` presets' ports free here): it stands in for whatever a cloned project would like
a prompt sent to, and counts the connections it gets (answering each with a 400 at once). Also
a port free on 127.0.0.1 for a server a test starts."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest


def free_port() -> int:
    """A port nothing listens on at 127.0.0.1 now (the kernel's pick, free until one binds it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


LOCAL_PRESETS = {"llamacpp": 8080, "vllm": 8000, "lmstudio": 1234, "ollama": 11434}


REFUSAL = (
    b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
    b"connection: close\r\n\r\n{}"
)
"""What each connection gets: an error a client gives up on at once. A connection closed
unanswered is retried with back-off (1 + 2 + 4 + 8 s), which a test that reaches the port on
purpose would wait out."""


class Listener:
    """Accepts on 127.0.0.1:port, counts connections, refuses each at once (REFUSAL)."""

    def __init__(self, name: str, port: int, sock: socket.socket) -> None:
        self.name, self.port, self._sock = name, port, sock
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, contextlib.suppress(OSError):
                conn.settimeout(5)
                conn.sendall(REFUSAL)
                conn.shutdown(socket.SHUT_WR)
                while conn.recv(65536):  # until the client closes: no reset to eat the answer
                    pass

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone would not)
        self._sock.close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def local_preset_listener() -> Iterator[Listener]:
    """The listener; the test is skipped when every one of those ports is taken."""
    for name, port in LOCAL_PRESETS.items():
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # an earlier test's TIME_WAIT
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen(16)
        listener = Listener(name, port, sock)
        try:
            yield listener
        finally:
            listener.close()
        return
    pytest.skip("every local preset's port is taken on this machine")
