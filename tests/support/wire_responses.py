"""The OpenAI Responses API for the loopback server: a Turn rendered as its SSE events, its
error body, and a check of a request's shape that refuses what OpenAI refuses.

Event and item shapes follow OpenAI's API reference (streaming events of `POST /responses`);
the checks are the rules a real server enforces that di-code could get wrong: unknown or
null fields, assistant text as input parts, a function_call without its output (or the other
way round), reasoning items without `summary`, arguments sent as an object.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.wire import HttpError, Turn, pieces, sse

_TOP = {
    "model", "input", "instructions", "stream", "store", "include", "tools", "tool_choice",
    "max_output_tokens", "temperature", "top_p", "reasoning", "prompt_cache_key",
    "parallel_tool_calls",
}  # fmt: skip
_ITEM_KEYS = {
    "message": {"type", "id", "role", "content", "status"},
    "reasoning": {"type", "id", "summary", "encrypted_content", "content", "status"},
    "function_call": {"type", "id", "call_id", "name", "arguments", "status"},
    "function_call_output": {"type", "id", "call_id", "output", "status"},
}
_PART_TYPES = {
    "user": {"input_text", "input_image"},
    "system": {"input_text"},
    "developer": {"input_text"},
    "assistant": {"output_text", "refusal"},
}


def _events(turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    """(event type, payload) pairs; the payload gets its type and sequence number later."""
    out: list[tuple[str, dict[str, Any]]] = []
    output: list[dict[str, Any]] = []
    if turn.thinking:
        index = len(output)
        out.append(("response.output_item.added", _added(index, "rs_1", "reasoning")))
        part = {"item_id": "rs_1", "output_index": index, "summary_index": 0}
        out.append(("response.reasoning_summary_part.added", part))
        for piece in pieces(turn.thinking, turn.chunk_size):
            out.append(("response.reasoning_summary_text.delta", {**part, "delta": piece}))
        out.append(("response.reasoning_summary_text.done", {**part, "text": turn.thinking}))
        item = {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": turn.thinking}],
            "encrypted_content": turn.thinking_signature,
        }
        output.append(item)
        out.append(("response.output_item.done", {"output_index": index, "item": item}))
    if turn.text:
        index = len(output)
        out.append(("response.output_item.added", _added(index, "msg_1", "message")))
        where = {"item_id": "msg_1", "output_index": index, "content_index": 0}
        for piece in pieces(turn.text, turn.chunk_size):
            out.append(("response.output_text.delta", {**where, "delta": piece}))
        out.append(("response.output_text.done", {**where, "text": turn.text}))
        content = [{"type": "output_text", "text": turn.text, "annotations": []}]
        item = {"id": "msg_1", "type": "message", "role": "assistant", "content": content}
        output.append({**item, "status": "completed"})
        out.append(("response.output_item.done", {"output_index": index, "item": output[-1]}))
    for number, call in enumerate(turn.tool_calls, 1):
        index, item_id = len(output), f"fc_{number}"
        added = _added(index, item_id, "function_call")
        added["item"].update(call_id=call.id, name=call.name, arguments="")
        out.append(("response.output_item.added", added))
        for piece in pieces(call.arguments_text, turn.chunk_size):
            delta = {"item_id": item_id, "output_index": index, "delta": piece}
            out.append(("response.function_call_arguments.delta", delta))
        item = {**added["item"], "arguments": call.arguments_text, "status": "completed"}
        output.append(item)
        out.append(("response.output_item.done", {"output_index": index, "item": item}))
    return out


def _added(index: int, item_id: str, kind: str) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "type": kind, "status": "in_progress"}
    if kind == "reasoning":
        item = {"id": item_id, "type": kind, "summary": []}
    elif kind == "message":
        item.update(role="assistant", content=[])
    return {"output_index": index, "item": item}


def _response(turn: Turn, status: str) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "model": turn.model, "status": status}


def render_responses(turn: Turn) -> list[bytes]:
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": _response(turn, "in_progress")}),
        ("response.in_progress", {"response": _response(turn, "in_progress")}),
        *_events(turn),
    ]
    usage = {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    if turn.neutral_stop == "length":
        final = {**_response(turn, "incomplete"), "usage": usage}
        final["incomplete_details"] = {"reason": "max_output_tokens"}
        events.append(("response.incomplete", {"response": final}))
    else:
        final = {**_response(turn, "completed"), "usage": usage}
        events.append(("response.completed", {"response": final}))
    return [
        sse({"type": kind, "sequence_number": number, **payload}, kind)
        for number, (kind, payload) in enumerate(events)
    ]


def responses_error_body(error: HttpError) -> str:
    return json.dumps(
        {"error": {"message": error.message, "type": error.error_type, "param": None, "code": None}}
    )


MALFORMED_RESPONSES = b"event: response.output_text.delta\ndata: {not json\n\n"


# ---------------------------------------------------------------- request checks


def check_responses_request(body: Any) -> str | None:
    """What OpenAI would refuse in this body (one line), or None."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    problems = [f"Unknown parameter: '{key}'." for key in body if key not in _TOP]
    problems += [f"Invalid null value for '{key}'." for key, value in body.items() if value is None]
    if not isinstance(body.get("model"), str) or not isinstance(body.get("input"), list):
        problems.append("Missing required parameter: 'model' or 'input'.")
    tokens = body.get("max_output_tokens")
    if tokens is not None and (not isinstance(tokens, int) or tokens < 16):
        problems.append("Invalid 'max_output_tokens': integer below minimum value 16.")
    for tool in body.get("tools") or []:
        if set(tool) - {"type", "name", "description", "parameters", "strict"}:
            problems.append(f"Unknown parameter in tools: {sorted(tool)}.")
        if tool.get("type") != "function" or not isinstance(tool.get("parameters"), dict):
            problems.append("Invalid tool: a function tool needs type and parameters.")
    reasoning = body.get("reasoning")
    if reasoning is not None and (
        reasoning.get("effort") not in ("minimal", "low", "medium", "high")
        or reasoning.get("summary") not in (None, "auto", "concise", "detailed")
    ):
        problems.append(f"Invalid 'reasoning': {reasoning}.")
    if isinstance(body.get("input"), list):
        problems += _check_input(body["input"])
    return problems[0] if problems else None


