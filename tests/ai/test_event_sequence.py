"""Each rule of the stream (docs/DESIGN.md, The tool loop) has a sequence that breaks it; valid
sequences pass."""

from __future__ import annotations

import pytest

from di_code.ai import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from di_code.ai.events import RetryEvent
from tests.support.event_sequence import EventSequenceError, check_event_sequence


def message(content: list, stop_reason: str = "stop", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content,
        "faux",
        "faux-1",
        stop_reason=stop_reason,  # type: ignore[arg-type]
        timestamp=1,
        error_message=error,
    )


CALL = ToolCall("c1", "echo", {"value": "hi"})


def text_block(index: int, *parts: str) -> list[StreamEvent]:
    return [
        TextStartEvent(index),
        *(TextDeltaEvent(index, part) for part in parts),
        TextEndEvent(index, "".join(parts)),
    ]


def tool_block(index: int, call: ToolCall = CALL, parts: tuple[str, ...] = ('{"value"', ': "hi"}')):
    return [
        ToolCallStartEvent(index, call.id, call.name),
        *(ToolCallDeltaEvent(index, part) for part in parts),
        ToolCallEndEvent(index, call),
    ]


def valid_tool_turn() -> list[StreamEvent]:
    return [
        StartEvent(),
        *text_block(0, "let me ", "check"),
        *tool_block(1),
        DoneEvent("tool_use", message([TextContent("let me check"), CALL], "tool_use")),
    ]


def test_valid_sequences_pass() -> None:
    check_event_sequence(valid_tool_turn())
    thinking = [
        StartEvent(),
        ThinkingStartEvent(0),
        ThinkingDeltaEvent(0, "hmm"),
        ThinkingEndEvent(0, "hmm", "sig"),
        *text_block(1, "ok"),
        DoneEvent("stop", message([ThinkingContent("hmm", "sig"), TextContent("ok")])),
    ]
    check_event_sequence(thinking)


def test_error_keeps_partial_text_and_drops_a_half_tool_call() -> None:
    check_event_sequence(
        [
            StartEvent(),
            *text_block(0, "a"),
            TextStartEvent(1),
            TextDeltaEvent(1, "par"),
            ErrorEvent("error", message([TextContent("a"), TextContent("par")], "error", "boom")),
        ]
    )
    check_event_sequence(
        [
            StartEvent(),
            ToolCallStartEvent(0, "c1", "echo"),
            ToolCallDeltaEvent(0, '{"va'),
            ErrorEvent("aborted", message([], "aborted", "Request aborted")),
        ]
    )


def broken(events: list[StreamEvent], match: str) -> None:
    with pytest.raises(EventSequenceError, match=match):
        check_event_sequence(events)


def test_start_must_come_first() -> None:
    broken(text_block(0, "x"), "before start")


def test_start_only_once() -> None:
    broken([StartEvent(), StartEvent()], "twice")


def test_one_block_open_at_a_time() -> None:
    broken([StartEvent(), TextStartEvent(0), ThinkingStartEvent(0)], "while a text block is open")


def test_content_index_is_the_position_in_the_final_content() -> None:
    broken([StartEvent(), *text_block(0, "a"), TextStartEvent(0)], "content_index 0, expected 1")


def test_delta_needs_the_matching_open_block() -> None:
    broken([StartEvent(), TextDeltaEvent(0, "x")], "without an open text block")
    broken([StartEvent(), TextStartEvent(0), ThinkingDeltaEvent(0, "x")], "open thinking block")


def test_delta_index_matches_the_open_block() -> None:
    broken([StartEvent(), TextStartEvent(0), TextDeltaEvent(3, "x")], "content_index 3")


def test_end_content_equals_joined_deltas() -> None:
    broken(
        [StartEvent(), TextStartEvent(0), TextDeltaEvent(0, "ab"), TextEndEvent(0, "abc")],
        "joined deltas",
    )


def test_tool_call_arguments_equal_the_parsed_deltas() -> None:
    wrong = ToolCall("c1", "echo", {"value": "other"})
    broken([StartEvent(), *tool_block(0, wrong, ('{"value": "hi"}',))], "arguments differ")


def test_tool_call_end_keeps_id_and_name() -> None:
    events = [
        StartEvent(),
        ToolCallStartEvent(0, "c1", "echo"),
        ToolCallDeltaEvent(0, "{}"),
        ToolCallEndEvent(0, ToolCall("c2", "echo", {})),
    ]
    broken(events, "id/name differ")


def test_nothing_after_done() -> None:
    broken([*valid_tool_turn(), TextStartEvent(2)], "after the stream ended")


def test_done_with_an_open_block() -> None:
    broken([StartEvent(), TextStartEvent(0), DoneEvent("stop", message([]))], "block is open")


def test_done_message_equals_the_finished_blocks() -> None:
    broken(
        [StartEvent(), *text_block(0, "a"), DoneEvent("stop", message([TextContent("b")]))],
        "differs from the streamed blocks",
    )


def test_done_reason_matches_the_message() -> None:
    broken([StartEvent(), DoneEvent("length", message([]))], "differs from reason")


def test_error_never_carries_a_half_built_tool_call() -> None:
    events = [
        StartEvent(),
        ToolCallStartEvent(0, "c1", "echo"),
        ToolCallDeltaEvent(0, "{}"),
        ErrorEvent("error", message([ToolCall("c1", "echo", {})], "error", "boom")),
    ]
    broken(events, "differs from the streamed blocks")


def test_error_keeps_the_partial_text() -> None:
    events = [
        StartEvent(),
        TextStartEvent(0),
        TextDeltaEvent(0, "part"),
        ErrorEvent("error", message([], "error", "boom")),
    ]
    broken(events, "differs from the streamed blocks")


def test_error_message_is_set_exactly_for_failures() -> None:
    broken([StartEvent(), ErrorEvent("error", message([], "error", None))], "no error_message")
    broken([StartEvent(), DoneEvent("stop", message([], "stop", "oops"))], "has an error_message")


def test_a_stream_must_end() -> None:
    broken([StartEvent(), *text_block(0, "a")], "without done or error")


def test_a_retry_may_come_only_before_any_content() -> None:
    retry = RetryEvent(1, 4, 1.0, "HTTP 500: boom")
    check_event_sequence(
        [StartEvent(), retry, retry, *text_block(0, "ok"), DoneEvent("stop", message([TEXT_OK]))]
    )
    broken([StartEvent(), *text_block(0, "ok"), retry], "retry after content")
    broken([StartEvent(), TextStartEvent(0), retry], "retry after content")
    broken([retry], "before start")


TEXT_OK = TextContent("ok")
