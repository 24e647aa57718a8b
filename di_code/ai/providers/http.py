"""The HTTP glue the real providers share: one httpx client, stall timeout, errors (the
retries it applies are `retry`'s).

Everything that touches the network is here; the providers keep only a pure request builder
and a pure chunk translator. Transport failures are translated once, at this boundary, into
`ProviderError` (final) or `RetryableError` (worth another attempt: retry.py). httpx is
imported lazily, so importing a provider stays cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import msgspec

from di_code.ai.message_builder import MessageBuilder, one_line
from di_code.ai.providers.body_json import BodyEncoder, sendable
from di_code.ai.providers.request_shared import WireMemo
from di_code.ai.providers.request_slots import request_slot
from di_code.ai.providers.retry import (
    TRANSIENT_5XX,
    RetryableError,
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
    with_retries,
)
from di_code.ai.providers.stall import StallClock
from di_code.ai.redaction import clip, foreign_secrets_hidden, header_secrets, redact
from di_code.ai.sse import ServerSentEvent, SSEDecoder, SSEError
from di_code.ai.stream import AssistantMessageStream, ProviderError, StreamOptions, start_stream
from di_code.ai.types import Context, Model
from di_code.system.http_client import http_client, needs_tls
from di_code.system.own_thread import on_own_thread

if TYPE_CHECKING:
    import httpx

STALL_TIMEOUT = 120.0
"""How long one SSE event of a reply may take to complete once the reply has started."""
FIRST_BYTE_TIMEOUT = 120.0
LOCAL_FIRST_BYTE_TIMEOUT = 600.0
"""A CPU-served local model may process a long prompt for minutes before its first token."""
CONNECT_TIMEOUT = 30.0
MAX_ERROR_BODY = 64 * 1024
MAX_MESSAGE = 500
"""Where a raw (non-JSON) error body is cut; a service's own message field is kept whole."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""One reply's decompressed size: far above any real answer, far below running out of memory."""
DRAIN_TIMEOUT = 0.25
DRAIN_BYTES = 64 * 1024
"""What is read of a reply after its last event (normally just the end of the chunked body),
so its connection is kept for the next request; a reply still going past either is dropped."""


def service_message(body: str) -> str:
    """The service's own error message from an error body (JSON of any common shape, or text).

    The message field is kept whole: servers put the explanation at its end (a validation error
    lists the offending fields last). Only a raw body, which may be a whole HTML page, is cut."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return clip(one_line(body), MAX_MESSAGE)
    for key in ("error", "message", "detail"):
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, dict):
            value = value.get("message") or value.get("type")
        if isinstance(value, list):  # FastAPI's validation errors: a list of {"msg": ...}
            value = "; ".join(str(i.get("msg", i) if isinstance(i, dict) else i) for i in value)
        if isinstance(value, str) and value.strip():
            return redact(one_line(value))
    return clip(one_line(body), MAX_MESSAGE)


def error_line(status: int, body: str) -> str:
    """`HTTP 401: Incorrect API key provided` (the stream names the provider in front)."""
    message = service_message(body)
    if not message:
        try:
            message = HTTPStatus(status).phrase
        except ValueError:
            message = "no details"
    return f"HTTP {status}: {message}"


HEADER_RULE = "characters HTTP does not allow"
_REFUSED_IN_HEADER = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]|^[ \t]|[ \t]$")
"""Control characters (a line break in a pasted key), or white space at either end."""


def refused_header(headers: Mapping[str, str]) -> str | None:
    """The name of a header whose value HTTP refuses, said before sending: h11's own error
    quotes the value, and that value may be an API key."""
    return next((k for k, v in headers.items() if _REFUSED_IN_HEADER.search(v)), None)


def describe(exc: BaseException) -> str:
    return one_line(str(exc)) or type(exc).__name__


