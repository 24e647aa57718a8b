"""di-code's own HTTP/1.1 transport under httpx, against real loopback servers: keep-alive,
bodies, failures and their httpx exception classes, TLS, and httpx's proxy rules."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import inspect
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from di_code.ai.providers import transport
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.providers.transport import LeanTransport, new_async_client
from di_code.ai.types import Context, UserMessage
from tests.support.llm_server import LLMServer
from tests.support.streams import collect, model_for

TIMEOUT = httpx.Timeout(10.0)
CONTEXT = Context("be brief", [UserMessage.of("hi")])


@dataclass(frozen=True, slots=True)
class Answer:
    """Raw bytes sent for one request; then the connection stays open, is closed (`close`),
    or is held silent until the client goes (`hold`)."""

    data: bytes
    close: bool = False
    hold: bool = False


def ok(body: bytes, *headers: str) -> Answer:
    head = "".join(f"{h}\r\n" for h in (f"Content-Length: {len(body)}", *headers))
    return Answer(b"HTTP/1.1 200 OK\r\n" + head.encode() + b"\r\n" + body)


@dataclass
class RawServer:
    """A loopback HTTP/1.1 server on a thread: the n-th request (any connection) gets
    `answers[n]`. It counts accepted connections and records each request's first line."""

    answers: list[Answer]
    tls: ssl.SSLContext | None = None
    connections: int = 0
    targets: list[str] = field(default_factory=list)
    alpn: list[str | None] = field(default_factory=list)
    gone: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    """Released each time a connection ends (closed by either side)."""

    def __post_init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        accept_on_a_thread(self._listener, self._serve)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._listener.close()

    def _serve(self, conn: socket.socket) -> None:
        self.connections += 1
        conn.settimeout(10)
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
                self.alpn.append(conn.selected_alpn_protocol())
            buffer = b""
            while True:
                buffer = receive_until(conn, buffer, lambda got: b"\r\n\r\n" in got)
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                found = re.search(rb"(?im)^content-length: *(\d+)", head)
                length = int(found[1]) if found else 0
                whole = receive_until(conn, buffer, lambda got: len(got) >= length)  # noqa: B023
                buffer = whole[length:]
                with self._lock:
                    self.targets.append(head.split(b"\r\n")[0].decode())
                    answer = self.answers[len(self.targets) - 1]
                conn.sendall(answer.data)
                if answer.close:
                    return
                if answer.hold:
                    while conn.recv(65536):
                        pass
                    return
        except (OSError, EOFError):
            return
        finally:
            conn.close()
            self.gone.release()


