"""Drain a provider stream, checking every event against the SPEC §2.2 sequence rules."""

from __future__ import annotations

from di_code.ai.event_sequence import check_event_sequence
from di_code.ai.events import StreamEvent
from di_code.ai.stream import AssistantMessageStream
from di_code.ai.types import AssistantMessage


async def collect(stream: AssistantMessageStream) -> tuple[list[StreamEvent], AssistantMessage]:
    events = [event async for event in stream]
    check_event_sequence(events)
    return events, await stream.result()


class RecordingSleep:
    """A backoff sleep that records the delays and returns at once (no real seconds)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
