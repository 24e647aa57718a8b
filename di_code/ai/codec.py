"""Lossless conversion between di-code's data types (Structs, dataclasses) and JSON dicts.

`to_dict` works for every data type di-code writes (content, messages, stream and agent
events): the class's tag (`type` or `role`) comes first, then the fields in order, snake_case.
`message_from_dict` reads messages back from untrusted JSON (session files) and raises
`CodecError` with a one-line reason instead of crashing on a bad shape.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

from msgspec import Struct

from di_code.ai.types import (
    AssistantMessage,
    Content,
    Cost,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from di_code.system.errors import DiCodeError

_STOP_REASONS = ("stop", "length", "tool_use", "error", "aborted")
_COST_FIELDS = Cost.__struct_fields__
_USER_CONTENT = (TextContent, ImageContent)
_ASSISTANT_CONTENT = (TextContent, ThinkingContent, ToolCall)


MAX_JSON_DEPTH = 100
"""Deeper nesting than any real tool schema; past it, data from outside is refused or cut
instead of reaching code that recurses (a RecursionError traceback, a message not saved)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a surrogate, paired or lone: JSON text without one decodes to no lone
surrogate, so only text with one needs `encodable_json` (stored or passed on as it is)."""


class CodecError(DiCodeError, ValueError):
    """The JSON does not describe a di-code message."""


def encodable(text: str) -> str:
    """`text` as UTF-8 can write it: a lone surrogate (a JSON `\\ud83d` escape from a model, a
    file name decoded with surrogateescape) becomes U+FFFD."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def encodable_json(value: Any, depth: int) -> Any:
    """Parsed JSON with every string encodable; RecursionError when nested deeper than
    `depth` levels (the caller decides what that means)."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict | list) and depth <= 0:
        raise RecursionError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, dict):
        return {encodable(k): encodable_json(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable_json(item, depth - 1) for item in value]
    return value


def loads_valid(data: str | bytes, **options: Any) -> Any:
    """JSON from outside (a model's tool arguments, an editor's message, a task file) made
    valid where it comes in: every string encodable, so no lone surrogate is ever stored or sent on;
    ValueError when it is not JSON (Python's `NaN` and `Infinity` included: a NaN passes every
    bound a schema sets, as a wait of NaN seconds that never ends) or nested deeper than
    MAX_JSON_DEPTH. `options` go to `json.loads`."""
    options.setdefault("parse_constant", refuse_constant)
    try:
        return encodable_json(json.loads(data, **options), MAX_JSON_DEPTH)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None


def refuse_constant(constant: str) -> None:
    """`json.loads`'s parse_constant: NaN, Infinity and -Infinity are Python's, not JSON."""
    raise ValueError(f"{constant} is not JSON")


def json_safe(value: Any, converted: set[str], depth: int = MAX_JSON_DEPTH) -> Any:
    """`value` as data `json` can write and UTF-8 can encode: what is not JSON (a Path, a set,
    an object) becomes its text, nesting past `depth` a placeholder; the type names of what
    was converted are added to `converted`, so the caller can say so once."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        converted.add("float")
        return str(value)
    if isinstance(value, dict | list | tuple) and depth <= 0:
        converted.add(f"nesting deeper than {MAX_JSON_DEPTH}")
        return "[nested too deep]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                converted.add(f"{type(key).__name__} key")
            out[encodable(str(key))] = json_safe(item, converted, depth - 1)
        return out
    if isinstance(value, list | tuple):
        return [json_safe(item, converted, depth - 1) for item in value]
    converted.add(type(value).__name__)
    return encodable(str(value))