def accept_on_a_thread(listener: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Hand each connection `listener` accepts to `handle`, on a thread of its own, until the
    listener is closed."""

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def receive_until(conn: socket.socket, buffer: bytes, done: Callable[[bytes], bool]) -> bytes:
    """`buffer` and what `conn` sends next, until `done` says it is enough; EOFError if the
    peer closes first."""
    while not done(buffer):
        data = conn.recv(65536)
        if not data:
            raise EOFError
        buffer += data
    return buffer


@pytest.fixture
def serve() -> Iterator[list[RawServer]]:
    """`serve.append(RawServer(...))`: closed after the test."""
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        server.close()


def start(
    servers: list[RawServer], *answers: Answer, tls: ssl.SSLContext | None = None
) -> RawServer:
    servers.append(RawServer(list(answers), tls))
    return servers[-1]


async def ended(server: RawServer) -> bool:
    """Wait (letting the event loop run, so a close it has scheduled happens) until one of
    the server's connections has ended."""
    return await asyncio.to_thread(server.gone.acquire, True, 10)


async def test_a_connection_read_to_the_end_is_reused(serve: list[RawServer]) -> None:
    server = start(serve, ok(b"one"), ok(b"two"))
    async with new_async_client(timeout=TIMEOUT) as client:
        first = await client.get(server.url + "/a")
        second = await client.post(server.url + "/b", json={"x": 1})
    assert (first.text, second.text) == ("one", "two")
    assert (first.http_version, first.reason_phrase) == ("HTTP/1.1", "OK")
    assert server.connections == 1
    assert server.targets == ["GET /a HTTP/1.1", "POST /b HTTP/1.1"]


async def test_a_response_abandoned_half_way_closes_its_connection(serve: list[RawServer]) -> None:
    partial = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10
    server = start(serve, Answer(partial, hold=True), ok(b"fresh"))
    async with new_async_client(timeout=TIMEOUT) as client:
        async with client.stream("GET", server.url) as response:
            async for chunk in response.aiter_raw():
                assert chunk == b"x" * 10
                break
        assert await ended(server), "the abandoned connection stayed open"
        assert (await client.get(server.url)).text == "fresh"
    assert server.connections == 2


async def test_a_connection_the_server_closed_is_not_reused(serve: list[RawServer]) -> None:
    closing = ok(b"bye")
    server = start(serve, Answer(closing.data, close=True), ok(b"again"))
    async with new_async_client(timeout=TIMEOUT) as client:
        assert (await client.get(server.url)).text == "bye"
        assert await ended(server)
        assert (await client.get(server.url)).text == "again"
    assert server.connections == 2


async def test_a_kept_connection_the_server_drops_as_it_is_reused_is_retried_once(
    serve: list[RawServer],
) -> None:
    """The server closed its idle connection just as the next request went out on it (a
    keep-alive timeout met halfway): the request goes again at once, on a new connection."""
    server = start(serve, ok(b"one"), Answer(b"", close=True), ok(b"again"))
    async with new_async_client(timeout=TIMEOUT) as client:
        assert (await client.get(server.url + "/a")).text == "one"
        assert (await client.post(server.url + "/b", json={"x": 1})).text == "again"
    assert server.targets == ["GET /a HTTP/1.1", "POST /b HTTP/1.1", "POST /b HTTP/1.1"]
    assert server.connections == 2


async def test_a_new_connection_that_fails_is_not_retried(serve: list[RawServer]) -> None:
    server = start(serve, Answer(b"", close=True), ok(b"never asked"))
    async with new_async_client(timeout=TIMEOUT) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(server.url)
    assert server.targets == ["GET / HTTP/1.1"]


async def test_idle_connections_are_bounded_and_expire(
    serve: list[RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "MAX_IDLE", 2)
    servers = [start(serve, ok(b"1"), ok(b"2")) for _ in range(3)]
    async with new_async_client(timeout=TIMEOUT) as client:
        for server in (*servers, servers[0], servers[2]):
            await client.get(server.url)
        assert [s.connections for s in servers] == [2, 1, 1]  # the oldest idle one was dropped
        monkeypatch.setattr(transport, "KEEPALIVE_EXPIRY", 0.0)
        await client.get(servers[1].url + "/expired")
    assert servers[1].connections == 2


def test_a_connection_is_not_reused_on_another_event_loop(serve: list[RawServer]) -> None:
    server = start(serve, ok(b"first"), ok(b"second"))
    client = new_async_client(timeout=TIMEOUT)
    assert asyncio.run(client.get(server.url)).text == "first"
    assert asyncio.run(client.get(server.url)).text == "second"
    asyncio.run(client.aclose())
    assert server.connections == 2


async def test_connection_close_from_the_server_is_honoured(serve: list[RawServer]) -> None:
    server = start(serve, ok(b"one", "Connection: close"), ok(b"two"))
    async with new_async_client(timeout=TIMEOUT) as client:
        assert (await client.get(server.url)).text == "one"
        assert (await client.get(server.url)).text == "two"
    assert server.connections == 2


async def test_chunked_and_gzip_bodies_arrive_whole_and_decoded(serve: list[RawServer]) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    )
    packed = gzip.compress(b"unpacked " * 100)
    server = start(serve, Answer(chunked), ok(packed, "Content-Encoding: gzip"), ok(b"after"))
    async with new_async_client(timeout=TIMEOUT) as client:
        assert (await client.get(server.url)).text == "hello world"
        assert (await client.get(server.url)).text == "unpacked " * 100
        assert (await client.get(server.url)).text == "after"
    assert server.connections == 1


async def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with new_async_client(timeout=TIMEOUT) as client:
        with pytest.raises(httpx.ConnectError) as caught:
            await client.get(f"http://127.0.0.1:{port}/")
    assert str(caught.value) == "Connection refused"


async def test_a_full_backlog_is_a_connect_timeout() -> None:
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        port = listener.getsockname()[1]
        queued = [socket.socket() for _ in range(4)]  # never accepted: later SYNs are dropped
        for waiting in queued:
            waiting.setblocking(False)
            waiting.connect_ex(("127.0.0.1", port))
        try:
            async with new_async_client(timeout=httpx.Timeout(10.0, connect=0.3)) as client:
                with pytest.raises(httpx.ConnectTimeout) as caught:
                    await client.get(f"http://127.0.0.1:{port}/")
        finally:
            for waiting in queued:
                waiting.close()
    assert str(caught.value) == "connect timed out after 0.3 s"


async def test_a_silent_server_is_a_read_timeout(serve: list[RawServer]) -> None:
    server = start(serve, Answer(b"", hold=True))
    async with new_async_client(timeout=httpx.Timeout(10.0, read=0.2)) as client:
        with pytest.raises(httpx.ReadTimeout, match=r"^read timed out after 0\.2 s$"):
            await client.get(server.url)


async def test_a_server_that_reads_nothing_is_a_write_timeout() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        async with new_async_client(timeout=httpx.Timeout(10.0, write=0.2)) as client:
            with pytest.raises(httpx.WriteTimeout, match=r"^send timed out after 0\.2 s$"):
                await client.post(f"http://127.0.0.1:{port}/", content=b"x" * (64 << 20))


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Answer(b"", close=True), "the server closed the connection without sending a response"),
        (Answer(b"NOT HTTP\r\n\r\n", close=True), "illegal status line: bytearray(b'NOT HTTP')"),
        (
            Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", close=True),
            "peer closed connection without sending complete message body "
            "(received 3 bytes, expected 9)",
        ),
    ],
    ids=["nothing", "garbage", "cut-short"],
)
async def test_a_broken_reply_is_a_remote_protocol_error(
    serve: list[RawServer], answer: Answer, message: str
) -> None:
    server = start(serve, answer)
    async with new_async_client(timeout=TIMEOUT) as client:
        with pytest.raises(httpx.RemoteProtocolError) as caught:
            await client.get(server.url)
    assert str(caught.value) == message


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1, made with the openssl CLI."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def tls_server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    context.set_alpn_protocols(["h2", "http/1.1"])
    return context


