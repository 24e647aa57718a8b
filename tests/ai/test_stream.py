"""start_stream: every way a producer can end becomes a final event; nothing is raised."""

from __future__ import annotations

import asyncio

from di_code.ai import AbortController, ProviderError
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.faux import FAUX_MODEL
from di_code.ai.stream import start_stream
from tests.support.event_sequence import check_event_sequence


async def drain(stream, events=None):  # type: ignore[no-untyped-def]
    events = (events or []) + [event async for event in stream]
    check_event_sequence(events)
    return events, await stream.result()


async def test_a_bug_in_a_producer_is_an_error_event_with_the_secret_redacted() -> None:
    async def buggy(out: MessageBuilder) -> None:
        out.text("partial ")
        raise KeyError("sk-secret-123 leaked")

    events, message = await drain(start_stream(FAUX_MODEL, buggy, secrets=["sk-secret-123"]))
    assert events[-1].type == "error"
    assert message.error_message == "faux: '*** leaked'"
    assert message.text == "partial "


async def test_provider_errors_keep_their_own_one_line_text() -> None:
    async def refused(out: MessageBuilder) -> None:
        raise ProviderError("HTTP 401:\n  Incorrect API key provided")

    _, message = await drain(start_stream(FAUX_MODEL, refused))
    assert message.error_message == "faux: HTTP 401: Incorrect API key provided"


async def test_a_producer_that_never_finishes_its_message() -> None:
    async def silent(out: MessageBuilder) -> None:
        out.text("hi")

    _, message = await drain(start_stream(FAUX_MODEL, silent))
    assert message.error_message == "faux: stream ended without a stop reason"


async def test_abort_cancels_a_waiting_producer_at_once() -> None:
    controller = AbortController()
    cancelled = asyncio.Event()

    async def hangs(out: MessageBuilder) -> None:
        out.text("so far")
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    stream = start_stream(FAUX_MODEL, hangs, controller.signal)
    first = await anext(stream)
    assert first.type == "start"
    controller.abort()
    _, message = await drain(stream, [first])
    assert cancelled.is_set()
    assert message.stop_reason == "aborted" and message.text == "so far"


async def test_tool_use_without_a_tool_call_is_a_plain_stop() -> None:
    async def confused(out: MessageBuilder) -> None:
        out.text("done")
        out.finish("tool_use")

    _, message = await drain(start_stream(FAUX_MODEL, confused))
    assert message.stop_reason == "stop"


async def test_abort_before_the_producer_ever_ran_still_ends_the_stream() -> None:
    controller = AbortController()

    async def never_reached(out: MessageBuilder) -> None:
        raise AssertionError("the producer must not run after the abort")

    stream = start_stream(FAUX_MODEL, never_reached, controller.signal)
    controller.abort()  # the task is cancelled before its first step
    events, message = await asyncio.wait_for(drain(stream), 5)
    assert [e.type for e in events] == ["start", "error"]
    assert (message.stop_reason, message.error_message) == ("aborted", "Request aborted")
