"""A scripted provider: deterministic replies for tests, demos and benchmarks, no network.

Each `stream()` call takes the next scripted response and streams it through the same
MessageBuilder the real providers use, text in `chunk_size` pieces and tool arguments as JSON
text in pieces, yielding to the event loop (and so to an abort) between pieces.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from di_code.ai.codec import content_from_dict, usage_from_dict
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.stream import AssistantMessageStream, StreamOptions, start_stream
from di_code.ai.types import (
    AssistantContent,
    Clock,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)
from di_code.system.errors import DiCodeError

FAUX_MODEL = Model(id="faux-1", name="Faux", provider="faux", api="faux")


@dataclass(frozen=True)
class FauxSuccess:
    content: list[AssistantContent]
    stop_reason: Literal["stop", "length", "tool_use"] | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class FauxFailure:
    error_message: str


FauxResponse = FauxSuccess | FauxFailure


class FauxProviderError(DiCodeError, ValueError):
    """The script itself is inconsistent."""


def _as_response(raw: FauxResponse | Mapping[str, Any]) -> FauxResponse:
    if isinstance(raw, FauxSuccess | FauxFailure):
        response = raw
    elif raw.get("type") == "failure":
        response = FauxFailure(str(raw["error_message"]))
    elif raw.get("type") == "success":
        content = cast(
            list[AssistantContent],
            [
                content_from_dict(dict(block)) if isinstance(block, Mapping) else block
                for block in raw.get("content", [])
            ],
        )
        response = FauxSuccess(content, raw.get("stop_reason"), _usage(raw.get("usage")))
    else:
        raise FauxProviderError(f"unknown faux response type {raw.get('type')!r}")
    if isinstance(response, FauxSuccess):
        if not isinstance(response.usage, Usage):
            response = dataclasses.replace(response, usage=_usage(response.usage))
        has_call = any(isinstance(block, ToolCall) for block in response.content)
        if has_call and response.stop_reason not in (None, "tool_use"):
            raise FauxProviderError(
                f"a tool call needs stop_reason tool_use, not {response.stop_reason!r}"
            )
        if response.stop_reason == "tool_use" and not has_call:
            raise FauxProviderError("stop_reason tool_use needs a tool call")
    return response


def _usage(raw: Any) -> Usage:
    """Usage given as a dict (as JSON has it) read by the one codec, like a session's."""
    return raw if isinstance(raw, Usage) else usage_from_dict(raw or {})


class FauxProvider:
    def __init__(self, owner: Faux) -> None:
        self._owner = owner

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream:
        owner = self._owner
        owner.requests.append(
            Context(context.system_prompt, list(context.messages), list(context.tools))
        )
        response = owner.take()
        signal = options.signal if options else None
        return start_stream(model, lambda out: owner.play(response, out), signal, now=owner.now)


class Faux:
    """What `create_faux_provider` returns: the provider, its model and what it was asked."""

    def __init__(
        self, responses: Iterable[FauxResponse | Mapping[str, Any]], chunk_size: int, now: Clock
    ) -> None:
        if chunk_size < 1:
            raise FauxProviderError("chunk_size must be at least 1")
        self._queue: deque[FauxResponse] = deque(_as_response(r) for r in responses)
        self.chunk_size = chunk_size
        self.now = now
        self.requests: list[Context] = []
        self.model = FAUX_MODEL
        self.provider = FauxProvider(self)

    def pending_responses(self) -> int:
        return len(self._queue)

    def push(self, *responses: FauxResponse | Mapping[str, Any]) -> None:
        """Script more replies (a REPL demo or a long benchmark adds them as it goes)."""
        self._queue.extend(_as_response(r) for r in responses)

    def take(self) -> FauxResponse | None:
        return self._queue.popleft() if self._queue else None

    async def play(self, response: FauxResponse | None, out: MessageBuilder) -> None:
        if response is None:
            out.fail("error", "No faux response scripted")
            return
        if isinstance(response, FauxFailure):
            out.fail("error", response.error_message)
            return
        for block in response.content:
            match block:
                case TextContent(text=text):
                    for piece in self._pieces(text):
                        await asyncio.sleep(0)
                        out.text(piece)
                case ThinkingContent(thinking=thinking, signature=signature):
                    for piece in self._pieces(thinking):
                        await asyncio.sleep(0)
                        out.thinking(piece)
                    if signature:
                        out.thinking_signature(signature)
                case ToolCall(id=call_id, name=name, arguments=arguments, signature=signature):
                    out.tool_call_start(call_id, name, signature)
                    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                    for piece in self._pieces(text):
                        await asyncio.sleep(0)
                        out.tool_call_delta(piece)
            out.close_block()
        out.usage = response.usage
        has_call = any(isinstance(block, ToolCall) for block in response.content)
        out.finish(response.stop_reason or ("tool_use" if has_call else "stop"))

    def _pieces(self, text: str) -> list[str]:
        size = self.chunk_size
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def create_faux_provider(
    responses: Iterable[FauxResponse | Mapping[str, Any]] = (),
    chunk_size: int = 4,
    now: Clock | None = None,
) -> Faux:
    return Faux(responses, chunk_size, now or now_ms)
