"""`session/cancel` over ACP ends the prompt at once even when the running plugin tool ignores
its signal (an awaiting one that swallows its cancellation, a thread that never returns): the
tool is left behind, and the session answers the next prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_editor import RecordingClient, prompt
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.stops import plugin_site

CANCEL_BOUND = 10.0
"""Seconds: a hang is what is caught (the tool never ends on its own)."""


@pytest.mark.parametrize("tool", ["stubborn", "sleeper"])
async def test_cancel_leaves_a_deaf_tool_behind(
    agent: Any,
    llm_server: LLMServer,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(plugin_site(tmp_path)))
    monkeypatch.setenv("STOP_TEST_DIR", str(tmp_path))
    llm_server.script(Turn(tool_calls=(ToolCallSpec(tool, {}, "c1"),)), Turn(text="still here"))
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "go"))
    while not (tmp_path / tool).exists():
        assert not running.done(), running.result()
        await asyncio.sleep(0.05)
    await conn.cancel(session_id=session.session_id)
    reply = await asyncio.wait_for(running, CANCEL_BOUND)
    assert reply.stop_reason == "cancelled"
    assert (await prompt(conn, session.session_id, "again")).stop_reason == "end_turn"
    assert client.said() == "still here"
