"""What of a transcript may be sent to a model.

The transcript keeps everything that happened; a request must not carry an assistant message
that failed or was aborted, nor a tool call without its result (every API rejects that).
"""

from __future__ import annotations

from collections.abc import Iterable

from di_code.ai.types import AssistantMessage, Message, TextContent, ToolResultMessage

MISSING_RESULT_TEXT = "No result: the tool call was interrupted before it finished."


def messages_for_request(messages: Iterable[Message], now: int = 0) -> list[Message]:
    """Drop failed assistant turns and orphan results; give unanswered tool calls an error."""
    out: list[Message] = []
    unanswered: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id in unanswered:
                del unanswered[message.tool_call_id]
                out.append(message)
            continue
        _answer(out, unanswered, now)
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                continue
            unanswered = {call.id: call.name for call in message.tool_calls}
        out.append(message)
    _answer(out, unanswered, now)
    return out


def _answer(out: list[Message], unanswered: dict[str, str], now: int) -> None:
    for call_id, name in unanswered.items():
        out.append(ToolResultMessage(call_id, name, [TextContent(MISSING_RESULT_TEXT)], True, now))
    unanswered.clear()
