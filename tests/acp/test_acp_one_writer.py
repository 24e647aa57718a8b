"""One writer per session over ACP: two `di-code acp` processes on one stored session (the
second's load or resume is refused with one line while the first has it open, and goes
through once the first closed it); and `session/close` while the editor has not answered a
read is answered at once (the read is given up), after which the session can be resumed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402
from acp.schema import ClientCapabilities, FileSystemCapabilities  # noqa: E402

from di_code.acp.sessions import CLOSE_WAIT  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402

EDITOR_FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


async def test_a_session_open_in_one_process_is_refused_to_another(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="first"))
    conn_a = await agent(RecordingClient())
    session = await conn_a.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn_a, session.session_id, "hello")
    conn_b = await agent(RecordingClient())
    for opening in (conn_b.resume_session, conn_b.load_session):
        with pytest.raises(RequestError) as refused:
            await opening(cwd=str(workspace), session_id=session.session_id)
        assert refused.value.code == -32603
        said = str(refused.value.data)
        assert f"Session {session.session_id[:12]} is in use by another di-code process" in said
    await asyncio.wait_for(conn_a.close_session(session_id=session.session_id), TIMEOUT)
    await conn_b.resume_session(cwd=str(workspace), session_id=session.session_id)
    llm_server.script(Turn(text="second"))
    assert (await prompt(conn_b, session.session_id, "again")).stop_reason == "end_turn"


class SilentEditor(RecordingClient):
    """An editor that never answers a file read."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        self.reading.set()
        await asyncio.Event().wait()


async def test_close_during_an_unanswered_read_answers_at_once_then_resume_works(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("hi\n")
    llm_server.script(Turn(tool_calls=(ToolCallSpec("read", {"path": "notes.txt"}),)))
    client = SilentEditor()
    conn = await agent(client, "--permission-mode", "auto", capabilities=EDITOR_FS)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "read it"))
    await asyncio.wait_for(client.reading.wait(), TIMEOUT)
    started = time.monotonic()
    await asyncio.wait_for(conn.close_session(session_id=session.session_id), TIMEOUT)
    assert time.monotonic() - started < CLOSE_WAIT - 2  # it used to wait CLOSE_WAIT out
    assert (await running).stop_reason == "cancelled"
    await conn.resume_session(cwd=str(workspace), session_id=session.session_id)
    with pytest.raises(RequestError):  # open once, not twice
        await conn.resume_session(cwd=str(workspace), session_id=session.session_id)
    llm_server.script(Turn(text="back"))
    assert (await prompt(conn, session.session_id, "again")).stop_reason == "end_turn"
