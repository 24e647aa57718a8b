"""HOSTILE.md "a signal at every state", through ACP: an editor's cancel while the prompt's
first snapshot writes its blobs (git fast-import hangs, having written its pack), then the
same session's next prompt is recorded and `/undo` gives the file back (README, Undo: what a
stopped record leaves costs a later prompt time only)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import EDITOR_FS, SavingEditor, calls, prompt
from tests.support.hanging_git import hanging_git
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import until

CANCEL_ENDS_WITHIN = 10.0
"""The hanging import takes 30 s: a prompt that waited for it would end after that."""


async def test_a_cancel_during_the_blob_import_then_the_next_prompts_undo_is_exact(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=workspace, check=True, timeout=30)
    hanging, seen = hanging_git(tmp_path, "fast-import")
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    client = SavingEditor()
    conn = await agent(
        client, "--permission-mode", "auto", "--sandbox", "off", capabilities=EDITOR_FS,
        env_extra=hanging,
    )  # fmt: skip
    session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    running = asyncio.create_task(prompt(conn, session_id, "wait"))
    await until(lambda: bool(llm_server.requests), "the request")
    await until(seen.exists, "the snapshot's import")
    await conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(running, CANCEL_ENDS_WITHIN)).stop_reason == "cancelled"

    write = ("write", {"path": "a.txt", "content": "model\n"})
    llm_server.script(calls(write), Turn(text="done"))
    assert (await prompt(conn, session_id, "change")).stop_reason == "end_turn"
    assert (workspace / "a.txt").read_text() == "model\n"
    await prompt(conn, session_id, "/undo")
    assert "Undid prompt" in client.said(), client.said()
    assert (workspace / "a.txt").read_text() == "a\n"
