"""A scripted model that calls a tool, then answers; the tool's result read back."""

from __future__ import annotations

from typing import Any

from di_code.ai import TextContent, ToolCall, ToolResultMessage

ECHO = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
    "additionalProperties": False,
}


def tool_result(transcript: list[Any], call_id: str) -> ToolResultMessage:
    return next(
        m for m in transcript if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


def call_then_answer(call: ToolCall) -> list[dict[str, Any]]:
    return [
        {"type": "success", "content": [call]},
        {"type": "success", "content": [TextContent("done")]},
    ]
