"""What ties a session to an agent: every message the agent finishes is appended as it ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from di_code.agent.agent import Agent
from di_code.agent.events import AgentEvent, MessageEndEvent, MessageUpdateEvent
from di_code.ai.types import AssistantMessage, Message, UserMessage
from di_code.session.format import SessionError
from di_code.system.abort import AbortSignal
from di_code.system.disk_sync import start_syncing

LONG_MESSAGE = 1 << 20
"""A message holding more characters is written on a thread of its own (`record`): encoding
and writing 100 MB took seconds, Ctrl-C waiting for them."""


class Recorded(Protocol):
    """What `record` appends to: a Session (di_code.session.session, which uses this module)."""

    warnings: list[str]
    write_error: SessionError | None

    def model(self) -> tuple[str, str] | None: ...
    def append_model_change(self, provider: str, model_id: str) -> object: ...
    def append_message(self, message: Message, *, request_follows: bool = False) -> object: ...
    async def append_long_message(self, message: Message, signal: AbortSignal | None) -> object: ...


def record(
    session: Recorded, agent: Agent, on_error: Callable[[SessionError], None] | None = None
) -> Callable[[], None]:
    """Append every message the agent finishes (and a model change before it); returns
    the unsubscribe function. A failed write (disk full) goes to `on_error` when it is
    the session's first (`write_error`: one line says it, not one a message), else to
    `warnings`: the conversation goes on either way. A prompt's fsync starts once the answer
    does (its first event after the stream's `start`): the request does not wait for the
    sync thread's start (di_code.system.disk_sync)."""
    held = False
    """A prompt was written whose fsync has no thread yet."""

    async def on_event(event: AgentEvent) -> None:
        nonlocal held
        if isinstance(event, MessageUpdateEvent):
            if held and event.event.type != "start":  # `start` comes before the request
                held = False
                start_syncing()
            return
        if not isinstance(event, MessageEndEvent):
            return
        try:
            if isinstance(event.message, AssistantMessage):
                current = (agent.model.provider, agent.model.id)
                if session.model() != current:
                    session.append_model_change(*current)
            if _text_length(event.message) > LONG_MESSAGE:
                await session.append_long_message(event.message, agent.signal)
            else:
                prompt = isinstance(event.message, UserMessage)
                session.append_message(event.message, request_follows=prompt)
                held = held or prompt
        except SessionError as exc:
            if on_error is None or exc is not session.write_error:
                session.warnings.append(str(exc))
            else:
                on_error(exc)

    return agent.subscribe(on_event)


def _text_length(message: Message) -> int:
    """How much text (and image data) a message holds, in characters."""
    fields = ("text", "thinking", "data")  # a block has one of them
    return sum(len(getattr(block, f, "")) for block in message.content for f in fields)
