"""ACP's way in as an attacker tries it, over real pipes: a session has one id (a prefix is refused
before anything is opened, a session opens once), one folder (a load with another `cwd` is
refused), and any line of JSON that is not a JSON-RPC object gets `Invalid Request` while the
agent stays up."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402
from acp.schema import UserMessageChunk  # noqa: E402

from di_code.ai.types import UserMessage  # noqa: E402
from di_code.session import SessionStore  # noqa: E402
from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import (  # noqa: E402
    TIMEOUT,
    RecordingClient,
    next_message,
    prompt,
    raw_acp,
)
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402
from tests.support.processes import alive, group_sleeper, sleeper_started, until  # noqa: E402


async def stored_session(agent: Any, llm_server: LLMServer, workspace: Path) -> str:
    """A session with one exchange, stored by a first editor connection."""
    llm_server.script(Turn(text="The answer is 42."))
    conn = await agent(RecordingClient())
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "what is the answer?")
    await conn.close_session(session_id=session.session_id)  # one writer: that editor is done
    return str(session.session_id)


@pytest.mark.parametrize("shown", ["prefix", "upper case"])
async def test_a_load_by_another_spelling_of_the_id_is_refused_before_anything_opens(
    agent: Any, llm_server: LLMServer, workspace: Path, shown: str
) -> None:
    session_id = await stored_session(agent, llm_server, workspace)
    asked = session_id[:8] if shown == "prefix" else session_id.upper()
    client = RecordingClient()
    conn = await agent(client)
    with pytest.raises(RequestError) as refused:
        await conn.load_session(cwd=str(workspace), session_id=asked, mcp_servers=[])
    assert refused.value.code == -32602
    assert "whole id" in json.dumps(refused.value.data)
    assert client.updates == []  # no replay to an id the client never opened
    with pytest.raises(RequestError):  # and nothing was registered under the whole id
        await prompt(conn, session_id, "hello")
    await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert {sid for sid, _ in client.updates} == {session_id}


async def test_a_session_opens_once_and_its_running_prompt_keeps_its_cancel(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    session_id = await stored_session(agent, llm_server, workspace)
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off")
    loads = [
        conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        for _ in range(3)
    ]
    results = await asyncio.gather(*loads, return_exceptions=True)
    refused = [r for r in results if isinstance(r, RequestError)]
    assert len(refused) == 2, results
    assert all("already open" in json.dumps(r.data) for r in refused)
    assert len(client.of(UserMessageChunk)) == 1  # replayed once
    pid_file = workspace / "sleep.pid"
    bash = ToolCallSpec("bash", {"command": group_sleeper(pid_file)})
    llm_server.script(Turn(tool_calls=(bash,)))
    running = asyncio.create_task(prompt(conn, session_id, "sleep"))
    sleep_pid = await sleeper_started(pid_file)
    with pytest.raises(RequestError):
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    await conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"
    await until(lambda: not alive(sleep_pid), "the cancelled command's group to end")


async def test_a_load_with_another_folder_is_refused_and_opens_nothing(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    session_id = await stored_session(agent, llm_server, workspace)
    other = tmp_path / "other"
    other.mkdir()
    client = RecordingClient()
    conn = await agent(client)
    with pytest.raises(RequestError) as refused:
        await conn.load_session(cwd=str(other), session_id=session_id, mcp_servers=[])
    assert refused.value.code == -32602
    said = json.dumps(refused.value.data)
    assert str(workspace) in said and "belongs to" in said
    assert client.updates == []
    with pytest.raises(RequestError):
        await prompt(conn, session_id, "hello")


def test_run_with_a_session_of_another_folder_is_refused(
    llm_server: LLMServer, workspace: Path, tmp_path: Path, di_code_home: Path
) -> None:
    """The guarded place is shared: `run`/`chat --session` check the folder where ACP does."""
    other = tmp_path / "other"
    other.mkdir()
    session = SessionStore(di_code_home).create(other)
    session.append_message(UserMessage.of("hi", 1))
    result = subprocess.run(
        [DI_CODE, "run", "--session", session.id, "go on"],
        cwd=workspace, env=cli_env(di_code_home, llm_server), capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert result.returncode == 2
    assert f"belongs to {other.resolve()}" in result.stderr
    assert "Traceback" not in result.stderr
    assert llm_server.requests == []


NOT_OBJECTS = [b"[]", b"[1, 2]", b"42", b'"x"', b"null", b"true", b"{}", b'{"id": 5}']
NOT_OBJECTS += [
    b'[{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}]',
    b'{"jsonrpc":"2.0","id":[1],"method":"initialize","params":{"protocolVersion":1}}',
    b'{"jsonrpc":"2.0","id":{"a":1},"result":{}}',
    b'{"jsonrpc":"2.0","id":[1],"result":{}}',
    b'{"jsonrpc":"2.0","id":4,"method":7}',
    b'{"jsonrpc":"1.0","id":4,"method":"initialize","params":{"protocolVersion":1}}',
    b'{"jsonrpc":"2.0","id":4,"method":"initialize","params":5}',
]


async def line_then_probe(
    home: Path, server: LLMServer, workspace: Path, line: bytes
) -> asyncio.subprocess.Process:
    """A raw `di-code acp` sent `line`, then a request for an unknown method (id 9), whose
    answer shows the agent still reads."""
    process = await raw_acp(home, server, workspace)
    assert process.stdin is not None
    process.stdin.write(line + b"\n")
    process.stdin.write(b'{"jsonrpc":"2.0","id":9,"method":"no/such","params":{}}\n')
    await process.stdin.drain()
    return process


@pytest.mark.parametrize("line", NOT_OBJECTS, ids=lambda line: line.decode()[:40])
async def test_json_that_is_not_a_jsonrpc_object_is_an_invalid_request_and_the_agent_stays(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, line: bytes
) -> None:
    process = await line_then_probe(di_code_home, llm_server, workspace, line)
    first = await next_message(process)
    assert first["error"]["code"] == -32600, first
    assert first["jsonrpc"] == "2.0" and first["id"] in (None, 4, 5)  # a valid id is kept
    second = await next_message(process)
    assert second["id"] == 9 and second["error"]["code"] == -32601  # still answering
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


@pytest.mark.parametrize("line", [b"NaN", b"[" * 100_000, b'{"a": Infinity}'])
async def test_what_python_reads_but_json_does_not_is_a_parse_error(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, line: bytes
) -> None:
    process = await line_then_probe(di_code_home, llm_server, workspace, line)
    assert (await next_message(process))["error"]["code"] == -32700
    assert (await next_message(process))["id"] == 9
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
