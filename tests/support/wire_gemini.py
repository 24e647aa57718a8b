"""Gemini's `streamGenerateContent?alt=sse` for the loopback server: a Turn rendered as its
chunks, its error body, and a check of a request's shape that refuses what Google refuses.

Shapes follow the Gemini API reference (GenerateContentResponse, Content, Part). The checks
are rules the real API enforces that di-code could get wrong: unknown fields (proto JSON
refuses them), a part with no data or two, a signature that is not base64, function calls
without as many function responses right after them.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from tests.support.wire import HttpError, Turn, pieces, sse

_FINISH = {"stop": "STOP", "tool_use": "STOP", "length": "MAX_TOKENS"}
_STATUS = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
    404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
}  # fmt: skip
_TOP = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
_CONFIG = {"maxOutputTokens", "temperature", "topP", "topK", "thinkingConfig", "stopSequences"}
_DATA = ("text", "inlineData", "functionCall", "functionResponse")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def signature_of(turn: Turn) -> str:
    """Gemini's signatures are base64: the Turn's is encoded."""
    return base64.b64encode(turn.thinking_signature.encode()).decode()


def _chunk(turn: Turn, parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    usage: dict[str, Any] = {"promptTokenCount": turn.input_tokens}
    if finish is not None:
        candidate["finishReason"] = finish
        usage.update(
            candidatesTokenCount=turn.output_tokens,
            totalTokenCount=turn.input_tokens + turn.output_tokens,
        )
    payload = {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": turn.model,
        "responseId": "resp-1",
    }
    return sse(payload)


def render_gemini(turn: Turn) -> list[bytes]:
    """Thoughts, text, then each call whole in its own chunk. The signature rides on the first
    function call, or on the last thought when there is none; the finish reason comes alone."""
    parts: list[dict[str, Any]] = []
    for piece in pieces(turn.thinking, turn.chunk_size):
        parts.append({"text": piece, "thought": True})
    if parts and not turn.tool_calls:
        parts[-1]["thoughtSignature"] = signature_of(turn)
    parts += [{"text": piece} for piece in pieces(turn.text, turn.chunk_size)]
    for number, call in enumerate(turn.tool_calls):
        args = call.arguments if isinstance(call.arguments, dict) else {}
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": args}}
        if number == 0:
            part["thoughtSignature"] = signature_of(turn)
        parts.append(part)
    events = [_chunk(turn, [part]) for part in parts]
    events.append(_chunk(turn, [{"text": ""}], _FINISH[turn.neutral_stop]))
    return events


def gemini_error_body(error: HttpError) -> str:
    status = _STATUS.get(error.status, "UNKNOWN")
    return json.dumps({"error": {"code": error.status, "message": error.message, "status": status}})


MALFORMED_GEMINI = b'data: {"candidates": [{"content": tru\n\n'


# ---------------------------------------------------------------- request checks


def check_gemini_request(body: Any) -> str | None:
    """What the Gemini API would refuse in this body (one line), or None."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    problems = [f'Invalid JSON payload received. Unknown name "{k}"' for k in body if k not in _TOP]
    config = body.get("generationConfig") or {}
    problems += [f'Unknown name "{k}" at generation_config' for k in config if k not in _CONFIG]
    thinking = config.get("thinkingConfig") or {}
    if set(thinking) - {"includeThoughts", "thinkingBudget", "thinkingLevel"}:
        problems.append(f"Unknown name in thinking_config: {sorted(thinking)}")
    system = body.get("systemInstruction")
    if system is not None and not _texts_only(system):
        problems.append("system_instruction must be parts of text")
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            keys = {"name", "description", "parameters", "parametersJsonSchema"}
            if set(declaration) - keys or not declaration.get("name"):
                problems.append(f"Invalid function declaration: {sorted(declaration)}")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        problems.append("* GenerateContentRequest.contents: contents is not specified")
    else:
        problems += _check_contents(contents)
    return problems[0] if problems else None


def _texts_only(content: Any) -> bool:
    parts = content.get("parts") if isinstance(content, dict) else None
    return isinstance(parts, list) and all(set(p) == {"text"} for p in parts)


def _check_contents(contents: list[Any]) -> list[str]:
    problems: list[str] = []
    pending_calls = 0
    for index, content in enumerate(contents):
        where = f"contents[{index}]"
        if not isinstance(content, dict) or set(content) - {"role", "parts"}:
            problems.append(f"Invalid {where}: only role and parts are allowed")
            continue
        role, parts = content.get("role"), content.get("parts")
        if role not in ("user", "model") or not isinstance(parts, list) or not parts:
            problems.append(
                f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty"
            )
            continue
        problems += [
            p for n, part in enumerate(parts) for p in _check_part(f"{where}.parts[{n}]", part)
        ]
        responses = sum(1 for part in parts if "functionResponse" in part)
        if pending_calls and responses != pending_calls:
            problems.append(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
        pending_calls = sum(1 for part in parts if "functionCall" in part) if role == "model" else 0
    return problems


def _check_part(where: str, part: Any) -> list[str]:
    if not isinstance(part, dict):
        return [f"Invalid {where}: expected an object"]
    data = [key for key in _DATA if key in part]
    extra = set(part) - {*_DATA, "thought", "thoughtSignature"}
    if len(data) != 1 or extra:
        return [f"Invalid {where}: one data field needed, got {sorted(part)}"]
    signature = part.get("thoughtSignature")
    if (
        signature is not None
        and not (
            isinstance(signature, str) and len(signature) % 4 == 0 and _BASE64.match(signature)
        )
        and signature != "skip_thought_signature_validator"
    ):
        return [
            f"Invalid value at '{where}.thought_signature' (TYPE_BYTES), Base64 decoding failed"
        ]
    kind = data[0]
    value = part[kind]
    if kind == "text" and not isinstance(value, str):
        return [f"Invalid {where}.text: expected a string"]
    if kind == "inlineData" and (
        set(value) != {"mimeType", "data"} or not _BASE64.match(value.get("data", "!"))
    ):
        return [f"Invalid {where}.inline_data: mimeType and base64 data needed"]
    if kind == "functionCall" and (
        set(value) - {"name", "args", "id"} or not isinstance(value.get("args", {}), dict)
    ):
        return [f"Invalid {where}.function_call: {sorted(value)}"]
    if kind == "functionResponse" and (
        set(value) - {"name", "response", "id"} or not isinstance(value.get("response"), dict)
    ):
        return [f"Invalid {where}.function_response: {sorted(value)}"]
    return []
