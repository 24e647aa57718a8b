"""A stream always ends: whatever breaks in a provider or in the builder, even inside the
failure path itself, the stream closes with a final error event and `agent.prompt` returns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from di_code.agent import Agent
from di_code.ai import AbortController, ProviderError, TextContent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.faux import FAUX_MODEL, create_faux_provider
from di_code.ai.stream import AssistantMessageStream, StreamOptions, start_stream
from di_code.ai.types import Context, Model, Usage
from tests.support.event_sequence import check_event_sequence

LIMIT = 10  # seconds: a hang fails the test instead of stalling the suite


def broken_clock() -> int:
    raise OverflowError("clock broke")


async def before_anything(out: MessageBuilder) -> None:
    raise ProviderError("HTTP 500: down")


async def mid_text(out: MessageBuilder) -> None:
    out.text("partial")
    raise ConnectionError("dropped")


async def mid_tool_call(out: MessageBuilder) -> None:
    out.tool_call_start("c1", "read")
    out.tool_call_delta('{"pa')
    raise ValueError("bad chunk")


async def at_finish(out: MessageBuilder) -> None:
    out.text("answer")
    out.usage = {"input": 3}  # type: ignore[assignment]  # the faux bug: usage not converted
    out.finish("stop")


async def after_finish(out: MessageBuilder) -> None:
    out.text("answer")
    out.finish("stop")
    raise RuntimeError("late")


async def never_finishing(out: MessageBuilder) -> None:
    out.text("and then nothing")


async def until_aborted(out: MessageBuilder) -> None:
    out.text("waiting")
    await asyncio.Event().wait()


STAGES = [
    before_anything, mid_text, mid_tool_call, at_finish,
    after_finish, never_finishing, until_aborted,
]  # fmt: skip


class Breaking:
    """A provider whose producer breaks at a given stage, and whose builder may be unable to
    build even the error message (a clock that raises)."""

    def __init__(self, produce: Callable[[MessageBuilder], Awaitable[None]], clock: Any) -> None:
        self.produce = produce
        self.clock = clock

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream:
        signal = options.signal if options else None
        return start_stream(model, self.produce, signal, now=self.clock)


@pytest.mark.parametrize("clock", [lambda: 5, broken_clock], ids=["clock", "broken-clock"])
@pytest.mark.parametrize("stage", STAGES, ids=[stage.__name__ for stage in STAGES])
async def test_the_stream_ends_whatever_breaks(stage: Any, clock: Any) -> None:
    controller = AbortController()
    stream = start_stream(FAUX_MODEL, stage, controller.signal, now=clock)
    if stage is until_aborted:
        asyncio.get_running_loop().call_later(0.01, controller.abort)

    async def drain() -> list[Any]:
        return [event async for event in stream]

    events = await asyncio.wait_for(drain(), LIMIT)
    message = await asyncio.wait_for(stream.result(), LIMIT)
    check_event_sequence(events)
    assert events[-1].message == message
    if stage is after_finish and clock is not broken_clock:
        assert message.stop_reason == "stop"
    else:
        assert message.stop_reason in ("error", "aborted")
        assert message.error_message


@pytest.mark.parametrize("stage", STAGES, ids=[stage.__name__ for stage in STAGES])
async def test_agent_prompt_returns_whatever_the_provider_does(stage: Any) -> None:
    controller = AbortController()
    provider = Breaking(stage, broken_clock)
    agent = Agent(provider, FAUX_MODEL)
    if stage is until_aborted:
        asyncio.get_running_loop().call_later(0.01, controller.abort)
    final = await asyncio.wait_for(agent.prompt("go", signal=controller.signal), LIMIT)
    assert final.stop_reason in ("error", "aborted")
    assert not agent.is_streaming


async def test_a_pre_aborted_stream_with_a_broken_builder_still_ends() -> None:
    controller = AbortController()
    controller.abort()
    stream = start_stream(FAUX_MODEL, never_finishing, controller.signal, now=broken_clock)
    events = await asyncio.wait_for(_all(stream), LIMIT)
    check_event_sequence(events)
    assert events[-1].type == "error"


async def _all(stream: AssistantMessageStream) -> list[Any]:
    return [event async for event in stream]


async def test_faux_usage_given_as_a_dict_is_read_by_the_codec() -> None:
    faux = create_faux_provider(
        [{"type": "success", "content": [TextContent("hi")], "usage": {"input": 3, "output": 2}}]
    )
    agent = Agent(faux.provider, faux.model)
    final = await asyncio.wait_for(agent.prompt("go"), LIMIT)
    assert final.stop_reason == "stop"
    assert final.usage == Usage(3, 2, 0, 0, 5)
