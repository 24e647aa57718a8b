"""Anthropic Messages, streaming.

`build_anthropic_request` and `apply_anthropic_event` are pure and tested on their own;
`AnthropicProvider` is the thin glue. Thinking blocks keep their signature and go back on the
next request (the API requires that when tools are used with thinking); consecutive tool
results go in one user message; `ping` and unknown events are ignored; an `overloaded_error`
before any content is retried like a 529.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.http import HttpProvider
from di_code.ai.providers.limits import reply_token_limit
from di_code.ai.providers.retry import RetryableError
from di_code.ai.redaction import clip
from di_code.ai.sse import ServerSentEvent
from di_code.ai.stream import ProviderError, StreamOptions
from di_code.ai.transcript import messages_for_request
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

API_VERSION = "2023-06-01"
THINKING_BUDGET = {"low": 2048, "medium": 8192, "high": 24576}
MIN_THINKING_BUDGET = 1024
_STOP: dict[str, Literal["stop", "length", "tool_use"]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_CACHE = {"type": "ephemeral"}


# ---------------------------------------------------------------- request


def build_anthropic_request(
    model: Model, context: Context, options: StreamOptions
) -> dict[str, Any]:
    """The Messages body for `context` (a pure function)."""
    max_tokens = reply_token_limit(model, options)
    body: dict[str, Any] = {
        "model": model.id,
        "max_tokens": max_tokens,
        "stream": True,
        "messages": _messages(model, messages_for_request(context.messages)),
    }
    if context.system_prompt:
        body["system"] = [{"type": "text", "text": context.system_prompt, "cache_control": _CACHE}]
    if context.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in context.tools
        ]
    budget = min(THINKING_BUDGET.get(options.reasoning, 0), max_tokens - MIN_THINKING_BUDGET)
    if model.reasoning and options.reasoning != "off" and budget >= MIN_THINKING_BUDGET:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif options.temperature is not None:
        body["temperature"] = options.temperature  # not allowed together with thinking
    return body


def tool_id(call_id: str) -> str:
    """Anthropic accepts only [a-zA-Z0-9_-] in tool ids; calls from other providers may not."""
    return _BAD_ID_CHARS.sub("_", call_id) or "call"


def _messages(model: Model, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case UserMessage():
                blocks = [_part(model, part) for part in message.content]
                out.append({"role": "user", "content": blocks})
            case AssistantMessage():
                blocks = _assistant_blocks(message)
                if blocks:
                    out.append({"role": "assistant", "content": blocks})
            case ToolResultMessage():
                result = _tool_result(model, message)
                previous = out[-1] if out else None
                if previous and previous["role"] == "user" and _all_results(previous):
                    previous["content"].append(result)
                else:
                    out.append({"role": "user", "content": [result]})
    if out and out[-1]["role"] == "user":  # cache the whole prefix for the next request
        last = out[-1]["content"][-1]
        out[-1]["content"][-1] = {**last, "cache_control": _CACHE}
    return out


def _all_results(message: dict[str, Any]) -> bool:
    return all(block.get("type") == "tool_result" for block in message["content"])


def _part(model: Model, part: TextContent | ImageContent) -> dict[str, Any]:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text or " "}
    if "image" not in model.input:
        return {"type": "text", "text": "(image omitted: this model does not accept images)"}
    source = {"type": "base64", "media_type": part.mime_type, "data": part.data}
    return {"type": "image", "source": source}


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Signed thinking goes back as is; unsigned thinking (another provider's) is dropped."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case ThinkingContent(thinking=thinking, signature=signature) if signature:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
            case ThinkingContent():
                pass
            case TextContent(text=text) if text:
                blocks.append({"type": "text", "text": text})
            case TextContent():
                pass
            case ToolCall(id=call_id, name=name, arguments=arguments):
                tool_input = arguments if isinstance(arguments, dict) else {}
                blocks.append(
                    {"type": "tool_use", "id": tool_id(call_id), "name": name, "input": tool_input}
                )
    return blocks


def _tool_result(model: Model, message: ToolResultMessage) -> dict[str, Any]:
    content = [_part(model, part) for part in message.content] or [
        {"type": "text", "text": "(no output)"}
    ]
    return {
        "type": "tool_result",
        "tool_use_id": tool_id(message.tool_call_id),
        "content": content,
        "is_error": message.is_error,
    }


# ---------------------------------------------------------------- stream translation


@dataclass(slots=True)
class AnthropicStreamState:
    kinds: dict[int, str] = field(default_factory=dict)
    """Block index → the kind we opened for it; other blocks (server tools) are skipped."""
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    content_seen: bool = False
    stopped: bool = False


def apply_anthropic_event(data: Any, state: AnthropicStreamState, out: MessageBuilder) -> None:
    """Translate one parsed event payload into builder calls."""
    if not isinstance(data, dict):
        raise ProviderError(f"unexpected stream event: {clip(str(data), 200)}")
    match data.get("type"):
        case "message_start":
            _add_usage(state, out, (data.get("message") or {}).get("usage"))
        case "content_block_start":
            _block_start(data, state, out)
        case "content_block_delta":
            _block_delta(data, state, out)
        case "content_block_stop":
            if state.kinds.pop(int(data.get("index", -1)), None) is not None:
                out.close_block()
        case "message_delta":
            state.stop_reason = (data.get("delta") or {}).get("stop_reason") or state.stop_reason
            _add_usage(state, out, data.get("usage"))
        case "message_stop":
            state.stopped = True
        case "error":
            _raise_error(data.get("error") or {}, state)
        case _:
            pass  # ping, and event types added after this code was written


def _block_start(data: dict[str, Any], state: AnthropicStreamState, out: MessageBuilder) -> None:
    block = data.get("content_block") or {}
    index, kind = int(data.get("index", 0)), block.get("type")
    state.content_seen = True
    if kind == "text":
        out.text(block.get("text") or "")
    elif kind == "thinking":
        out.thinking(block.get("thinking") or "")
    elif kind == "tool_use":
        out.tool_call_start(str(block.get("id") or f"toolu_{index}"), str(block.get("name") or ""))
        if block.get("input"):  # a whole call at once
            out.tool_call_delta(json.dumps(block["input"]))
    else:
        return
    state.kinds[index] = kind


def _block_delta(data: dict[str, Any], state: AnthropicStreamState, out: MessageBuilder) -> None:
    kind = state.kinds.get(int(data.get("index", -1)))
    delta = data.get("delta") or {}
    match delta.get("type"):
        case "text_delta" if kind == "text":
            out.text(str(delta.get("text") or ""))
        case "thinking_delta" if kind == "thinking":
            out.thinking(str(delta.get("thinking") or ""))
        case "signature_delta" if kind == "thinking":
            out.thinking_signature(str(delta.get("signature") or ""))
        case "input_json_delta" if kind == "tool_use":
            out.tool_call_delta(str(delta.get("partial_json") or ""))
        case _:
            pass


def _add_usage(state: AnthropicStreamState, out: MessageBuilder, raw: Any) -> None:
    """message_start carries input counts, message_delta the (cumulative) output count."""
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        if isinstance(value, int):
            state.usage[key] = value
    u = state.usage
    out.usage = Usage(
        input=u.get("input_tokens", 0),
        output=u.get("output_tokens", 0),
        cache_read=u.get("cache_read_input_tokens", 0),
        cache_write=u.get("cache_creation_input_tokens", 0),
    )


def _raise_error(error: dict[str, Any], state: AnthropicStreamState) -> None:
    kind = str(error.get("type") or "error")
    message = f"{kind}: {error.get('message') or 'error in stream'}"
    if kind == "overloaded_error" and not state.content_seen:
        raise RetryableError(message)
    raise ProviderError(message)


def finish_anthropic(state: AnthropicStreamState, out: MessageBuilder) -> None:
    """A stop reason is enough (message_stop may be lost); without one the stream broke."""
    reason = state.stop_reason
    if reason is None:
        raise ProviderError("stream ended before the response was complete")
    if reason == "refusal":
        raise ProviderError("the model declined to answer (refusal)")
    out.finish(_STOP.get(reason, "stop"))


class AnthropicProvider(HttpProvider):
    def endpoint(self, model: Model) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "anthropic-version": API_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def build_body(self, model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
        return build_anthropic_request(model, context, options)

    async def translate(
        self, events: AsyncIterator[ServerSentEvent], builder: MessageBuilder
    ) -> None:
        state = AnthropicStreamState()
        async for event in events:
            try:
                data = json.loads(event.data)
            except ValueError:
                raise ProviderError(f"malformed stream event: {clip(event.data, 200)}") from None
            apply_anthropic_event(data, state, builder)
            if state.stopped:
                break
        finish_anthropic(state, builder)
