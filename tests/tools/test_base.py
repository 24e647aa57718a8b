"""The tool frame (issue 11 §6): the article's `execute` and its abort check are written once,
in `tools/base.py`, and every built-in tool and every MCP tool runs through that one frame."""

from __future__ import annotations

import io
from pathlib import Path

from di_code.agent.tool import bind_tool
from di_code.ai import AbortController
from di_code.tools import default_tools
from di_code.tools.base import CheckedTool, WorkspaceTool
from di_code.tools.mcp import McpServer, McpTool
from di_code.tools.mcp_config import McpServerConfig
from di_code.tools.workspace import Workspace
from tests.tools.conftest import error_of


def test_every_coding_tool_has_the_one_frame(workspace: Path) -> None:
    tools = default_tools(workspace)
    space = Workspace.create(workspace)
    for tool in tools:
        assert isinstance(tool, WorkspaceTool)
        assert type(tool).execute is CheckedTool.execute
        assert tool.workspace == space
        bound = bind_tool(tool)
        assert (bound.signal_slot, bound.update_slot, bound.in_thread) == (
            "keyword",
            "keyword",
            False,
        )
    assert McpTool.execute is CheckedTool.execute


async def test_an_mcp_tool_refuses_to_start_once_aborted() -> None:
    server = McpServer(McpServerConfig("never", "test", command="false"), io.StringIO())
    tool = McpTool(server, "echo", "mcp__never__echo", "Echo.", {"type": "object"})
    controller = AbortController()
    controller.abort()
    assert await error_of(tool, {}, controller.signal) == "Operation aborted"
    assert server.state == "starting"  # never asked: the call did not reach the server