class Timeouts(msgspec.Struct, frozen=True):
    """How long a server may keep a reply waiting: before the first piece of it (a local model
    processes the whole prompt first), and for each event once it has started (stall.py)."""

    first_byte: float = FIRST_BYTE_TIMEOUT
    stall: float = STALL_TIMEOUT

    @classmethod
    def for_url(
        cls, base_url: str, first_byte: float | None = None, stall: float | None = None
    ) -> Timeouts:
        """The defaults for `base_url` (longer first-byte wait on a local server), overridden
        by the values given."""
        default = LOCAL_FIRST_BYTE_TIMEOUT if is_local_url(base_url) else FIRST_BYTE_TIMEOUT
        return cls(first_byte or default, stall or STALL_TIMEOUT)


def is_local_url(url: str) -> bool:
    """A server on this machine or the local network (where models run on local hardware)."""
    from di_code.system.web_address import BadAddress, web_address

    try:
        host = web_address(url).host
    except BadAddress:
        return False
    if host == "localhost" or host.endswith((".local", ".localhost", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class HttpClient:
    """One httpx.AsyncClient per provider instance, opened on first use."""

    def __init__(self, *, retry: RetryPolicy, timeouts: Timeouts) -> None:
        self.retry = retry
        self.timeouts = timeouts
        self._client: httpx.AsyncClient | None = None
        self._tls = False
        self._bodies = BodyEncoder()

    async def _get(self, url: str) -> httpx.AsyncClient:
        """The client for `url`: one for a plain-HTTP server (a local model) loads no CA
        bundle, and is replaced, never reused, when an https URL comes."""
        tls = needs_tls(url)
        if tls and not self._tls:
            await self.aclose()
        if self._client is None:
            # connect, read (none: stall.py watches a reply), write, pool
            timeout = (CONNECT_TIMEOUT, None, CONNECT_TIMEOUT, CONNECT_TIMEOUT)
            self._client, self._tls = await http_client(url, timeout=timeout), tls
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    @asynccontextmanager
    async def events(
        self, url: str, headers: Mapping[str, str], body: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
        """POST `body` and yield the response's SSE events; the response closes on exit.

        The translator stops at its stream's last event: what the server still sends after it
        is read (briefly), since a response closed before its end also closes its connection
        and the next request would have to open a new one."""
        response = await self._send(url, headers, body)
        chunks = response.aiter_bytes()
        stream = self._decode(chunks)
        try:
            await self._check(response)
            yield stream
            await _drain(chunks)
        finally:
            await stream.aclose()
            await response.aclose()

    async def _send(
        self, url: str, headers: Mapping[str, str], body: dict[str, Any]
    ) -> httpx.Response:
        bad = refused_header(headers)
        if bad is not None:
            raise ProviderError(f"invalid request: the {bad!r} header holds {HEADER_RULE}")
        client = await self._get(url)
        import httpx  # imported by http_client, off the loop

        try:
            content = await on_own_thread(lambda: self._encode(url, headers, body))
            length = str(len(content))
            headers = {"content-type": "application/json", "content-length": length, **headers}
            request = client.build_request("POST", url, content=sendable(content), headers=headers)
            async with asyncio.timeout(self.timeouts.first_byte):
                return await client.send(request, stream=True)
        except TimeoutError:
            raise ProviderError(self._stalled("no response", self.timeouts.first_byte)) from None
        except (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError) as exc:
            message = f"connection to {url} failed: {describe(exc)}"
            raise RetryableError(message) from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a bad URL, a proxy setup: final
            raise ProviderError(f"cannot reach {url}: {describe(exc)}") from exc

    def _encode(self, url: str, headers: Mapping[str, str], body: dict[str, Any]) -> bytes:
        """The body's bytes, holding no secret but this request's own
        (di_code.ai.redaction.foreign_secrets_hidden)."""
        return foreign_secrets_hidden(self._bodies.encode(body), [url, *headers.values()])

    async def _check(self, response: httpx.Response) -> None:
        """Raise for an error status, or for a JSON answer where a stream was asked for."""
        status = response.status_code
        kind = response.headers.get("content-type", "")
        if status < 400 and "json" not in kind:
            return
        text = await self._read_capped(response)
        if status < 400:
            message = service_message(text)
            raise ProviderError(f"expected an event stream, got: {message}")
        line = error_line(status, text)
        if is_retryable_status(status):
            repeat = None if status < 500 or status in TRANSIENT_5XX else f"{status} {text}"
            raise RetryableError(line, parse_retry_after(response.headers), repeat)
        raise ProviderError(line)

    async def _read_capped(self, response: httpx.Response) -> str:
        import httpx

        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                parts.append(chunk)
                size += len(chunk)
                if size >= MAX_ERROR_BODY:
                    break
        except httpx.HTTPError:
            pass  # the status line already says what matters
        return b"".join(parts)[:MAX_ERROR_BODY].decode("utf-8", "replace")

    async def _decode(self, chunks: AsyncIterator[bytes]) -> AsyncGenerator[ServerSentEvent, None]:
        """The reply's events. httpx decompresses; the decompressed total is capped, so a
        gzip bomb or an endless stream ends in an error instead of filling memory. A reply
        stalls by the events it completes, not the bytes it sends (providers/stall.py)."""
        import httpx

        decoder = SSEDecoder()
        timeouts, received = self.timeouts, 0
        clock = StallClock(timeouts.first_byte, timeouts.stall, asyncio.get_running_loop().time)
        while True:
            try:
                async with asyncio.timeout_at(clock.deadline):
                    chunk = await anext(chunks, None)
            except TimeoutError:
                raise ProviderError(self._stalled(clock.why, clock.seconds)) from None
            except httpx.HTTPError as exc:
                raise ProviderError(f"connection lost: {describe(exc)}") from exc
            if chunk is None:
                break
            received += len(chunk)
            if received > MAX_REPLY_BYTES:
                limit = MAX_REPLY_BYTES // (1024 * 1024)
                raise ProviderError(f"the reply is larger than {limit} MB; stopped reading")
            try:
                events = decoder.feed(chunk)
            except SSEError as exc:
                raise ProviderError(str(exc)) from None
            clock.saw(len(events), decoder.keepalives, decoder.pending)
            for event in events:
                yield event
        for event in decoder.close():
            yield event

    @staticmethod
    def _stalled(what: str, seconds: float) -> str:
        return f"stream stalled ({what} for {seconds:g} s)"


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read the rest of a reply whose events are all in, within DRAIN_TIMEOUT and DRAIN_BYTES;
    past them (or on a transport error) the reply is left to be closed with its connection."""
    import httpx

    received = 0
    with contextlib.suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(DRAIN_TIMEOUT):
            async for chunk in chunks:
                received += len(chunk)
                if received > DRAIN_BYTES:
                    return


class HttpProvider:
    """What the real providers share: the request is built inside the stream task (so even a
    bug there ends as an error event), sent with retries, and its events handed to the
    subclass's translator. Subclasses supply the four hooks below."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        stall_timeout: float | None = None,
        first_byte_timeout: float | None = None,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.extra_body = dict(extra_body or {})
        """Merged into every request body (e.g. `tool_choice`, a server's own options)."""
        timeouts = Timeouts.for_url(self.base_url, first_byte_timeout, stall_timeout)
        self._http = HttpClient(retry=retry or RetryPolicy(), timeouts=timeouts)
        self.wire_memo = WireMemo()
        """The last request's converted messages, for builders that take one (request_shared)."""

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream:
        opts = options or StreamOptions()

        async def produce(builder: MessageBuilder) -> None:
            body = {**self.build_body(model, context, opts), **self.extra_body}
            headers = {**self.auth_headers(), **self.headers}

            async def attempt() -> None:
                async with (
                    request_slot(self.base_url),  # batch's cap; a 429's backoff holds none
                    self._http.events(self.endpoint(model), headers, body) as events,
                ):
                    await self.translate(events, builder)

            await with_retries(self._http.retry, attempt, on_retry=builder.retry)

        return start_stream(model, produce, opts.signal, secrets=self._secrets())

    async def aclose(self) -> None:
        await self._http.aclose()

    def _secrets(self) -> list[str]:
        return [self.api_key or "", *header_secrets(self.headers)]

    def endpoint(self, model: Model) -> str:
        raise NotImplementedError

    def auth_headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_body(self, model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
        raise NotImplementedError

    async def translate(
        self, events: AsyncIterator[ServerSentEvent], builder: MessageBuilder
    ) -> None:
        raise NotImplementedError
