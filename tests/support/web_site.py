"""A small web site on 127.0.0.1 for the fetch tool's tests: a page, redirects, an image, a
large body whose server records how much it could send before the client went away; it records
every path it is asked for."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from di_code.tools.builtin.cards import FETCH_MAX_BYTES

PAGE = (
    "<html><head><title>Guide</title><script>steal()</script></head><body>"
    "<h1>Install</h1><p>Run <code>pip install x</code> and <b>relax</b>.</p></body></html>"
)
BIG = FETCH_MAX_BYTES * 32  # far past what loopback's socket buffers hold


class Site(BaseHTTPRequestHandler):
    sent: ClassVar[list[int]] = []
    pages: ClassVar[dict[str, tuple[str, bytes]]] = {}
    """More pages a test serves: path -> (content type, body)."""
    moved: ClassVar[dict[str, str]] = {}
    """More redirects a test serves: path -> location."""
    asked: ClassVar[list[str]] = []
    """Every path asked for, as sent (a test clears it)."""
    raw: ClassVar[dict[str, Callable[[BaseHTTPRequestHandler], None]]] = {}
    """Answers a test writes itself, byte by byte, to `handler.wfile`: path -> writer (a
    hostile server: a body that never ends, a header no server should send)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        Site.asked.append(self.path)
        port = self.server.server_address[1]
        routes: dict[str, tuple[int, dict[str, str], bytes]] = {
            "/page": (200, {"content-type": "text/html; charset=utf-8"}, PAGE.encode()),
            "/hop": (302, {"location": "/page"}, b""),
            "/away": (302, {"location": f"http://localhost:{port}/page"}, b""),
            "/loop": (302, {"location": "/loop"}, b""),
            "/image": (200, {"content-type": "image/png"}, b"\x89PNG\r\n\x1a\n" + b"\0" * 64),
            "/notes": (200, {"content-type": "text/plain"}, b"line one\nline two\n"),
        }
        if self.path == "/big":
            self._big()
            return
        if self.path in Site.raw:
            Site.raw[self.path](self)
            return
        routes.update(
            (path, (200, {"content-type": kind}, body)) for path, (kind, body) in Site.pages.items()
        )
        routes.update((path, (302, {"location": to}, b"")) for path, to in Site.moved.items())
        status, headers, body = routes.get(self.path, (404, {}, b"not found"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _big(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(BIG))
        self.end_headers()
        chunk = b"x" * 65535 + b"\n"
        written = 0
        try:
            while written < BIG:
                self.wfile.write(chunk)
                written += len(chunk)
        except OSError:
            pass
        Site.sent.append(written)


def serve_site() -> Iterator[str]:
    """Yields the site's base URL while it runs (use it with `yield from` in a fixture)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
