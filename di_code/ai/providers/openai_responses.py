"""OpenAI Responses API, streaming (`api = "openai-responses"`).

`build_responses_request` (context → JSON body) and `apply_responses_event` (one parsed event
→ MessageBuilder calls) are pure and tested on their own; `OpenAIResponsesProvider` is the
thin glue (auth is Chat Completions', so it reuses that provider's).

Requests use `store: false`: nothing is kept on OpenAI's side, so a reasoning model's
reasoning travels with the transcript instead. The encrypted reasoning item arrives complete
in `response.output_item.done`; its JSON becomes the thinking block's signature and is sent
back verbatim on the next request. Item ids (`rs_…`, `msg_…`, `fc_…`) are never sent back:
with nothing stored they name nothing, and a partial set makes the server check pairs it
cannot see. Tool calls are matched by `call_id` alone.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.openai import OpenAIProvider, parse_chunk
from di_code.ai.providers.request_shared import (
    IMAGE_OMITTED,
    WireMemo,
    result_text,
    same_model,
    wire_messages,
)
from di_code.ai.providers.retry import RetryableError
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
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

_RETRYABLE_CODES = frozenset({"rate_limit_exceeded", "server_error", "server_is_overloaded"})
_SUMMARY_BREAK = "\n\n"

# ---------------------------------------------------------------- request


def build_responses_request(
    model: Model, context: Context, options: StreamOptions, memo: WireMemo | None = None
) -> dict[str, Any]:
    """The /responses body for `context` (a pure function, but for what `memo` keeps)."""
    body: dict[str, Any] = {
        "model": model.id,
        "input": _input(model, context, memo),
        "stream": True,
        "store": False,
        "max_output_tokens": options.max_tokens or model.max_output_tokens,
    }
    if context.system_prompt:
        body["instructions"] = context.system_prompt
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in context.tools
        ]
    if model.reasoning:
        body["include"] = ["reasoning.encrypted_content"]
        if options.reasoning != "off":
            body["reasoning"] = {"effort": options.reasoning, "summary": "auto"}
    elif options.temperature is not None:
        body["temperature"] = options.temperature  # reasoning models refuse it
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    return body


def _input(model: Model, context: Context, memo: WireMemo | None) -> list[dict[str, Any]]:
    def convert(message: Message, images: list[ImageContent]) -> list[dict[str, Any]]:
        match message:
            case UserMessage():
                return [{"role": "user", "content": _user_parts(model, message.content)}]
            case AssistantMessage():
                return _assistant_items(message, same_model(message, model))
            case ToolResultMessage():
                return [_tool_output(model, message, images)]

    def images_message(images: list[ImageContent]) -> dict[str, Any]:
        return {"role": "user", "content": [image_part(image) for image in images]}

    return wire_messages(context.messages, convert, images_message, memo and memo.for_model(model))


def image_part(image: ImageContent) -> dict[str, Any]:
    url = f"data:{image.mime_type};base64,{image.data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _user_parts(model: Model, content: list[TextContent | ImageContent]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextContent):
            parts.append({"type": "input_text", "text": part.text})
        elif "image" in model.input:
            parts.append(image_part(part))
        else:
            parts.append({"type": "input_text", "text": IMAGE_OMITTED})
    return parts


def _assistant_items(message: AssistantMessage, same: bool) -> list[dict[str, Any]]:
    """Reasoning items (only this model's own: no other can read them), text as an output
    message, calls as function_call items; in the order they happened, so each reasoning item
    precedes what it led to."""
    items: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case ThinkingContent(signature=signature) if same:
                reasoning = reasoning_item(signature)
                if reasoning is not None:
                    items.append(reasoning)
            case TextContent(text=text) if text:
                content = [{"type": "output_text", "text": text, "annotations": []}]
                items.append({"type": "message", "role": "assistant", "content": content})
            case ToolCall(id=call_id, name=name, arguments=arguments):
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                items.append(
                    {"type": "function_call", "call_id": call_id, "name": name, "arguments": text}
                )
    return items


def reasoning_item(signature: str | None) -> dict[str, Any] | None:
    """The reasoning item a signature holds, without its id; None for another provider's
    signature (Anthropic's, Gemini's), which this API cannot take, or for an item that came
    without encrypted content."""
    try:
        item = json.loads(signature or "")
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        return None
    if not item.get("encrypted_content"):
        return None  # without it (or a stored id) the item names nothing the server can use
    summary = item.get("summary") or []
    return {"type": "reasoning", "summary": summary, "encrypted_content": item["encrypted_content"]}


def _tool_output(
    model: Model, message: ToolResultMessage, images: list[ImageContent]
) -> dict[str, Any]:
    output = result_text(model, message, images)
    if message.is_error:
        output = f"Error: {output}"
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


# ---------------------------------------------------------------- stream translation


@dataclass(slots=True)
class ResponsesStreamState:
    """What the translator remembers between events."""

    summary_part: tuple[int, int] | None = None
    """(output_index, summary_index) of the summary text last streamed."""
    arguments_sent: bool = False
    calls: int = 0
    content_seen: bool = False
    status: str | None = None
    incomplete_reason: str | None = None


def apply_responses_event(data: Any, state: ResponsesStreamState, out: MessageBuilder) -> None:
    """Translate one parsed event into builder calls (pure apart from `out` and `state`)."""
    if not isinstance(data, dict):
        raise ProviderError(f"unexpected stream event: {clip(str(data), 200)}")
    kind = data.get("type")
    match kind:
        case "response.output_item.added":
            _item_added(data.get("item") or {}, state, out)
        case "response.reasoning_summary_text.delta":
            _summary_delta(data, state, out)
        case "response.output_text.delta" | "response.refusal.delta":
            state.content_seen = True
            out.text(str(data.get("delta") or ""))
        case "response.function_call_arguments.delta":
            if out.open_tool_call_id is not None and data.get("delta"):
                state.arguments_sent = True
                out.tool_call_delta(str(data["delta"]))
        case "response.output_item.done":
            _item_done(data.get("item") or {}, state, out)
        case "response.completed" | "response.incomplete" | "response.failed":
            _response_end(data.get("response") or {}, state, out)
        case "error":
            _raise(data, state)


def _item_added(item: dict[str, Any], state: ResponsesStreamState, out: MessageBuilder) -> None:
    if item.get("type") == "function_call":
        state.content_seen = True
        state.calls += 1
        state.arguments_sent = False
        call_id = str(item.get("call_id") or f"call_{state.calls}")
        out.tool_call_start(call_id, str(item.get("name") or ""))


def _summary_delta(data: dict[str, Any], state: ResponsesStreamState, out: MessageBuilder) -> None:
    """Summary parts of one reasoning item become one thinking block, parts a blank line apart."""
    state.content_seen = True
    part = (int(data.get("output_index") or 0), int(data.get("summary_index") or 0))
    previous, state.summary_part = state.summary_part, part
    if previous is not None and previous[0] == part[0] and previous != part:
        out.thinking(_SUMMARY_BREAK)
    out.thinking(str(data.get("delta") or ""))


def _item_done(item: dict[str, Any], state: ResponsesStreamState, out: MessageBuilder) -> None:
    match item.get("type"):
        case "reasoning":
            out.thinking_signature(json.dumps(item, separators=(",", ":")))
            out.close_block()
            state.summary_part = None
        case "function_call":
            if out.open_tool_call_id is not None and not state.arguments_sent:
                out.tool_call_delta(str(item.get("arguments") or ""))
            out.close_block()
        case "message":
            out.close_block()


def _response_end(
    response: dict[str, Any], state: ResponsesStreamState, out: MessageBuilder
) -> None:
    state.status = str(response.get("status") or "completed")
    if isinstance(response.get("usage"), dict):
        out.usage = responses_usage(response["usage"])
    details = response.get("incomplete_details")
    if isinstance(details, dict):
        state.incomplete_reason = str(details.get("reason") or "")
    error = response.get("error")
    if state.status == "failed":
        _raise(error if isinstance(error, dict) else {}, state)


def _raise(error: dict[str, Any], state: ResponsesStreamState) -> None:
    """An error event: retried when it is a rate limit or an outage and nothing arrived yet."""
    message = str(error.get("message") or error.get("code") or "error in stream")
    if error.get("code") in _RETRYABLE_CODES and not state.content_seen:
        raise RetryableError(message)
    raise ProviderError(message)


def responses_usage(raw: dict[str, Any]) -> Usage:
    """`output_tokens` already counts the reasoning tokens (`output_tokens_details`)."""
    details = raw.get("input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    total = int(raw.get("input_tokens") or 0)
    output = int(raw.get("output_tokens") or 0)
    return Usage(input=total - cached, output=output, cache_read=cached)


def finish_responses(state: ResponsesStreamState, out: MessageBuilder) -> None:
    """End of stream: only a completed or incomplete response counts as an answer."""
    stop: Literal["stop", "length", "tool_use"]
    if state.status == "completed":
        stop = "tool_use" if state.calls else "stop"
    elif state.status == "incomplete":
        if state.incomplete_reason == "content_filter":
            raise ProviderError("the response was stopped by the content filter")
        stop = "length"
    else:
        raise ProviderError("stream ended before the response was complete")
    out.finish(stop)


class OpenAIResponsesProvider(OpenAIProvider):
    def endpoint(self, model: Model) -> str:
        return f"{self.base_url}/responses"

    def build_body(self, model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
        return build_responses_request(model, context, options, self.wire_memo)

    async def translate(
        self, events: AsyncIterator[ServerSentEvent], builder: MessageBuilder
    ) -> None:
        state = ResponsesStreamState()
        async for event in events:
            if event.data.strip() == "[DONE]":
                break
            apply_responses_event(parse_chunk(event.data), state, builder)
            if state.status is not None:
                break
        finish_responses(state, builder)
