"""`di-code acp` driven end to end by the ACP SDK's own client (`spawn_agent_process`), against
the loopback model server: tool calls and diffs, permissions through the client, cancel, load,
two sessions in one process, and a broken client."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402
from acp.schema import (  # noqa: E402
    AgentPlanUpdate,
    ClientCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    McpServerStdio,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process  # noqa: E402

from di_code.acp.stdio import STDIO_LIMIT  # noqa: E402
from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import (  # noqa: E402
    TIMEOUT,
    EditorClient,
    RecordingClient,
    prompt,
    raw_acp,
)
from tests.support.imports import CLI_MAIN  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402
from tests.support.processes import alive, group_sleeper, sleeper_started, until  # noqa: E402


def edit_then_answer(path: str, old: str, new: str, answer: str) -> tuple[Turn, Turn]:
    call = ToolCallSpec("edit", {"path": path, "edits": [{"old_text": old, "new_text": new}]})
    return Turn(tool_calls=(call,)), Turn(text=answer)


async def test_initialize_says_who_and_what(llm_server: LLMServer, di_code_home: Path) -> None:
    client = RecordingClient()
    env = cli_env(di_code_home, llm_server)
    async with spawn_agent_process(client, DI_CODE, "acp", env=env) as (conn, _process):
        reply = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 10)
    assert reply.protocol_version == PROTOCOL_VERSION
    assert reply.agent_info.name == "di-code"
    assert reply.agent_capabilities.load_session is True
    assert reply.agent_capabilities.prompt_capabilities.image is True
    assert reply.agent_capabilities.prompt_capabilities.embedded_context is True


async def test_an_edit_shows_its_tool_call_a_diff_and_the_answer(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    llm_server.script(*edit_then_answer("notes.txt", "beta", "gamma", "Changed it."))
    client = RecordingClient("allow_once")
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert {m.id for m in session.modes.available_modes} >= {"ask", "auto", "read-only"}

    reply = await prompt(conn, session.session_id, "change beta")
    assert reply.stop_reason == "end_turn"
    [start] = client.of(ToolCallStart)
    assert start.kind == "edit" and start.locations[0].path == str(workspace / "notes.txt")
    [(asked_call, options)] = client.asked
    assert asked_call.tool_call_id == start.tool_call_id
    assert options == ["allow_once", "allow_always", "reject_once"]
    [done] = [u for u in client.of(ToolCallProgress) if u.status == "completed"]
    [diff] = [c for c in done.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == ("alpha\nbeta\n", "alpha\ngamma\n")
    assert client.said() == "Changed it."
    assert (workspace / "notes.txt").read_text() == "alpha\ngamma\n"


async def test_a_rejected_permission_leaves_the_file_and_tells_the_model(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("beta\n")
    llm_server.script(*edit_then_answer("notes.txt", "beta", "gamma", "Understood."))
    client = RecordingClient("reject_once")
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "change beta")
    assert (workspace / "notes.txt").read_text() == "beta\n"
    [failed] = [u for u in client.of(ToolCallProgress) if u.status == "failed"]
    assert "declined" in failed.content[0].content.text
    tool_result = llm_server.requests[1].body["messages"][-1]
    assert tool_result["role"] == "tool" and "declined" in json.dumps(tool_result)


async def test_allow_always_grants_the_rest_of_the_session(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    llm_server.script(
        *edit_then_answer("a.txt", "one", "two", "first"),
        *edit_then_answer("a.txt", "two", "three", "second"),
    )
    client = RecordingClient("allow_always")
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "first")
    await prompt(conn, session.session_id, "second")
    assert len(client.asked) == 1  # the grant covered the second edit of the same file
    assert (workspace / "a.txt").read_text() == "three\n"


async def test_cancel_mid_bash_kills_the_command_and_ends_cancelled(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    pid_file = workspace / "sleep.pid"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": group_sleeper(pid_file)}),))
    )
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "sleep"))
    sleep_pid = await sleeper_started(pid_file)
    await conn.cancel(session_id=session.session_id)
    reply = await running
    assert reply.stop_reason == "cancelled"
    await until(lambda: not alive(sleep_pid), "the cancelled command's group to end")
    # the context stays valid: the next prompt is answered
    llm_server.script(Turn(text="still here"))
    assert (await prompt(conn, session.session_id, "hello")).stop_reason == "end_turn"
    assert client.said() == "still here"
    sent = llm_server.requests[-1].body["messages"]
    [tool_result] = [m for m in sent if m["role"] == "tool"]  # the cancelled call's result
    assert tool_result["content"].startswith("Interrupted by the user.")
    roles = [m["role"] for m in sent]
    assert ("user", "user") not in list(itertools.pairwise(roles))


async def test_load_replays_a_stored_session_and_goes_on_with_it(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="The answer is 42."))
    first = RecordingClient()
    conn = await agent(first)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "what is the answer?")
    await conn.close_session(session_id=session.session_id)  # one writer: the first is done

    second = RecordingClient()
    conn2 = await agent(second)
    await conn2.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    replayed = [u.content.text for u in second.of(UserMessageChunk)]
    assert replayed == ["what is the answer?"]
    assert second.said() == "The answer is 42."
    llm_server.script(Turn(text="yes"))
    await prompt(conn2, session.session_id, "sure?")
    sent = json.dumps(llm_server.requests[-1].body["messages"])
    assert "what is the answer?" in sent and "The answer is 42." in sent


async def test_two_sessions_in_one_process_do_not_mix(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    llm_server.script(Turn(text="for one"), Turn(text="for two"))
    client = RecordingClient()
    conn = await agent(client)
    one = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    two = await conn.new_session(cwd=str(other), mcp_servers=[])
    assert one.session_id != two.session_id
    await prompt(conn, one.session_id, "first question")
    await prompt(conn, two.session_id, "second question")
    assert client.said(one.session_id) == "for one"
    assert client.said(two.session_id) == "for two"
    second_request = json.dumps(llm_server.requests[1].body["messages"])
    assert "first question" not in second_request


async def test_a_provider_failure_ends_the_turn_with_a_message(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient()
    conn = await agent(client)  # nothing scripted: the server answers 400
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await prompt(conn, session.session_id, "hello")
    assert reply.stop_reason == "end_turn"
    assert client.said().startswith("di-code: ") and "no scripted reply" in client.said()
    llm_server.script(Turn(text="recovered"))
    await prompt(conn, session.session_id, "again")
    assert "recovered" in client.said()


PARSE_ERROR = {"code": -32700, "message": "Parse error"}  # JSON-RPC 2.0 for a line not JSON


async def test_bad_json_and_unknown_methods_get_errors_and_closing_stdin_ends_it(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    process = await raw_acp(di_code_home, llm_server, workspace)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"{not json\n")
    process.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"no/such","params":{}}\n')
    await process.stdin.drain()
    replies = [json.loads(await asyncio.wait_for(process.stdout.readline(), TIMEOUT))]
    while replies[-1].get("id") != 7:
        replies.append(json.loads(await asyncio.wait_for(process.stdout.readline(), TIMEOUT)))
    assert replies[0] == {"jsonrpc": "2.0", "id": None, "error": PARSE_ERROR}
    assert replies[-1]["error"]["code"] == -32601  # method not found
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_a_message_over_the_line_limit_ends_the_stream_with_one_line(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    process = await raw_acp(di_code_home, llm_server, workspace)
    assert process.stdin is not None
    piece = b"a" * 2**20  # the 50 MB line goes out a piece at a time: the test's loop goes on
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it stopped reading
        process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"x","params":"')
        for _ in range(STDIO_LIMIT // len(piece) + 1):
            process.stdin.write(piece)
            await process.stdin.drain()
        process.stdin.write(b'"}\n')
    _, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert process.returncode == 0
    assert err.decode().strip().splitlines()[-1] == (
        "di-code acp: a message over 50 MB; stopped reading"
    )


async def test_a_client_with_fs_serves_the_reads_and_writes(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved text\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    buffers = {str(notes): "unsaved text\n"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "notes.txt"}),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": "../secret.txt"}),)),
        *edit_then_answer("notes.txt", "unsaved", "edited", "done"),
    )
    client = EditorClient(buffers)
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    conn = await agent(client, "--permission-mode", "auto", capabilities=ClientCapabilities(fs=fs))
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "read and edit notes")

    first_result = llm_server.requests[1].body["messages"][-1]["content"]
    assert "unsaved text" in first_result  # the editor's buffer, not the disk
    second_result = llm_server.requests[2].body["messages"][-1]["content"]
    assert "outside the workspace" in second_result  # confined before the editor is asked
    assert buffers[str(notes)] == "edited text\n"
    assert notes.read_text() == "saved text\n"  # the disk is the editor's to save
    assert all(path == str(notes) for _, path in client.served)
    [done] = [
        u
        for u in client.of(ToolCallProgress)
        if u.status == "completed" and u.content and any(c.type == "diff" for c in u.content)
    ]
    [diff] = [c for c in done.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == ("unsaved text\n", "edited text\n")


async def test_mcp_servers_the_editor_passes_start_and_their_tools_run(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    root = Path(__file__).resolve().parents[2]
    server = McpServerStdio(
        name="fx",
        command=sys.executable,
        args=["-m", "tests.support.mcp_fixture_server", "stdio"],
        env=[
            EnvVariable(name="PYTHONPATH", value=str(root)),
            EnvVariable(name="MCP_FIXTURE_DIR", value=str(tmp_path)),
        ],
    )
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("mcp__fx__add", {"a": 2, "b": 40}),)), Turn(text="42")
    )
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
    await prompt(conn, session.session_id, "add")
    offered = {t["function"]["name"] for t in llm_server.requests[0].body["tools"]}
    assert "mcp__fx__add" in offered
    assert llm_server.requests[1].body["messages"][-1]["content"] == "42"


async def test_the_todo_plan_is_sent_as_an_acp_plan(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    steps = [
        {"content": "look", "status": "done"},
        {"content": "fix", "status": "in_progress"},
    ]
    llm_server.script(Turn(tool_calls=(ToolCallSpec("todo", {"todos": steps}),)), Turn(text="ok"))
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "plan it")
    [plan] = client.of(AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [
        ("look", "completed"),
        ("fix", "in_progress"),
    ]


async def test_a_task_shows_as_a_tool_call_and_a_refused_prompt_is_a_refusal(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path, tmp_path: Path
) -> None:
    guard = tmp_path / "guard.sh"
    guard.write_text('case "$(cat)" in *secret*) echo "no secrets" >&2; exit 2;; esac\n')
    (di_code_home / "config.toml").write_text(
        f'[[hooks.UserPromptSubmit]]\nhooks = [{{ type = "command", command = "bash {guard}" }}]\n'
    )
    job = {"description": "find the entry point", "prompt": "find main"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", job, "t1"),)),
        Turn(text="main is in app.py"),
        Turn(text="found it"),
    )
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    done = await prompt(conn, session.session_id, "where is main?")
    assert done.stop_reason == "end_turn"
    [start] = [u for u in client.of(ToolCallStart) if u.tool_call_id == "t1"]
    assert (start.kind, start.title) == ("think", "task: find the entry point")
    refused = await prompt(conn, session.session_id, "my secret is 42")
    assert refused.stop_reason == "refusal"
    assert "no secrets" in client.said(session.session_id)
    assert len(llm_server.requests) == 3  # the refused prompt was never sent


async def test_a_task_shows_its_subagents_calls_under_it_as_they_run(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("def main(): ...\n")
    job = {"description": "find the entry point", "prompt": "find main"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", job, "t1"),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": "app.py"}, "r1"),)),
        Turn(text="main is in app.py"),
        Turn(text="found it"),
    )
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "where is main?")
    progress = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "t1"]
    shown = [" ".join(c.content.text for c in u.content or []) for u in progress]
    running = [text for u, text in zip(progress, shown, strict=True) if u.status != "completed"]
    assert any('read {"path": "app.py"}' in text for text in running), shown
    assert shown[-1] == "main is in app.py"  # the answer, once the task is done
    assert not any(u.tool_call_id == "r1" for u in client.of(ToolCallStart))  # nested, not top


NEEDS_SDK = "di-code: di-code acp needs the Agent Client Protocol SDK: pip install 'di-code[acp]'\n"


def test_without_the_sdk_acp_says_how_to_install_it(
    llm_server: LLMServer, di_code_home: Path
) -> None:
    """`sys.modules["acp"] = None` is how Python marks a module as not installed."""
    no_sdk = "import sys; sys.modules['acp'] = None\n" + CLI_MAIN
    env = cli_env(di_code_home, llm_server)
    done = subprocess.run(
        [sys.executable, "-c", no_sdk, "acp"],
        env=env, input="", capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (2, NEEDS_SDK, "")


def test_an_sdk_that_cannot_be_imported_is_said_at_the_first_request_that_needs_it(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """`initialize` is answered before the SDK is imported (test_acp_hello.py). The editor
    keeps stdin open, as an editor does: closing it would end the process before the import
    ends (tests/hostile/test_hostile_acp.py)."""
    shadow = tmp_path / "shadow" / "acp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('a broken SDK')\n")
    env = cli_env(di_code_home, llm_server, PYTHONPATH=str(shadow.parent))
    lines = [
        {"id": 0, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}},
        {"id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]
    given = "".join(json.dumps({"jsonrpc": "2.0", **line}) + "\n" for line in lines)
    process = subprocess.Popen(
        [DI_CODE, "acp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write(given)
    process.stdin.flush()
    try:
        code = process.wait(TIMEOUT)
    finally:
        process.stdin.close()
    stdout, stderr = process.stdout.read(), process.stderr.read()
    assert (code, stderr) == (2, NEEDS_SDK)
    [answer] = [json.loads(line) for line in stdout.splitlines()]
    assert answer["id"] == 0 and answer["result"]["agentInfo"]["name"] == "di-code"


async def test_the_commands_are_offered_after_the_answer_to_session_new(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        DI_CODE, "acp", env=cli_env(di_code_home, llm_server), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    requests = [
        {"id": 0, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}},
        {"id": 1, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    for request in requests:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", **request}).encode() + b"\n")
    seen: list[str] = []
    while "session/update" not in seen:
        message = json.loads(await asyncio.wait_for(process.stdout.readline(), TIMEOUT))
        seen.append(message.get("method") or f"answer {message['id']}")
    assert seen == ["answer 0", "answer 1", "session/update"]  # JetBrains' client needs it so
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
