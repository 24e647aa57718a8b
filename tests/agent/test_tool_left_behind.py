"""A tool that does not listen to its signal is left behind by the loop: the turn ends with the
call interrupted (its last streamed output kept), and what the tool streams afterwards reaches
nobody (no event after the call's end)."""

from __future__ import annotations

import asyncio
from typing import Any

from di_code.agent import Agent, AgentEvent, ToolResult
from di_code.agent.events import ToolExecutionEndEvent, ToolExecutionUpdateEvent
from di_code.ai import AbortController, TextContent, ToolCall, ToolResultMessage
from di_code.ai.providers.faux import create_faux_provider


class Deaf:
    """Streams one line, then goes on streaming without ever looking at its signal."""

    name = "deaf"
    description = "never stops"

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}
        self.streamed = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any
    ) -> Any:
        await on_update(ToolResult([TextContent("first line")]))
        self.streamed.set()
        while not self.release.is_set():
            try:
                await asyncio.wait_for(self.release.wait(), 0.05)
            except (asyncio.CancelledError, TimeoutError):
                await on_update(ToolResult([TextContent("later line")]))
        return []


async def test_a_deaf_tool_is_left_behind_and_streams_to_nobody() -> None:
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("deaf-1", "deaf", {})]},
            {"type": "success", "content": [TextContent("should not be requested")]},
        ]
    )
    tool, controller = Deaf(), AbortController()
    agent = Agent(faux.provider, faux.model, [tool])
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    prompt = asyncio.ensure_future(agent.prompt("go", signal=controller.signal))
    await tool.streamed.wait()
    controller.abort()
    assistant = await asyncio.wait_for(prompt, 10)
    await asyncio.sleep(0.2)  # the tool goes on streaming meanwhile
    tool.release.set()

    assert assistant.stop_reason == "aborted"
    [result] = [m for m in agent.transcript if isinstance(m, ToolResultMessage)]
    [said] = result.content
    assert isinstance(said, TextContent)
    assert said.text.startswith("Interrupted by the user.\nOutput so far:\n")
    end = next(i for i, e in enumerate(events) if isinstance(e, ToolExecutionEndEvent))
    assert not [e for e in events[end:] if isinstance(e, ToolExecutionUpdateEvent)]
