"""MCP servers in `di-code chat` start in the background: the prompt is drawn before a server
that takes 2 s to start is ready, the status line counts the ready ones, the server's tools
join the next request, and a server that cannot start says so once."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, quit_chat, spawn_chat
from tests.support.llm_server import LLMServer, Turn
from tests.support.mcp_config import stdio_server, toml_table
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def slow_server(name: str, markers: Path, seconds: float) -> dict[str, object]:
    table = stdio_server(name, markers)
    env = table["env"]
    assert isinstance(env, dict)
    return {**table, "env": {**env, "MCP_FIXTURE_START_DELAY": str(seconds)}}


def offered(server: LLMServer, index: int) -> set[str]:
    body = server.requests[index].body
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def test_the_prompt_does_not_wait_for_a_slow_server_whose_tools_join_later(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    workspace = tmp_path / "work"
    workspace.mkdir()
    config = toml_table("slow", slow_server("slow", markers, 2.0))
    config += toml_table(
        "broken", {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    )
    (di_code_home / "config.toml").write_text(config)
    llm_server.script(Turn(text="Answered early."), Turn(text="Answered later."))
    started = time.monotonic()
    child = spawn_chat(llm_server, workspace)
    screen = Screen(child)
    try:
        lines = screen.wait_for("mcp: ")
        shown = f"{time.monotonic() - started:.2f}"
        assert "›" in lines and any(line.endswith("mcp: 0/2 ready") for line in lines)
        child.sendline("before the server is up")
        screen.wait_for("Answered early.")
        screen.wait_for("mcp: 1/2 ready")
        ready = f"{time.monotonic() - started:.2f}"
        print(f"\nprompt drawn after {shown} s, the slow server ready after {ready} s")
        lines = screen.wait_for("MCP server broken failed to start")
        assert sum("MCP server broken failed" in line for line in lines) == 1
        child.sendline("after")
        lines = screen.wait_for("Answered later.")
        assert sum("MCP server broken failed" in line for line in lines) == 1
        quit_chat(child)
    finally:
        child.close(force=True)
    assert not {name for name in offered(llm_server, 0) if name.startswith("mcp__")}
    assert {"mcp__slow__add", "mcp__slow__picture"} <= offered(llm_server, 1)