async def test_https_verifies_the_server_and_asks_for_http_1_1(
    serve: list[RawServer], certificate: tuple[Path, Path]
) -> None:
    server = start(serve, ok(b"secret"), ok(b"again"), tls=tls_server_context(certificate))
    trusted = ssl.create_default_context(cafile=str(certificate[0]))
    async with new_async_client(timeout=TIMEOUT, verify=trusted) as client:
        assert (await client.get(server.url)).text == "secret"
        assert (await client.get(server.url)).text == "again"
    assert server.connections == 1
    assert server.alpn == ["http/1.1"]


async def test_an_untrusted_certificate_is_a_connect_error(
    serve: list[RawServer], certificate: tuple[Path, Path]
) -> None:
    server = start(serve, ok(b"never"), tls=tls_server_context(certificate))
    async with new_async_client(timeout=TIMEOUT) as client:  # the public CA bundle
        with pytest.raises(httpx.ConnectError) as caught:
            await client.get(server.url)
    assert str(caught.value) == "certificate verify failed: self-signed certificate"


def test_the_client_builds_its_transports_through_httpx_own_hooks() -> None:
    """The factory overrides two private hooks of httpx.AsyncClient: if httpx renames them or
    stops passing these keywords, this fails before any request silently takes httpcore."""
    options = {"self", "verify", "cert", "trust_env", "http1", "http2", "limits"}
    names = {
        "_init_transport": options | {"transport"},
        "_init_proxy_transport": options | {"proxy"},
    }
    for hook, expected in names.items():
        assert set(inspect.signature(getattr(httpx.AsyncClient, hook)).parameters) == expected
    source = inspect.getsource(httpx.AsyncClient.__init__)
    assert "self._init_transport(\n" in source and "else self._init_proxy_transport(\n" in source
    client = new_async_client(timeout=TIMEOUT)
    assert isinstance(client._transport, LeanTransport)


PROXIED_REQUEST = """
import asyncio, sys
from di_code.ai.providers.transport import new_async_client

async def main():
    async with new_async_client(timeout=10.0, trust_env=True) as client:
        print((await client.get(sys.argv[1])).text)

asyncio.run(main())
stack = [name for name in ("httpcore", "anyio", "sniffio") if name in sys.modules]
print("httpcore" if "httpcore" in stack else stack or "no httpcore")
"""


