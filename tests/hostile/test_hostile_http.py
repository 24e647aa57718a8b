"""The one HTTP client factory (di_code/system/http_client.py) against hostile servers and a
hostile environment: an http-only client trusts no certificate, a redirect cannot turn it into
an unverified https one, and a CA file that would block is one line. Loopback servers only."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from di_code.system.http_client import http_client

LIVENESS = 30  # seconds; a bound for "ends", never a speed claim


class Recorder(BaseHTTPRequestHandler):
    """Answers every GET (a redirect when the server has a `location`), noting its path."""

    def do_GET(self) -> None:
        server = self.server
        assert isinstance(server, RecordingServer)
        server.seen.append(self.path)
        if server.location:
            self.send_response(302)
            self.send_header("Location", server.location)
        else:
            self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


class RecordingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, location: str = "") -> None:
        super().__init__(("127.0.0.1", 0), Recorder)
        self.seen: list[str] = []
        self.location = location


def serving(server: RecordingServer, scheme: str) -> Iterator[tuple[str, RecordingServer]]:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"{scheme}://127.0.0.1:{server.server_address[1]}", server
    server.shutdown()
    server.server_close()


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_server(self_signed: tuple[Path, Path]) -> Iterator[tuple[str, RecordingServer]]:
    server = RecordingServer()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    yield from serving(server, "https")


@pytest.fixture
def redirect_to_tls(tls_server: tuple[str, RecordingServer]) -> Iterator[str]:
    tls_url, _ = tls_server
    for url, _ in serving(RecordingServer(location=f"{tls_url}/landed"), "http"):
        yield url


async def test_an_http_only_client_given_an_https_url_trusts_no_certificate(
    tls_server: tuple[str, RecordingServer],
) -> None:
    url, server = tls_server
    async with await http_client("http://127.0.0.1:9/v1", timeout=LIVENESS) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"{url}/secret")
    assert server.seen == []


async def test_a_redirect_from_http_to_https_does_not_reach_the_https_server(
    redirect_to_tls: str, tls_server: tuple[str, RecordingServer]
) -> None:
    _, server = tls_server
    async with await http_client(
        redirect_to_tls, timeout=LIVENESS, follow_redirects=True
    ) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"{redirect_to_tls}/start")
    assert server.seen == []


async def test_a_verifying_client_refuses_a_self_signed_server(
    tls_server: tuple[str, RecordingServer],
) -> None:
    url, server = tls_server
    async with await http_client(url, timeout=LIVENESS) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"{url}/secret")
    assert server.seen == []


def test_a_ca_file_that_is_a_fifo_is_one_line_and_not_a_hang(tmp_path: Path) -> None:
    """SSL_CERT_FILE pointing at a FIFO: OpenSSL's open would wait for a writer for ever, on
    the warm-up thread and then for every client behind its lock."""
    fifo = tmp_path / "ca.pem"
    os.mkfifo(fifo)
    script = textwrap.dedent("""
        import asyncio
        from di_code.system.http_client import http_client, warm_up_http

        warm_up_http("https://127.0.0.1:9")

        async def main():
            try:
                await http_client("https://127.0.0.1:9")
            except OSError as error:
                print(error)

        asyncio.run(main())
    """)
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=LIVENESS,
            env={**os.environ, "SSL_CERT_FILE": str(fifo)},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"making a client still waits after {LIVENESS} s")
    assert done.stdout == f"SSL_CERT_FILE is not a regular file: {fifo}\n", done
    assert done.stderr == ""  # the warm-up thread's failure is said once, by the client
