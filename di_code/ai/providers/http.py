"""The HTTP glue the real providers share: one httpx client, retries, stall timeout, errors.

Everything that touches the network is here; the providers keep only a pure request builder
and a pure chunk translator. Transport failures are translated once, at this boundary, into
`ProviderError` (final) or `RetryableError` (worth another attempt, SPEC §2.3). httpx is
imported lazily, so importing a provider stays cheap.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import ssl
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from di_code.ai.message_builder import MessageBuilder, one_line
from di_code.ai.redaction import clip
from di_code.ai.sse import ServerSentEvent, SSEDecoder
from di_code.ai.stream import AssistantMessageStream, ProviderError, StreamOptions, start_stream
from di_code.ai.types import Context, Model

if TYPE_CHECKING:
    import httpx

STALL_TIMEOUT = 120.0
CONNECT_TIMEOUT = 30.0
MAX_ERROR_BODY = 64 * 1024
MAX_MESSAGE = 500


def is_retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or 500 <= status <= 599


class RetryableError(ProviderError):
    """A failure worth another attempt; `retry_after` is the server's own wait, if it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def _sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """SPEC §2.3 numbers; `sleep` and `jitter` are injectable so tests wait no real seconds."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=_sleep)
    jitter: Callable[[], float] = field(default=random.random)

    def backoff(self, retry: int) -> float:
        """1 s, 2 s, 4 s, ... plus up to 25 % jitter, never above `max_delay`."""
        return min(self.max_delay, self.base_delay * 2.0**retry * (1 + 0.25 * self.jitter()))


OnRetry = Callable[[int, int, float, str], None]
"""Told (retry number, max retries, delay in seconds, reason) before each backoff sleep."""


async def with_retries(
    policy: RetryPolicy, attempt: Callable[[], Awaitable[None]], on_retry: OnRetry | None = None
) -> None:
    """Run `attempt` until it succeeds, fails for good, or the retries are used up.

    An abort cancels the task, and with it the backoff sleep, at once. `on_retry` lets the
    stream report the wait (a `retry` event), so a UI is never blank while it backs off."""
    retries = 0
    while True:
        try:
            await attempt()
            return
        except RetryableError as exc:
            delay = exc.retry_after if exc.retry_after is not None else policy.backoff(retries)
            if delay > policy.max_retry_after:
                raise ProviderError(
                    f"{exc} (the server asks to wait {delay:.0f} s, "
                    f"over the {policy.max_retry_after:.0f} s limit)"
                ) from exc
            if retries >= policy.max_retries:
                raise ProviderError(f"{exc} (gave up after {retries} retries)") from exc
            retries += 1
            if on_retry is not None:
                on_retry(retries, policy.max_retries, delay, str(exc))
            await policy.sleep(delay)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def service_message(body: str) -> str:
    """The service's own error message from an error body (JSON of any common shape, or text)."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return clip(one_line(body), MAX_MESSAGE)
    for key in ("error", "message", "detail"):
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, dict):
            value = value.get("message") or value.get("type")
        if isinstance(value, str) and value.strip():
            return clip(one_line(value), MAX_MESSAGE)
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


def describe(exc: BaseException) -> str:
    return one_line(str(exc)) or type(exc).__name__


_TLS_LOCK = threading.Lock()


def _ssl_context() -> ssl.SSLContext:
    """The process's one TLS context; a caller waits for a load already under way."""
    with _TLS_LOCK:
        return _load_ssl_context()


@functools.cache
def _load_ssl_context() -> ssl.SSLContext:
    """Loading the CA bundle costs ~0.1 s: do it once per process, not once per client."""
    import httpx

    return httpx.create_ssl_context()


def preload_tls() -> None:
    """Start loading the CA bundle on a helper thread, to overlap the rest of the start-up.

    The load is C code that releases the GIL, so on a second core it costs the first request
    nothing. What the load imports is imported here, on the calling thread, so the helper
    imports nothing: two threads importing at once can trip over each other's import locks.
    """
    import certifi  # noqa: F401  (httpx.create_ssl_context imports it)
    import httpx  # noqa: F401

    threading.Thread(target=_ssl_context, name="di-code-tls", daemon=True).start()


