"""An edit through the editor's buffers whose old_text is missing answers at once, and the
agent keeps answering meanwhile (issue 41.2: the closest-match hint ran on the event loop for
about 68 s: `session/new` went unanswered, `session/cancel` was ignored)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import ToolCallProgress  # noqa: E402

from tests.support.acp_editor import (  # noqa: E402
    EDITOR_FS,
    TIMEOUT,
    EditorClient,
    prompt,
)
from tests.support.big_files import code_lines  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402


async def test_a_missing_old_text_in_a_large_buffer_fails_at_once(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    big = workspace / "big.py"
    text = "\n".join(code_lines(6000, 1)) + "\n"
    big.write_text(text)
    edit = {"path": "big.py", "old_text": "\n".join(code_lines(300, 2)), "new_text": "x"}
    llm_server.script(Turn(tool_calls=(ToolCallSpec("edit", edit),)), Turn(text="done"))
    client = EditorClient({str(big): text})
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off",
                       capabilities=EDITOR_FS)  # fmt: skip
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "edit it"))
    await client.tool_started()
    other = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
    assert other.session_id != session.session_id
    reply = await running
    assert reply.stop_reason == "end_turn"
    [failed] = [u for u in client.of(ToolCallProgress) if u.status == "failed"]
    assert "old_text not found in big.py" in failed.content[0].content.text
    assert client.buffers[str(big)] == text
