"""Confinement: every way out of the workspace is refused by read, write and edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool
from di_code.ai import AbortController
from di_code.tools import READ_ONLY_TOOLS, default_tools
from tests.tools.conftest import error_of, run, text_of

FILE_TOOLS: dict[str, dict[str, Any]] = {
    "read": {},
    "write": {"content": "new"},
    "edit": {"old_text": "secret", "new_text": "changed"},
}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("secret")
    return secret


def escapes(workspace: Path, outside: Path) -> dict[str, str]:
    (workspace / "link").symlink_to(outside.parent)
    return {
        "absolute": str(outside),
        "dotdot": "../outside/secret.txt",
        "symlink": "link/secret.txt",
    }


@pytest.mark.parametrize("tool_name", sorted(FILE_TOOLS))
@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
async def test_paths_outside_the_workspace_are_refused(
    tools: dict[str, AgentTool], workspace: Path, outside: Path, tool_name: str, how: str
) -> None:
    path = escapes(workspace, outside)[how]
    message = await error_of(tools[tool_name], {"path": path, **FILE_TOOLS[tool_name]})
    assert message == f"Path is outside the workspace: {path}"
    assert outside.read_text() == "secret"


@pytest.mark.parametrize("tool_name", ["grep", "find", "ls"])
async def test_search_tools_are_confined_too(
    tools: dict[str, AgentTool], outside: Path, tool_name: str
) -> None:
    params = {"pattern": "x"} if tool_name != "ls" else {}
    assert (
        await error_of(tools[tool_name], {**params, "path": "../outside"})
        == "Path is outside the workspace: ../outside"
    )


async def test_a_symlink_inside_the_workspace_is_followed(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "real.txt").write_text("inside")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert text_of(await run(tools["read"], {"path": "alias.txt"})) == "     1\tinside"


async def test_a_leading_at_is_stripped(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "notes.md").write_text("hello")
    assert text_of(await run(tools["read"], {"path": "@notes.md"})) == "     1\thello"


async def test_tilde_is_expanded(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(workspace))
    (workspace / "home.txt").write_text("at home")
    tools = {tool.name: tool for tool in default_tools(tmp_path / "elsewhere")}
    assert (
        await error_of(tools["read"], {"path": "~/home.txt"})
        == "Path is outside the workspace: ~/home.txt"
    )
    tools = {tool.name: tool for tool in default_tools(tmp_path, [workspace])}
    assert text_of(await run(tools["read"], {"path": "~/home.txt"})) == "     1\tat home"


async def test_extra_roots_are_part_of_the_workspace(workspace: Path, outside: Path) -> None:
    tools = {tool.name: tool for tool in default_tools(workspace, [outside.parent])}
    assert text_of(await run(tools["read"], {"path": str(outside)})) == "     1\tsecret"


def test_default_tools_are_fresh_and_in_order(workspace: Path) -> None:
    first, second = default_tools(workspace), default_tools(workspace)
    assert [t.name for t in first] == [
        *("read", "write", "edit", "bash", "grep", "find", "ls"),
        *("fetch", "todo"),
        *("job_output", "job_input", "job_kill", "job_list"),
    ]
    assert all(a is not b for a, b in zip(first, second, strict=True))
    assert {"read", "grep", "find", "ls", "todo", "task", "lsp"} == READ_ONLY_TOOLS
    for tool in first:
        assert tool.parameters["additionalProperties"] is False
        assert all("description" in p for p in tool.parameters["properties"].values())


@pytest.mark.parametrize(
    "tool_name, params",
    [
        ("read", {"path": "a"}),
        ("write", {"path": "a", "content": ""}),
        ("edit", {"path": "a", "old_text": "x", "new_text": "y"}),
        ("bash", {"command": "touch ran"}),
        ("grep", {"pattern": "x"}),
        ("find", {"pattern": "*"}),
        ("ls", {}),
    ],
)
async def test_every_tool_checks_the_signal_first(
    tools: dict[str, AgentTool], workspace: Path, tool_name: str, params: dict[str, Any]
) -> None:
    controller = AbortController()
    controller.abort()
    assert await error_of(tools[tool_name], params, controller.signal) == "Operation aborted"
    assert list(workspace.iterdir()) == []
