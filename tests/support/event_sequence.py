"""The stream's rules (docs/DESIGN.md, The tool loop), checked event by event.

Every provider's output goes through `check_event_sequence` in the tests, so a provider that
opens two blocks at once, loses a delta or replays a half-built tool call is caught at once.
One of them in detail: `retry{attempt, max_retries, delay, reason}` (a backoff
before the next attempt) comes after `start` and before the first block, any number of times.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from di_code.ai.events import (
    DoneEvent,
    ErrorEvent,
    RetryEvent,
    StartEvent,
    StreamEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from di_code.ai.message_builder import parse_tool_arguments
from di_code.ai.types import AssistantContent, AssistantMessage, TextContent, ThinkingContent


class EventSequenceError(AssertionError):
    """An event broke one of the stream rules."""


class EventSequenceChecker:
    def __init__(self) -> None:
        self._started = False
        self._ended = False
        self._blocks: list[AssistantContent] = []
        self._open: Literal["text", "thinking", "tool_call"] | None = None
        self._parts: list[str] = []
        self._tool: tuple[str, str] = ("", "")

    def feed(self, event: StreamEvent) -> None:
        if self._ended:
            raise EventSequenceError(f"{event.type} after the stream ended")
        if isinstance(event, StartEvent):
            if self._started:
                raise EventSequenceError("start emitted twice")
            self._started = True
            return
        if not self._started:
            raise EventSequenceError(f"{event.type} before start")
        match event:
            case TextStartEvent() | ThinkingStartEvent() | ToolCallStartEvent():
                self._begin(event)
            case TextDeltaEvent() | ThinkingDeltaEvent() | ToolCallDeltaEvent():
                self._expect_open(event.type.removesuffix("_delta"), event.content_index, event)
                self._parts.append(event.delta)
            case TextEndEvent() | ThinkingEndEvent() | ToolCallEndEvent():
                self._end(event)
            case RetryEvent():
                if self._blocks or self._open is not None:
                    raise EventSequenceError("retry after content was streamed")
            case DoneEvent():
                self._done(event)
            case ErrorEvent():
                self._error(event)

    def finish(self) -> None:
        if not self._ended:
            raise EventSequenceError("stream ended without done or error")

    def _begin(self, event: TextStartEvent | ThinkingStartEvent | ToolCallStartEvent) -> None:
        if self._open is not None:
            raise EventSequenceError(f"{event.type} while a {self._open} block is open")
        if event.content_index != len(self._blocks):
            raise EventSequenceError(
                f"{event.type} has content_index {event.content_index}, "
                f"expected {len(self._blocks)}"
            )
        self._open = event.type.removesuffix("_start")  # type: ignore[assignment]
        self._parts = []
        if isinstance(event, ToolCallStartEvent):
            self._tool = (event.id, event.name)

    def _expect_open(self, kind: str, index: int, event: StreamEvent) -> None:
        if self._open != kind:
            raise EventSequenceError(f"{event.type} without an open {kind} block")
        if index != len(self._blocks):
            raise EventSequenceError(
                f"{event.type} has content_index {index}, the open block is {len(self._blocks)}"
            )

    def _end(self, event: TextEndEvent | ThinkingEndEvent | ToolCallEndEvent) -> None:
        kind = event.type.removesuffix("_end")
        self._expect_open(kind, event.content_index, event)
        joined = "".join(self._parts)
        if isinstance(event, ToolCallEndEvent):
            call = event.tool_call
            if (call.id, call.name) != self._tool:
                raise EventSequenceError("tool_call_end id/name differ from tool_call_start")
            if call.arguments != parse_tool_arguments(joined):
                raise EventSequenceError("tool_call_end arguments differ from the joined deltas")
            self._blocks.append(call)
        else:
            if event.content != joined:
                raise EventSequenceError(f"{event.type} content differs from the joined deltas")
            if isinstance(event, TextEndEvent):
                self._blocks.append(TextContent(joined))
            else:
                self._blocks.append(ThinkingContent(joined, event.signature))
        self._open = None
        self._parts = []

    def _done(self, event: DoneEvent) -> None:
        if self._open is not None:
            raise EventSequenceError(f"done while a {self._open} block is open")
        self._check_message(event.message, event.reason, self._blocks)
        if event.message.error_message is not None:
            raise EventSequenceError("done message has an error_message")
        self._ended = True

    def _error(self, event: ErrorEvent) -> None:
        expected = list(self._blocks)
        partial = "".join(self._parts)
        if partial and self._open == "text":
            expected.append(TextContent(partial))
        elif partial and self._open == "thinking":
            content = event.message.content
            signature = getattr(content[-1], "signature", None) if content else None
            expected.append(ThinkingContent(partial, signature))
        self._check_message(event.message, event.reason, expected)
        if not event.message.error_message:
            raise EventSequenceError("error message has no error_message")
        self._ended = True

    @staticmethod
    def _check_message(
        message: AssistantMessage, reason: str, expected: list[AssistantContent]
    ) -> None:
        if message.stop_reason != reason:
            raise EventSequenceError(
                f"message stop_reason {message.stop_reason!r} differs from reason {reason!r}"
            )
        if message.content != expected:
            raise EventSequenceError("final message content differs from the streamed blocks")


def check_event_sequence(events: Iterable[StreamEvent]) -> None:
    """Raise EventSequenceError at the first event that breaks a rule."""
    checker = EventSequenceChecker()
    for event in events:
        checker.feed(event)
    checker.finish()
