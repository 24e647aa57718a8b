"""Tools that declare `parallel_safe = True` run together when the model calls them in a row;
others stay serial; results are added in call order whatever order they finish in."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from di_code.agent import Agent
from di_code.ai import TextContent, ToolCall, ToolResultMessage
from di_code.ai.providers.faux import create_faux_provider
from tests.support.tool_calls import ECHO

SAFETY = 10.0
"""Only so that a regression fails instead of hanging: serial runs would wait forever."""


class Rendezvous:
    """Each call waits until `expected` calls have started: only possible if they overlap."""

    parameters: ClassVar[dict[str, Any]] = ECHO

    def __init__(
        self, name: str, expected: int, parallel_safe: bool, patience: float = SAFETY
    ) -> None:
        self.name, self.description = name, "meet the others"
        self.parallel_safe = parallel_safe
        self.started: list[str] = []
        self._expected, self._patience = expected, patience
        self._all_in = asyncio.Event()

    async def execute(self, tool_call_id: str, params: dict[str, Any]) -> list[TextContent]:
        self.started.append(params["value"])
        if len(self.started) == self._expected:
            self._all_in.set()
        await asyncio.wait_for(self._all_in.wait(), self._patience)
        if params["value"] == "first":  # finish last, to show results keep the call order
            await asyncio.sleep(0)
        return [TextContent(f"met {params['value']}")]


class Plain:
    name, description, parameters = "plain", "runs alone", ECHO

    def __init__(self, meeting: Rendezvous) -> None:
        self.meeting = meeting
        self.saw: list[int] = []

    async def execute(self, tool_call_id: str, params: dict[str, Any]) -> list[TextContent]:
        self.saw.append(len(self.meeting.started))
        return [TextContent("plain")]


def calls(*names_values: tuple[str, str]) -> list[ToolCall]:
    return [ToolCall(f"c{i}", name, {"value": v}) for i, (name, v) in enumerate(names_values)]


async def test_consecutive_parallel_safe_calls_overlap_and_keep_their_order() -> None:
    meeting = Rendezvous("meet", 2, parallel_safe=True)
    plain = Plain(meeting)
    batch = calls(("plain", "a"), ("meet", "first"), ("meet", "second"), ("plain", "b"))
    faux = create_faux_provider(
        [
            {"type": "success", "content": batch},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    agent = Agent(faux.provider, faux.model, [meeting, plain])
    await agent.prompt("go")
    results = [m for m in agent.transcript if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["c0", "c1", "c2", "c3"]
    assert [r.text for r in results] == ["plain", "met first", "met second", "plain"]
    assert plain.saw == [0, 2]  # the plain calls ran before and after the pair, not during


async def test_a_tool_without_the_mark_stays_serial() -> None:
    meeting = Rendezvous("meet", 2, parallel_safe=False, patience=0.1)
    faux = create_faux_provider(
        [
            {"type": "success", "content": calls(("meet", "first"), ("meet", "second"))},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    agent = Agent(faux.provider, faux.model, [meeting])
    await agent.prompt("go")
    results = [m for m in agent.transcript if isinstance(m, ToolResultMessage)]
    first, second = results
    assert first.is_error  # it waited alone and gave up: the second had not started
    assert not second.is_error and meeting.started == ["first", "second"]
