"""What the model is told after the user interrupts, read from the request body the loopback
server receives, in each of the four wire formats: a reply aborted mid-stream goes back as its
text so far and a note (never two user turns in a row), and an interrupted command's result
says the user interrupted it and shows its output so far."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import Agent, AgentEvent, MessageUpdateEvent, ToolExecutionUpdateEvent
from di_code.ai.events import TextDeltaEvent
from di_code.ai.providers.http import HttpProvider
from di_code.ai.transcript import INTERRUPTED_REPLY_NOTE, STOPPED_BEFORE_REPLY_NOTE
from di_code.tools import default_tools
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.streams import model_for, provider_for

KINDS = ["openai", "anthropic", "responses", "gemini"]
FIRST_TEXT = {"openai": 2, "anthropic": 4, "responses": 4, "gemini": 1}
"""Events a Turn sends up to and including its first text delta."""
AFTER_INTERRUPTED_CALL = {
    "openai": ["user", "assistant", "tool", "assistant", "user"],
    "anthropic": ["user", "assistant", "user", "assistant", "user"],
    "responses": ["user", "function_call", "function_call_output", "assistant", "user"],
    "gemini": ["user", "model", "user", "model", "user"],
}
"""The prompt, the call, its result, the note that the user stopped the turn, the next prompt."""


@pytest.fixture(params=KINDS)
async def kind_and_provider(
    request: pytest.FixtureRequest, llm_server: LLMServer
) -> AsyncIterator[tuple[str, HttpProvider]]:
    provider = provider_for(request.param, llm_server)
    yield request.param, provider
    await provider.aclose()


def roles(kind: str, body: dict[str, Any]) -> list[str]:
    """Who speaks in each turn of the request, in the wire format's own words."""
    if kind == "openai":
        return [m["role"] for m in body["messages"] if m["role"] != "system"]
    if kind == "anthropic":
        return [m["role"] for m in body["messages"]]
    if kind == "responses":
        return [item.get("role") or item["type"] for item in body["input"]]
    return [content["role"] for content in body["contents"]]


def last_body(server: LLMServer) -> dict[str, Any]:
    body = server.requests[-1].body
    assert isinstance(body, dict)
    return body


async def test_an_aborted_reply_goes_back_as_its_text_and_a_note(
    kind_and_provider: tuple[str, HttpProvider], llm_server: LLMServer
) -> None:
    kind, provider = kind_and_provider
    llm_server.script(
        Turn(
            text="Half of the answer", chunk_size=100, fault="stall", fault_after=FIRST_TEXT[kind]
        ),
        Turn(text="Whole."),
    )
    agent = Agent(provider, model_for(kind), [])

    def abort_on_text(event: AgentEvent) -> None:
        if isinstance(event, MessageUpdateEvent) and isinstance(event.event, TextDeltaEvent):
            agent.abort()

    unsubscribe = agent.subscribe(abort_on_text)
    assert (await agent.prompt("first")).stop_reason == "aborted"
    unsubscribe()
    assert (await agent.prompt("second")).stop_reason == "stop"

    body = last_body(llm_server)
    model_role = "model" if kind == "gemini" else "assistant"
    assert roles(kind, body) == ["user", model_role, "user"]
    assert f"Half of the answer\\n\\n{INTERRUPTED_REPLY_NOTE}" in json.dumps(body)


async def test_an_interrupted_command_says_so_with_its_output_so_far(
    kind_and_provider: tuple[str, HttpProvider], llm_server: LLMServer, tmp_path: Path
) -> None:
    kind, provider = kind_and_provider
    command = "echo started-here; sleep 100"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "call_1"),)),
        Turn(text="Understood."),
    )
    agent = Agent(provider, model_for(kind), default_tools(tmp_path))

    def abort_on_output(event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionUpdateEvent):
            agent.abort()

    unsubscribe = agent.subscribe(abort_on_output)
    assert (await agent.prompt("run it")).stop_reason == "aborted"
    unsubscribe()
    await agent.prompt("why did it stop?")

    assert len(llm_server.requests) == 2
    body = json.dumps(last_body(llm_server))
    assert "Interrupted by the user.\\nOutput so far:\\nstarted-here\\n" in body
    assert "Tool execution aborted." not in body
    assert roles(kind, last_body(llm_server)) == AFTER_INTERRUPTED_CALL[kind]
    # the model's reply was whole (the call); what the user stopped was the work after it
    assert STOPPED_BEFORE_REPLY_NOTE in body and INTERRUPTED_REPLY_NOTE not in body
