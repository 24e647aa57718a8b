"""The stream object every provider returns, and the one place provider failures are caught.

`start_stream` runs a provider's producer coroutine in its own task. Whatever happens inside
it (an HTTP error, a dropped connection, an abort, a bug) ends as an `error` event with a
one-line message: callers never see an exception after `provider.stream()` has returned.
Abort cancels the producer task, which closes its HTTP response at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Protocol

import msgspec

from di_code.ai.events import StreamEvent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.redaction import redact, register
from di_code.ai.types import AssistantMessage, Clock, Context, Model, ReasoningLevel, now_ms
from di_code.system.abort import AbortSignal
from di_code.system.errors import DiCodeError

ABORTED_REQUEST_TEXT = "Request aborted"
logger = logging.getLogger(__name__)


class ProviderError(DiCodeError):
    """A failure a provider has phrased for the user (`HTTP 401: ...`); the stream puts the
    model's provider in front (`groq: HTTP 401: ...`), so every error names who failed."""


class AssistantMessageStream:
    """Async iterator of StreamEvents; `await stream.result()` gives the final message."""

    def __init__(self) -> None:
        self._buffer: deque[StreamEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._done: asyncio.Future[AssistantMessage] = asyncio.get_running_loop().create_future()

    def push(self, event: StreamEvent) -> None:
        self._buffer.append(event)
        self._wake()

    def close(self, message: AssistantMessage) -> None:
        self._closed = True
        if not self._done.done():
            self._done.set_result(message)
        self._wake()

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._buffer.popleft()

    async def result(self) -> AssistantMessage:
        return await asyncio.shield(self._done)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


Producer = Callable[[MessageBuilder], Awaitable[None]]


def start_stream(
    model: Model,
    produce: Producer,
    signal: AbortSignal | None = None,
    *,
    now: Clock = now_ms,
    secrets: Iterable[str] = (),
) -> AssistantMessageStream:
    """Run `produce(builder)` in a task and turn every way it can end into stream events."""
    stream = AssistantMessageStream()
    builder = MessageBuilder(model, stream.push, now)
    register(*secrets)

    def describe(exc: BaseException) -> str:
        return f"{model.provider}: {redact(str(exc)) or type(exc).__name__}"

    async def drive() -> None:
        builder.start()
        if signal is not None and signal.aborted:
            return  # finish() reports the abort
        try:
            await produce(builder)
            if builder.finished is None:
                builder.fail("error", f"{model.provider}: stream ended without a stop reason")
        except Exception as exc:  # any bug or surprise still ends as an error event
            if builder.finished is None:
                builder.fail("error", describe(exc))

    def finish(task: asyncio.Task[None]) -> None:
        """Close the stream however the task ended: cancelled by an abort, even before it
        ever ran (then no code inside `drive` runs at all), done, or raising from inside its
        own failure path (a builder that cannot build even the error message)."""
        message: AssistantMessage | None = None
        try:
            if signal is not None:
                signal.remove_listener(cancel)
            failure = None if task.cancelled() else task.exception()
            message = builder.finished or (
                builder.fail("error", describe(failure))
                if failure is not None
                else builder.fail("aborted", ABORTED_REQUEST_TEXT)
            )
        except Exception as exc:
            logger.warning(
                "%s: the stream could not end normally (%s)", model.provider, type(exc).__name__
            )
            message = builder.finished or builder.fail_plainly(describe(exc))
        finally:
            stream.close(message or builder.fail_plainly(f"{model.provider}: stream failed"))

    task = asyncio.get_running_loop().create_task(drive())
    task.add_done_callback(finish)

    def cancel(_reason: object) -> None:
        task.cancel()

    if signal is not None and not signal.aborted:
        signal.add_listener(cancel)
    return stream


class StreamOptions(msgspec.Struct):
    """Per-request options."""

    signal: AbortSignal | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: ReasoningLevel = "off"
    session_id: str | None = None


class Provider(Protocol):
    """Anything that can stream an assistant message for a context."""

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream: ...


async def close_provider(provider: Provider) -> None:
    """Close the provider's HTTP client, if it has one: when a run or a chat ends, and when
    /model replaces it, so no connection is left open until the process exits."""
    aclose = getattr(provider, "aclose", None)
    if aclose is not None:
        await aclose()
