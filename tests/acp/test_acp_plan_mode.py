"""Plan mode over ACP with the SDK's own client (issue 44.1): `plan` is a session mode; the
plan the model presents reaches the editor as plan entries and as a permission request whose
options are the build modes; the one chosen becomes the session's mode (announced as the
editor's own switches are) and the edits follow in it; keep planning changes nothing. Every
message is checked against the ACP schema (the `agent` fixture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import AgentPlanUpdate, ConfigOptionUpdate, CurrentModeUpdate  # noqa: E402

from tests.support.acp_editor import RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, Turn, call  # noqa: E402

PLAN = "Rename the greeting\n\n1. Change hello to hi in app.py\n2. Say what changed\n"
EDIT = {"path": "app.py", "old_text": "hello", "new_text": "hi"}
ORIGINAL = "print('hello')\n"


async def planning_session(
    agent: Any, client: RecordingClient, llm_server: LLMServer, workspace: Path
) -> tuple[Any, str]:
    (workspace / "app.py").write_text(ORIGINAL)
    llm_server.script(
        call("read", {"path": "app.py"}, "r1"),
        call("exit_plan_mode", {"plan": PLAN}, "p1"),
        call("edit", EDIT, "e1"),
        Turn(text="Built it."),
    )
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert "plan" in {mode.id for mode in session.modes.available_modes}
    await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
    return conn, session.session_id


def entries(update: AgentPlanUpdate) -> list[tuple[str, str]]:
    return [(entry.content, entry.status) for entry in update.entries]


async def test_an_approved_plan_switches_the_mode_and_is_built(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient(answer="accept-edits")
    conn, session_id = await planning_session(agent, client, llm_server, workspace)
    await prompt(conn, session_id, "rename the greeting")
    [(asked, options)] = client.asked  # the plan only: the edit ran unasked in accept-edits
    assert options == ["accept-edits", "ask", "keep_planning"]
    assert asked.title == "Plan: Rename the greeting"
    assert PLAN in asked.content[0].content.text
    presented, *_ = client.of(AgentPlanUpdate)
    assert entries(presented) == [
        ("Change hello to hi in app.py", "pending"),
        ("Say what changed", "pending"),
    ]
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["accept-edits"]
    options_said = client.of(ConfigOptionUpdate)[-1].config_options
    assert {o.id: o.current_value for o in options_said}["mode"] == "accept-edits"
    assert (workspace / "app.py").read_text() == "print('hi')\n"


async def test_keep_planning_changes_nothing_and_stays_in_plan_mode(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient(answer="keep_planning")
    conn, session_id = await planning_session(agent, client, llm_server, workspace)
    await prompt(conn, session_id, "rename the greeting")
    assert len(client.asked) == 1
    assert client.of(CurrentModeUpdate) == []
    assert (workspace / "app.py").read_text() == ORIGINAL
    assert "The user did not approve the plan" in str(llm_server.requests[2].body)