def to_dict(value: Any) -> Any:
    """Any di-code dataclass or Struct (recursively, with lists and dicts) as JSON-ready data."""
    names = _field_names(type(value))
    if names is not None:
        out: dict[str, Any] = {}
        for tag in ("type", "role"):
            if hasattr(type(value), tag) and tag not in names:
                out[tag] = getattr(value, tag)
        for name in names:
            out[name] = to_dict(getattr(value, name))
        return out
    if isinstance(value, list | tuple):
        return [to_dict(item) for item in value]
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, dict):
        return {key: to_dict(item) for key, item in value.items()}
    return value


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of a dataclass or msgspec Struct class, in order; None for anything else."""
    if issubclass(cls, Struct):
        return cls.__struct_fields__
    if dataclasses.is_dataclass(cls):
        return tuple(field.name for field in dataclasses.fields(cls))
    return None


def content_from_dict(data: Any) -> Content:
    obj = _object(data, "content block")
    kind = obj.get("type")
    if kind == "text":
        return TextContent(_str(obj, "text"))
    if kind == "thinking":
        return ThinkingContent(_str(obj, "thinking"), _optional_str(obj, "signature"))
    if kind == "image":
        return ImageContent(_str(obj, "data"), _str(obj, "mime_type"))
    if kind == "tool_call":
        return ToolCall(
            _str(obj, "id"),
            _str(obj, "name"),
            obj.get("arguments", {}),
            _optional_str(obj, "signature"),
        )
    raise CodecError(f"unknown content type {kind!r}")


def usage_from_dict(data: Any) -> Usage:
    obj = _object(data, "usage")
    cost = _object(obj.get("cost", {}), "cost")
    return Usage(
        int_field(obj, "input"),
        int_field(obj, "output"),
        int_field(obj, "cache_read"),
        int_field(obj, "cache_write"),
        int_field(obj, "total_tokens"),
        Cost(*[_float(cost, name) for name in _COST_FIELDS]),
    )


def message_from_dict(data: Any) -> Message:
    obj = _object(data, "message")
    role = obj.get("role")
    blocks = obj.get("content")
    if not isinstance(blocks, list):
        raise CodecError("message content must be a list")
    content = [content_from_dict(block) for block in blocks]
    timestamp = int_field(obj, "timestamp")
    if role == "user":
        return UserMessage(_only(content, _USER_CONTENT), timestamp)
    if role == "assistant":
        stop_reason = obj.get("stop_reason", "stop")
        if stop_reason not in _STOP_REASONS:
            raise CodecError(f"unknown stop_reason {stop_reason!r}")
        return AssistantMessage(
            _only(content, _ASSISTANT_CONTENT),
            _str(obj, "provider"),
            _str(obj, "model"),
            usage_from_dict(obj.get("usage", {})),
            stop_reason,
            timestamp,
            _optional_str(obj, "error_message"),
        )
    if role == "tool_result":
        return ToolResultMessage(
            _str(obj, "tool_call_id"),
            _str(obj, "tool_name"),
            _only(content, _USER_CONTENT),
            bool(obj.get("is_error", False)),
            timestamp,
            obj.get("details"),
        )
    raise CodecError(f"unknown message role {role!r}")


def _only(content: list[Content], allowed: tuple[type, ...]) -> list[Any]:
    for block in content:
        if not isinstance(block, allowed):
            raise CodecError(f"content type {block.type!r} is not allowed here")
    return content


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise CodecError(f"{what} must be an object")
    return data


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise CodecError(f"{key!r} must be a string")
    return value


def _optional_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return None if value is None else _str(obj, key)


def int_field(obj: dict[str, Any], key: str) -> int:
    """A whole number of tokens or milliseconds; a float is truncated, NaN or ±inf refused."""
    value = obj.get(key, 0)
    if type(value) is int:  # the common case, checked first: reading a session is hot
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CodecError(f"{key!r} must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CodecError(f"{key!r} must be a finite number")
    return int(value)


def _float(obj: dict[str, Any], key: str) -> float:
    value = obj.get(key, 0.0)
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CodecError(f"{key!r} must be a number")
    try:
        return float(value)
    except OverflowError:
        raise CodecError(f"{key!r} is too large") from None
