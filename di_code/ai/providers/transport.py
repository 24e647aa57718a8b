"""The bottom of di-code's HTTP stack: HTTP/1.1 over asyncio streams with h11, under httpx.

httpx stays the client API (building requests, content decoding, the exception classes); this
transport replaces httpx's default one, whose httpcore, anyio and sniffio cost about a third of
`di-code run`'s time in a profile. httpx's own rules (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY)
still decide which URLs go through a proxy; those go through httpx's own proxy transport, made
only when a request really takes it, so a direct request never imports httpcore.
Every failure leaves here as the httpx exception http.py already handles, with a one-line
message.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import ssl
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import h11
import httpx

MAX_IDLE = 20
KEEPALIVE_EXPIRY = 5.0
"""httpx's own defaults: idle connections kept, and seconds one is kept unused."""
READ_SIZE = 64 * 1024
HAPPY_EYEBALLS_DELAY = 0.25
"""Seconds before the next address of a host is tried alongside (RFC 8305, as anyio did under
httpcore): a host whose IPv6 route is dead is reached over IPv4, not after the connect timeout."""
DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]
"""(scheme, host, port): which idle connections a request may reuse."""


def new_async_client(
    *, timeout: httpx.Timeout | float, verify: ssl.SSLContext | bool = True, trust_env: bool = True
) -> httpx.AsyncClient:
    """The httpx client every part of di-code uses (MCP's SDK excepted: it brings its own)."""
    return _Client(timeout=timeout, verify=verify, trust_env=trust_env)


class _Client(httpx.AsyncClient):
    """An httpx.AsyncClient whose transports httpx asks for through its two private factory
    hooks, called from `AsyncClient.__init__` with the client's arguments. Overriding them,
    rather than passing `transport=`, keeps httpx's own proxy decisions (which turn off with
    `transport=`). tests/ai/test_transport.py fails if httpx renames or reshapes the hooks."""

    def _init_transport(
        self, verify: Any = True, cert: Any = None, trust_env: bool = True, *_: Any, **rest: Any
    ) -> httpx.AsyncBaseTransport:
        given: httpx.AsyncBaseTransport | None = rest.get("transport")
        return given or LeanTransport(verify=verify, cert=cert, trust_env=trust_env)

    def _init_proxy_transport(
        self, proxy: httpx.Proxy, *_: Any, **options: Any
    ) -> httpx.AsyncBaseTransport:
        return _LazyTransport(functools.partial(httpx.AsyncHTTPTransport, proxy=proxy, **options))


def _dropped_as_reused(connection: _Connection, request: httpx.Request, exc: BaseException) -> bool:
    """Whether a kept connection failed as the server closed it (its keep-alive timeout met
    the request halfway), before any answer: the request may go again on a new connection,
    if its body can be sent again (bytes, as a JSON body is)."""
    failed = isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError)
    return failed and not connection.received and isinstance(request.stream, httpx.ByteStream)


