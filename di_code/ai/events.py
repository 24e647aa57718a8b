"""Stream events: what a provider emits while an assistant message is being produced.

The order rules are checked by `tests/support/event_sequence.py`;
`di_code.ai.message_builder` produces events that follow them by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias

from di_code.ai.types import AssistantMessage, ToolCall


@dataclass(frozen=True, slots=True)
class StartEvent:
    type: ClassVar[Literal["start"]] = "start"


@dataclass(frozen=True, slots=True)
class TextStartEvent:
    content_index: int
    type: ClassVar[Literal["text_start"]] = "text_start"


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    type: ClassVar[Literal["text_delta"]] = "text_delta"


@dataclass(frozen=True, slots=True)
class TextEndEvent:
    content_index: int
    content: str
    type: ClassVar[Literal["text_end"]] = "text_end"


@dataclass(frozen=True, slots=True)
class ThinkingStartEvent:
    content_index: int
    type: ClassVar[Literal["thinking_start"]] = "thinking_start"


@dataclass(frozen=True, slots=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    signature: str | None = None
    type: ClassVar[Literal["thinking_end"]] = "thinking_end"


@dataclass(frozen=True, slots=True)
class ToolCallStartEvent:
    content_index: int
    id: str
    name: str
    type: ClassVar[Literal["tool_call_start"]] = "tool_call_start"


@dataclass(frozen=True, slots=True)
class ToolCallDeltaEvent:
    content_index: int
    delta: str
    type: ClassVar[Literal["tool_call_delta"]] = "tool_call_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEndEvent:
    content_index: int
    tool_call: ToolCall
    type: ClassVar[Literal["tool_call_end"]] = "tool_call_end"


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """The request failed in a way worth another attempt; the provider waits `delay` seconds
    and then tries again (attempt `attempt` of `max_retries`). Only before the first block:
    a retry starts the answer over, so it never follows content."""

    attempt: int
    max_retries: int
    delay: float
    reason: str
    type: ClassVar[Literal["retry"]] = "retry"


@dataclass(frozen=True, slots=True)
class DoneEvent:
    reason: Literal["stop", "length", "tool_use"]
    message: AssistantMessage
    type: ClassVar[Literal["done"]] = "done"


@dataclass(frozen=True, slots=True)
class ErrorEvent:
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
