"""Every message of the transcript is in the session file, in order, whatever a tool returned
or a model sent: details that are not JSON, lone surrogates, arguments nested too deep."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import Agent, ToolResult
from di_code.ai import TextContent, ToolCall
from di_code.ai.codec import MAX_JSON_DEPTH
from di_code.ai.providers.faux import create_faux_provider
from di_code.session import SessionStore


@dataclasses.dataclass
class Odd:
    x: int


class Detailed:
    """Returns the details it was made with, and output with a lone surrogate in it."""

    name, description = "detailed", "Returns odd details"

    def __init__(self, details: Any) -> None:
        self.parameters = {"type": "object"}
        self.details = details

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any = None
    ) -> ToolResult:
        return ToolResult([TextContent("caf\udce9.txt")], self.details)


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


ODD_DETAILS = [
    Path("/tmp/x"),
    {"files": {"a", "b"}},
    {1: Odd(2), "nan": float("nan")},
    {"deep": nested(MAX_JSON_DEPTH * 3)},
    "text \ud83d",
]


async def run_recorded(tmp_path: Path, responses: list[Any], tools: list[Any]) -> Agent:
    faux = create_faux_provider(responses)
    session = SessionStore(tmp_path).create(tmp_path)
    agent = Agent(faux.provider, faux.model, tools)
    session.record(agent)
    await agent.prompt("go")
    on_disk = SessionStore(tmp_path).open(session.path, tmp_path, write=False)
    assert on_disk.warnings == [] and session.warnings == []
    assert on_disk.context() == agent.transcript
    return agent


@pytest.mark.parametrize("details", ODD_DETAILS, ids=["path", "set", "object", "deep", "surrogate"])
async def test_a_tool_result_with_any_details_is_in_the_session_file(
    tmp_path: Path, details: Any, caplog: pytest.LogCaptureFixture
) -> None:
    responses = [
        {"type": "success", "content": [ToolCall("c1", "detailed", {})]},
        {"type": "success", "content": [TextContent("done")]},
    ]
    with caplog.at_level(logging.WARNING, logger="di_code.agent.loop"):
        agent = await run_recorded(tmp_path, responses, [Detailed(details)])
    result = agent.transcript[2]
    assert result.role == "tool_result"
    assert result.content == [TextContent("caf\ufffd.txt")]
    json.dumps(result.details)  # plain JSON now
    if not isinstance(details, str):
        assert [r.message for r in caplog.records if "details converted" in r.message]


async def test_a_lone_surrogate_from_the_model_is_shown_and_saved(tmp_path: Path) -> None:
    responses = [{"type": "success", "content": [TextContent("half an emoji: \ud83d!")]}]
    agent = await run_recorded(tmp_path, responses, [])
    assert agent.transcript[-1].content == [TextContent("half an emoji: \ufffd!")]


async def test_arguments_nested_too_deep_are_an_error_result_and_saved(tmp_path: Path) -> None:
    arguments = json.dumps({"v": nested(900)})
    responses = [
        {"type": "success", "content": [ToolCall("c1", "detailed", arguments)]},
        {"type": "success", "content": [TextContent("done")]},
    ]
    agent = await run_recorded(tmp_path, responses, [Detailed(None)])
    result = agent.transcript[2]
    assert result.is_error
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in result.text.splitlines()[1]


async def test_duplicate_tool_call_ids_each_get_exactly_one_result(tmp_path: Path) -> None:
    responses = [
        {
            "type": "success",
            "content": [ToolCall("dup", "detailed", {}), ToolCall("dup", "detailed", {})],
        },
        {"type": "success", "content": [TextContent("done")]},
    ]
    faux = create_faux_provider(responses)
    agent = Agent(faux.provider, faux.model, [Detailed(None)])
    await agent.prompt("go")
    request = faux.requests[1].messages
    calls = [c.id for m in request if m.role == "assistant" for c in m.tool_calls]  # type: ignore[union-attr]
    results = [m.tool_call_id for m in request if m.role == "tool_result"]  # type: ignore[union-attr]
    assert calls == results == ["dup", "dup_2"]