class _LazyTransport(httpx.AsyncBaseTransport):
    """httpx's proxy transport (httpcore), made on the first request that goes through it."""

    def __init__(self, create: Callable[[], httpx.AsyncBaseTransport]) -> None:
        self._create = create
        self._transport: httpx.AsyncBaseTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _request_head(request)  # a refused header is named, not quoted, here too
        if self._transport is None:
            self._transport = self._create()
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 with keep-alive: a connection goes back to the pool only when its response was
    read to the end and h11 says both sides may start the next request on it. Connections in
    use are not counted or capped (di-code opens a handful), so no request ever waits for one
    and httpx's `pool` timeout has nothing to time."""

    def __init__(self, *, verify: Any = True, cert: Any = None, trust_env: bool = True) -> None:
        self._verify, self._cert, self._trust_env = verify, cert, trust_env
        self._tls: ssl.SSLContext | None = None
        self._idle: list[_Connection] = []
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        origin, request_head = _origin(request), _request_head(request)
        reused = self._take(origin)
        while True:
            connection = reused or await self._connect(origin, request, timeouts)
            try:
                answer = await connection.exchange(request, request_head, timeouts)
                break
            except BaseException as exc:
                connection.close()
                if reused is None or not _dropped_as_reused(connection, request, exc):
                    raise
                reused = None  # once more, at once, on a new connection
        return httpx.Response(
            answer.status_code,
            headers=answer.headers.raw_items(),
            stream=_Body(self, connection, request, timeouts.get("read")),
            extensions={
                "http_version": b"HTTP/" + answer.http_version,
                "reason_phrase": answer.reason,
            },
        )

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self, origin: Origin) -> _Connection | None:
        """The most recently used idle connection to `origin` still fit for a request; the
        expired or server-closed ones met on the way are closed."""
        now = time.monotonic()
        for index in range(len(self._idle) - 1, -1, -1):
            connection = self._idle[index]
            if connection.origin == origin:
                del self._idle[index]
                if connection.reusable(now):
                    return connection
                connection.close()
        return None

    def release(self, connection: _Connection) -> None:
        """A connection whose exchange ended cleanly: kept idle if h11 allows, else closed."""
        if self._closed or not connection.ready_for_next():
            connection.close()
            return
        connection.idle_since = time.monotonic()
        self._idle.append(connection)
        if len(self._idle) > MAX_IDLE:
            self._idle.pop(0).close()

    async def _connect(
        self, origin: Origin, request: httpx.Request, timeouts: dict[str, float | None]
    ) -> _Connection:
        scheme, host, port = origin
        tls = self._tls_context() if scheme == "https" else None
        async with _failures(CONNECT, timeouts.get("connect"), request):
            reader, writer = await asyncio.open_connection(
                host,
                port,
                ssl=tls,
                server_hostname=host if tls else None,
                happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
            )
        return _Connection(origin, reader, writer)

    def _tls_context(self) -> ssl.SSLContext:
        """The caller's context (or httpx's for `verify=True`), made on the first https
        connection only: a plain-HTTP client loads no CA bundle."""
        if self._tls is None:
            self._tls = httpx.create_ssl_context(
                verify=self._verify, cert=self._cert, trust_env=self._trust_env
            )
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls


