"""Builds an AssistantMessage from provider fragments and emits stream events in valid order.

Providers only say what arrived (a text delta, a tool-call fragment, a stop reason); the builder
opens and closes blocks, numbers them, joins deltas and parses tool arguments, so every
provider obeys the rules of SPEC §2.2 by construction instead of by care.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

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
from di_code.ai.types import (
    AssistantContent,
    AssistantMessage,
    Clock,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    compute_cost,
    now_ms,
)

BlockKind = Literal["text", "thinking", "tool_call"]
_WHITESPACE = re.compile(r"\s+")


def parse_tool_arguments(text: str) -> Any:
    """Empty text is `{}`; text that is not JSON is kept as the string itself."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class MessageBuilder:
    def __init__(self, model: Model, emit: Callable[[StreamEvent], None], now: Clock = now_ms):
        self.model = model
        self.usage = Usage()
        self._emit = emit
        self._now = now
        self._blocks: list[AssistantContent] = []
        self._open: BlockKind | None = None
        self._parts: list[str] = []
        self._signature: str | None = None
        self._tool_id = ""
        self._tool_name = ""
        self._started = False
        self.finished: AssistantMessage | None = None

    @property
    def open_block(self) -> BlockKind | None:
        return self._open

    @property
    def open_tool_call_id(self) -> str | None:
        return self._tool_id if self._open == "tool_call" else None

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._emit(StartEvent())

    def retry(self, attempt: int, max_retries: int, delay: float, reason: str) -> None:
        """Report a backoff before the next attempt; only before any content (see RetryEvent)."""
        if self._blocks or self._open is not None:
            raise RuntimeError("retry after content was streamed")
        self._emit(RetryEvent(attempt, max_retries, delay, reason))

    def text(self, delta: str) -> None:
        if self._open != "text":
            self._begin("text")
            self._emit(TextStartEvent(len(self._blocks)))
        if delta:
            self._parts.append(delta)
            self._emit(TextDeltaEvent(len(self._blocks), delta))

    def thinking(self, delta: str) -> None:
        if self._open != "thinking":
            self._begin("thinking")
            self._emit(ThinkingStartEvent(len(self._blocks)))
        if delta:
            self._parts.append(delta)
            self._emit(ThinkingDeltaEvent(len(self._blocks), delta))

    def thinking_signature(self, signature: str) -> None:
        """Attach (or extend) the signature of the open thinking block."""
        if self._open != "thinking":
            self.thinking("")
        self._signature = (self._signature or "") + signature

    def tool_call_start(self, call_id: str, name: str) -> None:
        self._begin("tool_call")
        self._tool_id, self._tool_name = call_id, name
        self._emit(ToolCallStartEvent(len(self._blocks), call_id, name))

    def tool_call_delta(self, delta: str) -> None:
        if self._open != "tool_call":
            raise RuntimeError("tool_call_delta without an open tool call")
        if delta:
            self._parts.append(delta)
            self._emit(ToolCallDeltaEvent(len(self._blocks), delta))

    def close_block(self) -> None:
        index, kind, text = len(self._blocks), self._open, "".join(self._parts)
        if kind == "text":
            self._blocks.append(TextContent(text))
            self._emit(TextEndEvent(index, text))
        elif kind == "thinking":
            self._blocks.append(ThinkingContent(text, self._signature))
            self._emit(ThinkingEndEvent(index, text, self._signature))
        elif kind == "tool_call":
            call = ToolCall(self._tool_id, self._tool_name, parse_tool_arguments(text))
            self._blocks.append(call)
            self._emit(ToolCallEndEvent(index, call))
        self._open, self._parts, self._signature = None, [], None

    def finish(self, stop_reason: Literal["stop", "length", "tool_use"]) -> AssistantMessage:
        self.start()
        self.close_block()
        if stop_reason == "tool_use" and not any(isinstance(b, ToolCall) for b in self._blocks):
            stop_reason = "stop"
        message = self._message(list(self._blocks), stop_reason, None)
        self.finished = message
        self._emit(DoneEvent(stop_reason, message))
        return message

    def fail(self, reason: Literal["error", "aborted"], error_message: str) -> AssistantMessage:
        """End in error: finished blocks and partial text/thinking survive, a half tool call not."""
        self.start()
        content = list(self._blocks)
        partial = "".join(self._parts)
        if self._open == "text" and partial:
            content.append(TextContent(partial))
        elif self._open == "thinking" and partial:
            content.append(ThinkingContent(partial, self._signature))
        message = self._message(content, reason, one_line(error_message) or reason)
        self.finished = message
        self._emit(ErrorEvent(reason, message))
        return message

    def _begin(self, kind: BlockKind) -> None:
        self.start()
        if self._open is not None:
            self.close_block()
        self._open = kind

    def _message(
        self, content: list[AssistantContent], stop_reason: StopReason, error: str | None
    ) -> AssistantMessage:
        return AssistantMessage(
            content=content,
            provider=self.model.provider,
            model=self.model.id,
            usage=compute_cost(self.model, self.usage),
            stop_reason=stop_reason,
            timestamp=self._now(),
            error_message=error,
        )
