"""Subagent and skill files of a cloned project in an editor's (ACP) session: what di-code says
about them reaches the editor as text it can take, whatever bytes the project's file names
hold (README: Subagents, Skills; the editor gets the lines `run` writes on stderr)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.support.acp_editor import RecordingClient, prompt
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


async def test_file_names_that_are_not_utf_8_are_said_to_the_editor_and_the_session_goes_on(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    root = os.fsencode(workspace)
    skills = os.path.join(root, b".claude", b"skills", b"bad\xff")
    os.makedirs(skills)
    with open(os.path.join(skills, b"SKILL.md"), "w") as handle:
        handle.write("---\nname: x\n")  # no closing line: a warning naming the folder
    agents = os.path.join(root, b".claude", b"agents")
    os.makedirs(agents)
    with open(os.path.join(agents, b"h\xe9lper.md"), "w") as handle:
        handle.write("---\nname: helper\ndescription: helps\nmodel: llamacpp/any\n---\nHelp.\n")
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
    said = client.said(session.session_id)
    assert "bad\\xff" in said and "skipped" in said
    assert "h\\xe9lper.md: ignored model 'llamacpp/any'" in said