class _Connection:
    """One socket and its h11 state machine."""

    __slots__ = ("h11", "idle_since", "loop", "origin", "reader", "received", "writer")

    def __init__(
        self, origin: Origin, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.origin, self.reader, self.writer = origin, reader, writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0
        self.received = False
        self.loop = asyncio.get_running_loop()

    async def exchange(
        self, request: httpx.Request, head: h11.Request, timeouts: dict[str, float | None]
    ) -> h11.Response:
        """Send `request` (its `head` already checked by h11) and read the response's head."""
        self.received = False
        await self._send(request, head, timeouts.get("write"))
        while True:
            event = await self.next_event(request, timeouts.get("read"))
            if isinstance(event, h11.Response):
                return event
            if not isinstance(event, h11.InformationalResponse):  # 100 Continue and the like
                name = type(event).__name__
                raise httpx.RemoteProtocolError(f"unexpected {name}", request=request)

    async def _send(self, request: httpx.Request, head: h11.Request, timeout: float | None) -> None:
        """The head goes out with the body's first piece (a JSON body is one piece): written
        apart, it woke the server for a head alone, ~1 ms of every local turn."""
        pending = self._encode(head, request)
        assert isinstance(request.stream, httpx.AsyncByteStream)
        async for chunk in request.stream:
            self.writer.writelines((pending, self._encode(h11.Data(data=chunk), request)))
            pending = b""
            await self._drain(request, timeout)
        self.writer.writelines((pending, self._encode(h11.EndOfMessage(), request)))
        await self._drain(request, timeout)

    def _encode(self, event: h11.Event, request: httpx.Request) -> bytes:
        try:
            return self.h11.send(event) or b""
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(f"invalid request: {exc}", request=request) from None

    async def _drain(self, request: httpx.Request, timeout: float | None) -> None:
        async with _failures(WRITE, timeout, request):
            await self.writer.drain()

    async def next_event(self, request: httpx.Request, timeout: float | None) -> h11.Event:
        """h11's next event, reading from the socket as long as h11 needs more."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                if not self.received:
                    message = "the server closed the connection without sending a response"
                    raise httpx.RemoteProtocolError(message, request=request) from None
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            if event is not h11.NEED_DATA:
                assert not isinstance(event, type)  # h11's other sentinel, PAUSED
                return event
            async with _failures(READ, timeout, request):
                data = await self.reader.read(READ_SIZE)
            self.received = self.received or bool(data)
            self.h11.receive_data(data)

    def ready_for_next(self) -> bool:
        """Both sides done and nothing more sent by the server: start the next cycle."""
        if self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
            return False
        self.h11.start_next_cycle()
        return not self.h11.trailing_data[0] and not self.writer.is_closing()

    def reusable(self, now: float) -> bool:
        """Not expired, on this event loop (a socket belongs to the loop that opened it), and
        the server has neither closed it nor sent anything while it was idle (an EOF or stray
        bytes make the socket readable)."""
        if now - self.idle_since > KEEPALIVE_EXPIRY or self.writer.is_closing():
            return False
        if self.loop is not asyncio.get_running_loop():
            return False
        if self.reader.at_eof():
            return False
        sock = self.writer.get_extra_info("socket")
        return sock is not None and not select.select([sock], [], [], 0)[0]

    def close(self) -> None:
        """Drop the socket at once: nothing more is read from or sent on this connection.
        (Once its event loop is closed, the socket goes when the transport is freed.)"""
        if not self.loop.is_closed():
            self.writer.transport.abort()


class _Body(httpx.AsyncByteStream):
    """The response body, chunk by chunk as it arrives. Read to the end, the connection goes
    back to the pool; closed before that (an abort, a size cap), the connection is closed."""

    def __init__(
        self,
        transport: LeanTransport,
        connection: _Connection,
        request: httpx.Request,
        timeout: float | None,
    ) -> None:
        self._transport, self._request, self._timeout = transport, request, timeout
        self._connection: _Connection | None = connection

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        try:
            while True:
                event = await connection.next_event(self._request, self._timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    break
        except BaseException:
            await self.aclose()
            raise
        self._connection = None
        self._transport.release(connection)

    async def aclose(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _origin(request: httpx.Request) -> Origin:
    url = request.url
    if url.scheme not in DEFAULT_PORTS:
        raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}", request=request)
    return url.scheme, url.raw_host.decode("ascii"), url.port or DEFAULT_PORTS[url.scheme]


def _request_head(request: httpx.Request) -> h11.Request:
    try:
        return h11.Request(
            method=request.method, target=request.url.raw_path, headers=request.headers.raw
        )
    except h11.LocalProtocolError as exc:
        message = f"invalid request: {_bad_header(request) or exc}"
        raise httpx.LocalProtocolError(message, request=request) from None


def _bad_header(request: httpx.Request) -> str | None:
    """Which header h11 refuses, by name only: h11's own message quotes the value, and that
    value may be an API key (one pasted with a line break in it)."""
    for name, value in request.headers.raw:
        alone = [(name, value)] if name.lower() == b"host" else [(b"host", b"x"), (name, value)]
        try:
            h11.Request(method="GET", target="/", headers=alone)
        except h11.LocalProtocolError:
            shown = name.decode("ascii", "replace")
            return f"the {shown!r} header holds characters HTTP does not allow"
    return None


@dataclass(frozen=True, slots=True)
class _Step:
    """One socket step, and the httpx exceptions its failures become."""

    doing: str
    timed_out: type[httpx.TimeoutException]
    failed: type[httpx.NetworkError]


CONNECT = _Step("connect", httpx.ConnectTimeout, httpx.ConnectError)
WRITE = _Step("send", httpx.WriteTimeout, httpx.WriteError)
READ = _Step("read", httpx.ReadTimeout, httpx.ReadError)


@asynccontextmanager
async def _failures(
    step: _Step, timeout: float | None, request: httpx.Request
) -> AsyncIterator[None]:
    """Run a socket step within `timeout` (None: no limit); its failures leave as httpx's
    exception for that step, saying in a few words what happened (`Connection refused`,
    `read timed out after 30 s`): the caller names the URL."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except OSError as exc:
        if isinstance(exc, TimeoutError) and timeout is not None and exc.errno is None:
            message = f"{step.doing} timed out after {timeout:g} s"  # our deadline
            raise step.timed_out(message, request=request) from None
        raise step.failed(_reason(exc), request=request) from exc  # the kernel's ETIMEDOUT too


def _reason(exc: OSError) -> str:
    """What went wrong, in a few words: `Connection refused`, `Name or service not known`,
    `certificate verify failed: self-signed certificate`."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):  # `WRONG_VERSION_NUMBER`: an https URL, an HTTP server
        return f"{(exc.reason or str(exc)).replace('_', ' ').lower()} (TLS)"
    if exc.errno and exc.errno > 0:
        return os.strerror(exc.errno)
    return exc.strerror or str(exc) or type(exc).__name__
