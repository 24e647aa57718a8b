"""Builds an AssistantMessage from provider fragments and emits stream events in valid order.

Providers only say what arrived (a text delta, a tool-call fragment, a stop reason); the builder
opens and closes blocks, numbers them, joins deltas and parses tool arguments, so every provider
obeys the stream's rules (docs/DESIGN.md, The tool loop) by construction instead of by care."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from di_code.ai.codec import encodable, loads_valid
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
    """Empty text is `{}`; text that is not JSON, or JSON nested deeper than MAX_JSON_DEPTH,
    is kept as the string itself (validation then tells the model what is wrong with it)."""
    if not text.strip():
        return {}
    try:
        return loads_valid(text)
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
        self._call_ids: set[str] = set()
        self.finished: AssistantMessage | None = None

    @property
    def open_kind(self) -> BlockKind | None:
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
        delta = encodable(delta)
        if self._open != "text":
            self._begin("text")
            self._emit(TextStartEvent(len(self._blocks)))
        if delta:
            self._parts.append(delta)
            self._emit(TextDeltaEvent(len(self._blocks), delta))

    def thinking(self, delta: str) -> None:
        delta = encodable(delta)
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
        self._signature = (self._signature or "") + encodable(signature)

    def tool_call_start(self, call_id: str, name: str, signature: str | None = None) -> None:
        """A repeated id gets a suffix (`call_1`, `call_1_2`), so each call has exactly one
        result and the next request pairs them without doubt. `signature` is kept on the call
        (ToolCall.signature) for the provider to send back."""
        self._begin("tool_call")
        base = unique = encodable(call_id)
        suffix = 1
        while unique in self._call_ids:
            suffix += 1
            unique = f"{base}_{suffix}"
        self._call_ids.add(unique)
        self._tool_id, self._tool_name = unique, encodable(name)
        self._signature = None if signature is None else encodable(signature)
        self._emit(ToolCallStartEvent(len(self._blocks), unique, self._tool_name))

    def tool_call_delta(self, delta: str) -> None:
        if self._open != "tool_call":
            raise RuntimeError("tool_call_delta without an open tool call")
        delta = encodable(delta)
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
            arguments = parse_tool_arguments(text)
            call = ToolCall(self._tool_id, self._tool_name, arguments, self._signature)
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
        message = self._message(self._kept(), reason, one_line(encodable(error_message)) or reason)
        self.finished = message
        self._emit(ErrorEvent(reason, message))
        return message

    def fail_plainly(self, error_message: str) -> AssistantMessage:
        """The last resort when `fail` itself raised (a bad usage value, a broken clock): an
        error message built from nothing that can fail, so the stream still ends."""
        message = AssistantMessage(
            self._kept(), self.model.provider, self.model.id, Usage(), "error", now_ms(),
            one_line(encodable(error_message)) or "error",
        )  # fmt: skip
        self.finished = message
        self._emit(ErrorEvent("error", message))
        return message

    def _kept(self) -> list[AssistantContent]:
        """What an error message keeps: finished blocks and the partial text or thinking."""
        content = list(self._blocks)
        partial = "".join(self._parts)
        if self._open == "text" and partial:
            content.append(TextContent(partial))
        elif self._open == "thinking" and partial:
            content.append(ThinkingContent(partial, self._signature))
        return content

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
