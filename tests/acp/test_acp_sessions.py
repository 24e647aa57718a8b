"""`session/list`, `session/resume` and `session/close` driven by the ACP SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION, RequestError  # noqa: E402
from acp.schema import UserMessageChunk  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from di_code.acp.stored import PAGE  # noqa: E402
from di_code.ai.types import UserMessage  # noqa: E402
from di_code.session import SessionStore  # noqa: E402
from tests.cli.conftest import DI_CODE  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402
from tests.support.processes import alive, group_sleeper, sleeper_started, until  # noqa: E402


def stored(home: Path, folder: Path, count: int) -> list[str]:
    """`count` sessions of `folder`, written one second apart: their ids, newest first."""
    store = SessionStore(home)
    ids = []
    for n in range(count):
        session = store.create(folder)
        session.append_message(UserMessage.of(f"question {n}", 1))
        os.utime(session.path, ns=(n * 10**9, 1_700_000_000 * 10**9 + n * 10**9))
        ids.append(session.id)
    return ids[::-1]


async def test_initialize_offers_list_resume_close_delete_and_fork_only(
    editor_env: dict[str, str],
) -> None:
    async with spawn_agent_process(RecordingClient(), DI_CODE, "acp", env=editor_env) as (
        conn,
        _process,
    ):
        reply = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)
    sessions = reply.agent_capabilities.session_capabilities
    assert sessions.list is not None and sessions.resume is not None
    assert sessions.close is not None
    assert sessions.delete is not None and sessions.fork is not None


async def test_list_gives_this_folders_sessions_newest_first_with_title_and_time(
    agent: Any, workspace: Path, tmp_path: Path, di_code_home: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    mine = stored(di_code_home, workspace, 3)
    theirs = stored(di_code_home, other, 1)
    conn = await agent(RecordingClient())
    listed = await conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == mine
    assert listed.next_cursor is None
    newest = listed.sessions[0]
    assert newest.title == "question 2" and newest.cwd == str(workspace.resolve())
    assert newest.updated_at == "2023-11-14T22:13:22Z"
    assert datetime.fromisoformat(newest.updated_at).timestamp() == 1_700_000_002
    everyone = await conn.list_sessions()
    assert {s.session_id for s in everyone.sessions} == {*mine, *theirs}


async def test_list_pages_with_a_cursor_and_refuses_a_made_up_one(
    agent: Any, workspace: Path, di_code_home: Path
) -> None:
    ids = stored(di_code_home, workspace, PAGE + 5)
    conn = await agent(RecordingClient())
    first = await conn.list_sessions(cwd=str(workspace))
    assert len(first.sessions) == PAGE and first.next_cursor
    SessionStore(di_code_home).create(workspace).append_message(UserMessage.of("new", 1))
    second = await conn.list_sessions(cwd=str(workspace), cursor=first.next_cursor)
    assert second.next_cursor is None
    assert [s.session_id for s in [*first.sessions, *second.sessions]] == ids  # not the new
    for cursor in ("nope", "12:", "../../x"):
        with pytest.raises(RequestError) as refused:
            await conn.list_sessions(cwd=str(workspace), cursor=cursor)
        assert refused.value.code == -32602
    with pytest.raises(RequestError):
        await conn.list_sessions(cwd="relative/folder")


async def test_resume_goes_on_without_replaying(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="The answer is 42."))
    conn = await agent(RecordingClient())
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "what is the answer?")
    await conn.close_session(session_id=session.session_id)  # one writer: the first lets go
    client = RecordingClient()
    conn2 = await agent(client)
    with pytest.raises(RequestError):  # the same check as load: the whole id only
        await conn2.resume_session(cwd=str(workspace), session_id=session.session_id[:6])
    reply = await conn2.resume_session(cwd=str(workspace), session_id=session.session_id)
    assert reply.modes is not None
    assert client.of(UserMessageChunk) == [] and client.said() == ""
    llm_server.script(Turn(text="yes"))
    await prompt(conn2, session.session_id, "sure?")
    sent = json.dumps(llm_server.requests[-1].body["messages"])
    assert "what is the answer?" in sent and "The answer is 42." in sent


async def test_close_cancels_the_running_prompt_and_frees_the_session(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    pid_file = workspace / "sleep.pid"
    bash = ToolCallSpec("bash", {"command": group_sleeper(pid_file)})
    llm_server.script(Turn(tool_calls=(bash,)))
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "sleep"))
    sleep_pid = await sleeper_started(pid_file)
    await asyncio.wait_for(conn.close_session(session_id=session.session_id), TIMEOUT)
    assert (await running).stop_reason == "cancelled"
    await until(lambda: not alive(sleep_pid), "the closed session's command group to end")
    with pytest.raises(RequestError):
        await prompt(conn, session.session_id, "still there?")
    with pytest.raises(RequestError):
        await conn.close_session(session_id=session.session_id)
    llm_server.script(Turn(text="back"))
    await conn.resume_session(cwd=str(workspace), session_id=session.session_id)
    assert (await prompt(conn, session.session_id, "again")).stop_reason == "end_turn"


async def test_fork_goes_on_in_a_new_session_and_keeps_the_original(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """session/fork (issue 45): a new session with the conversation so far, opened at once;
    the original, still open, is left as it was and goes on on its own."""
    llm_server.script(Turn(text="The answer is 42."))
    conn = await agent(RecordingClient())
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "what is the answer?")
    [original] = di_code_home.glob("sessions/*/*.jsonl")
    before = original.read_bytes()
    with pytest.raises(RequestError):  # the whole id only, as load and resume
        await conn.fork_session(cwd=str(workspace), session_id=session.session_id[:6])
    forked = await conn.fork_session(cwd=str(workspace), session_id=session.session_id)
    assert forked.session_id != session.session_id and forked.modes is not None
    llm_server.script(Turn(text="forked reply"))
    await prompt(conn, forked.session_id, "FORKED-QUESTION")
    sent = json.dumps(llm_server.requests[-1].body["messages"])
    assert "what is the answer?" in sent and "The answer is 42." in sent
    assert original.read_bytes() == before
    llm_server.script(Turn(text="original reply"))
    await prompt(conn, session.session_id, "ORIGINAL-QUESTION")
    sent = json.dumps(llm_server.requests[-1].body["messages"])
    assert "what is the answer?" in sent and "FORKED-QUESTION" not in sent
