"""The tool frame (issue 11 §6): the article's `execute` and its abort check are written once,
in `tools/common/base.py`, and every built-in tool and every MCP tool runs through that one
frame."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from di_code.agent.tool import bind_tool
from di_code.ai import AbortController
from di_code.tools import default_tools
from di_code.tools.common.base import CheckedTool, WorkspaceTool
from di_code.tools.common.workspace import Workspace
from di_code.tools.extensions.mcp import McpServer, McpTool
from di_code.tools.extensions.mcp_config import McpServerConfig
from tests.tools.conftest import error_of

NO_FILES = ("fetch", "todo", "job_output", "job_input", "job_kill", "job_list")
"""Built-in tools with no files to confine (the job tools act on jobs bash started)."""


def test_every_coding_tool_has_the_one_frame(workspace: Path) -> None:
    space = Workspace.create(workspace)
    for offered in default_tools(workspace):
        tool = offered.tool  # the stand-in's real tool, built now
        assert type(tool).execute is CheckedTool.execute
        if tool.name not in NO_FILES:
            assert isinstance(tool, WorkspaceTool) and tool.workspace == space
        for each in (offered, tool):
            bound = bind_tool(each)
            assert (bound.signal_slot, bound.update_slot, bound.in_thread) == (
                "keyword",
                "keyword",
                False,
            )
    assert McpTool.execute is CheckedTool.execute


def test_the_model_is_offered_what_the_real_tool_says(workspace: Path) -> None:
    for offered in default_tools(workspace):
        real = offered.tool
        assert (offered.name, offered.description, offered.parameters) == (
            real.name,
            real.description,
            real.parameters,
        )


def test_a_tool_is_loaded_when_first_called(workspace: Path) -> None:
    """Offering the tools imports none of them; the first call of one loads that one."""
    script = f"""
import asyncio, sys
from pathlib import Path
from di_code.ai import AbortController
from di_code.tools import default_tools
tools = {{t.name: t for t in default_tools(Path({str(workspace)!r}))}}
names = ("read", "write", "edit", "bash", "grep", "find", "ls")
print(sorted(n for n in names if f"di_code.tools.builtin.{{n}}" in sys.modules))
asyncio.run(tools["ls"].execute("c1", {{}}, AbortController().signal))
print(sorted(n for n in names if f"di_code.tools.builtin.{{n}}" in sys.modules))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines() == ["[]", "['ls']"]


async def test_an_mcp_tool_refuses_to_start_once_aborted() -> None:
    server = McpServer(McpServerConfig("never", "test", command="false"), io.StringIO())
    tool = McpTool(server, "echo", "mcp__never__echo", "Echo.", {"type": "object"})
    controller = AbortController()
    controller.abort()
    assert await error_of(tool, {}, controller.signal) == "Operation aborted"
    assert server.state == "starting"  # never asked: the call did not reach the server
