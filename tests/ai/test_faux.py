"""The faux provider: scripted replies streamed through the real builder, checked by rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from di_code.ai import (
    AbortController,
    Context,
    StreamEvent,
    StreamOptions,
    TextContent,
    TextDeltaEvent,
    ThinkingContent,
    ToolCall,
    ToolCallDeltaEvent,
    UserMessage,
)
from di_code.ai.providers.faux import FauxProviderError, FauxSuccess, create_faux_provider
from tests.support.event_sequence import check_event_sequence


async def collect(faux: Any, signal: Any = None) -> tuple[list[StreamEvent], Any]:
    context = Context("system", [UserMessage.of("hi")])
    stream = faux.provider.stream(faux.model, context, StreamOptions(signal=signal))
    events = [event async for event in stream]
    check_event_sequence(events)
    return events, await stream.result()


async def test_text_is_streamed_in_chunk_size_pieces() -> None:
    faux = create_faux_provider(
        [{"type": "success", "content": [TextContent("hello world")]}], chunk_size=4
    )
    events, message = await collect(faux)
    assert [e.delta for e in events if isinstance(e, TextDeltaEvent)] == ["hell", "o wo", "rld"]
    assert message.content == [TextContent("hello world")]
    assert message.stop_reason == "stop"


async def test_tool_arguments_stream_as_json_text() -> None:
    call = ToolCall("c1", "echo", {"value": "hello"}, signature="c2ln")
    faux = create_faux_provider([FauxSuccess([ThinkingContent("hm", "sig"), call])], chunk_size=5)
    events, message = await collect(faux)
    deltas = [e.delta for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert "".join(deltas) == '{"value": "hello"}' and len(deltas) == 4
    assert message.content == [ThinkingContent("hm", "sig"), call]
    assert message.stop_reason == "tool_use"


async def test_failure_and_empty_queue_are_error_events() -> None:
    faux = create_faux_provider([{"type": "failure", "error_message": "rate limited"}])
    events, message = await collect(faux)
    assert [e.type for e in events] == ["start", "error"]
    assert (message.stop_reason, message.error_message) == ("error", "rate limited")
    _, empty = await collect(faux)
    assert empty.error_message == "No faux response scripted"


async def test_pre_aborted_signal_gives_start_then_aborted() -> None:
    controller = AbortController()
    controller.abort()
    faux = create_faux_provider([{"type": "success", "content": [TextContent("never")]}])
    events, message = await collect(faux, controller.signal)
    assert [e.type for e in events] == ["start", "error"]
    assert message.stop_reason == "aborted"
    assert faux.pending_responses() == 0  # taken when stream() was called


async def test_abort_between_pieces_keeps_the_partial_text() -> None:
    controller = AbortController()
    faux = create_faux_provider(
        [{"type": "success", "content": [TextContent("abcdefghijkl")]}], chunk_size=2
    )
    stream = faux.provider.stream(
        faux.model, Context(None, []), StreamOptions(signal=controller.signal)
    )
    events: list[StreamEvent] = []
    async for event in stream:
        events.append(event)
        if isinstance(event, TextDeltaEvent) and event.delta == "cd":
            controller.abort()
    check_event_sequence(events)
    message = await stream.result()
    assert message.stop_reason == "aborted"
    assert message.content == [TextContent("abcd")]


async def test_requests_are_copies_of_each_context() -> None:
    faux = create_faux_provider([{"type": "success", "content": [TextContent("a")]}])
    messages = [UserMessage.of("first")]
    faux.provider.stream(faux.model, Context("sys", messages), None)
    messages.append(UserMessage.of("later"))
    assert len(faux.requests[0].messages) == 1
    assert faux.requests[0].system_prompt == "sys"
    await asyncio.sleep(0)


@pytest.mark.parametrize(
    "response",
    [
        {"type": "success", "content": [ToolCall("c", "t", {})], "stop_reason": "stop"},
        {"type": "success", "content": [TextContent("x")], "stop_reason": "tool_use"},
        {"type": "mystery"},
    ],
)
def test_inconsistent_scripts_are_rejected_at_creation(response: dict[str, Any]) -> None:
    with pytest.raises(FauxProviderError):
        create_faux_provider([response])
