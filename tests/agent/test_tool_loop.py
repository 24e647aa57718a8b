"""The article's five tool-loop tests, in Python, with the same assertions."""

from __future__ import annotations

from typing import Any

from di_code.agent import Agent, FunctionTool
from di_code.ai import AbortController, AbortSignal, TextContent, ToolCall, ToolResultMessage
from di_code.ai.providers.faux import create_faux_provider

ECHO_PARAMETERS = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
    "additionalProperties": False,
}


def tool_result(transcript: list[Any], call_id: str) -> ToolResultMessage:
    return next(
        m for m in transcript if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


def call_then_answer(call: ToolCall, answer: str = "done") -> list[dict[str, Any]]:
    return [
        {"type": "success", "content": [call]},
        {"type": "success", "content": [TextContent(answer)]},
    ]


async def test_successful_tool_loop() -> None:
    faux = create_faux_provider(
        call_then_answer(ToolCall("call-1", "echo", {"value": "hello"})), now=lambda: 20
    )
    executions: list[tuple[str, dict[str, Any], AbortSignal]] = []

    async def echo(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        executions.append((call_id, params, signal))
        params["value"] = "mutated by the tool"
        return [TextContent(f"echoed: {params['value']}")]

    agent = Agent(
        faux.provider,
        faux.model,
        [FunctionTool("echo", "Return the value", ECHO_PARAMETERS, echo)],
        now=lambda: 30,
    )
    assistant = await agent.prompt("echo hello")

    assert assistant.stop_reason == "stop"
    assert assistant.content == [TextContent("done")]
    assert [(call_id, signal.aborted) for call_id, _, signal in executions] == [("call-1", False)]
    # the tool mutated its params: the call the model sent is untouched, so it got a copy
    first_request_call = faux.requests[1].messages[1]
    assert first_request_call.content[0].arguments == {"value": "hello"}  # type: ignore[union-attr]
    assert [m.role for m in agent.transcript] == ["user", "assistant", "tool_result", "assistant"]
    assert [m.role for m in faux.requests[1].messages] == ["user", "assistant", "tool_result"]
    assert faux.pending_responses() == 0


async def test_unknown_tool_becomes_an_error_result() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("missing-1", "missing", {})))
    agent = Agent(faux.provider, faux.model, [])
    assistant = await agent.prompt("call something")

    result = tool_result(agent.transcript, "missing-1")
    assert result.tool_name == "missing"
    assert result.is_error
    assert result.content == [TextContent('Unknown tool "missing".')]
    assert assistant.stop_reason == "stop"
    assert faux.pending_responses() == 0


async def test_invalid_arguments_never_run_the_tool() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("bad-1", "echo", {"value": 42})))
    executions = 0

    async def echo(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        nonlocal executions
        executions += 1
        return [TextContent(params["value"])]

    agent = Agent(faux.provider, faux.model, [FunctionTool("echo", "Echo", ECHO_PARAMETERS, echo)])
    await agent.prompt("echo 42")

    result = tool_result(agent.transcript, "bad-1")
    assert executions == 0
    assert result.is_error
    assert result.text.startswith('Tool "echo" failed: Invalid arguments for tool "echo":')
    assert "  - /value: 42 is not of type 'string'" in result.text


async def test_failing_tool_is_reported_to_the_model() -> None:
    faux = create_faux_provider(call_then_answer(ToolCall("failed-1", "echo", {"value": "x"})))

    async def broken(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        raise OSError("disk offline")

    agent = Agent(
        faux.provider, faux.model, [FunctionTool("echo", "Echo", ECHO_PARAMETERS, broken)]
    )
    await agent.prompt("echo x")

    result = tool_result(agent.transcript, "failed-1")
    assert result.is_error
    assert result.content == [TextContent('Tool "echo" failed: disk offline')]
    assert faux.pending_responses() == 0


async def test_abort_during_a_tool_stops_the_loop() -> None:
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

    async def abort(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        executions.append("abort")
        controller.abort("test cancellation")
        return [TextContent("too late")]

    async def never(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        executions.append("never")
        return [TextContent("never")]

    empty = {"type": "object", "properties": {}}
    agent = Agent(
        faux.provider,
        faux.model,
        [
            FunctionTool("abort", "Abort", empty, abort),
            FunctionTool("never", "Never", empty, never),
        ],
    )
    assistant = await agent.prompt("abort", signal=controller.signal)

    assert executions == ["abort"]
    assert assistant.stop_reason == "aborted"
    assert assistant.error_message == "Tool loop aborted"
    assert faux.pending_responses() == 1
    assert tool_result(agent.transcript, "abort-1").content == [
        TextContent("Tool execution aborted.")
    ]
    assert not agent.is_streaming
