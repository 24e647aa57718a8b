"""Property: for any script of replies, tools and aborts, the loop keeps its invariants."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.agent import Agent, AgentEvent, FunctionTool
from di_code.ai import AbortSignal, TextContent, ThinkingContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from tests.support.event_sequence import EventSequenceChecker

ECHO = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}


async def echo(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
    await asyncio.sleep(0)
    return [TextContent(params["value"])]


async def boom(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
    raise RuntimeError("tool exploded")


TOOLS = [FunctionTool("echo", "Echo", ECHO, echo), FunctionTool("boom", "Boom", ECHO, boom)]

words = st.text(alphabet='ab c{}"\n', max_size=12)
arguments = st.one_of(
    st.builds(lambda v: {"value": v}, words),  # valid
    st.just({"value": 42}),  # invalid type
    st.just({}),  # missing field
    words,  # not JSON at all
)
tool_calls = st.builds(
    lambda n, name, args: ToolCall(f"call-{n}", name, args),
    st.integers(0, 10_000),
    st.sampled_from(["echo", "boom", "missing"]),
    arguments,
)
blocks = st.lists(
    st.one_of(st.builds(TextContent, words), st.builds(ThinkingContent, words), tool_calls),
    max_size=4,
)
responses = st.lists(
    st.one_of(
        st.builds(lambda c: {"type": "success", "content": c}, blocks),
        st.just({"type": "failure", "error_message": "server fell over"}),
    ),
    min_size=1,
    max_size=5,
)


def unique_ids(script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool call ids are unique within a conversation, as real providers make them."""
    out, n = [], 0
    for response in script:
        if response["type"] == "success":
            content = []
            for block in response["content"]:
                if isinstance(block, ToolCall):
                    n += 1
                    block = ToolCall(f"call-{n}", block.name, block.arguments)
                content.append(block)
            response = {"type": "success", "content": content}
        out.append(response)
    return out


async def run_script(script: list[dict[str, Any]], abort_at: int | None) -> None:
    faux = create_faux_provider(unique_ids(script), chunk_size=3)
    agent = Agent(faux.provider, faux.model, TOOLS)
    events: list[AgentEvent] = []
    requests_at_abort: list[int] = []

    def listen(event: AgentEvent) -> None:
        events.append(event)
        if abort_at is not None and len(events) == abort_at:
            requests_at_abort.append(len(faux.requests))
            agent.abort()

    agent.subscribe(listen)
    final = await agent.prompt("go")
    check_invariants(events, final)
    if requests_at_abort:
        assert len(faux.requests) == requests_at_abort[0], "a request was made after the abort"
        assert final.stop_reason in ("aborted", "error", "stop", "length")


def check_invariants(events: list[AgentEvent], final: Any) -> None:
    types = [e.type for e in events]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert types.count("agent_start") == types.count("agent_end") == 1
    depth_turn = depth_message = 0
    ran: list[str] = []
    answered: list[str] = []
    checker: EventSequenceChecker | None = None
    for event in events:
        match event.type:
            case "turn_start" | "turn_end":
                depth_turn += 1 if event.type == "turn_start" else -1
                assert depth_turn in (0, 1)
            case "message_start":
                depth_message += 1
                assert depth_message == 1
                if event.message.role == "assistant":  # type: ignore[union-attr]
                    assert ran == answered, "a request before every tool call had its result"
                    checker = EventSequenceChecker()
            case "message_update":
                assert checker is not None
                checker.feed(event.event)  # type: ignore[union-attr]
            case "message_end":
                depth_message -= 1
                assert depth_message == 0
            case "tool_execution_start":
                ran.append(event.tool_call_id)  # type: ignore[union-attr]
            case "tool_execution_end":
                answered.append(event.tool_call_id)  # type: ignore[union-attr]
    assert depth_turn == 0 and depth_message == 0
    assert ran == answered
    added = events[-1].messages  # type: ignore[union-attr]
    assert added[-1] is final and final.role == "assistant"
    results = [m.tool_call_id for m in added if m.role == "tool_result"]
    assert results == answered and len(set(results)) == len(results)


@settings(max_examples=150)
@given(responses, st.one_of(st.none(), st.integers(1, 60)))
def test_loop_invariants_hold_for_any_script(script: list[dict[str, Any]], abort_at: int | None):
    asyncio.run(run_script(script, abort_at))