def request_in_a_fresh_process(url: str, **proxies: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, "-c", PROXIED_REQUEST, url],
        capture_output=True, text=True, timeout=60, env=env | proxies,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_request_goes_through_the_environment_proxy(serve: list[RawServer]) -> None:
    target = start(serve, ok(b"direct"))
    proxy = start(serve, ok(b"via the proxy"), ok(b"via the proxy"))
    for variable in ("HTTP_PROXY", "ALL_PROXY"):
        out = request_in_a_fresh_process(target.url + "/x", **{variable: proxy.url})
        assert out == "via the proxy\nhttpcore\n"
    assert proxy.targets == [f"GET {target.url}/x HTTP/1.1"] * 2
    assert target.connections == 0


def test_no_proxy_sends_the_request_direct_without_httpcore(serve: list[RawServer]) -> None:
    target = start(serve, ok(b"direct"), ok(b"direct"))
    proxy = start(serve)
    for variables in (
        {"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1,localhost"},
        {"HTTPS_PROXY": proxy.url, "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"},
    ):
        assert request_in_a_fresh_process(target.url, **variables) == "direct\nno httpcore\n"
    assert proxy.connections == 0 and target.connections == 2


async def test_trust_env_off_ignores_the_proxy_variables(
    serve: list[RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = start(serve, ok(b"direct"))
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    async with new_async_client(timeout=TIMEOUT, trust_env=False) as client:
        assert (await client.get(target.url)).text == "direct"


async def test_https_to_a_plain_http_server_is_a_connect_error() -> None:
    def answer_in_plain_http() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)  # the TLS client hello
            conn.sendall(ok(b"plain").data)

    with socket.create_server(("127.0.0.1", 0)) as listener:
        threading.Thread(target=answer_in_plain_http, daemon=True).start()
        port = listener.getsockname()[1]
        async with new_async_client(timeout=TIMEOUT) as client:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.get(f"https://127.0.0.1:{port}/")
    assert str(caught.value) == "wrong version number (TLS)"


class TunnelProxy:
    """A loopback HTTPS proxy: answers CONNECT, then copies bytes both ways; records the
    CONNECT lines it was sent."""

    def __init__(self) -> None:
        self.connects: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        accept_on_a_thread(self._listener, self._tunnel)

    def close(self) -> None:
        self._listener.close()

    def _tunnel(self, client: socket.socket) -> None:
        client.settimeout(10)
        try:
            head = receive_until(client, b"", lambda got: b"\r\n\r\n" in got)
        except (OSError, EOFError):
            return
        line = head.split(b"\r\n")[0].decode()
        self.connects.append(line)
        host, _, port = line.split(" ")[1].rpartition(":")
        upstream = socket.create_connection((host, int(port)), timeout=10)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
        _pump(client, upstream)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def test_https_goes_through_the_proxy_or_direct_as_the_environment_says(
    serve: list[RawServer], certificate: tuple[Path, Path]
) -> None:
    target = start(serve, ok(b"tunnelled"), ok(b"direct"), tls=tls_server_context(certificate))
    proxy = TunnelProxy()
    trust = {"SSL_CERT_FILE": str(certificate[0])}  # trust_env: httpx's own CA variable
    try:
        tunnelled = request_in_a_fresh_process(target.url, HTTPS_PROXY=proxy.url, **trust)
        direct = request_in_a_fresh_process(
            target.url, HTTPS_PROXY=proxy.url, NO_PROXY="127.0.0.1", **trust
        )
    finally:
        proxy.close()
    assert (tunnelled, direct) == ("tunnelled\nhttpcore\n", "direct\nno httpcore\n")
    assert proxy.connects == [f"CONNECT 127.0.0.1:{target.port} HTTP/1.1"]
    assert target.connections == 2


async def test_a_refused_header_is_named_and_its_value_never_shown(
    serve: list[RawServer], llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = start(serve)
    expected = "invalid request: the 'x-api-key' header holds characters HTTP does not allow"
    for proxy in ("", "http://127.0.0.1:9"):  # direct, then through httpx's proxy transport
        monkeypatch.setenv("HTTP_PROXY", proxy)
        for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        async with new_async_client(timeout=TIMEOUT) as client:
            with pytest.raises(httpx.LocalProtocolError) as caught:
                await client.get(server.url, headers={"x-api-key": "sk-secret\nmore"})
        assert str(caught.value) == expected
    assert server.connections == 0  # refused before connecting
    provider = OpenAIProvider(api_key="sk-secret\nmore", base_url=llm_server.openai_base_url)
    try:
        _, message = await collect(provider.stream(model_for("openai"), CONTEXT))
    finally:
        await provider.aclose()
    assert message.error_message is not None and "secret" not in message.error_message
    assert "'authorization' header" in message.error_message
