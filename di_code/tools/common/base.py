"""The frame every built-in tool shares, written once: one `execute` form (agent.tool), the abort
check it starts with, and (for the coding tools) the workspace they are confined to.

A tool module then keeps only what is its own: its name, description, JSON Schema, and `run`.
`bind_tool` reads this one `execute` signature when the Agent gets its tools.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from di_code.agent.tool import ToolOutput, ToolUpdate
from di_code.system.abort import AbortSignal
from di_code.tools.common.errors import check_aborted
from di_code.tools.common.workspace import Workspace


@dataclass(frozen=True, slots=True)
class CheckedTool(ABC):
    """An AgentTool (the subclass gives name, description, parameters) that refuses to start
    once the user has aborted, then hands the validated params to `run`."""

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> ToolOutput:
        check_aborted(signal)
        return await self.run_call(tool_call_id, params, signal, on_update)

    async def run_call(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None,
    ) -> ToolOutput:
        """`run`, for the tools that do not need to know which call they serve (all but bash,
        which shows a call the editor shows in the editor's terminal)."""
        return await self.run(params, signal, on_update)

    @abstractmethod
    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        """The tool's own work; `on_update` is None when nobody listens to partial output."""


@dataclass(frozen=True, slots=True)
class WorkspaceTool(CheckedTool, ABC):
    """A coding tool (read, write, edit, bash, grep, find, ls): every path it is given is
    resolved inside `workspace`."""

    workspace: Workspace
