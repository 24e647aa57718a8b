"""bash in the editor's terminal: a client that advertises `terminal` runs each command di-code
decides to run (asked, denied, sandboxed, timed and cut as always) as a real process of its
own, embedded in the tool call; cancel kills it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import ClientCapabilities, ToolCallProgress, ToolCallStart  # noqa: E402

from tests.cli.conftest import API_KEY  # noqa: E402
from tests.support.acp_editor import TerminalClient, prompt  # noqa: E402
from tests.support.bubblewrap import needs_bubblewrap  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402

TERMINAL = ClientCapabilities(terminal=True)


def bash_then_answer(command: str, **more: Any) -> tuple[Turn, Turn]:
    call = ToolCallSpec("bash", {"command": command, **more})
    return Turn(tool_calls=(call,)), Turn(text="done")


def tool_result(llm_server: LLMServer) -> str:
    sent = llm_server.requests[1].body["messages"][-1]
    assert sent["role"] == "tool"
    content: str = sent["content"]
    return content


def terminals_shown(client: TerminalClient) -> list[str]:
    return [
        c.terminal_id
        for u in client.of(ToolCallProgress)
        for c in u.content or []
        if c.type == "terminal"
    ]


async def terminal_editor(
    agent: Any, editor_env: dict[str, str], workspace: Path
) -> tuple[TerminalClient, Any, Any]:
    """An editor that runs commands in its own terminals, connected to `di-code acp` in auto
    mode without a sandbox, and a new session in `workspace`."""
    client = TerminalClient(editor_env)
    conn = await agent(
        client, "--permission-mode", "auto", "--sandbox", "off", capabilities=TERMINAL
    )
    return client, conn, await conn.new_session(cwd=str(workspace), mcp_servers=[])


async def test_bash_runs_in_the_editors_terminal_after_asking(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(*bash_then_answer('pwd; echo "key=[$OPENAI_API_KEY]"; exit 3'))
    client = TerminalClient(editor_env)
    conn = await agent(
        client, "--permission-mode", "ask", "--sandbox", "off", capabilities=TERMINAL
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert (await prompt(conn, session.session_id, "run it")).stop_reason == "end_turn"

    [start] = client.of(ToolCallStart)
    call = start.tool_call_id
    assert client.log == [
        ("ask", call),
        ("create", "term-1"),
        ("exited", "term-1"),
        ("output", "term-1"),
        ("release", "term-1"),
    ]
    [terminal] = client.terminals.values()
    assert terminal.cwd == str(workspace)
    assert terminal.command[-1].endswith("exit 3")  # di-code's own command line: bash -c ...
    assert editor_env["OPENAI_API_KEY"] == API_KEY  # the editor has the key; the command not
    result = tool_result(llm_server)
    assert f"{workspace}\nkey=[]" in result
    assert API_KEY not in result
    assert result.endswith("Command exited with code 3")
    # the terminal is shown while the command runs and stays in the call when it ends
    [*_, done] = [u for u in client.of(ToolCallProgress) if u.tool_call_id == call]
    assert done.status == "failed"
    assert [c.type for c in done.content] == ["terminal"]
    assert terminals_shown(client) == ["term-1", "term-1"]


async def test_a_denied_or_rejected_command_never_reaches_the_terminal(
    agent: Any,
    llm_server: LLMServer,
    workspace: Path,
    editor_env: dict[str, str],
    di_code_home: Path,
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["bash:touch"]\n')
    llm_server.script(
        *bash_then_answer(f"touch {workspace / 'denied'}"),
        *bash_then_answer(f"echo > {workspace / 'rejected'}"),
    )
    client = TerminalClient(editor_env, answer="reject_once")
    conn = await agent(
        client, "--permission-mode", "ask", "--sandbox", "off", capabilities=TERMINAL
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "touch")
    await prompt(conn, session.session_id, "echo")
    assert client.terminals == {}
    assert "deny rule" in tool_result(llm_server)
    assert "declined" in llm_server.requests[3].body["messages"][-1]["content"]
    assert len(client.asked) == 1  # the denied one was not even asked
    assert not (workspace / "denied").exists() and not (workspace / "rejected").exists()


async def test_the_timeout_kills_the_terminal_and_long_output_is_cut(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(*bash_then_answer("seq 1 3000; sleep 30", timeout=2))
    client, conn, session = await terminal_editor(agent, editor_env, workspace)
    await prompt(conn, session.session_id, "count")
    assert ("kill", "term-1") in client.log
    assert client.terminals["term-1"].process.returncode is not None
    result = tool_result(llm_server)
    assert result.startswith("1001\n1002\n")  # the last 2000 lines, as di-code's own bash
    assert "[Showing lines 1001-3000 of 3000. Full output: " in result
    spill = result.split("Full output: ")[1].split("]")[0]
    assert Path(spill).read_text().splitlines()[:2] == ["1", "2"]
    assert result.endswith("Command timed out after 2 seconds; the editor's terminal was killed")


async def test_a_command_that_dies_of_a_signal_says_which(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(*bash_then_answer("echo before; kill -TERM $$"))
    _, conn, session = await terminal_editor(agent, editor_env, workspace)
    await prompt(conn, session.session_id, "die")
    assert tool_result(llm_server) == "before\n\nCommand killed by signal SIGTERM"


async def test_output_the_editor_dropped_is_said(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(*bash_then_answer("yes 0123456789 | head -c 1500000; echo last-line"))
    client, conn, session = await terminal_editor(agent, editor_env, workspace)
    await prompt(conn, session.session_id, "flood")
    [terminal] = client.terminals.values()
    assert terminal.limit == 1024 * 1024 and terminal.truncated  # asked of the editor
    result = tool_result(llm_server)
    assert "last-line\n\n[The editor's terminal kept only the end of the output" in result
    assert "Full output: " in result  # the end it kept, cut to 50 KB for the model


async def test_cancel_kills_the_terminal_command_and_ends_cancelled(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    marker = workspace / "finished"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"sleep 20; touch {marker}"}),))
    )
    client, conn, session = await terminal_editor(agent, editor_env, workspace)
    running = asyncio.create_task(prompt(conn, session.session_id, "sleep"))
    for _ in range(400):
        if ("create", "term-1") in client.log:
            break
        await asyncio.sleep(0.05)
    await conn.cancel(session_id=session.session_id)
    assert (await running).stop_reason == "cancelled"
    assert client.log[1:] == [
        ("kill", "term-1"),
        ("exited", "term-1"),
        ("output", "term-1"),
        ("release", "term-1"),
    ]
    assert client.terminals["term-1"].process.returncode is not None
    assert not marker.exists()
    llm_server.script(Turn(text="still here"))
    assert (await prompt(conn, session.session_id, "hello")).stop_reason == "end_turn"
    sent = llm_server.requests[-1].body["messages"]
    [result] = [m for m in sent if m["role"] == "tool"]
    assert result["content"].startswith("Interrupted by the user.")


@needs_bubblewrap
async def test_the_editor_runs_the_sandboxed_command_line(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(*bash_then_answer("touch made; echo tmp=$TMPDIR"))
    client = TerminalClient(editor_env)
    args = ("--permission-mode", "auto", "--sandbox", "read-only")
    conn = await agent(client, *args, capabilities=TERMINAL)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "touch")
    [terminal] = client.terminals.values()
    assert any(Path(part).name == "bwrap" for part in terminal.command)
    assert not (workspace / "made").exists()
    result = tool_result(llm_server)
    assert "Read-only file system" in result and "tmp=/tmp" in result