class HttpClient:
    """One httpx.AsyncClient per provider instance, opened on first use."""

    def __init__(self, *, retry: RetryPolicy, stall_timeout: float) -> None:
        self.retry = retry
        self.stall_timeout = stall_timeout
        self._client: httpx.AsyncClient | None = None
        self._tls = False

    async def _get(self, url: str) -> httpx.AsyncClient:
        """The client for `url`: one for a plain-HTTP server (a local model) loads no CA
        bundle, and is replaced, never reused, when an https URL comes."""
        tls = not url.startswith("http://")
        if tls and not self._tls:
            await self.aclose()
        if self._client is None:
            import httpx

            timeout = httpx.Timeout(CONNECT_TIMEOUT, read=None)
            verify = _ssl_context() if tls else False
            self._client, self._tls = httpx.AsyncClient(timeout=timeout, verify=verify), tls
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    @asynccontextmanager
    async def events(
        self, url: str, headers: Mapping[str, str], body: Any
    ) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
        """POST `body` and yield the response's SSE events; the response closes on exit."""
        response = await self._send(url, headers, body)
        stream = self._decode(response)
        try:
            await self._check(response)
            yield stream
        finally:
            await stream.aclose()
            await response.aclose()

    async def _send(self, url: str, headers: Mapping[str, str], body: Any) -> httpx.Response:
        import httpx

        client = await self._get(url)
        try:
            request = client.build_request("POST", url, json=body, headers=dict(headers))
            async with asyncio.timeout(self.stall_timeout):
                return await client.send(request, stream=True)
        except TimeoutError:
            raise ProviderError(self._stalled("no response")) from None
        except (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError) as exc:
            message = f"connection to {url} failed: {describe(exc)}"
            raise RetryableError(message) from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a bad URL, a proxy setup: final
            raise ProviderError(f"cannot reach {url}: {describe(exc)}") from exc

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
            raise RetryableError(line, parse_retry_after(response.headers))
        raise ProviderError(line)

    async def _read_capped(self, response: httpx.Response) -> str:
        import httpx

        data = b""
        try:
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) >= MAX_ERROR_BODY:
                    break
        except httpx.HTTPError:
            pass  # the status line already says what matters
        return data[:MAX_ERROR_BODY].decode("utf-8", "replace")

    async def _decode(self, response: httpx.Response) -> AsyncGenerator[ServerSentEvent, None]:
        import httpx

        decoder = SSEDecoder()
        chunks = response.aiter_bytes()
        while True:
            try:
                async with asyncio.timeout(self.stall_timeout):
                    chunk = await anext(chunks, None)
            except TimeoutError:
                raise ProviderError(self._stalled("no data")) from None
            except httpx.HTTPError as exc:
                raise ProviderError(f"connection lost: {describe(exc)}") from exc
            if chunk is None:
                break
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    def _stalled(self, what: str) -> str:
        return f"stream stalled ({what} for {self.stall_timeout:g} s)"


_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")


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
        stall_timeout: float = STALL_TIMEOUT,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.extra_body = dict(extra_body or {})
        """Merged into every request body (e.g. `tool_choice`, a server's own options)."""
        self._http = HttpClient(retry=retry or RetryPolicy(), stall_timeout=stall_timeout)

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream:
        opts = options or StreamOptions()

        async def produce(builder: MessageBuilder) -> None:
            body = {**self.build_body(model, context, opts), **self.extra_body}
            headers = {**self.auth_headers(), **self.headers}

            async def attempt() -> None:
                async with self._http.events(self.endpoint(model), headers, body) as events:
                    await self.translate(events, builder)

            await with_retries(self._http.retry, attempt, on_retry=builder.retry)

        return start_stream(model, produce, opts.signal, secrets=self._secrets())

    async def aclose(self) -> None:
        await self._http.aclose()

    def _secrets(self) -> list[str]:
        values = [v for k, v in self.headers.items() if k.lower() in _SECRET_HEADERS]
        return [self.api_key or "", *values]

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
