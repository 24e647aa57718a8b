"""What of a transcript may be sent to a model.

The transcript keeps everything that happened; a request must not carry a tool call without
its result (every API rejects that), nor the half of a reply that failed or was aborted (its
calls never ran, its thinking lacks a signature). Yet the model must know it was cut off, and
the user's next prompt must not follow the previous one directly (two user turns in a row,
which some APIs refuse): such a reply goes as its text so far and a note saying what happened.
Only a failed reply that ends the transcript is dropped: a retry asks for it again.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec.structs

from di_code.ai.types import AssistantMessage, Message, TextContent, ToolResultMessage

MISSING_RESULT_TEXT = "No result: the tool call was interrupted before it finished."
INTERRUPTED_REPLY_NOTE = "[The user interrupted this reply here.]"
STOPPED_BEFORE_REPLY_NOTE = "[The user stopped the work here, before the next reply began.]"
FAILED_REPLY_NOTE = "[This reply was cut off here by an error.]"


def messages_for_request(messages: Iterable[Message], now: int = 0) -> list[Message]:
    """Failed replies as their text and a note (dropped when last), no orphan results, and an
    error result for each unanswered tool call."""
    messages = list(messages)
    out: list[Message] = []
    unanswered: dict[str, str] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id in unanswered:
                del unanswered[message.tool_call_id]
                out.append(message)
            continue
        _answer(out, unanswered, now)
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                if index < len(messages) - 1:
                    out.append(cut_off_reply(message))
                continue
            unanswered = {call.id: call.name for call in message.tool_calls}
        out.append(message)
    _answer(out, unanswered, now)
    return out


def _answer(out: list[Message], unanswered: dict[str, str], now: int) -> None:
    for call_id, name in unanswered.items():
        out.append(ToolResultMessage(call_id, name, [TextContent(MISSING_RESULT_TEXT)], True, now))
    unanswered.clear()


def cut_off_reply(message: AssistantMessage) -> AssistantMessage:
    """A failed or aborted reply as the model may read it: its text so far and a note. It is
    a finished message now (stop reason "stop"), so a second pass leaves it as it is."""
    text = message.text.rstrip()
    if message.stop_reason != "aborted":
        note = FAILED_REPLY_NOTE
    else:  # stopped while a tool ran, the reply not yet asked for, or stopped mid-reply
        note = INTERRUPTED_REPLY_NOTE if message.content else STOPPED_BEFORE_REPLY_NOTE
    return msgspec.structs.replace(
        message, content=[TextContent(f"{text}\n\n{note}" if text else note)], stop_reason="stop"
    )
