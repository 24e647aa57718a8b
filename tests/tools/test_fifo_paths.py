"""A FIFO as the path of grep, find or ls (issue 33): judged through the file door before any
search starts, so rg never opens it and waits for ever."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from di_code.agent import AgentTool
from di_code.tools.builtin.grep import GrepTool
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import error_of


async def test_grep_refuses_a_fifo_path(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    grep = GrepTool(Workspace.create(workspace))
    message = await asyncio.wait_for(error_of(grep, {"pattern": "x", "path": "pipe"}), 10)
    assert message == "Not a regular file: pipe"


async def test_find_and_ls_refuse_a_fifo_path(tools: dict[str, AgentTool], workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    assert await error_of(tools["find"], {"pattern": "*", "path": "pipe"}) == (
        "Not a regular file: pipe"
    )
    assert await error_of(tools["ls"], {"path": "pipe"}) == "Not a regular file: pipe"
    (workspace / "file.txt").write_text("x\n")
    assert await error_of(tools["ls"], {"path": "file.txt"}) == "Not a directory: file.txt"
