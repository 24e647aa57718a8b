"""The loop's tool-call seam: `before` hooks may refuse a valid call with a reason the model
reads, `after` hooks see and may replace its result; a failing before hook refuses (fails
closed), and an abort ends a before hook that is still waiting (an open question)."""

from __future__ import annotations

import asyncio
from typing import Any

from di_code.agent import Agent, ToolCallContext, ToolHooks, ToolResult
from di_code.agent.tool import FunctionTool
from di_code.ai import TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from tests.support.tool_calls import ECHO, call_then_answer, tool_result


def echo_tool(runs: list[str]) -> FunctionTool:
    async def run(_id: str, params: dict[str, Any], _signal: object) -> list[TextContent]:
        runs.append(params["value"])
        return [TextContent(f"echoed: {params['value']}")]

    return FunctionTool("echo", "Echo a value", ECHO, run)


async def test_a_before_hook_sees_valid_arguments_and_its_refusal_reaches_the_model() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("c1", "echo", {"value": "secret"})))
    seen: list[tuple[str, dict[str, Any]]] = []

    async def refuse(context: ToolCallContext) -> str | None:
        seen.append((context.call.name, context.params))
        return "Not now: the user is busy."

    runs: list[str] = []
    agent = Agent(faux.provider, faux.model, [echo_tool(runs)], hooks=ToolHooks(before=[refuse]))
    await agent.prompt("echo")
    result = tool_result(agent.transcript, "c1")
    assert runs == [] and seen == [("echo", {"value": "secret"})]
    assert result.is_error and result.text == "Not now: the user is busy."
    assert faux.requests[1].messages[-1].text == "Not now: the user is busy."  # type: ignore[union-attr]


async def test_invalid_arguments_never_reach_a_before_hook() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("c1", "echo", {"value": 7})))
    asked: list[str] = []

    async def record(context: ToolCallContext) -> str | None:
        asked.append(context.call.id)
        return None

    agent = Agent(faux.provider, faux.model, [echo_tool([])], hooks=ToolHooks(before=[record]))
    await agent.prompt("echo")
    assert asked == [] and tool_result(agent.transcript, "c1").is_error


async def test_a_failing_before_hook_refuses_the_call() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("c1", "echo", {"value": "x"})))

    async def broken(context: ToolCallContext) -> str | None:
        raise OSError("policy file unreadable")

    runs: list[str] = []
    agent = Agent(faux.provider, faux.model, [echo_tool(runs)], hooks=ToolHooks(before=[broken]))
    await agent.prompt("echo")
    result = tool_result(agent.transcript, "c1")
    assert runs == []
    assert result.is_error and result.text == 'Tool "echo" was not run: policy file unreadable'


async def test_after_hooks_chain_and_replace_what_the_model_reads() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("c1", "echo", {"value": "k-123"})))

    async def redact(context: ToolCallContext, result: ToolResult) -> ToolResult:
        text = result.content[0].text.replace("k-123", "[redacted]")  # type: ignore[union-attr]
        return ToolResult([TextContent(text)], result.details, result.is_error)

    async def tag(context: ToolCallContext, result: ToolResult) -> ToolResult:
        first = result.content[0].text  # type: ignore[union-attr]
        return ToolResult([TextContent(f"{first} ({context.call.id})")])

    agent = Agent(faux.provider, faux.model, [echo_tool([])], hooks=ToolHooks(after=[redact, tag]))
    await agent.prompt("echo")
    assert tool_result(agent.transcript, "c1").text == "echoed: [redacted] (c1)"


async def test_an_abort_ends_a_before_hook_that_is_still_waiting() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("c1", "echo", {"value": "x"})))
    asking = asyncio.Event()

    async def never_answers(context: ToolCallContext) -> str | None:
        asking.set()
        await asyncio.Event().wait()
        return None

    runs: list[str] = []
    agent = Agent(
        faux.provider, faux.model, [echo_tool(runs)], hooks=ToolHooks(before=[never_answers])
    )
    prompt = asyncio.create_task(agent.prompt("echo"))
    await asking.wait()
    agent.abort()
    final = await asyncio.wait_for(prompt, timeout=10)
    assert final.stop_reason == "aborted" and runs == []
    assert tool_result(agent.transcript, "c1").text == "Operation aborted"
