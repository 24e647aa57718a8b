"""An editor's session in a cloned project: the project's subagent file cannot send the
subagent's request to a local port the user never set up (issue 32, models), and the one
line saying so reaches the editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.support.acp_editor import RecordingClient, prompt
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.local_port import local_preset_listener


async def test_a_project_s_subagent_file_picks_no_local_port_in_an_editor_session(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    with local_preset_listener() as local:
        (agents / "helper.md").write_text(
            f"---\nname: helper\ndescription: helps\nmodel: {local.name}/any\n---\nYou help.\n"
        )
        job = {"description": "a job", "prompt": "look", "subagent_type": "helper"}
        llm_server.script(
            Turn(tool_calls=(ToolCallSpec("task", job, "t1"),)),
            Turn(text="the sub's answer"),
            Turn(text="all done"),
        )
        client = RecordingClient("allow_once")
        conn = await agent(client, "--permission-mode", "auto")
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        reply = await prompt(conn, session.session_id, "delegate it")
        assert reply.stop_reason == "end_turn"
        assert local.connections == 0
    assert [r.body["model"] for r in llm_server.requests] == ["test-model"] * 3
    assert f"ignored model '{local.name}/any'" in client.said(session.session_id)
