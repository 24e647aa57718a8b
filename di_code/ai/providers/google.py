"""Google Gemini, native API, streaming (`api = "google-generative-ai"`).

`POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse` with the key in the
`x-goog-api-key` header. `build_google_request` and `apply_google_chunk` are pure and tested on
their own; `GoogleProvider` is the thin glue.

Thought signatures (opaque base64 that lets the model resume its own reasoning) are kept on
the part they came with: a `thought: true` part's on its thinking block, a `functionCall`
part's on the ToolCall, and both are sent back on that same part. Gemini 3 rejects a function
call sent back without one, so a call from another provider gets Google's documented
"skip the check" value. A signature on a plain text part has nowhere to live and is dropped:
the API does not check those. Function calls carry no id unless the server sent one; the
responses are matched by name and order.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.http import HttpProvider
from di_code.ai.providers.openai import parse_chunk
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

THINKING_BUDGET = {"low": 2048, "medium": 8192, "high": 24576}
SKIP_SIGNATURE = "skip_thought_signature_validator"
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_RETRYABLE_STATUS = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL"})
_FINISH: dict[str, Literal["stop", "length"]] = {"STOP": "stop", "MAX_TOKENS": "length"}

# ---------------------------------------------------------------- request


def build_google_request(
    model: Model, context: Context, options: StreamOptions, memo: WireMemo | None = None
) -> dict[str, Any]:
    """The streamGenerateContent body for `context` (a pure function, but for what `memo`
    keeps)."""
    config: dict[str, Any] = {"maxOutputTokens": options.max_tokens or model.max_output_tokens}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if model.reasoning and options.reasoning != "off":
        budget = THINKING_BUDGET[options.reasoning]
        config["thinkingConfig"] = {"includeThoughts": True, "thinkingBudget": budget}
    contents = _contents(model, context, memo)
    body: dict[str, Any] = {"contents": contents, "generationConfig": config}
    if context.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": context.system_prompt}]}
    if context.tools:
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
            for t in context.tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
    return body


def _contents(model: Model, context: Context, memo: WireMemo | None) -> list[dict[str, Any]]:
    """Consecutive tool results share one user turn (a new one: wire items are never changed,
    the memo keeps them); their images follow in another."""

    def convert(message: Message, images: list[ImageContent]) -> list[dict[str, Any]]:
        match message:
            case UserMessage():
                return [{"role": "user", "parts": [_part(model, p) for p in message.content]}]
            case AssistantMessage():
                parts = _model_parts(model, message)
                return [{"role": "model", "parts": parts}] if parts else []
            case ToolResultMessage():
                return [{"role": "user", "parts": [_function_response(model, message, images)]}]

    def images_message(images: list[ImageContent]) -> dict[str, Any]:
        return {"role": "user", "parts": [image_part(image) for image in images]}

    contents: list[dict[str, Any]] = []
    converted = wire_messages(
        context.messages, convert, images_message, memo and memo.for_model(model)
    )
    for content in converted:
        if contents and _all_responses(content) and _all_responses(contents[-1]):
            contents[-1] = {**contents[-1], "parts": [*contents[-1]["parts"], *content["parts"]]}
        else:
            contents.append(content)
    return contents


def _all_responses(content: dict[str, Any]) -> bool:
    return all("functionResponse" in part for part in content["parts"])


def image_part(image: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _part(model: Model, part: TextContent | ImageContent) -> dict[str, Any]:
    if isinstance(part, TextContent):
        return {"text": part.text}
    return image_part(part) if "image" in model.input else {"text": IMAGE_OMITTED}


def is_signature(value: str | None) -> bool:
    """Gemini's signatures are base64 bytes; Anthropic's and the Responses API's are not."""
    return bool(value) and len(value or "") % 4 == 0 and bool(_BASE64.fullmatch(value or ""))


def _model_parts(model: Model, message: AssistantMessage) -> list[dict[str, Any]]:
    """Signatures go back only to the model that made them (Anthropic's look alike)."""
    same = same_model(message, model)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case ThinkingContent(thinking=thinking, signature=signature):
                if same and is_signature(signature):
                    parts.append({"text": thinking, "thought": True, "thoughtSignature": signature})
            case TextContent(text=text) if text:
                parts.append({"text": text})
            case ToolCall(name=name, arguments=arguments, signature=signature):
                args = arguments if isinstance(arguments, dict) else {}
                part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
                if same and is_signature(signature):
                    part["thoughtSignature"] = signature
                elif "gemini-3" in model.id:
                    part["thoughtSignature"] = SKIP_SIGNATURE
                parts.append(part)
    return parts


