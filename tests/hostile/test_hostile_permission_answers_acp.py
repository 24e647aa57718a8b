"""An editor's answer to a permission question (README, "Editors (ACP)" and Permissions, The
question) attacked: an option id di-code did not offer ("reject_always", an empty id, a plan's
mode, "allow_always" where no grant was offered, a case twin) is no answer that allows. Only
the options offered may run the call; anything else is a no, as a cancelled question is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import RecordingClient, prompt
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("touch ran.txt", "reject_always"),
        ("touch ran.txt", ""),
        ("touch ran.txt", "accept-edits"),
        ("touch ran.txt", "ALLOW_ONCE"),
        ("touch ran.txt", "allow_once "),
        ("touch $PWD/ran.txt", "allow_always"),  # a line with an expansion is offered no grant
    ],
    ids=repr,
)
async def test_an_option_that_was_not_offered_runs_nothing(
    agent: Any, llm_server: LLMServer, workspace: Path, command: str, answer: str
) -> None:
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn("ok"))
    client = RecordingClient(answer=answer)
    conn = await agent(client, "--permission-mode", "ask", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "run it")
    [(_, offered)] = client.asked
    assert answer not in offered
    assert not (workspace / "ran.txt").exists()


async def test_an_offered_option_still_runs_the_call(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch ran.txt"}),)), Turn("ok")
    )
    client = RecordingClient(answer="allow_once")
    conn = await agent(client, "--permission-mode", "ask", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "run it")
    assert (workspace / "ran.txt").exists()
