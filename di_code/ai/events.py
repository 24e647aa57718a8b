"""Stream events: what a provider emits while an assistant message is being produced.

The order rules are checked by `tests/support/event_sequence.py`;
`di_code.ai.message_builder` produces events that follow them by construction.

Each event is a frozen msgspec `Struct`: a frozen slots dataclass generates and compiles its
methods when the module is imported, at every start-up for every class, where a Struct is built
in C.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

from msgspec import Struct

from di_code.ai.types import AssistantMessage, ToolCall


class StartEvent(Struct, frozen=True):
    type: ClassVar[Literal["start"]] = "start"


class TextStartEvent(Struct, frozen=True):
    content_index: int
    type: ClassVar[Literal["text_start"]] = "text_start"


class TextDeltaEvent(Struct, frozen=True):
    content_index: int
    delta: str
    type: ClassVar[Literal["text_delta"]] = "text_delta"


class TextEndEvent(Struct, frozen=True):
    content_index: int
    content: str
    type: ClassVar[Literal["text_end"]] = "text_end"


class ThinkingStartEvent(Struct, frozen=True):
    content_index: int
    type: ClassVar[Literal["thinking_start"]] = "thinking_start"


class ThinkingDeltaEvent(Struct, frozen=True):
    content_index: int
    delta: str
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"


class ThinkingEndEvent(Struct, frozen=True):
    content_index: int
    content: str
    signature: str | None = None
    type: ClassVar[Literal["thinking_end"]] = "thinking_end"


class ToolCallStartEvent(Struct, frozen=True):
    content_index: int
    id: str
    name: str
    type: ClassVar[Literal["tool_call_start"]] = "tool_call_start"


class ToolCallDeltaEvent(Struct, frozen=True):
    content_index: int
    delta: str
    type: ClassVar[Literal["tool_call_delta"]] = "tool_call_delta"


class ToolCallEndEvent(Struct, frozen=True):
    content_index: int
    tool_call: ToolCall
    type: ClassVar[Literal["tool_call_end"]] = "tool_call_end"


class RetryEvent(Struct, frozen=True):
    """The request failed in a way worth another attempt; the provider waits `delay` seconds
    and then tries again (attempt `attempt` of `max_retries`). Only before the first block:
    a retry starts the answer over, so it never follows content."""

    attempt: int
    max_retries: int
    delay: float
    reason: str
    type: ClassVar[Literal["retry"]] = "retry"


class DoneEvent(Struct, frozen=True):
    reason: Literal["stop", "length", "tool_use"]
    message: AssistantMessage
    type: ClassVar[Literal["done"]] = "done"


class ErrorEvent(Struct, frozen=True):
    reason: Literal["error", "aborted"]
    message: AssistantMessage
    type: ClassVar[Literal["error"]] = "error"


StreamEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | RetryEvent
    | DoneEvent
    | ErrorEvent
)
