"""A streamed message's deltas as the agent's listeners get them: each stream of one message
(its text, its thinking, each tool call's arguments) through one `StreamRedactor`, so a key the
model writes reaches no listener (an editor, the chat screen, `run`'s stream-json) even in
pieces of four characters. Whole texts (a message's end, a tool result) are redacted where they
leave the process (di_code.ai.redaction); pieces can only be redacted here, where they are
still in order."""

from __future__ import annotations

from msgspec.structs import replace

from di_code.agent.events import AgentEvent, MessageStartEvent, MessageUpdateEvent
from di_code.ai.events import (
    DoneEvent,
    ErrorEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from di_code.ai.redaction import StreamRedactor

Delta = TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent


class ShownDeltas:
    """The open streams of the message being received, by content index."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[type[Delta], StreamRedactor]] = {}

    def shown(self, event: AgentEvent) -> list[AgentEvent]:
        """The events to hand on for `event`: a delta's safe part (none while all of it may
        be the start of a key), the held-back rest before the end of its stream."""
        if isinstance(event, MessageStartEvent):
            self._open.clear()
        if not isinstance(event, MessageUpdateEvent):
            return [event]
        inner = event.event
        if isinstance(inner, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent):
            opened = (type(inner), StreamRedactor())
            _, redactor = self._open.setdefault(inner.content_index, opened)
            delta = redactor.feed(inner.delta)
            return [MessageUpdateEvent(replace(inner, delta=delta))] if delta else []
        if isinstance(inner, TextEndEvent | ThinkingEndEvent | ToolCallEndEvent):
            return [*self._rest(inner.content_index), event]
        if isinstance(inner, DoneEvent | ErrorEvent):
            return [*(e for index in list(self._open) for e in self._rest(index)), event]
        return [event]

    def _rest(self, index: int) -> list[AgentEvent]:
        kind, redactor = self._open.pop(index, (TextDeltaEvent, None))
        rest = redactor.end() if redactor is not None else ""
        return [MessageUpdateEvent(kind(content_index=index, delta=rest))] if rest else []