def _check_input(items: list[Any]) -> list[str]:
    problems: list[str] = []
    calls: list[str] = []
    outputs: list[str] = []
    for index, item in enumerate(items):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            problems.append(f"Invalid type for '{where}': expected an object.")
            continue
        kind = item.get("type", "message")
        allowed = _ITEM_KEYS.get(kind)
        if allowed is None:
            problems.append(f"Invalid value for '{where}.type': {kind!r}.")
            continue
        problems += [f"Unknown parameter: '{where}.{k}'." for k in item if k not in allowed]
        problems += [f"Invalid null value for '{where}.{k}'." for k, v in item.items() if v is None]
        match kind:
            case "message":
                problems += _check_message(where, item)
            case "reasoning":
                if not isinstance(item.get("summary"), list):
                    problems.append(f"Missing required parameter: '{where}.summary'.")
            case "function_call":
                if not isinstance(item.get("arguments"), str) or not item.get("call_id"):
                    problems.append(f"Invalid '{where}': call_id and string arguments needed.")
                calls.append(str(item.get("call_id")))
            case "function_call_output":
                if item.get("call_id") not in calls:
                    call_id = item.get("call_id")
                    problems.append(f"No tool call found for function call output {call_id}.")
                if not isinstance(item.get("output"), str):
                    problems.append(f"Invalid type for '{where}.output': expected a string.")
                outputs.append(str(item.get("call_id")))
    problems += [f"No tool output found for function call {c}." for c in calls if c not in outputs]
    return problems


def _check_message(where: str, item: dict[str, Any]) -> list[str]:
    role = item.get("role")
    if role not in _PART_TYPES:
        return [f"Invalid value for '{where}.role': {role!r}."]
    content = item.get("content")
    if isinstance(content, str):
        return []
    if not isinstance(content, list) or not content:
        return [f"Invalid '{where}.content': expected a string or a non-empty list."]
    problems: list[str] = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _PART_TYPES[role]:
            supported = sorted(_PART_TYPES[role])
            problems.append(
                f"Invalid value: {kind!r} at '{where}.content[{number}]'. "
                f"Supported values are: {supported}."
            )
        elif kind == "input_image" and not str(part.get("image_url", "")).startswith("data:"):
            problems.append(f"Invalid '{where}.content[{number}].image_url'.")
        elif kind != "input_image" and not isinstance(part.get("text"), str):
            problems.append(f"Missing required parameter: '{where}.content[{number}].text'.")
    return problems
