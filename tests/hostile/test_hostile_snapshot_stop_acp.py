"""HOSTILE.md "A stop never waits for work", through ACP: an editor's cancel of a prompt the
model has not answered yet ends it without waiting for the prompt's first snapshot."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import RecordingClient, prompt
from tests.support.hanging_git import hanging_git
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import until

CANCEL_ENDS_WITHIN = 10.0
"""The hanging listing takes 30 s: a prompt that waited for it would end after that."""


async def test_a_cancel_while_the_first_snapshot_runs_ends_the_prompt_at_once(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=30)
    (workspace / "a.txt").write_text("a\n")
    hanging, seen = hanging_git(tmp_path, "ls-files")
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    conn = await agent(RecordingClient(), "--permission-mode", "auto", env_extra=hanging)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "wait"))
    await until(lambda: bool(llm_server.requests), "the request")
    await until(seen.exists, "the snapshot's listing")
    await conn.cancel(session_id=session.session_id)
    reply = await asyncio.wait_for(running, CANCEL_ENDS_WITHIN)
    assert reply.stop_reason == "cancelled"
    llm_server.script(Turn(text="still here"))
    assert (await prompt(conn, session.session_id, "hello")).stop_reason == "end_turn"
