"""What a line from the editor must be before the SDK reads it: one JSON-RPC 2.0 message.

The SDK takes any JSON value for a message: an array, a number or a string ended the agent with
an exception, `null` read as the end of the input, a response with an array as its id stopped
its reader. So each line is checked here first, and one that is not a JSON-RPC object is
answered as JSON-RPC 2.0 says (parse error or invalid request) and goes no further. A batch
(an array) is refused as one: ACP sends one message a line, and no ACP client batches.
"""

from __future__ import annotations

import json
from typing import Any

from di_code.ai.codec import SURROGATE_ESCAPE, loads_valid

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def checked(line: bytes) -> tuple[bytes | None, Any, bytes]:
    """The error line to answer `line` with (None to hand it on: a blank line too, the SDK
    skips it), the message read from it (None when there is none), and the line to hand on:
    `line` itself, or, when it held a lone surrogate (`\\ud800`), the message written again
    with each one made U+FFFD (`loads_valid`), so none reaches a session or a model."""
    if not line.strip():
        return None, None, line
    try:  # NaN and Infinity are Python's, not JSON's: loads_valid refuses them
        message = loads_valid(line)
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error"), None, line
    problem = _problem(message)
    if problem is None:
        return None, message, _rewritten(line, message)
    given = message.get("id") if isinstance(message, dict) else None
    error = _error(given if _is_id(given) else None, INVALID_REQUEST, "Invalid Request", problem)
    return error, None, line


def _rewritten(line: bytes, message: Any) -> bytes:
    if SURROGATE_ESCAPE.search(line) is None:
        return line  # nothing was replaced: the editor's bytes go on as they came
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _problem(message: Any) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response (None if it is)."""
    if isinstance(message, list):
        return "a batch (an array): send one message a line"
    if not isinstance(message, dict):
        return "not a JSON-RPC object"
    if message.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0"'
    if "id" in message and not _is_id(message["id"]):
        return '"id" must be a string, an integer or null'
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        if "params" in message and not isinstance(message["params"], dict | list):
            return '"params" must be an object or an array'
        return None
    if "id" not in message:
        return 'neither a "method" nor an "id"'
    if ("result" in message) == ("error" in message):
        return 'a response has either a "result" or an "error"'
    error = message.get("error", {})
    if "error" in message and not _is_error(error):
        return '"error" must be an object with an integer "code" and a string "message"'
    return None


def _is_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or type(value) is int


def _is_error(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("code")) is int
        and isinstance(value.get("message"), str)
    )


def _error(request_id: Any, code: int, message: str, data: str | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    reply = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return json.dumps(reply, separators=(",", ":")).encode() + b"\n"
