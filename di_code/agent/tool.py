"""The AgentTool protocol: a ToolDefinition plus the code that runs it locally."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from di_code.ai.abort import AbortSignal
from di_code.ai.types import ToolResultContent


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns when plain content is not enough.

    `details` is JSON for the UI and the session (a diff, a spill-file path), never sent to the
    model; `is_error` reports a failure whose output still matters (a command's non-zero exit).
    """

    content: list[ToolResultContent]
    details: Any = None
    is_error: bool = False


ToolUpdate = Callable[[ToolResult], Awaitable[None]]
"""Awaited by a tool to stream partial output (bash); the loop emits it in order."""


@runtime_checkable
class AgentTool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> list[ToolResultContent] | ToolResult: ...


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """An AgentTool made from a coroutine function: handy for small tools and tests."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[..., Awaitable[list[ToolResultContent] | ToolResult]] = field(repr=False)

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> list[ToolResultContent] | ToolResult:
        return await self.run(tool_call_id, params, signal)
