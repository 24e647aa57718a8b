"""Every tool inside the real agent loop, driven by the faux provider: the assertions are on
the tool result the model is sent with its next request."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import Agent, AgentEvent, ToolExecutionUpdateEvent
from di_code.ai import TextContent, ToolCall, ToolResultMessage
from di_code.ai.codec import to_dict
from di_code.ai.providers.faux import create_faux_provider
from di_code.session.jsonl import encode
from di_code.tools import default_tools
from tests.support.processes import alive


async def model_sees(
    workspace: Path, name: str, arguments: dict[str, Any]
) -> tuple[ToolResultMessage, list[AgentEvent]]:
    """Run one scripted tool call; return the result as sent to the model, and the events."""
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("call-1", name, arguments)]},
            {"type": "success", "content": [TextContent("done")]},
        ]
    )
    agent = Agent(faux.provider, faux.model, default_tools(workspace))
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    final = await agent.prompt("go")
    assert final.content == [TextContent("done")]
    sent = faux.requests[1].messages[-1]
    assert isinstance(sent, ToolResultMessage)
    return sent, events


def only_text(message: ToolResultMessage) -> str:
    assert len(message.content) == 1 and isinstance(message.content[0], TextContent)
    return message.content[0].text


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("read", {"path": "hello.txt"}, "     1\thi there"),
        ("write", {"path": "o/n.txt", "content": "abc"}, "Successfully wrote 3 bytes to o/n.txt"),
        (
            "edit",
            {"path": "hello.txt", "edits": [{"old_text": "hi", "new_text": "oh"}]},
            "Successfully applied 1 edit to hello.txt",
        ),
        ("bash", {"command": "cat hello.txt"}, "hi there"),
        ("grep", {"pattern": "there"}, "hello.txt:1: hi there"),
        ("find", {"pattern": "*.txt"}, "hello.txt"),
        ("ls", {}, "hello.txt"),
    ],
)
async def test_each_tool_in_the_loop(
    workspace: Path, name: str, arguments: dict[str, Any], expected: str
) -> None:
    (workspace / "hello.txt").write_text("hi there\n")
    sent, _ = await model_sees(workspace, name, arguments)
    assert (sent.tool_name, only_text(sent), sent.is_error) == (name, expected, False)


async def test_a_tool_error_reaches_the_model_as_one_line(workspace: Path) -> None:
    sent, _ = await model_sees(workspace, "read", {"path": "/etc/passwd"})
    assert only_text(sent) == 'Tool "read" failed: Path is outside the workspace: /etc/passwd'
    assert sent.is_error


async def test_a_failing_command_keeps_its_output(workspace: Path) -> None:
    sent, _ = await model_sees(workspace, "bash", {"command": "echo partial; exit 4"})
    assert only_text(sent) == "partial\n\nCommand exited with code 4"
    assert sent.is_error
    assert sent.details == {"exit_code": 4, "full_output_path": None, "truncated": False}


async def test_bash_output_streams_as_tool_execution_updates(workspace: Path) -> None:
    _, events = await model_sees(workspace, "bash", {"command": "echo streamed"})
    updates = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert updates and updates[0].partial_result.content == [TextContent("streamed")]


async def test_edit_diff_travels_in_details(workspace: Path) -> None:
    (workspace / "f.txt").write_text("a\n")
    sent, _ = await model_sees(
        workspace, "edit", {"path": "f.txt", "old_text": "a", "new_text": "b"}
    )
    assert sent.details == {
        "path": "f.txt",
        "diff": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b",
    }


async def test_aborting_the_agent_stops_a_running_command(workspace: Path) -> None:
    faux = create_faux_provider(
        [
            {
                "type": "success",
                "content": [ToolCall("c1", "bash", {"command": "echo $$; sleep 100"})],
            }
        ]
    )
    agent = Agent(faux.provider, faux.model, default_tools(workspace))

    pids: list[int] = []

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionUpdateEvent):
            pids.append(int(event.partial_result.text))
            agent.abort()

    agent.subscribe(on_event)
    final = await agent.prompt("go")
    assert (final.stop_reason, final.error_message) == ("aborted", "Tool loop aborted")
    result = agent.transcript[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    said = only_text(result)
    assert said.startswith(f"Interrupted by the user.\nOutput so far:\n{pids[0]}\n")
    assert said.endswith("Command aborted; process group stopped (SIGTERM)")
    assert pids and not alive(pids[0])


@pytest.mark.parametrize("name, arguments", [("ls", {}), ("find", {"pattern": "*"})])
async def test_a_name_that_is_not_utf8_reaches_the_model_and_the_session_file(
    workspace: Path, name: str, arguments: dict[str, Any]
) -> None:
    with open(os.fsencode(workspace) + b"/caf\xe9.txt", "wb"):
        pass
    sent, _ = await model_sees(workspace, name, arguments)
    assert only_text(sent) == "caf\\xe9.txt"
    assert b'"caf\\\\xe9.txt"' in encode(to_dict(sent))  # as the session file writes it
