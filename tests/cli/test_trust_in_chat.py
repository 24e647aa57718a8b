"""Issue 23 §6: trust given inside `di-code chat` (the first-run question's `y`, or `/trust`)
applies at once: the project's MCP servers start and their tools are offered to the model in
the next request, with no restart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.support.approval import GUARD_WAIT
from tests.support.chat import spawn_chat
from tests.support.llm_server import LLMServer, Turn
from tests.support.screen import Screen

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository whose `.mcp.json` names a real stdio MCP server (the SDK fixture)."""
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (tmp_path / "markers").mkdir()
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fixture_server", "stdio"],
        "cwd": str(ROOT),
        "env": {"MCP_FIXTURE_DIR": str(tmp_path / "markers"), "MCP_FIXTURE_NAME": "fx"},
    }
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": server}}))
    return folder


def tool_names(server: LLMServer) -> list[str]:
    return [tool["function"]["name"] for tool in server.requests[-1].body.get("tools", [])]


def ask(child: pexpect.spawn, screen: Screen, text: str, answer: str) -> None:
    screen.pump(GUARD_WAIT)
    child.sendline(text)
    screen.wait_for(answer)


def test_yes_to_the_first_run_question_starts_the_servers_at_once(
    llm_server: LLMServer, project: Path
) -> None:
    llm_server.script(Turn(text="tools are here"))
    child = spawn_chat(llm_server, project)
    screen = Screen(child)
    try:
        screen.wait_for("would start these MCP")  # after the path, which may wrap
        screen.wait_for("y/N")
        screen.pump(GUARD_WAIT)
        child.send("y")
        screen.wait_for("MCP servers started; their tools: mcp__fx__")
        assert (project.parent / "markers" / "fx.pid").exists()
        ask(child, screen, "hello", "tools are here")
    finally:
        child.close(force=True)
    assert "mcp__fx__add" in tool_names(llm_server)


def test_slash_trust_starts_the_servers_at_once(llm_server: LLMServer, project: Path) -> None:
    llm_server.script(Turn(text="no tools yet"), Turn(text="tools are here"))
    child = spawn_chat(llm_server, project)
    screen = Screen(child)
    try:
        screen.wait_for("y/N")
        screen.pump(GUARD_WAIT)
        child.send("n")
        screen.wait_for("not trusted")
        ask(child, screen, "hello", "no tools yet")
        assert not any(name.startswith("mcp__") for name in tool_names(llm_server))
        ask(child, screen, "/trust", "MCP servers started")
        ask(child, screen, "again", "tools are here")
    finally:
        child.close(force=True)
    assert "mcp__fx__add" in tool_names(llm_server)
