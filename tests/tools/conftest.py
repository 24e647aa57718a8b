"""Fixtures for the tool tests: a workspace folder with its tools, and a way to run one."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool, ToolResult
from di_code.ai import AbortController, AbortSignal, TextContent
from di_code.tools import default_tools


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside() -> Iterator[Path]:
    """A writable host folder outside the workspace and outside /tmp (which the sandbox
    replaces with its own)."""
    folder = Path(tempfile.mkdtemp(prefix="di-code-sandbox-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def tools(workspace: Path) -> dict[str, AgentTool]:
    return {tool.name: tool for tool in default_tools(workspace)}


async def run(
    tool: AgentTool, params: dict[str, Any], signal: AbortSignal | None = None
) -> ToolResult:
    """Execute a tool and normalise its answer to a ToolResult."""
    output = await tool.execute("call-1", params, signal or AbortController().signal)
    return output if isinstance(output, ToolResult) else ToolResult(list(output))


def text_of(result: ToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def error_of(
    tool: AgentTool, params: dict[str, Any], signal: AbortSignal | None = None
) -> str:
    """The one-line message of the ToolError a tool raises (the text the model will read)."""
    from di_code.tools.common.errors import ToolError

    with pytest.raises(ToolError) as caught:
        await run(tool, params, signal)
    message = str(caught.value)
    assert "\n" not in message
    return message