def _function_response(
    model: Model, message: ToolResultMessage, images: list[ImageContent]
) -> dict[str, Any]:
    key = "error" if message.is_error else "output"
    response = {key: result_text(model, message, images)}
    return {"functionResponse": {"name": message.tool_name, "response": response}}


# ---------------------------------------------------------------- stream translation


@dataclass(slots=True)
class GoogleStreamState:
    """What the translator remembers between chunks."""

    calls: int = 0
    response_id: str = ""
    """Makes generated call ids unique across turns (the API sends none of its own)."""
    signed: bool = False
    """The open thinking block already has its signature (some servers repeat it)."""
    finish_reason: str | None = None
    content_seen: bool = False


def apply_google_chunk(chunk: Any, state: GoogleStreamState, out: MessageBuilder) -> None:
    """Translate one parsed chunk into builder calls (pure apart from `out` and `state`)."""
    if not isinstance(chunk, dict):
        raise ProviderError(f"unexpected stream chunk: {clip(str(chunk), 200)}")
    if isinstance(chunk.get("error"), dict):
        _raise(chunk["error"], state)
    if isinstance(chunk.get("usageMetadata"), dict):
        out.usage = google_usage(chunk["usageMetadata"])
    if isinstance(chunk.get("responseId"), str):
        state.response_id = chunk["responseId"]
    feedback = chunk.get("promptFeedback")
    if isinstance(feedback, dict) and feedback.get("blockReason"):
        raise ProviderError(f"the prompt was blocked ({feedback['blockReason']})")
    for candidate in (chunk.get("candidates") or [])[:1]:
        content = candidate.get("content") if isinstance(candidate, dict) else None
        for part in (content or {}).get("parts") or []:
            if isinstance(part, dict):
                _apply_part(part, state, out)
        if isinstance(candidate, dict) and candidate.get("finishReason"):
            state.finish_reason = str(candidate["finishReason"])


def _apply_part(part: dict[str, Any], state: GoogleStreamState, out: MessageBuilder) -> None:
    signature = part.get("thoughtSignature")
    signature = signature if isinstance(signature, str) and signature else None
    call = part.get("functionCall")
    if isinstance(call, dict):
        state.content_seen = True
        state.calls += 1
        prefix = f"call_{state.response_id}_" if state.response_id else "call_"
        call_id = str(call.get("id") or f"{prefix}{state.calls}")
        out.tool_call_start(call_id, str(call.get("name") or ""), signature)
        out.tool_call_delta(json.dumps(call.get("args") or {}))
        out.close_block()
        return
    text = part.get("text")
    if not isinstance(text, str):
        return
    state.content_seen = True
    if part.get("thought") is True:
        if out.open_kind != "thinking":
            state.signed = False
        out.thinking(text)
        if signature and not state.signed:
            state.signed = True
            out.thinking_signature(signature)
    elif text:
        out.text(text)


def _raise(error: dict[str, Any], state: GoogleStreamState) -> None:
    message = str(error.get("message") or error.get("status") or "error in stream")
    if error.get("status") in _RETRYABLE_STATUS and not state.content_seen:
        raise RetryableError(message)
    raise ProviderError(message)


def google_usage(raw: dict[str, Any]) -> Usage:
    """Thought tokens are billed as output; cached tokens are part of the prompt count."""
    prompt = int(raw.get("promptTokenCount") or 0)
    cached = int(raw.get("cachedContentTokenCount") or 0)
    output = int(raw.get("candidatesTokenCount") or 0) + int(raw.get("thoughtsTokenCount") or 0)
    return Usage(input=prompt - cached, output=output, cache_read=cached)


def finish_google(state: GoogleStreamState, out: MessageBuilder) -> None:
    """End of stream: STOP or MAX_TOKENS is an answer; SAFETY and the like are errors."""
    reason = state.finish_reason
    if reason is None:
        raise ProviderError("stream ended before the response was complete")
    if reason not in _FINISH:
        raise ProviderError(f"the response was stopped (finish reason {reason})")
    stop: Literal["stop", "length", "tool_use"] = _FINISH[reason]
    if state.calls and stop == "stop":
        stop = "tool_use"
    out.finish(stop)


class GoogleProvider(HttpProvider):
    def endpoint(self, model: Model) -> str:
        return f"{self.base_url}/v1beta/models/{model.id}:streamGenerateContent?alt=sse"

    def auth_headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["x-goog-api-key"] = self.api_key
        return headers

    def build_body(self, model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
        return build_google_request(model, context, options, self.wire_memo)

    async def translate(
        self, events: AsyncIterator[ServerSentEvent], builder: MessageBuilder
    ) -> None:
        state = GoogleStreamState()
        async for event in events:
            apply_google_chunk(parse_chunk(event.data), state, builder)
        finish_google(state, builder)
