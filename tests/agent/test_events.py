"""The exact AgentEvent sequences of the tool loop (docs/DESIGN.md), and the Agent around them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from di_code.agent import Agent, AgentEvent, FunctionTool, MessageUpdateEvent
from di_code.ai import AbortSignal, TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.transcript import FAILED_REPLY_NOTE, STOPPED_BEFORE_REPLY_NOTE
from di_code.ai.types import AssistantMessage, UserMessage
from tests.support.event_sequence import check_event_sequence

EMPTY = {"type": "object", "properties": {}}
FIRST_TOOL_TURN = [
        "agent_start", "turn_start", "message_start(user)", "message_end(user)",
        "message_start(assistant)", "message_update*", "message_end(assistant)",
        "tool_execution_start", "tool_execution_end",
        "message_start(tool_result)", "message_end(tool_result)", "turn_end",
    ]  # fmt: skip


async def ok(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
    return [TextContent("ok")]


def names(events: list[AgentEvent]) -> list[str]:
    """Event types, with the message role for message events and collapsed updates."""
    out: list[str] = []
    for event in events:
        name = event.type
        if event.type in ("message_start", "message_end"):
            name += f"({event.message.role})"  # type: ignore[union-attr]
        if name == "message_update" and out[-1] == "message_update*":
            continue
        out.append("message_update*" if name == "message_update" else name)
    return out


def recording_agent(responses: list[Any], **kwargs: Any) -> tuple[Agent, list[AgentEvent], Any]:
    faux = create_faux_provider(responses)
    agent = Agent(faux.provider, faux.model, [FunctionTool("ok", "Ok", EMPTY, ok)], **kwargs)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    return agent, events, faux


async def test_event_sequence_of_a_successful_tool_call() -> None:
    agent, events, _ = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {})]},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    await agent.prompt("go")
    assert names(events) == [
        *FIRST_TOOL_TURN,
        "turn_start", "message_start(assistant)", "message_update*", "message_end(assistant)",
        "turn_end", "agent_end",
    ]  # fmt: skip
    first_turn_end = next(e for e in events if e.type == "turn_end")
    assert [r.tool_call_id for r in first_turn_end.tool_results] == ["c1"]  # type: ignore[union-attr]
    assert events[-1].messages == agent.transcript  # type: ignore[union-attr]


async def test_event_sequence_of_a_text_only_prompt() -> None:
    agent, events, _ = recording_agent([{"type": "success", "content": [TextContent("hi")]}])
    await agent.prompt("hello")
    assert names(events) == [
        "agent_start", "turn_start", "message_start(user)", "message_end(user)",
        "message_start(assistant)", "message_update*", "message_end(assistant)",
        "turn_end", "agent_end",
    ]  # fmt: skip
    updates = [e.event.type for e in events if e.type == "message_update"]  # type: ignore[union-attr]
    assert updates[0] == "start" and updates[-1] == "done"


async def test_provider_failure_ends_the_prompt_with_that_message() -> None:
    agent, events, _ = recording_agent([{"type": "failure", "error_message": "HTTP 500: down"}])
    final = await agent.prompt("hello")
    assert final.stop_reason == "error"
    assert final.error_message == "HTTP 500: down"
    assert agent.transcript[-1] == final
    assert names(events)[-2:] == ["turn_end", "agent_end"]


async def test_empty_script_is_a_failure_not_an_exception() -> None:
    agent, _, _ = recording_agent([])
    final = await agent.prompt("hello")
    assert (final.stop_reason, final.error_message) == ("error", "No faux response scripted")


async def test_next_prompt_after_abort_sends_no_orphan_call_and_notes_the_cut_replies() -> None:
    agent, _, faux = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {}), ToolCall("c2", "ok", {})]},
            {"type": "failure", "error_message": "overloaded"},
            {"type": "success", "content": [TextContent("fine")]},
        ]
    )
    agent.subscribe(lambda e: agent.abort() if e.type == "tool_execution_end" else None)
    aborted = await agent.prompt("first")
    assert aborted.stop_reason == "aborted"
    failed = await agent.prompt("second")
    assert failed.stop_reason == "error"
    await agent.prompt("third")

    request = faux.requests[-1].messages
    calls = {c.id for m in request if m.role == "assistant" for c in m.tool_calls}  # type: ignore[union-attr]
    answered = {m.tool_call_id for m in request if m.role == "tool_result"}  # type: ignore[union-attr]
    assert calls == {"c1", "c2"} == answered
    assert all(m.stop_reason not in ("error", "aborted") for m in request if m.role == "assistant")  # type: ignore[union-attr]
    assert [m.role for m in request] == [
        "user", "assistant", "tool_result", "tool_result", "assistant", "user", "assistant", "user"
    ]  # fmt: skip
    notes = [m.text for m in request[4::2] if isinstance(m, AssistantMessage)]
    assert notes == [STOPPED_BEFORE_REPLY_NOTE, FAILED_REPLY_NOTE]  # stopped between the calls
    assert len(agent.transcript) == 8  # the failed and aborted messages stay in the transcript


async def test_steering_is_sent_with_the_next_request() -> None:
    agent, _, faux = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {})]},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )

    def steer_once(event: AgentEvent) -> None:
        if event.type == "tool_execution_start":
            agent.steer("also this")

    agent.subscribe(steer_once)
    await agent.prompt("go")
    second = faux.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool_result", "user"]
    assert second[-1].content == [TextContent("also this")]


async def test_follow_up_starts_a_new_turn_after_the_agent_would_stop() -> None:
    agent, events, faux = recording_agent(
        [
            {"type": "success", "content": [TextContent("one")]},
            {"type": "success", "content": [TextContent("two")]},
        ]
    )
    agent.follow_up("and then?")
    final = await agent.prompt("first")
    assert final.content == [TextContent("two")]
    assert [m.role for m in faux.requests[1].messages] == ["user", "assistant", "user"]
    assert names(events).count("agent_start") == 1
    assert names(events).count("turn_start") == 2


async def test_max_turns_ends_with_an_error_message() -> None:
    call = {"type": "success", "content": [ToolCall("c", "ok", {})]}
    agent, _, faux = recording_agent([call, call, call], max_turns=2)
    final = await agent.prompt("loop")
    assert (final.stop_reason, final.error_message) == ("error", "Turn limit reached (2)")
    assert faux.pending_responses() == 1


async def test_at_the_limit_the_question_allows_as_many_requests_again() -> None:
    call = {"type": "success", "content": [ToolCall("c", "ok", {})]}
    agent, _, faux = recording_agent([call] * 6, max_turns=2)
    asked: list[tuple[int, int]] = []

    async def go_on_once(made: int, limit: int) -> bool:
        asked.append((made, limit))
        return len(asked) == 1

    agent.more_turns = go_on_once
    final = await agent.prompt("loop")
    assert (final.stop_reason, final.error_message) == ("error", "Turn limit reached (2)")
    assert faux.pending_responses() == 2
    assert asked == [(2, 2), (4, 2)]  # the second time: every request of the prompt so far


async def test_an_abort_while_the_limit_question_is_open_ends_aborted() -> None:
    call = {"type": "success", "content": [ToolCall("c", "ok", {})]}
    agent, _, faux = recording_agent([call] * 3, max_turns=1)

    async def abort_then_no(made: int, limit: int) -> bool:
        agent.abort()
        return False

    agent.more_turns = abort_then_no
    final = await agent.prompt("loop")
    assert final.stop_reason == "aborted"
    assert faux.pending_responses() == 2


async def test_prompt_while_running_is_misuse() -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
        started.set()
        await release.wait()
        return [TextContent("slow")]

    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c", "slow", {})]},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    agent = Agent(faux.provider, faux.model, [FunctionTool("slow", "Slow", EMPTY, slow)])
    running = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    assert agent.is_streaming
    with pytest.raises(RuntimeError, match=r"Agent is already processing a prompt\."):
        await agent.prompt("again")
    release.set()
    await running
    assert not agent.is_streaming


async def test_empty_prompt_is_refused() -> None:
    agent, _, _ = recording_agent([])
    with pytest.raises(ValueError, match="Prompt is empty"):
        await agent.prompt("")


async def test_listeners_async_and_failing() -> None:
    agent, events, _ = recording_agent([{"type": "success", "content": [TextContent("hi")]}])
    seen: list[str] = []

    async def async_listener(event: AgentEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event.type)

    def failing(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    agent.subscribe(failing)
    unsubscribe = agent.subscribe(async_listener)
    final = await agent.prompt("hello")
    assert final.stop_reason == "stop"
    assert seen == [e.type for e in events]
    unsubscribe()
    agent.replace_transcript([])
    assert agent.transcript == []


async def test_agent_copies_its_tools() -> None:
    faux = create_faux_provider([])
    tools = [FunctionTool("ok", "Ok", EMPTY, ok)]
    agent = Agent(faux.provider, faux.model, tools)
    tools.clear()
    assert [t.name for t in agent.tools] == ["ok"]


async def test_abort_as_a_tool_batch_starts_reports_the_first_call_as_the_article_does() -> None:
    agent, events, faux = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {}), ToolCall("c2", "ok", {})]},
            {"type": "success", "content": [TextContent("never requested")]},
        ]
    )
    agent.subscribe(
        lambda e: (
            agent.abort() if e.type == "message_end" and e.message.role == "assistant" else None
        )  # type: ignore[union-attr]
    )
    final = await agent.prompt("go")

    assert names(events) == [
        *FIRST_TOOL_TURN,  # the article: the first call is reported, as aborted
        "turn_start", "message_start(assistant)", "message_end(assistant)", "turn_end",
        "agent_end",
    ]  # fmt: skip
    end = next(e for e in events if e.type == "tool_execution_end")
    assert (end.tool_call_id, end.result.is_error, end.result.text) == (  # type: ignore[union-attr]
        "c1", True, "Not run: the user interrupted before this tool call started."
    )  # fmt: skip
    assert (final.stop_reason, final.error_message) == ("aborted", "Tool loop aborted")
    assert faux.pending_responses() == 1
    check_event_sequence(e.event for e in events if isinstance(e, MessageUpdateEvent))


async def test_transcript_copies_are_independent_of_the_history() -> None:
    agent, _, _ = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {"a": [1]})]},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    await agent.prompt("go")
    copy = agent.transcript
    copy[0].content.append(TextContent("injected"))
    copy[1].content[0].arguments["a"].append(2)  # type: ignore[union-attr]
    copy[2].content.clear()
    again = agent.transcript
    assert again[0].content == [TextContent("go")]
    assert again[1].content[0].arguments == {"a": [1]}  # type: ignore[union-attr]
    assert again[2].content == [TextContent("ok")]


async def test_notices_go_with_the_next_request_once() -> None:
    """A background job that ended is told to the model with its next request (before the
    prompt, or after the tool results it came during), and only once."""
    agent, _, faux = recording_agent(
        [
            {"type": "success", "content": [ToolCall("c1", "ok", {})]},
            {"type": "success", "content": [TextContent("done")]},
            {"type": "success", "content": [TextContent("again")]},
        ]
    )
    pending = ["[job 1 exited with code 1]"]

    def take() -> list[UserMessage]:
        taken = [UserMessage.of(text) for text in pending]
        pending.clear()
        return taken

    agent.notices = take

    def end_a_job(event: AgentEvent) -> None:
        if event.type == "tool_execution_start":
            pending.append("[job 2 exited with code 0]")

    agent.subscribe(end_a_job)
    await agent.prompt("go")
    first, second = faux.requests[0].messages, faux.requests[1].messages
    assert [m.content for m in first] == [
        [TextContent("[job 1 exited with code 1]")],
        [TextContent("go")],
    ]
    assert second[-1].content == [TextContent("[job 2 exited with code 0]")]
    await agent.prompt("more")
    told = [m for m in faux.requests[2].messages if m.role == "user"]
    assert [m.content[0] for m in told].count(TextContent("[job 2 exited with code 0]")) == 1
