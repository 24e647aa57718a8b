"""The article's five tool-loop tests, with the article's assertions, run with tools declared
in every form of the contract.

Each tool below is handed to the Agent as it is, with no adapter in between: an `execute`
without `signal`, with an optional `signal`, with a positional or keyword `on_update`, and a
plain blocking `def` (run in a worker thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from di_code.agent import Agent, AgentEvent, ToolResult
from di_code.ai import AbortController, AbortSignal, TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from tests.support.tool_calls import ECHO, call_then_answer, tool_result

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
Body = Callable[[str, dict[str, Any]], list[Any]]


class Tool:
    """The parts every form shares; the subclasses differ only in how `execute` is declared."""

    def __init__(self, name: str, parameters: dict[str, Any], body: Body) -> None:
        self.name = name
        self.description = f"The {name} tool"
        self.parameters = parameters
        self.body = body
        self.signals: list[AbortSignal | None] = []
        self.threads: list[int] = []


class NoSignal(Tool):
    async def execute(self, tool_call_id: str, params: dict[str, Any]) -> list[Any]:
        return self.body(tool_call_id, params)


class OptionalSignal(Tool):
    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None = None
    ) -> list[Any]:
        self.signals.append(signal)
        return self.body(tool_call_id, params)


class PositionalUpdate(Tool):
    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any = None
    ) -> ToolResult:
        self.signals.append(signal)
        await on_update(ToolResult([TextContent("partial")]))
        return ToolResult(self.body(tool_call_id, params))


class KeywordUpdate(Tool):
    async def execute(self, tool_call_id: str, params: dict[str, Any], *, on_update: Any) -> Any:
        await on_update(ToolResult([TextContent("partial")]))
        return self.body(tool_call_id, params)


class Blocking(Tool):
    def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None = None
    ) -> list[Any]:
        self.signals.append(signal)
        self.threads.append(threading.get_ident())
        return self.body(tool_call_id, params)


class BlockingUpdate(Tool):
    def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any = None
    ) -> list[Any]:
        self.threads.append(threading.get_ident())
        on_update(ToolResult([TextContent("partial")]))  # a plain function in a worker thread
        return self.body(tool_call_id, params)


FORMS = [NoSignal, OptionalSignal, PositionalUpdate, KeywordUpdate, Blocking, BlockingUpdate]
UPDATES = {PositionalUpdate, KeywordUpdate, BlockingUpdate}
forms = pytest.mark.parametrize("form", FORMS, ids=[form.__name__ for form in FORMS])


@forms
async def test_successful_tool_loop(form: type[Tool]) -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("call-1", "echo", {"value": "hello"})))
    executions: list[tuple[str, str]] = []

    def echo(call_id: str, params: dict[str, Any]) -> list[Any]:
        executions.append((call_id, params["value"]))
        value, params["value"] = params["value"], "mutated by the tool"
        return [TextContent(f"echoed: {value}")]

    tool = form("echo", ECHO, echo)
    agent = Agent(faux.provider, faux.model, [tool], now=lambda: 30)
    updates: list[AgentEvent] = []
    agent.subscribe(lambda e: updates.append(e) if e.type == "tool_execution_update" else None)
    assistant = await agent.prompt("echo hello")

    assert assistant.stop_reason == "stop"
    assert assistant.content == [TextContent("done")]
    assert executions == [("call-1", "hello")]
    assert tool_result(agent.transcript, "call-1").content == [TextContent("echoed: hello")]
    assert [m.role for m in agent.transcript] == ["user", "assistant", "tool_result", "assistant"]
    assert [m.role for m in faux.requests[1].messages] == ["user", "assistant", "tool_result"]
    sent_call = faux.requests[1].messages[1].content[0]  # the tool got a copy of the arguments
    assert sent_call.arguments == {"value": "hello"}  # type: ignore[union-attr]
    assert faux.pending_responses() == 0
    assert all(isinstance(s, AbortSignal) and not s.aborted for s in tool.signals)
    assert [u.partial_result.content for u in updates] == (  # type: ignore[attr-defined]
        [[TextContent("partial")]] if form in UPDATES else []
    )
    assert all(thread != threading.get_ident() for thread in tool.threads)


@forms
async def test_unknown_tool_becomes_an_error_result(form: type[Tool]) -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("missing-1", "missing", {})))
    agent = Agent(faux.provider, faux.model, [form("echo", ECHO, lambda i, p: [])])
    assistant = await agent.prompt("call something")

    result = tool_result(agent.transcript, "missing-1")
    assert (result.tool_name, result.is_error) == ("missing", True)
    assert result.content == [TextContent('Unknown tool "missing".')]
    assert assistant.stop_reason == "stop"
    assert faux.pending_responses() == 0


@forms
async def test_invalid_arguments_never_run_the_tool(form: type[Tool]) -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("bad-1", "echo", {"value": 42})))
    executions: list[str] = []
    tool = form("echo", ECHO, lambda call_id, params: executions.append(call_id) or [])
    agent = Agent(faux.provider, faux.model, [tool])
    await agent.prompt("echo 42")

    result = tool_result(agent.transcript, "bad-1")
    assert executions == []
    assert result.is_error
    assert result.text.startswith('Tool "echo" failed: Invalid arguments for tool "echo":')
    assert faux.pending_responses() == 0


@forms
async def test_failing_tool_is_reported_to_the_model(form: type[Tool]) -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("failed-1", "echo", {"value": "x"})))

    def broken(call_id: str, params: dict[str, Any]) -> list[Any]:
        raise OSError("disk offline")

    agent = Agent(faux.provider, faux.model, [form("echo", ECHO, broken)])
    await agent.prompt("echo x")

    result = tool_result(agent.transcript, "failed-1")
    assert result.is_error
    assert result.content == [TextContent('Tool "echo" failed: disk offline')]
    assert faux.pending_responses() == 0


@forms
async def test_abort_during_a_tool_stops_the_loop(form: type[Tool]) -> None:
    controller = AbortController()
    executions: list[str] = []
    faux = create_faux_provider(
        [
            {
                "type": "success",
                "content": [ToolCall("abort-1", "abort", {}), ToolCall("never-1", "never", {})],
            },
            {"type": "success", "content": [TextContent("should not be requested")]},
        ]
    )

    def abort(call_id: str, params: dict[str, Any]) -> list[Any]:
        executions.append("abort")
        controller.abort("test cancellation")
        return [TextContent("too late")]

    def never(call_id: str, params: dict[str, Any]) -> list[Any]:
        executions.append("never")
        return [TextContent("never")]

    agent = Agent(
        faux.provider, faux.model, [form("abort", EMPTY, abort), form("never", EMPTY, never)]
    )
    assistant = await agent.prompt("abort", signal=controller.signal)

    assert executions == ["abort"]
    assert (assistant.stop_reason, assistant.error_message) == ("aborted", "Tool loop aborted")
    assert faux.pending_responses() == 1
    assert tool_result(agent.transcript, "abort-1").content == [
        TextContent("Interrupted by the user.\nOutput so far:\ntoo late")
    ]
    assert not agent.is_streaming


class NoParams:
    name, description, parameters = "odd", "Takes nothing", EMPTY

    async def execute(self) -> list[Any]:
        return []


def test_a_tool_no_form_can_call_is_refused_when_the_agent_gets_it() -> None:
    faux = create_faux_provider()
    with pytest.raises(TypeError, match='Tool "odd": execute must accept'):
        Agent(faux.provider, faux.model, [NoParams()])
