"""OpenAI Chat Completions, streaming: OpenAI itself and every compatible server.

`build_openai_request` (context → JSON body) and `apply_openai_chunk` (one parsed chunk →
MessageBuilder calls) are pure and tested on their own; `OpenAIProvider` is the thin glue.
The translator is lenient where real servers differ from OpenAI: `null` fields, id/name
repeated in every tool-call fragment, a whole call in one fragment, arguments sent as an
object, the legacy `function_call`, reasoning as `reasoning_content`/`reasoning`/
`reasoning_text`, usage after `finish_reason` or never, and a missing `[DONE]`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Literal

import msgspec

from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.http import HttpProvider
from di_code.ai.providers.limits import reply_token_limit
from di_code.ai.providers.request_shared import (
    IMAGE_OMITTED,
    WireMemo,
    result_text,
    wire_messages,
)
from di_code.ai.redaction import clip
from di_code.ai.sse import ServerSentEvent
from di_code.ai.stream import ProviderError, StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

_REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_text")
_FINISH: dict[str, Literal["stop", "length", "tool_use"]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


# ---------------------------------------------------------------- request


def build_openai_request(
    model: Model, context: Context, options: StreamOptions, memo: WireMemo | None = None
) -> dict[str, Any]:
    """The Chat Completions body for `context` (a pure function, but for what `memo` keeps)."""
    messages: list[dict[str, Any]] = []
    if context.system_prompt:
        messages.append({"role": "system", "content": context.system_prompt})
    messages.extend(_messages(model, context, memo))
    body: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in context.tools
        ]
    key = "max_completion_tokens" if model.provider == "openai" else "max_tokens"
    body[key] = reply_token_limit(model, options)
    if options.temperature is not None and not (model.reasoning and model.provider == "openai"):
        body["temperature"] = options.temperature  # OpenAI's reasoning models refuse it
    if model.reasoning and options.reasoning != "off":
        body["reasoning_effort"] = options.reasoning
    if options.session_id and model.provider == "openai":
        body["prompt_cache_key"] = options.session_id
    return body


def _messages(model: Model, context: Context, memo: WireMemo | None) -> list[dict[str, Any]]:
    def convert(message: Message, images: list[ImageContent]) -> list[dict[str, Any]]:
        match message:
            case UserMessage():
                return [{"role": "user", "content": _user_content(model, message)}]
            case AssistantMessage():
                return [_assistant(message)]
            case ToolResultMessage():
                text = result_text(model, message, images)
                return [{"role": "tool", "tool_call_id": message.tool_call_id, "content": text}]

    def images_message(images: list[ImageContent]) -> dict[str, Any]:
        return {"role": "user", "content": [_image_part(image) for image in images]}

    return wire_messages(context.messages, convert, images_message, memo and memo.for_model(model))


def _image_part(image: ImageContent) -> dict[str, Any]:
    url = f"data:{image.mime_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user_content(model: Model, message: UserMessage) -> str | list[dict[str, Any]]:
    """A plain string when there is only text: every compatible server accepts that."""
    accepts_images = "image" in model.input
    if not any(isinstance(part, ImageContent) for part in message.content):
        return "".join(part.text for part in message.content if isinstance(part, TextContent))
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextContent):
            parts.append({"type": "text", "text": part.text})
        elif accepts_images:
            parts.append(_image_part(part))
        else:
            parts.append({"type": "text", "text": IMAGE_OMITTED})
    return parts


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    """Thinking is not sent back: Chat Completions has no field for it. `content` is always a
    string: llama-cpp-python refuses both `null` and a missing content beside tool calls (HTTP
    500, validation errors), while OpenAI, llama-server and vLLM all accept `""`."""
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.tool_calls:
        out["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    return out


def _tool_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


# ---------------------------------------------------------------- stream translation


class OpenAIStreamState(msgspec.Struct):
    """What the translator remembers between chunks."""

    call_key: object = None
    """Identifies the open tool call: its `index`, or its id when a server sends no index."""
    call_id: str = ""
    calls: int = 0
    finish_reason: str | None = None
    done: bool = False


def apply_openai_chunk(chunk: Any, state: OpenAIStreamState, out: MessageBuilder) -> None:
    """Translate one parsed chunk into builder calls (pure apart from `out` and `state`)."""
    if not isinstance(chunk, dict):
        raise ProviderError(f"unexpected stream chunk: {clip(str(chunk), 200)}")
    if chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise ProviderError(f"{message or 'error in stream'}")
    if isinstance(chunk.get("usage"), dict):
        out.usage = _usage(chunk["usage"])
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        _apply_delta(delta, state, out)
        if choice.get("finish_reason"):
            state.finish_reason = str(choice["finish_reason"])


def _apply_delta(delta: dict[str, Any], state: OpenAIStreamState, out: MessageBuilder) -> None:
    for key in _REASONING_KEYS:
        reasoning = delta.get(key)
        if isinstance(reasoning, str) and reasoning:
            out.thinking(reasoning)
            break
    content = delta.get("content")
    if isinstance(content, str) and content:
        out.text(content)
    fragments = delta.get("tool_calls")
    if isinstance(fragments, list):
        for position, fragment in enumerate(fragments):
            if isinstance(fragment, dict):
                call_key = fragment.get("index", fragment.get("id") or position)
                _apply_call(call_key, fragment, fragment.get("function") or {}, state, out)
    legacy = delta.get("function_call")
    if isinstance(legacy, dict) and not fragments:
        _apply_call("function_call", {}, legacy, state, out)


def _apply_call(
    key: object,
    fragment: dict[str, Any],
    function: dict[str, Any],
    state: OpenAIStreamState,
    out: MessageBuilder,
) -> None:
    """Join fragments by index; a repeated id/name belongs to the same call."""
    call_id = fragment.get("id") or ""
    is_open = out.open_tool_call_id is not None and state.call_key == key
    if not is_open or (call_id and call_id != state.call_id):
        state.calls += 1
        state.call_key, state.call_id = key, call_id or f"call_{state.calls}"
        out.tool_call_start(state.call_id, str(function.get("name") or ""))
    arguments: Any = function.get("arguments")
    text = json.dumps(arguments) if isinstance(arguments, dict) else arguments
    if isinstance(text, str) and text:
        out.tool_call_delta(text)


def _usage(raw: dict[str, Any]) -> Usage:
    prompt = int(raw.get("prompt_tokens") or 0)
    output = int(raw.get("completion_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    return Usage(input=prompt - cached, output=output, cache_read=cached)


def finish_openai(state: OpenAIStreamState, out: MessageBuilder) -> None:
    """End of stream: a finish_reason or `[DONE]` is enough; neither means the stream broke."""
    reason = state.finish_reason
    if reason is None and not state.done:
        raise ProviderError("stream ended before the response was complete")
    if reason == "content_filter":
        raise ProviderError("the response was stopped by the content filter")
    stop = _FINISH.get(reason or "stop", "stop")
    if state.calls and stop == "stop":
        stop = "tool_use"  # some servers say "stop" after tool calls
    out.finish(stop)


def parse_chunk(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise ProviderError(f"malformed stream chunk: {clip(data, 200)}") from None


class OpenAIProvider(HttpProvider):
    def endpoint(self, model: Model) -> str:
        return f"{self.base_url}/chat/completions"

    def auth_headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def build_body(self, model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
        return build_openai_request(model, context, options, self.wire_memo)

    async def translate(
        self, events: AsyncIterator[ServerSentEvent], builder: MessageBuilder
    ) -> None:
        state = OpenAIStreamState()
        async for event in events:
            if event.data.strip() == "[DONE]":
                state.done = True
                break
            apply_openai_chunk(parse_chunk(event.data), state, builder)
        finish_openai(state, builder)
